/* cusparse_baseline.cu -- ildl-baseline: the GPU solver a user would reach for instead of
 * libblockildl. Reads a Matrix Market matrix, sets b = A*ones and solves A x = b on the GPU
 * with GMRES(m) or BiCGStab, preconditioned by cuSPARSE ILU(0) (csrilu02 + SpSV triangular
 * solves), by ILU(0) with cuSPARSE's numeric pivot boost, by Jacobi, or by nothing. Prints one
 * result line (JSON with --json) per solver; see docs/baseline.md.
 *
 *   ildl-baseline MATRIX [--tol T] [--maxit N] [--restart M] [--repeat R] [--boost REL]
 *                        [--solvers LIST] [--json]
 * Exit status: 0 when every solver ran (converged or not), 2 on any usage, input, CUDA,
 * cuSPARSE or cuBLAS error. */

/* csrilu02 is deprecated since CUDA 12 but is still cuSPARSE's only ILU(0) (CUDA 13.0 ships
 * it); this keeps its deprecation attributes from turning into compiler warnings. */
#define DISABLE_CUSPARSE_DEPRECATED
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include "blockildl.h"
#include "core/csr.h"
#include "io/mmio.h"
}
#include "errors.h"
#include "krylov.h"

/* ------------------------------------------------------------------ errors */

#define CUSPARSE_CK(call)                                                                    \
    do {                                                                                     \
        cusparseStatus_t s_ = (call);                                                        \
        if (s_ != CUSPARSE_STATUS_SUCCESS)                                                   \
            throw Error(strf("%s:%d: %s failed: %s", __FILE__, __LINE__, #call,              \
                             cusparseGetErrorString(s_)));                                   \
    } while (0)
#define CUBLAS_CK(call)                                                                      \
    do {                                                                                     \
        cublasStatus_t s_ = (call);                                                          \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                     \
            throw Error(strf("%s:%d: %s failed: %s", __FILE__, __LINE__, #call,              \
                             cublasGetStatusString(s_)));                                    \
    } while (0)
#define KERNEL_CK() CUDA_CK(cudaGetLastError())

/* Runs the registered clean-ups in reverse order when it goes out of scope, so every exit
 * path (normal or exception) releases what was created. */
struct Cleanup {
    std::vector<std::function<void()>> fs;
    void add(std::function<void()> f) { fs.push_back(std::move(f)); }
    ~Cleanup()
    {
        for (size_t i = fs.size(); i-- > 0;) fs[i]();
    }
};

/* Device allocation registered with a Cleanup. */
template <class T>
static T *dev_alloc(Cleanup &c, size_t count)
{
    void *p = nullptr;
    size_t bytes = std::max<size_t>(count, 1) * sizeof(T);
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* clear it: an allocation failure is not sticky */
        throw Error(strf("cudaMalloc of %zu bytes failed: %s", bytes, cudaGetErrorString(e)));
    }
    c.add([p] { cudaFree(p); });
    return static_cast<T *>(p);
}

/* ------------------------------------------------------------------ kernels */

/* dinv[i] = 1 / a_ii, or 1 where a_ii is absent, zero or its inverse is not finite. */
__global__ void k_inv_diag(int n, const int *rp, const int *ci, const double *v, double *dinv)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double d = 0.0;
    for (int k = rp[i]; k < rp[i + 1]; k++)
        if (ci[k] == i) { d = v[k]; break; }
    double inv = (d != 0.0) ? 1.0 / d : 1.0;
    dinv[i] = isfinite(inv) ? inv : 1.0;
}

/* y = d .* x */
__global__ void k_scale(int n, const double *d, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = d[i] * x[i];
}

/* *cnt += number of non-finite entries of v[0..m-1] */
__global__ void k_count_nonfinite(int64_t m, const double *v, unsigned long long *cnt)
{
    unsigned long long c = 0;
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < m; k += (int64_t)gridDim.x * blockDim.x)
        if (!isfinite(v[k])) c++;
    if (c) atomicAdd(cnt, c);
}

