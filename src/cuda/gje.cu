/* gje.cu -- block-Jacobi on the device: the batch of small blocks inverted by Gauss-Jordan
 * elimination with implicit pivoting, one warp per block and a row of it per lane in registers
 * (Anzt et al. 2017), and the batched product with the inverses, one warp per block. The same
 * bits as the CPU reference src/cpu/gje.c, whose header gives the contracts and the order of
 * every operation (the library is built with --fmad=false: no contraction here either). */
#include "cuda/context.cuh"
extern "C" {
#include "core/util.h"
#include "cpu/gje.h"
#include "cuda/cuda_backend.h"
}

#define GJE_WARPS 4 /* warps (blocks of the batch) per thread block */
#define GJE_LD 33   /* row stride of a block staged in shared memory: no bank conflicts */
#define FULL 0xffffffffu

/* One block of m <= W rows (W = 8, 16, 32: the row's registers), staged in s (row stride
 * GJE_LD); writes the inverse column-major into s (from 0) and returns the perturbed pivots, or
 * -1 where an entry of the inverse is not finite. The current column is always w[0]: after each
 * step the row rotates left by one slot (the step's column, now a column of the inverse, goes to
 * the last slot), so that the step loop need not be unrolled; after m steps slot j holds column
 * (j + m) mod W. Columns past m stay zero and never mix into the others' values. */
template <int W> __device__ __forceinline__ int gje_block(int m, int lane, double *s, int *spiv, double tol,
                                                          double perturb)
{
    double w[W];
#pragma unroll
    for (int j = 0; j < W; j++) w[j] = (lane < m && j < m) ? s[lane * GJE_LD + j] : 0.0;
    bool used = lane >= m; /* lanes past the block never pivot */
    int mystep = 0, np = 0;
    for (int k = 0; k < m; k++) {
        /* the pivot row: largest key among the unused rows, ties to the smaller row */
        double key = used ? -1.0 : (isnan(w[0]) ? -0.5 : fabs(w[0]));
        int r = lane;
#pragma unroll
        for (int o = 16; o; o >>= 1) {
            double ok = __shfl_xor_sync(FULL, key, o);
            int orow = __shfl_xor_sync(FULL, r, o);
            if (ok > key || (ok == key && orow < r)) key = ok, r = orow;
        }
        double p = __shfl_sync(FULL, w[0], r);
        if (!(fabs(p) >= tol)) {
            p = p < 0.0 ? -perturb : perturb;
            np++;
        }
        const double d = 1.0 / p;
        if (lane == r) {
            used = true;
            mystep = k;
            w[0] = 1.0;
#pragma unroll
            for (int j = 0; j < W; j++) w[j] = w[j] * d;
        }
        if (lane == 0) spiv[k] = r;
        const double f = w[0];
        if (lane != r) w[0] = 0.0;
#pragma unroll
        for (int j = 0; j < W; j++) {
            double pj = __shfl_sync(FULL, w[j], r);
            if (lane != r) w[j] = w[j] - f * pj;
        }
        const double t = w[0];
#pragma unroll
        for (int j = 0; j < W - 1; j++) w[j] = w[j + 1];
        w[W - 1] = t;
    }
    __syncwarp();
    /* row mystep of the inverse: column piv[c] gets column c; staged column-major */
    bool finite = true;
#pragma unroll
    for (int j = 0; j < W; j++) {
        int c = (j + m) & (W - 1);
        if (lane < m && c < m) {
            s[spiv[c] * m + mystep] = w[j];
            finite = finite && isfinite(w[j]);
        }
    }
    finite = __all_sync(FULL, finite);
    return finite ? np : -1;
}

__global__ void __launch_bounds__(32 * GJE_WARPS)
    k_gje_invert(int64_t count, const int32_t *__restrict__ size, const int64_t *__restrict__ offset,
                 const double *A, double tol, double perturb, double *inv, int32_t *__restrict__ perturbed)
{
    __shared__ double stage[GJE_WARPS][ILDL_GJE_MAX * GJE_LD];
    __shared__ int spiv[GJE_WARPS][ILDL_GJE_MAX];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const int64_t b = (int64_t)blockIdx.x * GJE_WARPS + wid;
    if (b >= count) return; /* the whole warp */
    const int m = size[b];
    const double *a = A + offset[b];
    double *s = stage[wid];
    for (int e = lane; e < m * m; e += 32) s[(e / m) * GJE_LD + e % m] = a[e]; /* coalesced */
    __syncwarp();
    int np; /* warp-uniform choice of the row's registers */
    if (m <= 8)
        np = gje_block<8>(m, lane, s, spiv[wid], tol, perturb);
    else if (m <= 16)
        np = gje_block<16>(m, lane, s, spiv[wid], tol, perturb);
    else
        np = gje_block<32>(m, lane, s, spiv[wid], tol, perturb);
    __syncwarp();
    double *out = inv + offset[b];
    for (int e = lane; e < m * m; e += 32) out[e] = s[e];
    if (lane == 0 && perturbed) perturbed[b] = np;
}

