/* factor_phase_c.cu -- phase C of the block-iLDL^T factorization on the GPU, per chunk of rows
 * (the driver is factor.cu), and the inversion of the diagonal tiles after the last chunk:
 *   k_phase_c          one block per block row and one per off-diagonal tile of the chunk
 *                      (and in a narrow chunk one per tile (k,i), k < i, of its rows' columns):
 *                      keep the largest entries up to each tile's storage, compress and store,
 *                      and permute the columns of block column i into block i's pivot order;
 *   k_invert_diagonal  one warp per block row: U_ii becomes V_ii = U_ii^{-1} for the solves.
 * The same selections (keep-largest by magnitude, then local index) and the same operations
 * in the same order as the CPU reference (src/cpu/factor.c, src/cpu/drop.c). Templates on the
 * value type R: double, or float for precision single; launches in factor_phases.cuh. */
#include "cuda/context.cuh"
#include "cuda/factor_phases.cuh"

/* The bits of a non-negative magnitude as an unsigned integer of the same order, and its
 * highest bit that can be set (the sign bit is 0). */
template <typename R> struct mag_key;
template <> struct mag_key<double> {
    typedef unsigned long long type;
    static constexpr int top = 62;
    static __device__ __forceinline__ type of(double m) { return (type)__double_as_longlong(m); }
};
template <> struct mag_key<float> {
    typedef unsigned type;
    static constexpr int top = 30;
    static __device__ __forceinline__ type of(float m) { return __float_as_uint(m); }
};

/* Whether this thread's entry is among the `keep` largest of the block's candidates, ranked by
 * (magnitude desc, local index asc) as the reference does (0 < keep < number of candidates).
 * The keep-th largest magnitude is found bit by bit (non-negative floats order as their bit
 * patterns), 63 (double) or 31 (float) block-wide counts instead of every thread ranking itself against all 1024
 * entries; ties at it go to the smallest indices. warpcnt: 32 ints of shared scratch. */
template <typename R>
__device__ bool d_keep_largest(bool cand, R mag, int keep, int *warpcnt)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    typedef typename mag_key<R>::type key_t;
    key_t key = cand ? mag_key<R>::of(mag) : (key_t)0;
    key_t thr = 0;
    for (int bit = mag_key<R>::top; bit >= 0; bit--) {
        key_t c = thr | ((key_t)1 << bit);
        if (__syncthreads_count(cand && key >= c) >= keep) thr = c;
    }
    int above = __syncthreads_count(cand && key > thr);
    bool tie = cand && key == thr;
    unsigned ballot = __ballot_sync(0xffffffffu, tie);
    if (tx == 0) warpcnt[ty] = __popc(ballot);
    __syncthreads();
    int before = __popc(ballot & ((1u << tx) - 1u));
    for (int w = 0; w < ty; w++) before += warpcnt[w];
    __syncthreads();
    return cand && (key > thr || (tie && above + before < keep));
}

/* Compress the entries of a 32x32 shared tile that have `present` set (thread (ty,tx) owns
 * entry tid) into ix/v in ascending local index: warp ty holds row ty. Returns the count
 * (uniform). rowcnt, rowoff: shared scratch. */
template <typename R>
__device__ int d_compress(bool present, R val, uint16_t *ix, R *v, int *rowcnt, int *rowoff)
{
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    unsigned ballot = __ballot_sync(0xffffffffu, present);
    if (tx == 0) rowcnt[ty] = __popc(ballot);
    __syncthreads();
    if (ty == 0) { /* prefix sum of the row counts by warp shuffles (a serial loop was 32 steps) */
        int sum = rowcnt[tx];
        for (int d = 1; d < LD; d *= 2) {
            int o = __shfl_up_sync(0xffffffffu, sum, d);
            if (tx >= d) sum += o;
        }
        rowoff[tx + 1] = sum;
        if (tx == 0) rowoff[0] = 0;
    }
    __syncthreads();
    if (present) {
        int pos = rowoff[ty] + __popc(ballot & ((1u << tx) - 1u));
        ix[pos] = (uint16_t)tid;
        v[pos] = val;
    }
    int total = rowoff[LD];
    __syncthreads();
    return total;
}

/* This thread's share of a stored tile t = (k,i) whose columns are to go into block i's pivot
 * order: a sparse tile's entry tid (p: its index, < 0: none), or the dense entry that moves to
 * (ty, tx), i.e. (ty, perm[tx]). Global reads only. */
template <typename R> struct colperm_fetch {
    int64_t off;
    R v;
    int p, mk;
    bool sparse;
};

