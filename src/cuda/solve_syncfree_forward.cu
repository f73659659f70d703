/* solve_syncfree_forward.cu -- the sync-free forward sweep's kernels that stage tiles (narrow
 * levels): a block of W warps per work item, each warp staging its tiles in shared memory
 * before it waits; VG: V_ii read from global memory instead of staged (wider levels). */
#include "cuda/solve_kernels.cuh"
#include "cuda/solve_sweeps.cuh"

template <int W, typename S, bool VG>
__global__ void __launch_bounds__(W * 32) k_forward_syncfree(dev_tiles T, const double *xin, double *x, int *ticket,
                                                            const int *epoch, const int *skip)
{
    forward_syncfree<W, S, VG, false>(T, xin, x, ticket, epoch, skip);
}

template <int W, typename S> static solve_syncfree_fn forward_w(bool vg)
{
    return vg ? k_forward_syncfree<W, S, true> : k_forward_syncfree<W, S, false>;
}

template <typename S> static solve_syncfree_fn forward_s(int warps, bool vg)
{
    return warps == 1 ? forward_w<1, S>(vg) : warps == 2 ? forward_w<2, S>(vg) : warps == 4 ? forward_w<4, S>(vg)
                                                                                          : forward_w<8, S>(vg);
}

solve_syncfree_fn solve_forward_kernel(int warps, bool float_tiles, bool vg)
{
    return float_tiles ? forward_s<float>(warps, vg) : forward_s<double>(warps, vg);
}

#ifdef ILDL_SOLVE_TRACE
cudaError_t solve_forward_set_trace(unsigned long long *buf)
{
    return cudaMemcpyToSymbol(g_sf_trace, &buf, sizeof buf);
}
#endif