static unsigned grid_for(int64_t n, int block) { return (unsigned)std::max<int64_t>(1, (n + block - 1) / block); }

/* ------------------------------------------------------------------ host matrix */

/* A in 32-bit CSR (what csrilu02 takes) plus the ILU pattern: A with an explicit (zero)
 * diagonal entry inserted in every row that lacks one, so a missing diagonal shows up as a
 * numerical zero pivot rather than as a different pattern. */
struct HostMatrix {
    int n = 0;
    int nnz = 0, nnz_ilu = 0;
    std::vector<int> rp, ci, rp_ilu, ci_ilu;
    std::vector<double> val, val_ilu, b;
    int zero_diag_rows = 0; /* rows whose diagonal is absent or exactly 0 */
    double maxabs = 0.0;
};

static void build_host(const ildl_csr &A, HostMatrix &H)
{
    int64_t nnz = A.rowptr[A.n];
    if (nnz + A.n > (int64_t)INT32_MAX)
        throw Error(strf("matrix has %lld entries: more than the 32-bit indices of csrilu02 allow", (long long)nnz));
    H.n = A.n;
    H.nnz = (int)nnz;
    H.rp.resize(H.n + 1);
    H.ci.assign(A.col, A.col + nnz);
    H.val.assign(A.val, A.val + nnz);
    H.rp_ilu.resize(H.n + 1);
    H.ci_ilu.reserve(nnz + H.n);
    H.val_ilu.reserve(nnz + H.n);
    H.b.assign(H.n, 0.0);
    for (int i = 0; i < H.n; i++) {
        H.rp[i] = (int)A.rowptr[i];
        H.rp_ilu[i] = (int)H.ci_ilu.size();
        bool have = false;
        double s = 0.0;
        for (int64_t k = A.rowptr[i]; k < A.rowptr[i + 1]; k++) {
            int j = A.col[k];
            double v = A.val[k];
            if (!have && j > i) { /* insert the missing diagonal in sorted position */
                H.ci_ilu.push_back(i);
                H.val_ilu.push_back(0.0);
                have = true;
                H.zero_diag_rows++;
            }
            if (j == i) {
                have = true;
                if (v == 0.0) H.zero_diag_rows++;
            }
            H.ci_ilu.push_back(j);
            H.val_ilu.push_back(v);
            s += v;
            H.maxabs = std::max(H.maxabs, std::fabs(v));
        }
        if (!have) {
            H.ci_ilu.push_back(i);
            H.val_ilu.push_back(0.0);
            H.zero_diag_rows++;
        }
        H.b[i] = s; /* b = A * ones */
    }
    H.rp[H.n] = H.nnz;
    H.nnz_ilu = (int)H.ci_ilu.size();
    H.rp_ilu[H.n] = H.nnz_ilu;
}

/* ------------------------------------------------------------------ solvers */

enum Method { GMRES, BICGSTAB };
enum Prec { PREC_NONE, PREC_JACOBI, PREC_ILU0, PREC_ILU0_BOOST };

struct Variant {
    const char *name;
    Method method;
    Prec prec;
};

static const Variant VARIANTS[] = {
    {"gmres-ilu0", GMRES, PREC_ILU0},
    {"bicgstab-ilu0", BICGSTAB, PREC_ILU0},
    {"gmres-ilu0+boost", GMRES, PREC_ILU0_BOOST},
    {"bicgstab-ilu0+boost", BICGSTAB, PREC_ILU0_BOOST},
    {"gmres-jacobi", GMRES, PREC_JACOBI},
    {"bicgstab-jacobi", BICGSTAB, PREC_JACOBI},
    {"gmres-none", GMRES, PREC_NONE},
    {"bicgstab-none", BICGSTAB, PREC_NONE},
};
static const char *DEFAULT_SOLVERS =
    "gmres-ilu0,bicgstab-ilu0,gmres-ilu0+boost,bicgstab-ilu0+boost,gmres-jacobi,bicgstab-jacobi";

struct Params {
    double tol = 1e-6;
    int maxit = 1000;
    int restart = 30;
    int repeat = 1;
    double boost = 1e-8; /* ILU(0) boost: pivots with |p| <= boost*max|a_ij| become boost*max|a_ij| */
};

