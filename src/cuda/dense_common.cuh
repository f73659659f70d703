/* dense_common.cuh -- elimination steps of a dense <= 32x32 tile held in shared memory by a
 * team of NW warps of a block, mirroring src/cpu/dense_common.c operation for operation (so the
 * CPU and the GPU produce the same pivots and, with FMA contraction off on both, the same bits).
 * The tile's leading dimension is DLD = 33: a column's entries fall in distinct banks, so the
 * mirrored stores and the column interchanges are not 32-way bank conflicts. Called by the
 * team's threads uniformly (threadIdx.y < NW; the caller keeps the other warps out,
 * dense_factor.cuh): every branch below depends only on shared data, and each elimination step
 * ends with the tile consistent after a team barrier. Lane tx = threadIdx.x owns column tx;
 * warp w = threadIdx.y owns rows w, w + NW, ... of the rank-1/rank-2 updates. A team smaller than
 * the block synchronises on named barrier 1 (a single warp: __syncwarp), so a step does not wait
 * for 32 warps (perf-notes §78, §89). */
#ifndef ILDL_CUDA_DENSE_COMMON_CUH
#define ILDL_CUDA_DENSE_COMMON_CUH
#include "cuda/common.cuh"

/* ildl_dense_result, ildl_dense_params and the pivot rules: core/dense_rules.h (through
 * analyse/tiles.h), the same definitions as the CPU reference's. */

/* The working tile's leading dimension and size (dense_factor.cuh copies a tile of leading
 * dimension LD in and out). */
#define DLD (LD + 1)
#define DTILE (LD * DLD)

/* Rows of a rank-1/rank-2 update per warp of a team of NW. */
#define DD_ROWS(NW) ((LD + (NW)-1) / (NW))

template <int NW>
static __device__ __forceinline__ void dd_sync()
{
    if (NW == 1) __syncwarp();
    else asm volatile("bar.sync 1, %0;" ::"n"(NW * 32) : "memory");
}

template <int NW>
static __device__ void dd_begin(ildl_dense_result *res)
{
    int tx = threadIdx.x;
    if (threadIdx.y == 0) {
        res->perm[tx] = tx;
        res->d_diag[tx] = 0;
        res->d_off[tx] = 0;
        res->type[tx] = 0;
        if (tx == 0) {
            res->n2x2 = 0;
            res->nperturbed = 0;
        }
    }
    dd_sync<NW>();
}

/* Symmetric interchange of rows/cols i and j (and of perm). */
template <int NW, typename R>
static __device__ void dd_swap(int m, R *a, ildl_dense_result *res, int i, int j)
{
    /* Every warp must finish the pivot search (reads of a) before anyone swaps: without this
     * barrier a fast warp's swap raced a slow warp's search, so warps could choose different
     * pivots (seen as non-reproducible factors with 32-row blocks). */
    dd_sync<NW>();
    if (i == j) return;
    int tx = threadIdx.x, ty = threadIdx.y;
    if (ty == 0 && tx < m) {
        R t = a[i * DLD + tx];
        a[i * DLD + tx] = a[j * DLD + tx];
        a[j * DLD + tx] = t;
    }
    dd_sync<NW>();
    if (ty == 0 && tx < m) {
        R t = a[tx * DLD + i];
        a[tx * DLD + i] = a[tx * DLD + j];
        a[tx * DLD + j] = t;
    }
    if (ty == 0 && tx == 0) {
        int32_t p = res->perm[i];
        res->perm[i] = res->perm[j];
        res->perm[j] = p;
    }
    dd_sync<NW>();
}

/* max |x| over the lanes where `in` holds, NaN excluded, and the smallest lane holding it
 * (*lane = -1 when there is none): the sign bit cleared, a non-NaN value's bits order as its
 * magnitude, so two 32-bit warp reductions and a ballot find it for a double, one for a float
 * (the shuffle tree they replace took ~560 cycles a search: perf-notes §89). */
static __device__ __forceinline__ double dd_warp_absmax(bool in, double x, int *lane)
{
    unsigned long long b = (unsigned long long)__double_as_longlong(x) & 0x7fffffffffffffffull;
    in = in && b <= 0x7ff0000000000000ull; /* not NaN */
    if (!__ballot_sync(0xffffffffu, in)) {
        *lane = -1;
        return 0;
    }
    unsigned hi = (unsigned)(b >> 32), lo = (unsigned)b;
    unsigned h = __reduce_max_sync(0xffffffffu, in ? hi : 0u);
    bool top = in && hi == h;
    unsigned l = __reduce_max_sync(0xffffffffu, top ? lo : 0u);
    *lane = __ffs(__ballot_sync(0xffffffffu, top && lo == l)) - 1;
    return __longlong_as_double((long long)(((unsigned long long)h << 32) | l));
}

static __device__ __forceinline__ float dd_warp_absmax(bool in, float x, int *lane)
{
    unsigned b = (unsigned)__float_as_int(x) & 0x7fffffffu;
    in = in && b <= 0x7f800000u; /* not NaN */
    if (!__ballot_sync(0xffffffffu, in)) {
        *lane = -1;
        return 0;
    }
    unsigned h = __reduce_max_sync(0xffffffffu, in ? b : 0u);
    *lane = __ffs(__ballot_sync(0xffffffffu, in && b == h)) - 1;
    return __int_as_float((int)h);
}

