/* solve_kernels.cuh -- the solve kernels' families, in .cu files of their own so that they
 * compile in parallel: the level schedule's (solve_levels.cu), the sync-free forward sweep's
 * that stage tiles (solve_syncfree_forward.cu) and those without staging tiles
 * (solve_syncfree_forward_ns.cu), the sync-free backward sweep's of both kinds
 * (solve_syncfree_backward.cu). Each has every instance (W = 1, 2, 4, 8 warps; S = double or
 * float staging; forward, V_ii staged or read from global memory) and hands out pointers to
 * them: solve.cu configures and launches them. */
#ifndef ILDL_CUDA_SOLVE_KERNELS_CUH
#define ILDL_CUDA_SOLVE_KERNELS_CUH
#include "cuda/factor_kernels.cuh"

/* Without staging tiles shared memory no longer limits the blocks per SM, registers do: the
 * bound asks for SF_NS_WARPS_PER_SM warps per SM (32: 64 registers; 56 unbounded, with
 * spills), the fastest measured. */
#ifndef SF_NS_WARPS_PER_SM
#define SF_NS_WARPS_PER_SM 32
#endif

/* A level kernel: one block per entry of rows, in place on x. */
typedef void (*solve_level_fn)(dev_tiles T, const int32_t *rows, double *x, const int *skip);
/* A sync-free kernel: right-hand side xin, result x, the sweep's ticket, the epoch. */
typedef void (*solve_syncfree_fn)(dev_tiles T, const double *xin, double *x, int *ticket, const int *epoch,
                                  const int *skip);

/* The kernel of `warps` warps (1, 2, 4 or 8) staging float (float_tiles) or double tiles, of
 * the forward or the backward sweep; vg: the forward one that reads V_ii from global memory;
 * ns: without staging tiles. */
solve_level_fn solve_level_kernel(int warps, bool float_tiles, bool forward);
solve_syncfree_fn solve_forward_kernel(int warps, bool float_tiles, bool vg);
solve_syncfree_fn solve_forward_ns_kernel(int warps, bool float_tiles, bool vg);
solve_syncfree_fn solve_backward_kernel(int warps, bool float_tiles, bool ns);

#ifdef ILDL_SOLVE_TRACE
/* Point the sync-free kernels of each file at the trace's records (one copy of the pointer per
 * file: no relocatable device code). */
cudaError_t solve_forward_set_trace(unsigned long long *buf);
cudaError_t solve_forward_ns_set_trace(unsigned long long *buf);
cudaError_t solve_backward_set_trace(unsigned long long *buf);
#endif

#endif
