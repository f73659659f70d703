/* solve.cu -- block triangular solves with U^T D U on the GPU, one warp per block row,
 * mirroring src/cpu/solve.c entry for entry (same summation orders), in two schedules:
 *
 *  levels     one launch per level and direction (the reference schedule);
 *  sync-free  one persistent launch per direction: warps take block rows by an atomic
 *             ticket in level order, wait for the rows they depend on through per-row
 *             done flags (epoch-stamped, so nothing is reset between applications), and
 *             publish their own row with a fence followed by the flag.
 *
 * A row's arithmetic is the same in both schedules and reads only final values, so both give
 * bit-identical results; the sync-free one removes the per-level launch gaps that dominate
 * on deep matrices. Taking rows by ticket in level order (not by blockIdx) guarantees that
 * every row a warp waits for has already been claimed by a running warp: no deadlock even
 * when the grid is not resident all at once. */
#include "cuda/factor_kernels.cuh"

#define SF_WARPS 4 /* warps per block of the sync-free kernels */

/* Wait until row k's flag carries this epoch, then make its x visible to the warp. */
__device__ __forceinline__ void sf_wait(const int *done, int32_t k, int epoch)
{
    if ((threadIdx.x & 31) == 0) {
        while (*(volatile const int *)(done + k) != epoch) {
        }
        __threadfence();
    }
    __syncwarp();
}

/* Publish row i: its x values first, then the flag. */
__device__ __forceinline__ void sf_publish(int *done, int32_t i, int epoch)
{
    __threadfence();
    __syncwarp();
    if ((threadIdx.x & 31) == 0) atomicExch(done + i, epoch);
}

/* Load a dependency's x: in the sync-free schedule bypass L1 (written by another SM). */
template <bool SF> __device__ __forceinline__ double ld_dep(const double *p)
{
    return SF ? __ldcg(p) : *p;
}

#define SLD 33 /* padded leading dimension of a staged tile: no bank conflicts either way */
#define STILE (LD * SLD)

/* Stage stored tile t (mr x mc) into us (ld SLD) as dense, by one warp; sparse tiles get
 * zeros where nothing is stored. Returns 1 for a sparse tile. */
__device__ __forceinline__ int stage_tile(const dev_tiles &T, int64_t t, int mr, int mc, double *us)
{
    int lane = threadIdx.x & 31;
    const int64_t v0 = T.off[t];
    int sparse = T.format[t] == ILDL_TILE_SPARSE;
    __syncwarp();
    if (sparse) {
        for (int r = 0; r < mr; r++)
            if (lane < mc) us[r * SLD + lane] = 0.0;
        __syncwarp();
        const uint16_t *ix = T.idx + v0;
        int64_t nz = T.nnz[t];
        for (int64_t e = lane; e < nz; e += LD) us[(ix[e] >> 5) * SLD + (ix[e] & 31)] = dev_val(T, v0 + e);
    } else {
        for (int r = 0; r < mr; r++)
            if (lane < mc) us[r * SLD + lane] = dev_val(T, v0 + (int64_t)r * mc + lane);
    }
    __syncwarp();
    return sparse;
}

/* x_i <- U_ii^-T (x_i - sum_k U_ki^T x_k) by one warp; us: STILE doubles of shared memory.
 * Per tile, lane c sums U(l,c) x_k(l) over l ascending; a sparse tile adds only its stored
 * (nonzero) entries, a dense one every entry: exactly the CPU's two loops. */
template <bool SF>
__device__ void row_forward(const dev_tiles &T, int32_t i, double *x, double *us, const int *done,
                            int epoch)
{
    int c = threadIdx.x & 31;
    int mi = dev_bsize(T, i);
    double *xi = x + T.bstart[i];
    double xv = (c < mi) ? ld_dep<SF>(xi + c) : 0.0;
    for (int64_t q = T.col_ptr[i]; q < T.col_ptr[i + 1]; q++) {
        int64_t t = T.col_tiles[q];
        int32_t k = T.row[t];
        if (k >= i) break;
        if (SF) sf_wait(done, k, epoch);
        int mk = dev_bsize(T, k);
        double xk = (c < mk) ? ld_dep<SF>(x + T.bstart[k] + c) : 0.0;
        int sparse = stage_tile(T, t, mk, mi, us);
        double s = 0.0;
        for (int l = 0; l < mk; l++) {
            double xl = __shfl_sync(0xffffffffu, xk, l);
            double u = us[l * SLD + c];
            if (c < mi && (!sparse || u != 0.0)) s += u * xl;
        }
        xv -= s;
    }
    /* U_ii^-T: lane c accumulates s_c over l ascending as x_l becomes final (the CPU's
     * order); x_l is broadcast by shuffle, U_ii from shared memory */
    const int64_t u0 = T.off[T.row_ptr[i]];
    __syncwarp();
    for (int e = c; e < mi * mi; e += LD) us[e] = dev_val(T, u0 + e);
    __syncwarp();
    double s = 0.0;
    for (int l = 0; l < mi; l++) {
        if (c == l) xv -= s;
        double xl = __shfl_sync(0xffffffffu, xv, l);
        if (c > l && c < mi) s += us[l * mi + c] * xl;
    }
    if (c < mi) xi[c] = xv;
    __syncwarp();
}