/* max_{k <= j < m, j != skip} |a(row, j)|, smallest j on ties (NaN never wins), jmax = -1 and 0
 * when there is no candidate: the reference's serial scan, as a warp reduction that every warp
 * performs (lane j reads entry j), so every thread gets the same answer. */
template <typename R>
static __device__ R dd_absmax(int m, const R *a, int row, int k, int skip, int *jmax)
{
    int j = threadIdx.x;
    bool in = j >= k && j < m && j != skip;
    return dd_warp_absmax(in, in ? a[row * DLD + j] : (R)0, jmax);
}

/* A 1x1 pivot at k after interchanging k and piv. walked: the pivot search read rows other than
 * k (a rook walk, Bunch-Kaufman's second row), whose entries this step writes, so the
 * interchange's barrier is needed even when piv == k; after a search of row k alone the step
 * starts without one (it writes only rows and columns > k, which the search did not read). */
template <int NW, typename R>
static __device__ int dd_take1(int m, R *a, int k, int piv, const ildl_dense_params *p, ildl_dense_result *res,
                               bool walked = true)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    if (walked || piv != k) dd_swap<NW>(m, a, res, k, piv);
    int perturbed;
    R d = ildl_pivot1(a[k * DLD + k], (R)p->pivot_tol, (R)p->perturb, &perturbed);
    /* lane tx's multiplier a(k,tx)/d, in a register (every warp computes it) */
    R u = tx > k && tx < m ? a[k * DLD + tx] / d : (R)0;
    /* the warp's rows r = k + 1 + ty + NW q: every new value first, then the stores (no row
     * reads what another row of the step writes), so their loads are all in flight at once */
    R nv[DD_ROWS(NW)];
#pragma unroll
    for (int q = 0; q < DD_ROWS(NW); q++) {
        int r = k + 1 + ty + NW * q;
        nv[q] = r < m && tx >= r && tx < m ? a[r * DLD + tx] - a[k * DLD + r] * u : (R)0;
    }
#pragma unroll
    for (int q = 0; q < DD_ROWS(NW); q++) {
        int r = k + 1 + ty + NW * q;
        if (r < m && tx >= r && tx < m) {
            a[r * DLD + tx] = nv[q];
            a[tx * DLD + r] = nv[q];
        }
    }
    dd_sync<NW>();
    if (ty == 0 && tx > k && tx < m) {
        a[k * DLD + tx] = u;
        a[tx * DLD + k] = 0;
    }
    if (ty == 0 && tx == 0) {
        a[k * DLD + k] = 0;
        res->d_diag[k] = d;
        res->d_off[k] = 0;
        res->type[k] = 1;
        if (perturbed) res->nperturbed++;
    }
    dd_sync<NW>();
    return 1;
}

template <int NW, typename R>
static __device__ int dd_take2(int m, R *a, int k, int q, int r, const ildl_dense_params *p,
                               ildl_dense_result *res)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    if (!ildl_pivot2_ok(a[q * DLD + q], a[q * DLD + r], a[r * DLD + r], (R)p->pivot_tol))
        return dd_take1<NW>(m, a, k, q, p, res);
    dd_swap<NW>(m, a, res, k, q);
    if (r == k) r = q;
    dd_swap<NW>(m, a, res, k + 1, r);
    const R *ak = a + k * DLD, *ak1 = a + (k + 1) * DLD;
    R da = ak[k], db = ak[k + 1], dc = ak1[k + 1];
    R det = ildl_pivot2_det(da, db, dc);
    R u1 = 0, u2 = 0; /* lane tx's multipliers, in registers (every warp computes them) */
    if (tx >= k + 2 && tx < m) ildl_pivot2_solve(da, db, dc, det, ak[tx], ak1[tx], &u1, &u2);
    R nv[DD_ROWS(NW)]; /* as in dd_take1: the new values first, then the stores */
#pragma unroll
    for (int q = 0; q < DD_ROWS(NW); q++) {
        int rr = k + 2 + ty + NW * q;
        nv[q] = rr < m && tx >= rr && tx < m ? a[rr * DLD + tx] - (ak[rr] * u1 + ak1[rr] * u2) : (R)0;
    }
#pragma unroll
    for (int q = 0; q < DD_ROWS(NW); q++) {
        int rr = k + 2 + ty + NW * q;
        if (rr < m && tx >= rr && tx < m) {
            a[rr * DLD + tx] = nv[q];
            a[tx * DLD + rr] = nv[q];
        }
    }
    dd_sync<NW>();
    if (ty == 0 && tx >= k + 2 && tx < m) {
        a[k * DLD + tx] = u1;
        a[(k + 1) * DLD + tx] = u2;
        a[tx * DLD + k] = 0;
        a[tx * DLD + k + 1] = 0;
    }
    if (ty == 0 && tx == 0) {
        a[k * DLD + k] = 0;
        a[k * DLD + k + 1] = 0;
        a[(k + 1) * DLD + k] = 0;
        a[(k + 1) * DLD + k + 1] = 0;
        res->d_diag[k] = da;
        res->d_diag[k + 1] = dc;
        res->d_off[k] = db;
        res->d_off[k + 1] = 0;
        res->type[k] = 2;
        res->type[k + 1] = 0;
        res->n2x2++;
    }
    dd_sync<NW>();
    return 2;
}

#endif
