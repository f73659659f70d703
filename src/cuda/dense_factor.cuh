/* dense_factor.cuh -- the factorization of a diagonal tile in shared memory, PAP^T = U^T D U with
 * the pivot rule `pivoting` (none/BK/Rook: dense_{none,bk,rook}.cuh), by a team of
 * DD_TEAM_WARPS warps of a 32x32-thread block, on a copy of leading dimension DLD in the
 * caller's scratch (DTILE values of shared memory: with the tile's own leading dimension 32 every
 * mirrored store and column interchange was a 32-way bank conflict, though removing them alone
 * changed no measured time, perf-notes §89). Called by the whole block; ends with a block
 * barrier, the tile holding U (unit diagonal implied, zeros below) and res the pivots. */
#ifndef ILDL_CUDA_DENSE_FACTOR_CUH
#define ILDL_CUDA_DENSE_FACTOR_CUH
#include "cuda/dense_bk.cuh"
#include "cuda/dense_none.cuh"
#include "cuda/dense_rook.cuh"

/* The team's size (chosen by measurement: perf-notes §78). */
#define DD_TEAM_WARPS 4

template <typename R>
static __device__ void dd_factor(int pivoting, int m, R *a, R *scratch, const ildl_dense_params *p,
                                 ildl_dense_result *res)
{
    int r = threadIdx.y, c = threadIdx.x;
    scratch[r * DLD + c] = a[r * LD + c];
    __syncthreads();
    if (threadIdx.y < DD_TEAM_WARPS) {
        if (pivoting == ILDL_PIVOT_BK) dd_factor_bk<DD_TEAM_WARPS>(m, scratch, p, res);
        else if (pivoting == ILDL_PIVOT_ROOK) dd_factor_rook<DD_TEAM_WARPS>(m, scratch, p, res);
        else dd_factor_none<DD_TEAM_WARPS>(m, scratch, p, res);
    }
    __syncthreads();
    a[r * LD + c] = scratch[r * DLD + c];
    __syncthreads();
}
/* The pivot record res (shared memory) into o, by the block's threads tid < 32. */
static __device__ __forceinline__ void dd_result_store(int tid, const ildl_dense_result &res, ildl_dense_result *o)
{
    if (tid < LD) {
        o->perm[tid] = res.perm[tid];
        o->d_diag[tid] = res.d_diag[tid];
        o->d_off[tid] = res.d_off[tid];
        o->type[tid] = res.type[tid];
        if (tid == 0) {
            o->n2x2 = res.n2x2;
            o->nperturbed = res.nperturbed;
        }
    }
}
#endif