/* x_i <- U_ii^-1 (x_i - sum_j U_ij x_j) by one warp (lane r sums over c ascending). */
template <bool SF>
__device__ void row_backward(const dev_tiles &T, int32_t i, double *x, double *us, const int *done,
                             int epoch)
{
    int r = threadIdx.x & 31;
    int mi = dev_bsize(T, i);
    double *xi = x + T.bstart[i];
    double xv = (r < mi) ? ld_dep<SF>(xi + r) : 0.0;
    for (int64_t t = T.row_ptr[i] + 1; t < T.row_ptr[i + 1]; t++) {
        int32_t j = T.col[t];
        if (SF) sf_wait(done, j, epoch);
        int mj = dev_bsize(T, j);
        double xj = (r < mj) ? ld_dep<SF>(x + T.bstart[j] + r) : 0.0;
        int sparse = stage_tile(T, t, mi, mj, us);
        double s = 0.0;
        for (int c = 0; c < mj; c++) {
            double xc = __shfl_sync(0xffffffffu, xj, c);
            double u = (r < mi) ? us[r * SLD + c] : 0.0;
            if (r < mi && (!sparse || u != 0.0)) s += u * xc;
        }
        xv -= s;
    }
    /* U_ii^-1: lane r accumulates s_r over c descending as x_c becomes final */
    const int64_t u0 = T.off[T.row_ptr[i]];
    __syncwarp();
    for (int e = r; e < mi * mi; e += LD) us[e] = dev_val(T, u0 + e);
    __syncwarp();
    double s = 0.0;
    for (int c = mi - 1; c >= 0; c--) {
        if (r == c) xv -= s;
        double xc = __shfl_sync(0xffffffffu, xv, c);
        if (r < c) s += us[r * mi + c] * xc;
    }
    if (r < mi) xi[r] = xv;
    __syncwarp();
}

/* ------------------------------------------------------------ level schedule */

__global__ void k_forward_level(dev_tiles T, const int32_t *rows, double *x)
{
    __shared__ double us[STILE];
    row_forward<false>(T, rows[blockIdx.x], x, us, NULL, 0);
}

__global__ void k_backward_level(dev_tiles T, const int32_t *rows, double *x)
{
    __shared__ double us[STILE];
    row_backward<false>(T, rows[blockIdx.x], x, us, NULL, 0);
}

/* ------------------------------------------------------------ sync-free schedule */

/* New epoch for the flags, tickets back to zero (one thread, before each solve). */
__global__ void k_syncfree_begin(int *epoch, int *tickets)
{
    epoch[0] += 1;
    tickets[0] = 0;
    tickets[1] = 0;
}

__global__ void __launch_bounds__(SF_WARPS * 32) k_forward_syncfree(dev_tiles T, double *x, int *done,
                                                                    int *ticket, const int *epoch)
{
    __shared__ double us[SF_WARPS][STILE];
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31, ep = *epoch;
    for (;;) {
        int t = 0;
        if (lane == 0) t = atomicAdd(ticket, 1);
        t = __shfl_sync(0xffffffffu, t, 0);
        if (t >= T.nb) break;
        int32_t i = T.level_rows[t];
        row_forward<true>(T, i, x, us[w], done, ep);
        sf_publish(done, i, ep);
    }
}

__global__ void __launch_bounds__(SF_WARPS * 32) k_backward_syncfree(dev_tiles T, double *x, int *done,
                                                                     int *ticket, const int *epoch)
{
    __shared__ double us[SF_WARPS][STILE];
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31, ep = *epoch;
    for (;;) {
        int t = 0;
        if (lane == 0) t = atomicAdd(ticket, 1);
        t = __shfl_sync(0xffffffffu, t, 0);
        if (t >= T.nb) break;
        int32_t i = T.level_rows[T.nb - 1 - t];
        row_backward<true>(T, i, x, us[w], done, ep);
        sf_publish(done, i, ep);
    }
}

/* x <- D^-1 x (1x1 and 2x2 pivots); one thread per row, the first of a 2x2 does both. */
__global__ void k_dsolve(dev_tiles T, double *x)
{
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= T.n) return;
    int8_t ty = T.piv_type[k];
    double a = T.d_diag[k];
    if (ty == 2 && k + 1 < T.n) {
        double b = T.d_off[k], c = T.d_diag[k + 1];
        double det = a * c - b * b, x0 = x[k], x1 = x[k + 1];
        x[k] = (c * x0 - b * x1) / det;
        x[k + 1] = (a * x1 - b * x0) / det;
    } else if (ty != 0) {
        x[k] /= a;
    }
}
