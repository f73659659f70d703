/* solve.cu -- block triangular solves with U^T D U on the GPU, one block of SOLVE_WARPS warps
 * per block row (a warp per off-diagonal tile, sums combined in tile order),
 * mirroring src/cpu/solve.c entry for entry (same summation orders), in two schedules:
 *
 *  levels     one launch per level and direction (the reference schedule);
 *  sync-free  one persistent launch per direction: blocks take block rows by an atomic
 *             ticket in level order, wait for the rows they depend on through per-row
 *             done flags (epoch-stamped, so nothing is reset between applications), and
 *             publish their own row with a fence followed by the flag.
 *
 * A row's arithmetic is the same in both schedules and reads only final values, so both give
 * bit-identical results; the sync-free one removes the per-level launch gaps that dominate
 * on deep matrices. Taking rows by ticket in level order (not by blockIdx) guarantees that
 * every row a block waits for has already been claimed by a running block: no deadlock even
 * when the grid is not resident all at once. */
#include "cuda/factor_kernels.cuh"


/* Wait until row k's flag carries this epoch, then make its x visible to the warp. */
__device__ __forceinline__ void sf_wait(const int *done, int32_t k, int epoch)
{
    if ((threadIdx.x & 31) == 0) {
        /* back off a little: thousands of spinning warps otherwise load the L2 that the
         * rows on the critical path need */
        unsigned ns = 8;
        while (*(volatile const int *)(done + k) != epoch) {
            __nanosleep(ns);
            if (ns < 64) ns *= 2;
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

/* What a warp needs to know about one off-diagonal tile of the row being solved, gathered by
 * the whole block at once before any warp waits: staging then costs one dependent load (the
 * values) instead of three (tile index, offset and format, values). */
struct tile_meta {
    int64_t off[SOLVE_PARTS];
    int32_t nnz[SOLVE_PARTS], dep[SOLVE_PARTS], dep0[SOLVE_PARTS], depm[SOLVE_PARTS];
    uint8_t sparse[SOLVE_PARTS];
};

/* Fill meta for `count` tiles starting at position `first`: of block column i's list
 * (col_tiles) for the forward solve, of block row i's tiles for the backward solve; dep is the
 * other block (row k forward, column j backward). Block-wide, ends with a barrier. */
template <bool FORWARD>
__device__ __forceinline__ void gather_meta(const dev_tiles &T, int64_t first, int count, tile_meta *m)
{
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        int64_t t = FORWARD ? T.col_tiles[first + k] : first + k;
        int32_t d = FORWARD ? T.row[t] : T.col[t];
        m->off[k] = T.off[t];
        m->nnz[k] = (int32_t)T.nnz[t];
        m->sparse[k] = T.format[t] == ILDL_TILE_SPARSE;
        m->dep[k] = d;
        int32_t b0 = T.bstart[d];
        m->dep0[k] = b0;
        m->depm[k] = T.bstart[d + 1] - b0;
    }
    __syncthreads();
}

/* Stage tile k of meta (mr x mc) into us (ld SLD) as dense, by one warp; sparse tiles get
 * zeros where nothing is stored. Returns 1 for a sparse tile. */
__device__ __forceinline__ int stage_tile(const dev_tiles &T, const tile_meta *m, int k, int mr, int mc,
                                          double *us)
{
    int lane = threadIdx.x & 31;
    const int64_t v0 = m->off[k];
    int sparse = m->sparse[k];
    __syncwarp();
    if (sparse) {
        for (int r = 0; r < mr; r++)
            if (lane < mc) us[r * SLD + lane] = 0.0;
        __syncwarp();
        const uint16_t *ix = T.idx + v0;
        int nz = m->nnz[k];
        for (int e = lane; e < nz; e += LD) {
            int p = ix[e];
            us[(p >> 5) * SLD + (p & 31)] = dev_val(T, v0 + e);
        }
    } else {
        for (int r = 0; r < mr; r++)
            if (lane < mc) us[r * SLD + lane] = dev_val(T, v0 + (int64_t)r * mc + lane);
    }
    __syncwarp();
    return sparse;
}

/* Lane c of one warp: s_c = sum_l U_t(l,c) x_k(l) over l ascending for tile t = (k,i) (mk x mi);
 * a sparse tile adds only its stored (nonzero) entries, a dense one every entry: exactly the
 * CPU's two loops. */
template <bool SF>
__device__ __forceinline__ double tile_tmatvec(const dev_tiles &T, const tile_meta *m, int q, int mi,
                                               const double *x, double *us, const int *done, int epoch)
{
    int c = threadIdx.x & 31;
    int mk = m->depm[q];
    int sparse = stage_tile(T, m, q, mk, mi, us); /* the factor is final: load it while k finishes */
    if (SF) sf_wait(done, m->dep[q], epoch);
    double xk = (c < mk) ? ld_dep<SF>(x + m->dep0[q] + c) : 0.0;
    double s = 0.0;
    for (int l = 0; l < mk; l++) {
        double xl = __shfl_sync(0xffffffffu, xk, l);
        double u = us[l * SLD + c];
        if (c < mi && (!sparse || u != 0.0)) s += u * xl;
    }
    return s;
}

/* Lane r of one warp: s_r = sum_c U_t(r,c) x_j(c) over c ascending for tile t = (i,j). */
template <bool SF>
__device__ __forceinline__ double tile_matvec(const dev_tiles &T, const tile_meta *m, int q, int mi,
                                              const double *x, double *us, const int *done, int epoch)
{
    int r = threadIdx.x & 31;
    int mj = m->depm[q];
    int sparse = stage_tile(T, m, q, mi, mj, us);
    if (SF) sf_wait(done, m->dep[q], epoch);
    double xj = (r < mj) ? ld_dep<SF>(x + m->dep0[q] + r) : 0.0;
    double s = 0.0;
    for (int c = 0; c < mj; c++) {
        double xc = __shfl_sync(0xffffffffu, xj, c);
        double u = (r < mi) ? us[r * SLD + c] : 0.0;
        if (r < mi && (!sparse || u != 0.0)) s += u * xc;
    }
    return s;
}

/* x_i <- U_ii^-T (x_i - sum_k U_ki^T x_k) by the SOLVE_WARPS warps of a block: warp w takes
 * tiles w, w + W, ... of each group of SOLVE_PARTS tiles at its own pace (no barrier between
 * its tiles, so one warp's wait does not hold the others); warp 0 then subtracts the group's
 * sums in tile order (the CPU's order, so the bits do not depend on W) and finally
 * substitutes with U_ii. Shared memory: SOLVE_SMEM_BYTES. */
template <bool SF>
__device__ void row_forward(const dev_tiles &T, int32_t i, double *x, double *smem, const int *done,
                            int epoch)
{
    __shared__ tile_meta meta;
    int w = threadIdx.x >> 5, c = threadIdx.x & 31;
    double *us = smem + w * STILE, *ud = smem + SOLVE_WARPS * STILE, *part = ud + TILE;
    int mi = dev_bsize(T, i);
    double *xi = x + T.bstart[i];
    double xv = (w == 0 && c < mi) ? ld_dep<SF>(xi + c) : 0.0;
    const int64_t u0 = T.off[T.row_ptr[i]];
    if (w == 0) /* U_ii for the end, loaded now */
        for (int e = c; e < mi * mi; e += LD) ud[e] = dev_val(T, u0 + e);
    int64_t q0 = T.col_ptr[i], qend = T.col_diag[i];
    for (int64_t cb = q0; cb < qend; cb += SOLVE_PARTS) {
        int ng = (int)(qend - cb < SOLVE_PARTS ? qend - cb : SOLVE_PARTS);
        gather_meta<true>(T, cb, ng, &meta);
        for (int q = w; q < ng; q += SOLVE_WARPS)
            part[q * LD + c] = tile_tmatvec<SF>(T, &meta, q, mi, x, us, done, epoch);
        __syncthreads();
        if (w == 0)
            for (int q = 0; q < ng; q++) xv -= part[q * LD + c];
        __syncthreads();
    }
    if (w != 0) return;
    /* U_ii^-T: lane c accumulates s_c over l ascending as x_l becomes final (the CPU's
     * order); x_l is broadcast by shuffle, U_ii from shared memory */
    __syncwarp();
    double s = 0.0;
    for (int l = 0; l < mi; l++) {
        if (c == l) xv -= s;
        double xl = __shfl_sync(0xffffffffu, xv, l);
        if (c > l && c < mi) s += ud[l * mi + c] * xl;
    }
    if (c < mi) xi[c] = xv;
    __syncwarp();
}

/* x_i <- U_ii^-1 (x_i - sum_j U_ij x_j), tiles split over warps as in row_forward. */
template <bool SF>
__device__ void row_backward(const dev_tiles &T, int32_t i, double *x, double *smem, const int *done,
                             int epoch)
{
    __shared__ tile_meta meta;
    int w = threadIdx.x >> 5, r = threadIdx.x & 31;
    double *us = smem + w * STILE, *ud = smem + SOLVE_WARPS * STILE, *part = ud + TILE;
    int mi = dev_bsize(T, i);
    double *xi = x + T.bstart[i];
    double xv = (w == 0 && r < mi) ? ld_dep<SF>(xi + r) : 0.0;
    const int64_t u0 = T.off[T.row_ptr[i]];
    if (w == 0) /* U_ii for the end, loaded now */
        for (int e = r; e < mi * mi; e += LD) ud[e] = dev_val(T, u0 + e);
    int64_t t0 = T.row_ptr[i] + 1, tend = T.row_ptr[i + 1];
    for (int64_t cb = t0; cb < tend; cb += SOLVE_PARTS) {
        int ng = (int)(tend - cb < SOLVE_PARTS ? tend - cb : SOLVE_PARTS);
        gather_meta<false>(T, cb, ng, &meta);
        for (int q = w; q < ng; q += SOLVE_WARPS)
            part[q * LD + r] = tile_matvec<SF>(T, &meta, q, mi, x, us, done, epoch);
        __syncthreads();
        if (w == 0)
            for (int q = 0; q < ng; q++) xv -= part[q * LD + r];
        __syncthreads();
    }
    if (w != 0) return;
    /* U_ii^-1: lane r accumulates s_r over c descending as x_c becomes final */
    __syncwarp();
    double s = 0.0;
    for (int c = mi - 1; c >= 0; c--) {
        if (r == c) xv -= s;
        double xc = __shfl_sync(0xffffffffu, xv, c);
        if (r < c) s += ud[r * mi + c] * xc;
    }
    if (r < mi) xi[r] = xv;
    __syncwarp();
}

/* ------------------------------------------------------------ level schedule */

__global__ void __launch_bounds__(SOLVE_WARPS * 32, 2) k_forward_level(dev_tiles T, const int32_t *rows, double *x)
{
    extern __shared__ double smem[];
    row_forward<false>(T, rows[blockIdx.x], x, smem, NULL, 0);
}

__global__ void __launch_bounds__(SOLVE_WARPS * 32, 2) k_backward_level(dev_tiles T, const int32_t *rows, double *x)
{
    extern __shared__ double smem[];
    row_backward<false>(T, rows[blockIdx.x], x, smem, NULL, 0);
}

/* ------------------------------------------------------------ sync-free schedule */

/* New epoch for the flags, tickets back to zero (one thread, before each solve). */
__global__ void k_syncfree_begin(int *epoch, int *tickets)
{
    epoch[0] += 1;
    tickets[0] = 0;
    tickets[1] = 0;
}

/* The next ticket for the whole block (uniform), or >= nb when the work is done. */
__device__ __forceinline__ int sf_take(int *ticket, int *slot)
{
    __syncthreads(); /* the previous row's reads of *slot are over */
    if (threadIdx.x == 0) *slot = atomicAdd(ticket, 1);
    __syncthreads();
    return *slot;
}

__global__ void __launch_bounds__(SOLVE_WARPS * 32, 2) k_forward_syncfree(dev_tiles T, double *x, int *done,
                                                                       int *ticket, const int *epoch)
{
    extern __shared__ double smem[];
    __shared__ int slot;
    int ep = *epoch;
    for (;;) {
        int t = sf_take(ticket, &slot);
        if (t >= T.nb) break;
        int32_t i = T.level_rows[t];
        row_forward<true>(T, i, x, smem, done, ep);
        if (threadIdx.x < 32) sf_publish(done, i, ep);
    }
}

__global__ void __launch_bounds__(SOLVE_WARPS * 32, 2) k_backward_syncfree(dev_tiles T, double *x, int *done,
                                                                        int *ticket, const int *epoch)
{
    extern __shared__ double smem[];
    __shared__ int slot;
    int ep = *epoch;
    for (;;) {
        int t = sf_take(ticket, &slot);
        if (t >= T.nb) break;
        int32_t i = T.level_rows[T.nb - 1 - t];
        row_backward<true>(T, i, x, smem, done, ep);
        if (threadIdx.x < 32) sf_publish(done, i, ep);
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