__global__ void __launch_bounds__(32 * GJE_WARPS)
    k_gje_apply(int64_t count, const int32_t *__restrict__ size, const int64_t *__restrict__ offset,
                const int64_t *__restrict__ rowptr, const double *__restrict__ inv, const double *x, double *z,
                const int *skip)
{
    if (skip && *skip) return; /* SQMR halted (a captured iteration): leave everything as it is */
    const int lane = threadIdx.x & 31;
    const int64_t b = (int64_t)blockIdx.x * GJE_WARPS + (threadIdx.x >> 5);
    if (b >= count) return;
    const int m = size[b];
    const int64_t r0 = rowptr[b];
    const double *v = inv + offset[b];
    const double xl = lane < m ? x[r0 + lane] : 0.0; /* all of x read before z is written */
    double acc = 0.0;
    for (int j = 0; j < m; j++) {
        double xj = __shfl_sync(FULL, xl, j);
        if (lane < m) acc = acc + v[(int64_t)j * m + lane] * xj;
    }
    if (lane < m) z[r0 + lane] = acc;
}

static unsigned gje_grid(int64_t count)
{
    return (unsigned)((count + GJE_WARPS - 1) / GJE_WARPS);
}

extern "C" int ildl_cuda_gje_invert_async(int64_t count, const int32_t *size, const int64_t *offset, const double *A,
                                          double tol, double perturb, double *inv, int32_t *perturbed, void *stream)
{
    int status = ILDL_SUCCESS;
    if (count <= 0) return ILDL_SUCCESS;
    k_gje_invert<<<gje_grid(count), 32 * GJE_WARPS, 0, (cudaStream_t)stream>>>(count, size, offset, A, tol, perturb,
                                                                             inv, perturbed);
    CU_LAUNCH();
cleanup:
    return status;
}

extern "C" int ildl_cuda_gje_apply_async(int64_t count, const int32_t *size, const int64_t *offset,
                                         const int64_t *rowptr, const double *inv, const double *x, double *z,
                                         void *stream)
{
    int status = ILDL_SUCCESS;
    if (count <= 0) return ILDL_SUCCESS;
    k_gje_apply<<<gje_grid(count), 32 * GJE_WARPS, 0, (cudaStream_t)stream>>>(count, size, offset, rowptr, inv, x, z, NULL);
    CU_LAUNCH();
cleanup:
    return status;
}