/* The Krylov "Ops" on the GPU: cuSPARSE SpMV for A, cuBLAS level 1, and the preconditioner. */
struct DeviceOps {
    int n = 0;
    cublasHandle_t cb = nullptr;
    cusparseHandle_t cs = nullptr;
    cusparseSpMatDescr_t A = nullptr;
    cusparseDnVecDescr_t vx = nullptr, vy = nullptr; /* re-pointed at every SpMV */
    void *spmv_buf = nullptr;
    Prec prec = PREC_NONE;
    const double *dinv = nullptr;                    /* Jacobi */
    cusparseSpMatDescr_t L = nullptr, U = nullptr;   /* ILU(0): views of one CSR array */
    cusparseSpSVDescr_t sv_L = nullptr, sv_U = nullptr;
    cusparseDnVecDescr_t t_in = nullptr, t_mid = nullptr, t_out = nullptr;
    double *p_in = nullptr, *p_out = nullptr;

    void matvec(const double *x, double *y)
    {
        const double one = 1.0, zero = 0.0;
        CUSPARSE_CK(cusparseDnVecSetValues(vx, const_cast<double *>(x)));
        CUSPARSE_CK(cusparseDnVecSetValues(vy, y));
        CUSPARSE_CK(cusparseSpMV(cs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F,
                                 CUSPARSE_SPMV_ALG_DEFAULT, spmv_buf));
    }
    void precond(const double *x, double *y)
    {
        if (prec == PREC_NONE) {
            copy(x, y);
        } else if (prec == PREC_JACOBI) {
            k_scale<<<grid_for(n, 256), 256>>>(n, dinv, x, y);
            KERNEL_CK();
        } else {
            /* The SpSV analysis was done on the fixed vectors t_in/t_mid/t_out; solving
             * always on those keeps the solve calls identical to the analysed ones. */
            const double one = 1.0;
            copy(x, p_in);
            CUSPARSE_CK(cusparseSpSV_solve(cs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, L, t_in, t_mid, CUDA_R_64F,
                                           CUSPARSE_SPSV_ALG_DEFAULT, sv_L));
            CUSPARSE_CK(cusparseSpSV_solve(cs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, U, t_mid, t_out, CUDA_R_64F,
                                           CUSPARSE_SPSV_ALG_DEFAULT, sv_U));
            copy(p_out, y);
        }
    }
    double dot(const double *x, const double *y)
    {
        double r = 0.0;
        CUBLAS_CK(cublasDdot(cb, n, x, 1, y, 1, &r));
        return r;
    }
    double nrm2(const double *x)
    {
        double r = 0.0;
        CUBLAS_CK(cublasDnrm2(cb, n, x, 1, &r));
        return r;
    }
    void axpy(double a, const double *x, double *y) { CUBLAS_CK(cublasDaxpy(cb, n, &a, x, 1, y, 1)); }
    void scal(double a, double *x) { CUBLAS_CK(cublasDscal(cb, n, &a, x, 1)); }
    void copy(const double *x, double *y) { CUBLAS_CK(cublasDcopy(cb, n, x, 1, y, 1)); }
    void zero(double *x) { CUDA_CK(cudaMemsetAsync(x, 0, (size_t)n * sizeof(double), 0)); }
};

struct RunOut {
    std::string status = "error";
    std::string detail;
    int iterations = 0;
    long matvecs = 0, precs = 0;
    double true_res = NAN;
    double setup_s = NAN, solve_s = NAN;
    double err_ones = NAN;
};

struct Gpu {
    cublasHandle_t cb = nullptr;
    cusparseHandle_t cs = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr, e2 = nullptr;
};

static double elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0.0f;
    CUDA_CK(cudaEventElapsedTime(&ms, a, b));
    return 1e-3 * ms;
}

/* Build the ILU(0) preconditioner into op: factor a copy of A's ILU pattern with csrilu02 and
 * analyse the two triangular solves. Returns "" or the status that ends this run
 * ("ilu0_zero_pivot" / "breakdown") with detail filled in. */
