/* solve_syncfree_forward_ns.cu -- the sync-free forward sweep's kernels without staging tiles
 * (wide levels: solve_select.cu's rule): sparse tiles summed by lanes over the copies that
 * solve_prepare.cu builds, dense ones read from global memory, one warp per block row by
 * default, so that many more rows are in flight. */
#include "cuda/solve_kernels.cuh"
#include "cuda/solve_sweeps.cuh"

template <int W, typename S, bool VG>
__global__ void __launch_bounds__(W * 32, SF_NS_WARPS_PER_SM / W) k_forward_syncfree_ns(dev_tiles T, const double *xin, double *x,
                                                                        int *ticket, const int *epoch,
                                                                        const int *skip)
{
    forward_syncfree<W, S, VG, true>(T, xin, x, ticket, epoch, skip);
}

template <int W, typename S> static solve_syncfree_fn forward_ns_w(bool vg)
{
    return vg ? k_forward_syncfree_ns<W, S, true> : k_forward_syncfree_ns<W, S, false>;
}

template <typename S> static solve_syncfree_fn forward_ns_s(int warps, bool vg)
{
    return warps == 1 ? forward_ns_w<1, S>(vg) : warps == 2 ? forward_ns_w<2, S>(vg)
         : warps == 4 ? forward_ns_w<4, S>(vg) : forward_ns_w<8, S>(vg);
}

solve_syncfree_fn solve_forward_ns_kernel(int warps, bool float_tiles, bool vg)
{
    return float_tiles ? forward_ns_s<float>(warps, vg) : forward_ns_s<double>(warps, vg);
}

#ifdef ILDL_SOLVE_TRACE
cudaError_t solve_forward_ns_set_trace(unsigned long long *buf)
{
    return cudaMemcpyToSymbol(g_sf_trace, &buf, sizeof buf);
}
#endif
