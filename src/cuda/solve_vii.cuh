/* solve_vii.cuh -- the end of a row: x_i times V_ii = U_ii^-1 (transposed forward), which the
 * factorization stored in the diagonal tile, read staged in shared memory, from global memory
 * (the tile, or backward its strict upper triangle packed), and the prefetches that bring its
 * lines in before. The CPU's products and additions in the CPU's order either way. */
#ifndef ILDL_CUDA_SOLVE_VII_CUH
#define ILDL_CUDA_SOLVE_VII_CUH
#include "cuda/solve_tiles.cuh"

/* Lane c of one warp: x_c + sum_{l<c} V(l,c) y_l, l ascending (the CPU's order), for y = xv
 * and V_ii = U_ii^-1 staged in ud (mi x mi, row-major): the forward sweep's U_ii^-T. Unrolled
 * with masks: the loads and shuffles are all in flight, only the additions chained. */
template <typename S> __device__ __forceinline__ double vii_forward(double xv, const S *ud, int mi)
{
    int c = threadIdx.x & 31;
    __syncwarp();
    double s = 0.0;
#pragma unroll
    for (int l = 0; l < LD - 1; l++) {
        double yl = __shfl_sync(0xffffffffu, xv, l);
        double v = ud[l * mi + c]; /* l * mi + c < TILE: in the staged tile, used only for c < mi */
        if (c > l && c < mi) s += v * yl;
    }
    return xv + s;
}

/* Lane r: x_r + sum_{c>r} V(r,c) y_c, c ascending, V_ii staged with ld SLD: the backward
 * sweep's U_ii^-1. */
template <typename S> __device__ __forceinline__ double vii_backward(double xv, const S *ud, int mi)
{
    int r = threadIdx.x & 31;
    __syncwarp();
    double s = 0.0;
#pragma unroll
    for (int c = 1; c < LD; c++) {
        double yc = __shfl_sync(0xffffffffu, xv, c);
        double v = ud[r * SLD + c];
        if (r < c && c < mi) s += v * yc;
    }
    return xv + s;
}

/* V_ii's entries in the staging type, and an L2 prefetch of them by one warp: the sweeps that
 * read V_ii from global memory ask for it when they start a row and read it when the row's sums
 * are done. They read only its strict upper triangle, so lane l asks for the lines of row l's
 * part past the diagonal (at most 31 entries, 248 bytes: three lines), not the whole tile, whose
 * lower triangle's lines were read from memory for nothing. */
template <bool L1> __device__ __forceinline__ void prefetch_line(const void *p) /* into L1, or L2 */
{
    if constexpr (L1) asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
    else asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}
/* L1: into L1 instead, shortly before the row's end (row_one_warp, VII_L1_AHEAD). */
template <typename S, bool L1 = false> __device__ __forceinline__ void prefetch_vii(const dev_tiles &T, int64_t u0, int mi)
{
    int l = threadIdx.x & 31;
    if (l + 1 < mi) {
        const char *a = (const char *)stage_ptr<S>(T, u0 + (int64_t)l * mi + l + 1);
        const char *b = (const char *)stage_ptr<S>(T, u0 + (int64_t)l * mi + mi - 1);
        prefetch_line<L1>(a);
        if (b - a >= 128) prefetch_line<L1>(a + 128);
        prefetch_line<L1>(b);
    }
}

/* vii_forward with V_ii read from global memory (lane c reads column c: one coalesced load per
 * row l); the same products and additions in the same order, so the same bits. */
template <typename S> __device__ __forceinline__ double vii_forward_global(double xv, const dev_tiles &T, int64_t u0,
                                                                          int mi)
{
    int c = threadIdx.x & 31;
    double s = 0.0;
#pragma unroll
    for (int l = 0; l < LD - 1; l++) {
        double yl = __shfl_sync(0xffffffffu, xv, l);
        double v = (c > l && c < mi) ? (double)stage_val<S>(T, u0 + (int64_t)l * mi + c) : 0.0;
        if (c > l && c < mi) s += v * yl;
    }
    return xv + s;
}

/* vii_backward with V_ii read from global memory (lane r reads row r, through L1: the tile is
 * read-only during the solves); the same products in the same order, so the same bits. */
/* Lane r: x_r + sum_{c>r} V(r,c) y_c, c ascending, with V(r,c) = base[row + c] for r < c < mi:
 * the backward sweep's U_ii^-1 read from global memory (lane r reads its own row through L1). */
template <typename S> __device__ __forceinline__ double vii_backward_row(double xv, const S *base, int row, int mi)
{
    int r = threadIdx.x & 31;
    double s = 0.0;
#pragma unroll
    for (int c = 1; c < LD; c++) {
        double yc = __shfl_sync(0xffffffffu, xv, c);
        bool on = r < c && c < mi;
        double v = on ? (double)base[row + c] : 0.0;
        if (on) s += v * yc;
    }
    return xv + s;
}

/* vii_backward with V_ii read from global memory: the mi x mi tile at u0 (row-major), the same
 * products in the same order, so the same bits. */
template <typename S> __device__ __forceinline__ double vii_backward_global(double xv, const dev_tiles &T, int64_t u0,
                                                                           int mi)
{
    return vii_backward_row<S>(xv, stage_ptr<S>(T, u0), (threadIdx.x & 31) * mi, mi);
}

/* The same over the packed copy vp (k_vii_pack), half the bytes. The backward sweep asks L2 for
 * the whole copy once the row's first metadata is in (prefetch_l2_lines): backward -8 to
 * -14%; the forward sweep, whose V_ii reads are coalesced and asked of L2 at the
 * row's start, was 4-14% slower with the packed copy (the same bits) and reads the whole tile. */
template <typename S> __device__ __forceinline__ double vii_backward_packed(double xv, const S *vp, int mi)
{
    int r = threadIdx.x & 31;
    return vii_backward_row<S>(xv, vp, vii_pos(r, mi) - r - 1, mi);
}

#endif