template <typename R>
__device__ __forceinline__ void d_colperm_fetch(const dev_tiles &T, int64_t t, int mi, const int *perm,
                                                colperm_fetch<R> *f)
{
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    f->off = T.off[t];
    f->mk = dev_bsize(T, T.row[t]);
    f->sparse = T.format[t] == ILDL_TILE_SPARSE;
    f->v = 0.0;
    f->p = -1;
    if (f->sparse) {
        if (tid < T.nnz[t]) {
            f->p = T.idx[f->off + tid];
            f->v = fac_val<R>(T)[f->off + tid];
        }
    } else if (ty < f->mk && tx < mi) {
        f->v = fac_val<R>(T)[f->off + ty * mi + perm[tx]];
    }
}

/* Store off-diagonal tile s of block row i from its in-flight slot: keep the largest entries
 * when it needs more than its storage (sparse tiles), compress, write. Block-wide. */
template <typename R>
__device__ void d_store_tile(dev_tiles &T, int32_t i, int64_t s, const R *slot, int64_t need,
                             factor_state *st, R *sB, int *rowcnt, int *rowoff)
{
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    int mi = dev_bsize(T, i);
    int64_t t = T.row_ptr[i] + s;
    int mj = dev_bsize(T, T.col[t]);
    R *v = fac_val<R>(T) + T.off[t];
    sB[tid] = slot[tid];
    __syncthreads();
    if (T.format[t] == ILDL_TILE_SPARSE) {
        int64_t keep = T.nnz[t];
        if (need > keep) {
            bool mine = ty < mi && tx < mj && sB[tid] != 0.0;
            if (!d_keep_largest(mine, r_abs(sB[tid]), (int)keep, rowcnt)) sB[tid] = 0.0;
            __syncthreads();
        }
        bool nz = ty < mi && tx < mj && sB[tid] != 0.0;
        int total = d_compress(nz, sB[tid], T.idx + T.off[t], v, rowcnt, rowoff);
        if (tid == 0 && total != keep && !st->err) st->err = ILDL_ERR_INTERNAL;
    } else if (ty < mi && tx < mj) {
        v[ty * mj + tx] = sB[tid];
    }
}

/* Block i's pivot order for the column permutations: sperm[c] = perm[c], iperm its inverse;
 * ends with a barrier. */
__device__ __forceinline__ void d_colperm_setup(const dev_tiles &T, int32_t i, int mi, int *iperm, int *sperm)
{
    int tid = threadIdx.y * LD + threadIdx.x;
    const int32_t *perm = T.piv + T.bstart[i];
    if (tid < mi) {
        int pt = perm[tid];
        iperm[pt] = tid;
        sperm[tid] = pt;
    }
    __syncthreads();
}

/* Write a fetched tile back with its columns in pivot order (after a barrier: every thread has
 * fetched it). A sparse tile is expanded into shared memory at its new positions and
 * compressed again, which leaves its entries in ascending index order as the reference's
 * insertion sort does. Block-wide (cur.sparse is the block's). */
template <typename R>
__device__ void d_colperm_store(dev_tiles &T, const colperm_fetch<R> &cur, int mi, const int *iperm, R *sB,
                                unsigned char *occ, int *rowcnt, int *rowoff)
{
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    R *v = fac_val<R>(T) + cur.off;
    if (cur.sparse) {
        occ[tid] = 0;
        __syncthreads();
        if (cur.p >= 0) {
            int n = (cur.p & ~31) | iperm[cur.p & 31];
            sB[n] = cur.v;
            occ[n] = 1;
        }
        __syncthreads();
        d_compress(occ[tid] != 0, sB[tid], T.idx + cur.off, v, rowcnt, rowoff);
    } else if (ty < cur.mk && tx < mi) {
        v[ty * mi + tx] = cur.v;
    }
}

/* The columns of the tiles (k,i), k < i, into block i's pivot order, one after the other by
 * the whole block (each one's values read while the previous one is rewritten). */
template <typename R>
__device__ void d_colperm_walk(dev_tiles &T, int32_t i, int mi, R *sB, unsigned char *occ, int *iperm, int *sperm,
                               int *rowcnt, int *rowoff)
{
    d_colperm_setup(T, i, mi, iperm, sperm);
    int64_t q = T.col_ptr[i], qend = T.col_diag[i];
    colperm_fetch<R> nextc;
    if (q < qend) d_colperm_fetch(T, T.col_tiles[q], mi, sperm, &nextc);
    while (q < qend) {
        colperm_fetch<R> cur = nextc;
        if (++q < qend) d_colperm_fetch(T, T.col_tiles[q], mi, sperm, &nextc);
        __syncthreads(); /* every thread has read tile cur (and the last one's shared memory is free) */
        d_colperm_store(T, cur, mi, iperm, sB, occ, rowcnt, rowoff);
    }
}

/* Phase C over the chunk: blocks 0..nrows-1 take a block row i and store its diagonal tile as
 * dense strict upper part; the next nofd blocks one off-diagonal tile of the chunk each
 * (d_store_tile); the last ncol blocks one tile (k,i), k < i, of a chunk's block column each
 * (coltile: their ids), whose columns go into block i's pivot order. One block per tile, so
 * that a level of few, long rows and columns still fills the GPU (a block per row walking its
 * column was the chunk's longest chain); without them (ncol = 0) each row's block walks its
 * column (d_colperm_walk). The kinds touch disjoint tiles. */
