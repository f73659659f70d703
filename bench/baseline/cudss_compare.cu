/* cudss_compare.cu -- ildl-cudss: libblockildl against NVIDIA cuDSS (the GPU direct solver a
 * user would pick instead), in one process on one GPU. Reads a Matrix Market matrix, sets
 * b = A*ones and measures, for each library (docs/baseline.md):
 *   first    a solve from nothing: cuDSS analysis + factorization + solve; ours ildl_setup +
 *            ildl_factor + ildl_solve (each repetition from a new handle / data object);
 *   refactor new values (2A, A, 2A, ...: exact multiples, so the same solution) factored with
 *            the analysis reused, and solved: what an interior-point or Newton user pays at
 *            every step;
 *   ipm      (--ipm S) an interior-point loop: one analysis, then S steps of new values (the
 *            diagonal entries a_ii != 0 scaled by 10^(s u_i t/S), u_i uniform in [-1/2, 1/2),
 *            s = --spread decades, t = 1..S), factor and solve with b = A_t*ones, per step.
 * Both libraries get their values and right-hand sides from host memory and return x to host
 * memory, and the copies count (ildl_factor and ildl_solve take host arrays). "Converged" is the
 * true residual ||b - A x|| / ||b|| of the returned x, computed here on the host, at or below
 * --tol. One JSON line per measurement with --json, else a table.
 *
 *   ildl-cudss MATRIX [--repeat R (5)] [--tol T (1e-6)] [--ipm S (0)] [--spread D (6)]
 *                     [--cudss-ir N (0)] [--cudss-mt LIB] [--cudss-threads T] [--only ildl|cudss]
 *                     [--blocking rb|br|sn] [--refactor-scaling recompute|keep|equilibrate]
 *                     [--rung-choice cost|failure] [-v] [--json]
 * Exit status: 0 when every measurement ran (converged or not), 2 on a usage, input, CUDA or
 * cuDSS error. Built when ILDL_BUILD_BASELINES is on and ILDL_CUDSS_ROOT names a cuDSS
 * (bench/get-cudss.sh unpacks the PyPI wheel there). */
#include <cuda_runtime.h>
#include <cudss.h>

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
#include "core/util.h"
#include "io/mmio.h"
}
#include "errors.h"