extern "C" int ildl_cuda_gje_host(int device_id, int64_t count, const int32_t *size, const int64_t *offset,
                                  const int64_t *rowptr, const double *A, double tol, double perturb, double *inv,
                                  int32_t *perturbed, const double *x, double *z, char *msg, size_t msglen)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    int32_t *d_size = NULL, *d_pert = NULL;
    int64_t *d_off = NULL, *d_row = NULL;
    double *d_A = NULL, *d_inv = NULL, *d_x = NULL;
    ildl_cuda_clear_message();
    if (count <= 0) return ILDL_SUCCESS;
    const size_t entries = (size_t)offset[count], rows = (size_t)rowptr[count];
    CU(cudaSetDevice(device_id));
    CU(cudaMalloc((void **)&d_size, sizeof(int32_t) * (size_t)count));
    CU(cudaMalloc((void **)&d_pert, sizeof(int32_t) * (size_t)count));
    CU(cudaMalloc((void **)&d_off, sizeof(int64_t) * (size_t)(count + 1)));
    CU(cudaMalloc((void **)&d_row, sizeof(int64_t) * (size_t)(count + 1)));
    CU(cudaMalloc((void **)&d_A, sizeof(double) * entries));
    CU(cudaMalloc((void **)&d_inv, sizeof(double) * entries));
    CU(cudaMalloc((void **)&d_x, sizeof(double) * (rows ? rows : 1)));
    CU(cudaMemcpy(d_size, size, sizeof(int32_t) * (size_t)count, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(d_off, offset, sizeof(int64_t) * (size_t)(count + 1), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(d_row, rowptr, sizeof(int64_t) * (size_t)(count + 1), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(d_A, A, sizeof(double) * entries, cudaMemcpyHostToDevice));
    status = ildl_cuda_gje_invert_async(count, d_size, d_off, d_A, tol, perturb, d_inv, d_pert, NULL);
    if (status) goto cleanup;
    if (x && z) {
        CU(cudaMemcpy(d_x, x, sizeof(double) * rows, cudaMemcpyHostToDevice));
        status = ildl_cuda_gje_apply_async(count, d_size, d_off, d_row, d_inv, d_x, d_x, NULL); /* in place */
        if (status) goto cleanup;
        CU(cudaMemcpy(z, d_x, sizeof(double) * rows, cudaMemcpyDeviceToHost));
    }
    CU(cudaMemcpy(inv, d_inv, sizeof(double) * entries, cudaMemcpyDeviceToHost));
    if (perturbed) CU(cudaMemcpy(perturbed, d_pert, sizeof(int32_t) * (size_t)count, cudaMemcpyDeviceToHost));
cleanup:
    cudaFree(d_size);
    cudaFree(d_pert);
    cudaFree(d_off);
    cudaFree(d_row);
    cudaFree(d_A);
    cudaFree(d_inv);
    cudaFree(d_x);
    if (status) ildl_msg(msg, msglen, "block-Jacobi on the device failed: %s", ildl_cuda_status_message(status));
    return status;
}

/* ---- options.method BLOCK_JACOBI on a context (cuda_backend.h) */

extern "C" size_t ildl_cuda_bj_bytes(int64_t count, int64_t entries)
{
    /* what ildl_cuda_bj_setup allocates (alloc's rounding: at least one element each) */
    size_t c = (size_t)(count > 0 ? count : 1), e = (size_t)(entries > 0 ? entries : 1);
    return 2 * sizeof(int32_t) * c + 2 * sizeof(int64_t) * (size_t)(count + 1) + sizeof(double) * e;
}

extern "C" int ildl_cuda_bj_setup(ildl_cuda_ctx *c, int64_t count, const int32_t *size, const int64_t *offset,
                                  const int64_t *rowptr)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    const size_t nb = (size_t)(count > 0 ? count : 1), entries = (size_t)(offset[count] > 0 ? offset[count] : 1);
    CU(cudaSetDevice(c->device));
    CU(alloc(&c->bj.d_size, nb, c));
    CU(alloc(&c->bj.d_pert, nb, c));
    CU(alloc(&c->bj.d_off, (size_t)count + 1, c));
    CU(alloc(&c->bj.d_row, (size_t)count + 1, c));
    CU(alloc(&c->bj.d_inv, entries, c));
    if (count > 0) CU(cudaMemcpy(c->bj.d_size, size, sizeof(int32_t) * (size_t)count, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->bj.d_off, offset, sizeof(int64_t) * (size_t)(count + 1), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->bj.d_row, rowptr, sizeof(int64_t) * (size_t)(count + 1), cudaMemcpyHostToDevice));
    c->bj.count = count;
    c->bj.on = 1;
cleanup:
    return status; /* what was allocated is freed with the context */
}

extern "C" int ildl_cuda_bj_factor(ildl_cuda_ctx *c, const double *blocks, const int32_t *q, const double *qs,
                                   const int32_t *qinv, double tol, double perturb, int32_t *perturbed)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    const int64_t count = c->bj.count;
    c->factored = 0;
    c->aval_current = 0; /* the values may be new: the next solve copies them */
    if (!c->bj.on) return ILDL_ERR_CALL_ORDER;
    CU(cudaSetDevice(c->device));
    /* pending applications read the inverses and the map that this replaces */
    CU(device_sync_locked());
    if (count > 0) {
        int64_t entries = 0;
        CU(cudaMemcpy(&entries, c->bj.d_off + count, sizeof entries, cudaMemcpyDeviceToHost));
        /* inverted in place: each warp stages its whole block before it writes the inverse */
        CU(cudaMemcpy(c->bj.d_inv, blocks, sizeof(double) * (size_t)entries, cudaMemcpyHostToDevice));
        status = ildl_cuda_gje_invert_async(count, c->bj.d_size, c->bj.d_off, c->bj.d_inv, tol, perturb, c->bj.d_inv,
                                            c->bj.d_pert, NULL);
        if (status) goto cleanup;
        CU(cudaMemcpy(perturbed, c->bj.d_pert, sizeof(int32_t) * (size_t)count, cudaMemcpyDeviceToHost));
    }
    if (q) CU(cudaMemcpy(c->d_q, q, sizeof(int32_t) * (size_t)c->n, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->d_qs, qs, sizeof(double) * (size_t)c->n, cudaMemcpyHostToDevice));
    if (qinv) CU(cudaMemcpy(c->d_qinv, qinv, sizeof(int32_t) * (size_t)c->n, cudaMemcpyHostToDevice));
    CU(cudaDeviceSynchronize());
    c->map_built = 1;
    c->factored = 1;
cleanup:
    return status;
}

/* x (device, analysed order) <- blockdiag(inv) x on stream s, skipped where c->d_skip says so */
int ildl_cuda_bj_apply_device(ildl_cuda_ctx *c, double *x, cudaStream_t s)
{
    int status = ILDL_SUCCESS;
    if (c->bj.count > 0) {
        k_gje_apply<<<gje_grid(c->bj.count), 32 * GJE_WARPS, 0, s>>>(c->bj.count, c->bj.d_size, c->bj.d_off,
                                                                      c->bj.d_row, c->bj.d_inv, x, x, c->d_skip);
        CU_LAUNCH();
    }
cleanup:
    return status;
}
