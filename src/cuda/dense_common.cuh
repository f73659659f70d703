/* dense_common.cuh -- block-cooperative elimination steps of a dense <= 32x32 tile held in
 * shared memory, mirroring src/cpu/dense_common.c operation for operation (so the CPU and the
 * GPU produce the same pivots and, with FMA contraction off on both, the same bits).
 * Called by all 32x32 threads of a block uniformly: every branch below depends only on
 * shared data, and each function ends with the tile consistent after a barrier.
 * Thread (ty, tx) = (threadIdx.y, threadIdx.x) owns tile entry (ty, tx). */
#ifndef ILDL_CUDA_DENSE_COMMON_CUH
#define ILDL_CUDA_DENSE_COMMON_CUH
#include "cuda/common.cuh"

/* ildl_dense_result, ildl_dense_params and the pivot rules: core/dense_rules.h (through
 * analyse/tiles.h), the same definitions as the CPU reference's. */

static __device__ void dd_begin(ildl_dense_result *res)
{
    int tid = threadIdx.y * LD + threadIdx.x;
    if (tid < LD) {
        res->perm[tid] = tid;
        res->d_diag[tid] = 0;
        res->d_off[tid] = 0;
        res->type[tid] = 0;
    }
    if (tid == 0) {
        res->n2x2 = 0;
        res->nperturbed = 0;
    }
    __syncthreads();
}

/* Symmetric interchange of rows/cols i and j (and of perm). */
template <typename R>
static __device__ void dd_swap(int m, R *a, ildl_dense_result *res, int i, int j)
{
    /* Every warp must finish the pivot search (reads of a) before anyone swaps: without this
     * barrier a fast warp's swap raced a slow warp's search, so warps could choose different
     * pivots (seen as non-reproducible factors with 32-row blocks). */
    __syncthreads();
    if (i == j) return;
    int tx = threadIdx.x, ty = threadIdx.y;
    if (ty == 0 && tx < m) {
        R t = a[i * LD + tx];
        a[i * LD + tx] = a[j * LD + tx];
        a[j * LD + tx] = t;
    }
    __syncthreads();
    if (ty == 0 && tx < m) {
        R t = a[tx * LD + i];
        a[tx * LD + i] = a[tx * LD + j];
        a[tx * LD + j] = t;
    }
    if (ty == 0 && tx == 0) {
        int32_t p = res->perm[i];
        res->perm[i] = res->perm[j];
        res->perm[j] = p;
    }
    __syncthreads();
}

/* max_{k <= j < m, j != skip} |a(row, j)|, smallest j on ties (NaN never wins), jmax = -1 and 0
 * when there is no candidate: the reference's serial scan, as a warp reduction that every warp
 * performs (lane j reads entry j), so every thread gets the same answer. */
template <typename R>
static __device__ R dd_absmax(int m, const R *a, int row, int k, int skip, int *jmax)
{
    int j = threadIdx.x;
    R v = -1;
    int idx = LD;
    if (j >= k && j < m && j != skip) {
        R x = r_abs(a[row * LD + j]);
        if (x >= 0) { /* false for NaN */
            v = x;
            idx = j;
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        R v2 = __shfl_xor_sync(0xffffffffu, v, off);
        int i2 = __shfl_xor_sync(0xffffffffu, idx, off);
        if (v2 > v || (v2 == v && i2 < idx)) {
            v = v2;
            idx = i2;
        }
    }
    *jmax = v < 0 ? -1 : idx;
    return v < 0 ? 0 : v;
}

template <typename R>
static __device__ int dd_take1(int m, R *a, int k, int piv, const ildl_dense_params *p, ildl_dense_result *res,
                        R *u1)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    dd_swap(m, a, res, k, piv);
    int perturbed;
    R d = ildl_pivot1(a[k * LD + k], (R)p->pivot_tol, (R)p->perturb, &perturbed);
    if (ty == 0 && tx > k && tx < m) u1[tx] = a[k * LD + tx] / d;
    __syncthreads();
    if (ty > k && ty < m && tx >= ty && tx < m) {
        R v = a[ty * LD + tx] - a[k * LD + ty] * u1[tx];
        a[ty * LD + tx] = v;
        a[tx * LD + ty] = v;
    }
    __syncthreads();
    if (ty == 0 && tx > k && tx < m) {
        a[k * LD + tx] = u1[tx];
        a[tx * LD + k] = 0;
    }
    if (ty == 0 && tx == 0) {
        a[k * LD + k] = 0;
        res->d_diag[k] = d;
        res->d_off[k] = 0;
        res->type[k] = 1;
        if (perturbed) res->nperturbed++;
    }
    __syncthreads();
    return 1;
}

template <typename R>
static __device__ int dd_take2(int m, R *a, int k, int q, int r, const ildl_dense_params *p,
                        ildl_dense_result *res, R *u1, R *u2)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    if (!ildl_pivot2_ok(a[q * LD + q], a[q * LD + r], a[r * LD + r], (R)p->pivot_tol))
        return dd_take1(m, a, k, q, p, res, u1);
    dd_swap(m, a, res, k, q);
    if (r == k) r = q;
    dd_swap(m, a, res, k + 1, r);
    const R *ak = a + k * LD, *ak1 = a + (k + 1) * LD;
    R da = ak[k], db = ak[k + 1], dc = ak1[k + 1];
    R det = ildl_pivot2_det(da, db, dc);
    if (ty == 0 && tx >= k + 2 && tx < m) ildl_pivot2_solve(da, db, dc, det, ak[tx], ak1[tx], &u1[tx], &u2[tx]);
    __syncthreads();
    if (ty >= k + 2 && ty < m && tx >= ty && tx < m) {
        R w1 = ak[ty], w2 = ak1[ty];
        R v = a[ty * LD + tx] - (w1 * u1[tx] + w2 * u2[tx]);
        a[ty * LD + tx] = v;
        a[tx * LD + ty] = v;
    }
    __syncthreads();
    if (ty == 0 && tx >= k + 2 && tx < m) {
        a[k * LD + tx] = u1[tx];
        a[(k + 1) * LD + tx] = u2[tx];
        a[tx * LD + k] = 0;
        a[tx * LD + k + 1] = 0;
    }
    if (ty == 0 && tx == 0) {
        a[k * LD + k] = 0;
        a[k * LD + k + 1] = 0;
        a[(k + 1) * LD + k] = 0;
        a[(k + 1) * LD + k + 1] = 0;
        res->d_diag[k] = da;
        res->d_diag[k + 1] = dc;
        res->d_off[k] = db;
        res->d_off[k + 1] = 0;
        res->type[k] = 2;
        res->type[k + 1] = 0;
        res->n2x2++;
    }
    __syncthreads();
    return 2;
}

#endif