static std::string setup_ilu0(Gpu &g, const HostMatrix &H, const Params &P, bool boost, DeviceOps &op,
                              Cleanup &c, std::string &detail)
{
    int n = H.n, nz = H.nnz_ilu;
    int *rp = dev_alloc<int>(c, n + 1);
    int *ci = dev_alloc<int>(c, nz);
    double *v = dev_alloc<double>(c, nz);
    CUDA_CK(cudaMemcpy(rp, H.rp_ilu.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(ci, H.ci_ilu.data(), nz * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(v, H.val_ilu.data(), nz * sizeof(double), cudaMemcpyHostToDevice));

    cusparseMatDescr_t descr = nullptr;
    CUSPARSE_CK(cusparseCreateMatDescr(&descr));
    c.add([descr] { cusparseDestroyMatDescr(descr); });
    CUSPARSE_CK(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL));
    CUSPARSE_CK(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO));
    csrilu02Info_t info = nullptr;
    CUSPARSE_CK(cusparseCreateCsrilu02Info(&info));
    c.add([info] { cusparseDestroyCsrilu02Info(info); });
    int bytes = 0;
    CUSPARSE_CK(cusparseDcsrilu02_bufferSize(g.cs, n, nz, descr, v, rp, ci, info, &bytes));
    char *buf = dev_alloc<char>(c, (size_t)std::max(bytes, 1));
    const cusparseSolvePolicy_t policy = CUSPARSE_SOLVE_POLICY_USE_LEVEL;
    CUSPARSE_CK(cusparseDcsrilu02_analysis(g.cs, n, nz, descr, v, rp, ci, info, policy, buf));
    int pos = -1;
    cusparseStatus_t st = cusparseXcsrilu02_zeroPivot(g.cs, info, &pos);
    if (st == CUSPARSE_STATUS_ZERO_PIVOT) {
        detail = strf("structural zero pivot at row %d", pos);
        return "ilu0_zero_pivot";
    }
    CUSPARSE_CK(st);
    /* host pointer mode: cuSPARSE reads these through the pointers, so they live to the end */
    double btol = P.boost * H.maxabs, bval = P.boost * H.maxabs;
    if (boost) CUSPARSE_CK(cusparseDcsrilu02_numericBoost(g.cs, info, 1, &btol, &bval));
    CUSPARSE_CK(cusparseDcsrilu02(g.cs, n, nz, descr, v, rp, ci, info, policy, buf));
    pos = -1;
    st = cusparseXcsrilu02_zeroPivot(g.cs, info, &pos);
    if (st == CUSPARSE_STATUS_ZERO_PIVOT) {
        detail = strf("numerical zero pivot U(%d,%d) = 0", pos, pos);
        return "ilu0_zero_pivot";
    }
    CUSPARSE_CK(st);
    unsigned long long *cnt = dev_alloc<unsigned long long>(c, 1);
    CUDA_CK(cudaMemsetAsync(cnt, 0, sizeof *cnt, 0));
    k_count_nonfinite<<<grid_for(nz, 256 * 8), 256>>>(nz, v, cnt);
    KERNEL_CK();
    unsigned long long bad = 0;
    CUDA_CK(cudaMemcpy(&bad, cnt, sizeof bad, cudaMemcpyDeviceToHost));
    if (bad) {
        detail = strf("ILU(0) factor has %llu non-finite entries (tiny pivots)", bad);
        return "breakdown";
    }

    /* triangular solves: L unit lower and U upper, two views of the factored array */
    op.p_in = dev_alloc<double>(c, n);
    double *p_mid = dev_alloc<double>(c, n);
    op.p_out = dev_alloc<double>(c, n);
    CUSPARSE_CK(cusparseCreateDnVec(&op.t_in, n, op.p_in, CUDA_R_64F));
    c.add([t = op.t_in] { cusparseDestroyDnVec(t); });
    CUSPARSE_CK(cusparseCreateDnVec(&op.t_mid, n, p_mid, CUDA_R_64F));
    c.add([t = op.t_mid] { cusparseDestroyDnVec(t); });
    CUSPARSE_CK(cusparseCreateDnVec(&op.t_out, n, op.p_out, CUDA_R_64F));
    c.add([t = op.t_out] { cusparseDestroyDnVec(t); });
    const double one = 1.0;
    for (int tri = 0; tri < 2; tri++) {
        cusparseSpMatDescr_t M = nullptr;
        CUSPARSE_CK(cusparseCreateCsr(&M, n, n, nz, rp, ci, v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        c.add([M] { cusparseDestroySpMat(M); });
        cusparseFillMode_t fill = tri == 0 ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
        cusparseDiagType_t diag = tri == 0 ? CUSPARSE_DIAG_TYPE_UNIT : CUSPARSE_DIAG_TYPE_NON_UNIT;
        CUSPARSE_CK(cusparseSpMatSetAttribute(M, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
        CUSPARSE_CK(cusparseSpMatSetAttribute(M, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
        cusparseSpSVDescr_t sv = nullptr;
        CUSPARSE_CK(cusparseSpSV_createDescr(&sv));
        c.add([sv] { cusparseSpSV_destroyDescr(sv); });
        cusparseDnVecDescr_t in = tri == 0 ? op.t_in : op.t_mid, out = tri == 0 ? op.t_mid : op.t_out;
        size_t sz = 0;
        CUSPARSE_CK(cusparseSpSV_bufferSize(g.cs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, M, in, out, CUDA_R_64F,
                                            CUSPARSE_SPSV_ALG_DEFAULT, sv, &sz));
        char *svbuf = dev_alloc<char>(c, std::max<size_t>(sz, 1));
        CUSPARSE_CK(cusparseSpSV_analysis(g.cs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, M, in, out, CUDA_R_64F,
                                          CUSPARSE_SPSV_ALG_DEFAULT, sv, svbuf));
        if (tri == 0) { op.L = M; op.sv_L = sv; }
        else { op.U = M; op.sv_U = sv; }
    }
    return "";
}

/* One complete run of a variant: setup (upload, analysis, factorization) and solve (Krylov
 * loop and the final true residual), each timed with CUDA events. Throws Error on API failure. */
static RunOut run_once(Gpu &g, const HostMatrix &H, const Params &P, const Variant &V, bool want_x)
{
    RunOut out;
    Cleanup c; /* declared first: released last, after everything below */
    int n = H.n;
    DeviceOps op;
    op.n = n;
    op.cb = g.cb;
    op.cs = g.cs;
    op.prec = V.prec;

    CUDA_CK(cudaDeviceSynchronize());
    CUDA_CK(cudaEventRecord(g.e0, 0));
    /* ---- setup */
    int *rp = dev_alloc<int>(c, n + 1);
    int *ci = dev_alloc<int>(c, H.nnz);
    double *val = dev_alloc<double>(c, H.nnz);
    double *b = dev_alloc<double>(c, n);
    double *x = dev_alloc<double>(c, n);
    CUDA_CK(cudaMemcpy(rp, H.rp.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(ci, H.ci.data(), (size_t)H.nnz * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(val, H.val.data(), (size_t)H.nnz * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(b, H.b.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CUSPARSE_CK(cusparseCreateCsr(&op.A, n, n, H.nnz, rp, ci, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    c.add([A = op.A] { cusparseDestroySpMat(A); });
    CUSPARSE_CK(cusparseCreateDnVec(&op.vx, n, b, CUDA_R_64F));
    c.add([v = op.vx] { cusparseDestroyDnVec(v); });
    CUSPARSE_CK(cusparseCreateDnVec(&op.vy, n, x, CUDA_R_64F));
    c.add([v = op.vy] { cusparseDestroyDnVec(v); });
    {
        const double one = 1.0, zero = 0.0;
        size_t sz = 0;
        CUSPARSE_CK(cusparseSpMV_bufferSize(g.cs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, op.A, op.vx, &zero, op.vy,
                                            CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &sz));
        op.spmv_buf = dev_alloc<char>(c, std::max<size_t>(sz, 1));
    }
    int nvec = V.method == GMRES ? krylov::gmres_nvec(P.restart) : krylov::bicgstab_nvec();
    std::vector<double *> work(nvec);
    for (int i = 0; i < nvec; i++) work[i] = dev_alloc<double>(c, n);

    std::string early;
    if (V.prec == PREC_JACOBI) {
        double *d = dev_alloc<double>(c, n);
        k_inv_diag<<<grid_for(n, 256), 256>>>(n, rp, ci, val, d);
        KERNEL_CK();
        op.dinv = d;
    } else if (V.prec == PREC_ILU0 || V.prec == PREC_ILU0_BOOST) {
        early = setup_ilu0(g, H, P, V.prec == PREC_ILU0_BOOST, op, c, out.detail);
    }
    CUDA_CK(cudaEventRecord(g.e1, 0));
    CUDA_CK(cudaEventSynchronize(g.e1));
    out.setup_s = elapsed(g.e0, g.e1);
    if (!early.empty()) {
        out.status = early;
        CUDA_CK(cudaDeviceSynchronize());
        return out;
    }

    /* ---- solve */
    krylov::Result kr;
    if (V.method == GMRES) kr = krylov::gmres(op, b, x, work.data(), P.restart, P.tol, P.maxit);
    else kr = krylov::bicgstab(op, b, x, work.data(), P.tol, P.maxit);
    double bnorm = op.nrm2(b);
    double tres = bnorm > 0.0 ? krylov::true_residual(op, b, x, work[0], bnorm, &kr) : 0.0;
    CUDA_CK(cudaEventRecord(g.e2, 0));
    CUDA_CK(cudaEventSynchronize(g.e2));
    out.solve_s = elapsed(g.e1, g.e2);

    out.iterations = kr.iterations;
    out.matvecs = kr.matvecs;
    out.precs = kr.precs;
    out.true_res = tres;
    bool ok = std::isfinite(tres) && tres <= P.tol;
    if (ok) out.status = "converged";
    else if (kr.outcome == krylov::BREAKDOWN || !std::isfinite(tres)) out.status = "breakdown";
    else out.status = "not_converged";
    if (!ok) {
        out.detail = kr.detail;
        if (kr.outcome == krylov::CONVERGED) /* cannot happen: both methods check b - A x */
            out.detail = "method claimed convergence but the true residual misses tol";
        if (out.detail.empty() && !std::isfinite(tres)) out.detail = "non-finite solution";
    }
    if (want_x) {
        std::vector<double> hx(n);
        CUDA_CK(cudaMemcpy(hx.data(), x, n * sizeof(double), cudaMemcpyDeviceToHost));
        double e = 0.0;
        for (int i = 0; i < n; i++) e = std::max(e, std::fabs(hx[i] - 1.0));
        out.err_ones = e;
    }
    CUDA_CK(cudaDeviceSynchronize());
    return out;
}

/* ------------------------------------------------------------------ output */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v)
{
    if (std::isfinite(v)) fprintf(f, "%.6g", v);
    else fprintf(f, "null");
}

static double median(std::vector<double> v)
{
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    size_t m = v.size();
    return (m % 2) ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static void print_result(bool json, const char *matrix, const HostMatrix &H, const char *device, const Params &P,
                         const char *solver, const RunOut &r, double setup_s, double solve_s)
{
    bool conv = r.status == "converged";
    if (json) {
        printf("{\"matrix\":");
        json_string(stdout, matrix);
        printf(",\"n\":%d,\"nnz\":%d,\"solver\":", H.n, H.nnz);
        json_string(stdout, solver);
        printf(",\"status\":");
        json_string(stdout, r.status.c_str());
        printf(",\"converged\":%s,\"iterations\":%d,\"true_residual\":", conv ? "true" : "false", r.iterations);
        json_number(stdout, r.true_res);
        printf(",\"setup_s\":");
        json_number(stdout, setup_s);
        printf(",\"solve_s\":");
        json_number(stdout, solve_s);
        printf(",\"repeat\":%d,\"tol\":%g,\"maxit\":%d,\"restart\":%d,\"matvecs\":%ld,\"prec_applies\":%ld",
               P.repeat, P.tol, P.maxit, P.restart, r.matvecs, r.precs);
        printf(",\"error_vs_ones\":");
        json_number(stdout, r.err_ones);
        printf(",\"zero_diag_rows\":%d,\"detail\":", H.zero_diag_rows);
        json_string(stdout, r.detail.c_str());
        printf(",\"device\":");
        json_string(stdout, device);
        printf(",\"tool\":\"ildl-baseline\"}\n");
    } else {
        printf("%-20s %-16s it %5d  true res %.3e  setup %.4f s  solve %.4f s%s%s\n", solver, r.status.c_str(),
               r.iterations, r.true_res, setup_s, solve_s, r.detail.empty() ? "" : "  -- ", r.detail.c_str());
    }
    fflush(stdout);
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ildl-baseline MATRIX.mtx[.gz] [options]\n"
            "  solves A x = A*ones on the GPU with cuSPARSE/cuBLAS Krylov baselines\n"
            "  --tol T          relative true-residual target ||b-Ax||/||b|| (default 1e-6)\n"
            "  --maxit N        iteration limit; GMRES counts inner steps (default 1000)\n"
            "  --restart M      GMRES restart length (default 30)\n"
            "  --repeat R       timed runs after one warm-up; times are medians (default 1)\n"
            "  --boost REL      ILU(0)+boost: |pivot| <= REL*max|a_ij| becomes REL*max|a_ij| (default 1e-8)\n"
            "  --solvers LIST   comma-separated, from: gmres-ilu0 bicgstab-ilu0 gmres-ilu0+boost\n"
            "                   bicgstab-ilu0+boost gmres-jacobi bicgstab-jacobi gmres-none bicgstab-none\n"
            "                   (default: the first six)\n"
            "  --json           one JSON object per solver on stdout, nothing else\n");
}

static bool parse_double(const char *s, double *out)
{
    char *end = nullptr;
    double v = strtod(s, &end);
    if (!s[0] || *end || !std::isfinite(v)) return false;
    *out = v;
    return true;
}

static bool parse_int(const char *s, int *out)
{
    char *end = nullptr;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < INT32_MIN || v > INT32_MAX) return false;
    *out = (int)v;
    return true;
}

static int fail(const char *what)
{
    fprintf(stderr, "ildl-baseline: %s\n", what);
    return 2;
}

int main(int argc, char **argv)
{
    Params P;
    const char *path = nullptr;
    std::string solvers = DEFAULT_SOLVERS;
    bool json = false;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : nullptr;
        bool ok = true;
        if (!strcmp(o, "--json")) json = true;
        else if (!strcmp(o, "-h") || !strcmp(o, "--help")) { usage(stdout); return 0; }
        else if (!strcmp(o, "--tol")) { ok = v && parse_double(v, &P.tol) && P.tol > 0; a++; }
        else if (!strcmp(o, "--maxit")) { ok = v && parse_int(v, &P.maxit) && P.maxit >= 0; a++; }
        else if (!strcmp(o, "--restart")) { ok = v && parse_int(v, &P.restart) && P.restart >= 1; a++; }
        else if (!strcmp(o, "--repeat")) { ok = v && parse_int(v, &P.repeat) && P.repeat >= 1; a++; }
        else if (!strcmp(o, "--boost")) { ok = v && parse_double(v, &P.boost) && P.boost > 0; a++; }
        else if (!strcmp(o, "--solvers")) { ok = v != nullptr; if (v) solvers = v; a++; }
        else if (o[0] == '-') ok = false;
        else if (!path) path = o;
        else ok = false;
        if (!ok) {
            fprintf(stderr, "ildl-baseline: bad or incomplete option '%s'\n", o);
            usage(stderr);
            return 2;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    std::vector<const Variant *> chosen;
    for (size_t s = 0; s <= solvers.size();) {
        size_t e = solvers.find(',', s);
        if (e == std::string::npos) e = solvers.size();
        std::string name = solvers.substr(s, e - s);
        s = e + 1;
        if (name.empty()) continue;
        const Variant *found = nullptr;
        for (const Variant &V : VARIANTS)
            if (name == V.name) found = &V;
        if (!found) return fail(strf("unknown solver '%s' (see --help)", name.c_str()).c_str());
        chosen.push_back(found);
    }
    if (chosen.empty()) return fail("no solver given");

    /* read the matrix and prepare the host arrays (not timed) */
    std::string fatal; /* once set, every remaining solver is reported as "error" with it */
    HostMatrix H;
    {
        ildl_csr A;
        memset(&A, 0, sizeof A);
        char msg[512] = "";
        int st = ildl_mm_read(path, &A, msg, sizeof msg);
        if (st != ILDL_SUCCESS) {
            fatal = strf("cannot read %s: %s: %s", path, ildl_strerror(st), msg);
        } else {
            try {
                build_host(A, H);
            } catch (const std::exception &e) {
                fatal = e.what();
            }
        }
        ildl_csr_free(&A);
    }

    Gpu g;
    char device[256] = "unknown";
    if (fatal.empty()) {
        try {
            int count = 0;
            cudaError_t e = cudaGetDeviceCount(&count);
            if (e != cudaSuccess || count == 0)
                throw Error(strf("no usable CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "count is 0"));
            CUDA_CK(cudaSetDevice(0));
            cudaDeviceProp prop;
            CUDA_CK(cudaGetDeviceProperties(&prop, 0));
            snprintf(device, sizeof device, "%s", prop.name);
            CUBLAS_CK(cublasCreate(&g.cb));
            CUSPARSE_CK(cusparseCreate(&g.cs));
            CUDA_CK(cudaEventCreate(&g.e0));
            CUDA_CK(cudaEventCreate(&g.e1));
            CUDA_CK(cudaEventCreate(&g.e2));
        } catch (const std::exception &e) {
            fatal = e.what();
        }
    }
    int exit_code = 0;
    if (!fatal.empty()) {
        fprintf(stderr, "ildl-baseline: %s\n", fatal.c_str());
        exit_code = 2;
    } else if (!json) {
        printf("%s: n %d, nnz %d, %d rows with zero/missing diagonal, device %s, tol %g, maxit %d, repeat %d\n", path,
               H.n, H.nnz, H.zero_diag_rows, device, P.tol, P.maxit, P.repeat);
    }

    for (const Variant *V : chosen) {
        RunOut last;
        std::vector<double> ts, tv;
        if (!fatal.empty()) {
            last.detail = fatal;
            if (json) print_result(json, path, H, device, P, V->name, last, NAN, NAN);
            continue;
        }
        try {
            for (int rep = 0; rep <= P.repeat; rep++) { /* rep 0 is the warm-up */
                last = run_once(g, H, P, *V, rep == P.repeat);
                if (rep > 0) {
                    ts.push_back(last.setup_s);
                    if (std::isfinite(last.solve_s)) tv.push_back(last.solve_s);
                }
            }
        } catch (const std::exception &e) {
            last = RunOut();
            last.status = "error";
            last.detail = e.what();
            ts.clear();
            tv.clear();
            fprintf(stderr, "ildl-baseline: %s: %s\n", V->name, e.what());
            exit_code = 2;
            /* an allocation failure leaves the context usable; a kernel fault does not, and
             * then the remaining solvers are reported as errors instead of being run */
            (void)cudaGetLastError();
            cudaError_t s = cudaDeviceSynchronize();
            if (s != cudaSuccess)
                fatal = strf("not run: the CUDA context failed earlier (%s)", cudaGetErrorString(s));
        }
        print_result(json, path, H, device, P, V->name, last, median(ts), median(tv));
    }

    if (g.e0) cudaEventDestroy(g.e0);
    if (g.e1) cudaEventDestroy(g.e1);
    if (g.e2) cudaEventDestroy(g.e2);
    if (g.cs) cusparseDestroy(g.cs);
    if (g.cb) cublasDestroy(g.cb);
    return exit_code;
}