template <typename R>
__global__ void __launch_bounds__(1024) k_phase_c(dev_tiles T, const int32_t *rows, int32_t nrows,
                                                  const int32_t *rowbase, const int32_t *tile_rr,
                                                  const int32_t *tile_s, int64_t nofd, const int64_t *coltile, int64_t ncol,
                                                  R *inflight, const int64_t *need, factor_state *st)
{
    __shared__ R sB[TILE];
    __shared__ int rowcnt[LD], rowoff[LD + 1], iperm[LD], sperm[LD];
    __shared__ unsigned char occ[TILE];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    int64_t b = blockIdx.x;
    if (b < nrows) { /* the diagonal tile as dense strict upper part */
        int32_t i = rows[b];
        int mi = dev_bsize(T, i);
        const R *slot = inflight + (int64_t)rowbase[b] * TILE;
        if (ty < mi && tx < mi) fac_val<R>(T)[T.off[T.row_ptr[i]] + ty * mi + tx] = (tx > ty) ? slot[tid] : 0.0;
        if (ncol == 0) d_colperm_walk(T, i, mi, sB, occ, iperm, sperm, rowcnt, rowoff);
        return;
    }
    b -= nrows;
    if (b < nofd) {
        int32_t rr = tile_rr[b], s = tile_s[b];
        const R *slot = inflight + ((int64_t)rowbase[rr] + s) * TILE;
        d_store_tile(T, rows[rr], s, slot, need[rowbase[rr] + s], st, sB, rowcnt, rowoff);
        return;
    }
    /* tile (k,i): its columns into block i's pivot order */
    int64_t t = coltile[b - nofd];
    int32_t i = T.col[t];
    int mi = dev_bsize(T, i);
    d_colperm_setup(T, i, mi, iperm, sperm);
    colperm_fetch<R> cur;
    d_colperm_fetch(T, t, mi, sperm, &cur);
    __syncthreads(); /* every thread has read the tile before any writes it */
    d_colperm_store(T, cur, mi, iperm, sB, occ, rowcnt, rowoff);
}

/* One warp per block row i, after the factorization: the diagonal tile U_ii becomes
 * V_ii = U_ii^{-1} (tiles.h). Lane c computes column c, each entry in the order of
 * invert_unit_upper (src/cpu/factor.c): a lane reads U and only its own column of V, so no
 * lane waits for another; every block row at once, no levels. */
template <typename R>
__global__ void __launch_bounds__(32) k_invert_diagonal(dev_tiles T)
{
    __shared__ R u[TILE], v[TILE];
    int32_t i = blockIdx.x;
    int m = dev_bsize(T, i), c = threadIdx.x;
    R *a = fac_val<R>(T) + T.off[T.row_ptr[i]];
    for (int r = 0; r < m; r++)
        if (c < m) u[r * LD + c] = a[r * m + c];
    __syncwarp();
    if (c < m) {
        for (int r = c - 1; r >= 0; r--) {
            R s = u[r * LD + c];
            for (int k = r + 1; k < c; k++) s += u[r * LD + k] * v[k * LD + c];
            v[r * LD + c] = -s;
        }
        for (int r = 0; r < c; r++) a[r * m + c] = v[r * LD + c];
    }
}

/* ------------------------------------------------------------ launches */

template <typename R>
void phase_c_launch(int32_t nrows, int64_t nofd, int64_t ncol, cudaStream_t s, const dev_tiles &T,
                    const int32_t *rows, const int32_t *rowbase, const int32_t *tile_rr, const int32_t *tile_s,
                    const int64_t *coltile, R *inflight, const int64_t *need, factor_state *st)
{
    k_phase_c<R><<<(unsigned)(nrows + nofd + ncol), dim3(LD, LD), 0, s>>>(T, rows, nrows, rowbase, tile_rr, tile_s,
                                                                          nofd, coltile, ncol, inflight, need, st);
}

template <typename R> void invert_diagonal_launch(int32_t nb, cudaStream_t s, const dev_tiles &T)
{
    k_invert_diagonal<R><<<nb, 32, 0, s>>>(T);
}

#define PHASE_C_INSTANCES(R)                                                                                     \
    template void phase_c_launch<R>(int32_t, int64_t, int64_t, cudaStream_t, const dev_tiles &,                \
                                    const int32_t *, const int32_t *, const int32_t *, const int32_t *,         \
                                    const int64_t *, R *, const int64_t *, factor_state *);                     \
    template void invert_diagonal_launch<R>(int32_t, cudaStream_t, const dev_tiles &);
PHASE_C_INSTANCES(double)
PHASE_C_INSTANCES(float)