#define CUDSS_CK(call)                                                                        \
    do {                                                                                      \
        cudssStatus_t s_ = (call);                                                            \
        if (s_ != CUDSS_STATUS_SUCCESS)                                                       \
            throw Error(strf("%s:%d: %s failed: cudssStatus %d", __FILE__, __LINE__, #call, (int)s_)); \
    } while (0)

static double median(std::vector<double> v)
{
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/* ------------------------------------------------------------------ the problem */

/* A as the library reads it (full pattern, sorted rows) and its lower triangle in 32-bit CSR
 * (what cuDSS gets, view LOWER); the positions of the diagonal entries in both, the seeds u_i of
 * the interior-point loop's scaling. */
struct Problem {
    ildl_csr A{};                   /* full pattern; A.val holds the current values */
    std::vector<double> val0;       /* the file's values */
    std::vector<int32_t> lrow, lcol; /* lower triangle */
    std::vector<double> lval;
    std::vector<int64_t> lpos;      /* lval[k] = A.val[lpos[k]] */
    std::vector<int64_t> dpos;      /* full positions of the nonzero diagonal entries */
    std::vector<double> u;          /* their exponents' seeds, in [-1/2, 1/2) */
    std::vector<double> b, x;
    ~Problem() { ildl_csr_free(&A); }
};

static void load(const char *path, Problem &P)
{
    char msg[512] = "";
    int st = ildl_mm_read(path, &P.A, msg, sizeof msg);
    if (st != ILDL_SUCCESS) throw Error(strf("cannot read %s: %s: %s", path, ildl_strerror(st), msg));
    int32_t n = P.A.n;
    int64_t nnz = P.A.rowptr[n];
    if (nnz > INT32_MAX) throw Error("more entries than cuDSS's 32-bit CSR here allows");
    P.val0.assign(P.A.val, P.A.val + nnz);
    P.lrow.assign((size_t)n + 1, 0);
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    for (int32_t i = 0; i < n; i++) {
        for (int64_t k = P.A.rowptr[i]; k < P.A.rowptr[i + 1]; k++) {
            int32_t j = P.A.col[k];
            if (j > i) break;
            P.lcol.push_back(j);
            P.lpos.push_back(k);
            if (j == i && P.A.val[k] != 0.0) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                P.dpos.push_back(k);
                P.u.push_back((double)(seed >> 11) * 0x1p-53 - 0.5);
            }
        }
        P.lrow[(size_t)i + 1] = (int32_t)P.lcol.size();
    }
    P.lval.resize(P.lcol.size());
    P.b.resize((size_t)n);
    P.x.resize((size_t)n);
}

/* The values of interior-point step t of S (t = 0: the file's) times mult, into A.val and lval,
 * and b = A_t * ones. */
static void set_step(Problem &P, int t, int S, double spread, double mult = 1.0)
{
    for (size_t k = 0; k < P.val0.size(); k++) P.A.val[k] = mult * P.val0[k];
    if (t > 0)
        for (size_t q = 0; q < P.dpos.size(); q++) P.A.val[P.dpos[q]] *= std::pow(10.0, spread * P.u[q] * t / S);
    for (size_t k = 0; k < P.lpos.size(); k++) P.lval[k] = P.A.val[P.lpos[k]];
    std::vector<double> ones((size_t)P.A.n, 1.0);
    ildl_csr_matvec(&P.A, ones.data(), P.b.data());
}

/* ||b - A x|| / ||b|| on the host (NaN x gives NaN). */
static double true_residual(const Problem &P)
{
    std::vector<double> r((size_t)P.A.n);
    ildl_csr_matvec(&P.A, P.x.data(), r.data());
    double nr = 0, nb = 0;
    for (int32_t i = 0; i < P.A.n; i++) {
        double d = P.b[i] - r[i];
        nr += d * d;
        nb += P.b[i] * P.b[i];
    }
    return nb > 0 ? std::sqrt(nr / nb) : std::sqrt(nr);
}

/* One measurement: times in seconds (NaN where not measured). */
struct Meas {
    double analysis = NAN, factor = NAN, solve = NAN, residual = NAN;
    int iterations = -1, rung = -1, info = 0;
};

/* ------------------------------------------------------------------ cuDSS */

struct CudssRun {
    int ir = 0, threads = 0;
    const char *mt = nullptr;
};

struct Cudss {
    cudaStream_t stream = nullptr;
    cudssHandle_t h = nullptr;
    cudssConfig_t cfg = nullptr;
    cudssData_t data = nullptr;
    cudssMatrix_t mA = nullptr, mX = nullptr, mB = nullptr;
    int32_t *rp = nullptr, *ci = nullptr;
    double *v = nullptr, *x = nullptr, *b = nullptr;
    void open(const Problem &P, const CudssRun &R)
    {
        int32_t n = P.A.n;
        int64_t nl = (int64_t)P.lcol.size();
        CUDA_CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CUDSS_CK(cudssCreate(&h));
        CUDSS_CK(cudssSetStream(h, stream));
        if (R.mt) CUDSS_CK(cudssSetThreadingLayer(h, R.mt));
        CUDSS_CK(cudssConfigCreate(&cfg));
        if (R.ir > 0) CUDSS_CK(cudssConfigSet(cfg, CUDSS_CONFIG_IR_N_STEPS, &R.ir, sizeof R.ir));
        if (R.mt && R.threads > 0) CUDSS_CK(cudssConfigSet(cfg, CUDSS_CONFIG_HOST_NTHREADS, &R.threads, sizeof R.threads));
        CUDA_CK(cudaMalloc(&rp, sizeof(int32_t) * ((size_t)n + 1)));
        CUDA_CK(cudaMalloc(&ci, sizeof(int32_t) * (size_t)std::max<int64_t>(nl, 1)));
        CUDA_CK(cudaMalloc(&v, sizeof(double) * (size_t)std::max<int64_t>(nl, 1)));
        CUDA_CK(cudaMalloc(&x, sizeof(double) * (size_t)n));
        CUDA_CK(cudaMalloc(&b, sizeof(double) * (size_t)n));
        CUDSS_CK(cudssMatrixCreateCsr(&mA, n, n, nl, rp, nullptr, ci, v, CUDA_R_32I, CUDA_R_32I, CUDA_R_64F,
                                      CUDSS_MTYPE_SYMMETRIC, CUDSS_MVIEW_LOWER, CUDSS_BASE_ZERO));
        CUDSS_CK(cudssMatrixCreateDn(&mX, n, 1, n, x, CUDA_R_64F, CUDSS_LAYOUT_COL_MAJOR));
        CUDSS_CK(cudssMatrixCreateDn(&mB, n, 1, n, b, CUDA_R_64F, CUDSS_LAYOUT_COL_MAJOR));
    }
    void close()
    {
        if (data) cudssDataDestroy(h, data);
        if (mA) cudssMatrixDestroy(mA);
        if (mX) cudssMatrixDestroy(mX);
        if (mB) cudssMatrixDestroy(mB);
        if (cfg) cudssConfigDestroy(cfg);
        if (h) cudssDestroy(h);
        cudaFree(rp), cudaFree(ci), cudaFree(v), cudaFree(x), cudaFree(b);
        if (stream) cudaStreamDestroy(stream);
        stream = nullptr, h = nullptr, cfg = nullptr, data = nullptr, mA = mX = mB = nullptr;
        rp = ci = nullptr, v = x = b = nullptr;
    }
    ~Cudss() { close(); }
    void sync() { CUDA_CK(cudaStreamSynchronize(stream)); }
    /* the pattern and values uploaded, analysed (a new data object) */
    double analyse(const Problem &P)
    {
        double t0 = ildl_wtime();
        if (data) {
            CUDSS_CK(cudssDataDestroy(h, data));
            data = nullptr;
        }
        CUDSS_CK(cudssDataCreate(h, &data));
        CUDA_CK(cudaMemcpyAsync(rp, P.lrow.data(), sizeof(int32_t) * P.lrow.size(), cudaMemcpyHostToDevice, stream));
        CUDA_CK(cudaMemcpyAsync(ci, P.lcol.data(), sizeof(int32_t) * P.lcol.size(), cudaMemcpyHostToDevice, stream));
        CUDA_CK(cudaMemcpyAsync(v, P.lval.data(), sizeof(double) * P.lval.size(), cudaMemcpyHostToDevice, stream));
        CUDSS_CK(cudssExecute(h, CUDSS_PHASE_ANALYSIS, cfg, data, mA, mX, mB));
        sync();
        return ildl_wtime() - t0;
    }
    /* the current values uploaded and factored; *info: cuDSS's CUDSS_DATA_INFO */
    double factor(const Problem &P, int *info)
    {
        double t0 = ildl_wtime();
        CUDA_CK(cudaMemcpyAsync(v, P.lval.data(), sizeof(double) * P.lval.size(), cudaMemcpyHostToDevice, stream));
        CUDSS_CK(cudssExecute(h, CUDSS_PHASE_FACTORIZATION, cfg, data, mA, mX, mB));
        sync();
        double t = ildl_wtime() - t0;
        size_t w = 0;
        *info = 0;
        CUDSS_CK(cudssDataGet(h, data, CUDSS_DATA_INFO, info, sizeof *info, &w));
        return t;
    }
    /* b uploaded, solved, x downloaded into P.x */
    double solve(Problem &P)
    {
        double t0 = ildl_wtime();
        CUDA_CK(cudaMemcpyAsync(b, P.b.data(), sizeof(double) * P.b.size(), cudaMemcpyHostToDevice, stream));
        CUDSS_CK(cudssExecute(h, CUDSS_PHASE_SOLVE, cfg, data, mA, mX, mB));
        CUDA_CK(cudaMemcpyAsync(P.x.data(), x, sizeof(double) * P.x.size(), cudaMemcpyDeviceToHost, stream));
        sync();
        return ildl_wtime() - t0;
    }
};

/* ------------------------------------------------------------------ libblockildl */

struct Ildl {
    ildl_options opt;
    ildl_handle *h = nullptr;
    Ildl() { ildl_options_default(&opt); }
    ~Ildl() { ildl_destroy(h); }
    void ck(int st, const char *what)
    {
        if (st != ILDL_SUCCESS && st != ILDL_ERR_NOT_CONVERGED)
            throw Error(strf("%s: %s (%s)", what, ildl_strerror(st), h ? ildl_last_error(h) : ""));
    }
    double analyse(const Problem &P)
    {
        ildl_destroy(h);
        h = nullptr;
        double t0 = ildl_wtime();
        int st = ildl_setup(P.A.n, P.A.rowptr, P.A.col, P.A.val, &opt, &h);
        ck(st, "ildl_setup");
        return ildl_wtime() - t0;
    }
    double factor(const Problem &P)
    {
        double t0 = ildl_wtime();
        ck(ildl_factor(h, P.A.val), "ildl_factor");
        return ildl_wtime() - t0;
    }
    double solve(Problem &P, Meas &m)
    {
        std::fill(P.x.begin(), P.x.end(), 0.0);
        double t0 = ildl_wtime();
        int st = ildl_solve(h, P.b.data(), P.x.data()); /* not converging is a result: the residual says it */
        double t = ildl_wtime() - t0;
        if (st == ILDL_ERR_CALL_ORDER || st == ILDL_ERR_DEVICE || st == ILDL_ERR_OUT_OF_MEMORY) ck(st, "ildl_solve");
        ildl_info info;
        ildl_get_info(h, &info);
        m.iterations = info.iterations;
        m.rung = info.rung;
        return t;
    }
};

/* ------------------------------------------------------------------ output */

struct Out {
    int json;
    std::string matrix, device, lib;
    int32_t n;
    int64_t nnz;
    double tol;
};

static void emit(const Out &o, const char *what, int step, const Meas &m)
{
    int conv = std::isfinite(m.residual) && m.residual <= o.tol;
    if (o.json) {
        auto num = [](double v) { return std::isfinite(v) ? strf("%.6g", v) : std::string("null"); };
        printf("{\"matrix\": \"%s\", \"n\": %d, \"nnz\": %lld, \"device\": \"%s\", \"lib\": \"%s\", \"what\": \"%s\", "
               "\"step\": %d, \"analysis_s\": %s, \"factor_s\": %s, \"solve_s\": %s, \"iterations\": %d, \"rung\": %d, "
               "\"info\": %d, \"residual\": %s, \"converged\": %s}\n",
               o.matrix.c_str(), (int)o.n, (long long)o.nnz, o.device.c_str(), o.lib.c_str(), what, step,
               num(m.analysis).c_str(), num(m.factor).c_str(), num(m.solve).c_str(), m.iterations, m.rung, m.info,
               num(m.residual).c_str(), conv ? "true" : "false");
    } else {
        printf("%-10s %-9s %4d  analysis %9.4f  factor %9.4f  solve %9.4f  its %5d  rung %2d  info %d  residual %.2e %s\n",
               o.lib.c_str(), what, step, m.analysis, m.factor, m.solve, m.iterations, m.rung, m.info, m.residual,
               conv ? "converged" : "NOT converged");
    }
    fflush(stdout);
}

/* The medians of R measurements (the worst residual). */
static Meas med(const std::vector<Meas> &v)
{
    Meas r;
    std::vector<double> a, f, s;
    for (const Meas &m : v) {
        a.push_back(m.analysis), f.push_back(m.factor), s.push_back(m.solve);
        r.residual = std::isnan(r.residual) || !(m.residual <= r.residual) ? m.residual : r.residual;
        r.iterations = std::max(r.iterations, m.iterations);
        r.rung = std::max(r.rung, m.rung);
        r.info = r.info ? r.info : m.info;
    }
    r.analysis = median(a), r.factor = median(f), r.solve = median(s);
    return r;
}

/* first (R times from nothing), refactor (R times), ipm (S steps); one library */
template <class Lib, class F, class S>
static void measure(Out &o, Problem &P, int R, int steps, double spread, Lib &lib, F factor, S solve)
{
    std::vector<Meas> first, again;
    set_step(P, 0, 1, 0.0);
    for (int r = 0; r <= R; r++) { /* r = 0: warm-up, not counted */
        Meas m;
        m.analysis = lib.analyse(P);
        m.factor = factor(m);
        m.solve = solve(m);
        m.residual = true_residual(P);
        if (r) first.push_back(m);
    }
    emit(o, "first", 0, med(first));
    for (int r = 0; r < R; r++) { /* new values each time: 2A, A, 2A, ... (exact multiples) */
        Meas m;
        set_step(P, 0, 1, 0.0, r % 2 ? 1.0 : 2.0);
        m.factor = factor(m);
        m.solve = solve(m);
        m.residual = true_residual(P);
        again.push_back(m);
    }
    emit(o, "refactor", 0, med(again));
    if (steps <= 0) return;
    set_step(P, 0, 1, 0.0);
    lib.analyse(P);
    for (int t = 1; t <= steps; t++) {
        Meas m;
        set_step(P, t, steps, spread);
        m.factor = factor(m);
        m.solve = solve(m);
        m.residual = true_residual(P);
        emit(o, "ipm", t, m);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ildl-cudss MATRIX.mtx[.gz] [--repeat R (5)] [--tol T (1e-6)] [--ipm STEPS (0)] "
               "[--spread DECADES (6)]\n"
               "                  [--cudss-ir N (0)] [--cudss-mt LIB] [--cudss-threads T] [--only ildl|cudss] "
               "[--blocking rb|br|sn]\n"
               "                  [--refactor-scaling recompute|keep|equilibrate] [--rung-choice cost|failure]\n"
               "                  [-v] [--json]\n");
}

int main(int argc, char **argv)
{
    const char *path = nullptr, *only = nullptr;
    int R = 5, steps = 0, json = 0;
    double tol = 1e-6, spread = 6.0;
    CudssRun cr;
    Ildl ours;
    for (int a = 1; a < argc; a++) {
        std::string o = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : nullptr;
        auto need = [&]() {
            if (!v) throw Error(strf("%s needs a value", o.c_str()));
            a++;
            return v;
        };
        try {
            if (o == "--help" || o == "-h") { usage(stdout); return 0; }
            else if (o == "--json") json = 1;
            else if (o == "-v") ours.opt.verbosity = 2;
            else if (o == "--repeat") R = atoi(need());
            else if (o == "--tol") tol = atof(need());
            else if (o == "--ipm") steps = atoi(need());
            else if (o == "--spread") spread = atof(need());
            else if (o == "--cudss-ir") cr.ir = atoi(need());
            else if (o == "--cudss-mt") cr.mt = need();
            else if (o == "--cudss-threads") cr.threads = atoi(need());
            else if (o == "--only") only = need();
            else if (o == "--blocking") {
                std::string b = need();
                if (b == "rb") ours.opt.blocking = ILDL_BLOCKING_RB;
                else if (b == "br") ours.opt.blocking = ILDL_BLOCKING_BR;
                else if (b == "sn") ours.opt.blocking = ILDL_BLOCKING_SN;
                else throw Error("--blocking: rb, br or sn");
            } else if (o == "--rung-choice") {
                std::string b = need();
                if (b == "cost") ours.opt.rung_choice = ILDL_RUNG_CHOICE_COST;
                else if (b == "failure") ours.opt.rung_choice = ILDL_RUNG_CHOICE_FAILURE;
                else throw Error("--rung-choice: cost or failure");
            } else if (o == "--refactor-scaling") {
                std::string b = need();
                if (b == "recompute") ours.opt.refactor_scaling = ILDL_REFACTOR_SCALING_RECOMPUTE;
                else if (b == "keep") ours.opt.refactor_scaling = ILDL_REFACTOR_SCALING_KEEP;
                else if (b == "equilibrate") ours.opt.refactor_scaling = ILDL_REFACTOR_SCALING_EQUILIBRATE;
                else throw Error("--refactor-scaling: recompute, keep or equilibrate");
            } else if (o[0] != '-' && !path) path = argv[a];
            else throw Error(strf("unknown option '%s'", o.c_str()));
        } catch (const std::exception &e) {
            fprintf(stderr, "ildl-cudss: %s\n", e.what());
            usage(stderr);
            return 2;
        }
    }
    if (!path || R < 1 || steps < 0 || !(tol > 0) || !std::isfinite(spread) ||
        (only && strcmp(only, "ildl") && strcmp(only, "cudss"))) {
        usage(stderr);
        return 2;
    }
    ours.opt.tol = tol;
    int rc = 0;
    try {
        Problem P;
        load(path, P);
        cudaDeviceProp prop;
        CUDA_CK(cudaSetDevice(0));
        CUDA_CK(cudaGetDeviceProperties(&prop, 0));
        const char *base = strrchr(path, '/');
        Out o{json, base ? base + 1 : path, prop.name, "", P.A.n, P.A.rowptr[P.A.n], tol};
        if (!json)
            printf("%s: n %d, nnz %lld, %zu nonzero diagonal entries, device %s, repeat %d, ipm %d steps over %g decades\n",
                   o.matrix.c_str(), (int)o.n, (long long)o.nnz, P.dpos.size(), o.device.c_str(), R, steps, spread);
        if (!only || !strcmp(only, "ildl")) {
            ours.opt.backend = ILDL_BACKEND_CUDA;
            o.lib = "ildl";
            measure(o, P, R, steps, spread, ours, [&](Meas &) { return ours.factor(P); },
                    [&](Meas &m) { return ours.solve(P, m); });
            ildl_destroy(ours.h);
            ours.h = nullptr;
        }
        if (!only || !strcmp(only, "cudss")) {
            Cudss c;
            c.open(P, cr);
            o.lib = cr.mt ? strf("cudss-mt%d", cr.threads) : cr.ir ? strf("cudss-ir%d", cr.ir) : std::string("cudss");
            measure(o, P, R, steps, spread, c, [&](Meas &m) { return c.factor(P, &m.info); },
                    [&](Meas &) { return c.solve(P); });
        }
    } catch (const std::exception &e) {
        fprintf(stderr, "ildl-cudss: %s\n", e.what());
        rc = 2;
    }
    return rc;
}
