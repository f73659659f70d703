/* solve_levels.cu -- the level schedule's kernels: one launch per level and direction, one
 * block per block row of the level (the reference schedule; src/cpu/solve.c's order). */
#include "cuda/solve_kernels.cuh"
#include "cuda/solve_rows.cuh"

template <int W, typename S> __global__ void __launch_bounds__(W * 32) k_forward_level(dev_tiles T, const int32_t *rows, double *x,
                                                                            const int *skip)
{
    extern __shared__ double smem[];
    if (*skip) return;
    row_forward<W, false, S>(T, row_from_tiles<true>(T, rows[blockIdx.x]), x, x, smem);
}

template <int W, typename S> __global__ void __launch_bounds__(W * 32) k_backward_level(dev_tiles T, const int32_t *rows, double *x,
                                                                             const int *skip)
{
    extern __shared__ double smem[];
    if (*skip) return;
    row_backward<W, false, S>(T, row_from_tiles<false>(T, rows[blockIdx.x]), x, x, smem);
}

template <int W, typename S> static solve_level_fn level_w(bool forward)
{
    return forward ? k_forward_level<W, S> : k_backward_level<W, S>;
}

template <typename S> static solve_level_fn level_s(int warps, bool forward)
{
    return warps == 1 ? level_w<1, S>(forward) : warps == 2 ? level_w<2, S>(forward)
         : warps == 4 ? level_w<4, S>(forward) : level_w<8, S>(forward);
}

solve_level_fn solve_level_kernel(int warps, bool float_tiles, bool forward)
{
    return float_tiles ? level_s<float>(warps, forward) : level_s<double>(warps, forward);
}
