/* solve_syncfree_backward.cu -- the sync-free backward sweep's kernels: staging tiles (narrow
 * levels), and without staging tiles (NS, wide levels; see solve_syncfree_forward_ns.cu). */
#include "cuda/solve_kernels.cuh"
#include "cuda/solve_sweeps.cuh"

template <int W, typename S>
__global__ void __launch_bounds__(W * 32) k_backward_syncfree(dev_tiles T, const double *xin, double *x, int *ticket,
                                                             const int *epoch, const int *skip)
{
    backward_syncfree<W, S, false>(T, xin, x, ticket, epoch, skip);
}

template <int W, typename S>
__global__ void __launch_bounds__(W * 32, SF_NS_WARPS_PER_SM / W) k_backward_syncfree_ns(dev_tiles T, const double *xin, double *x,
                                                                         int *ticket, const int *epoch,
                                                                         const int *skip)
{
    backward_syncfree<W, S, true>(T, xin, x, ticket, epoch, skip);
}

template <int W, typename S> static solve_syncfree_fn backward_w(bool ns)
{
    return ns ? k_backward_syncfree_ns<W, S> : k_backward_syncfree<W, S>;
}

template <typename S> static solve_syncfree_fn backward_s(int warps, bool ns)
{
    return warps == 1 ? backward_w<1, S>(ns) : warps == 2 ? backward_w<2, S>(ns) : warps == 4 ? backward_w<4, S>(ns)
                                                                                            : backward_w<8, S>(ns);
}

solve_syncfree_fn solve_backward_kernel(int warps, bool float_tiles, bool ns)
{
    return float_tiles ? backward_s<float>(warps, ns) : backward_s<double>(warps, ns);
}

#ifdef ILDL_SOLVE_TRACE
cudaError_t solve_backward_set_trace(unsigned long long *buf)
{
    return cudaMemcpyToSymbol(g_sf_trace, &buf, sizeof buf);
}
#endif
