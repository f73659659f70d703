/* factor_pull.cuh -- the device steps that pull the updates of the block-iLDL^T factorization
 * into a tile: B_ij -= U_ki^T D_k U_kj over the rows k < i present in block columns i and j,
 * k ascending, each update's products and subtractions in the order of apply_d and sub_utdu in
 * src/cpu/factor.c (so the GPU's bits are the reference's). Also A's entries into a tile.
 * Used by the phase-A kernels and the fixed-point sweeps (factor_phase_a.cu, fixed_point.cu;
 * d_common_list is a static __device__ function, defined here). Block-wide: called by all 32x32 threads of
 * a block, thread (ty, tx) = (threadIdx.y, threadIdx.x) owning tile entry (ty, tx). */
#ifndef ILDL_CUDA_FACTOR_PULL_CUH
#define ILDL_CUDA_FACTOR_PULL_CUH
#include "cuda/context.cuh"

/* ------------------------------------------------------------ tile helpers (block-wide) */

/* Rows r0..r0+3 of column c of u^T du: sum_l u(l,r) du(l,c) over l ascending per entry (the
 * order of sub_utdu in src/cpu/factor.c), four rows at once so that each du(l,c) read from
 * shared memory serves four products (perf-notes §78). */
template <typename R>
__device__ __forceinline__ void d_pull_dot4(int mk, const R *u, const R *du, int r0, int c, R *s)
{
    R s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (int l = 0; l < mk; l++) {
        R d = du[l * LD + c];
        const R *ul = u + l * LD + r0;
        s0 += ul[0] * d;
        s1 += ul[1] * d;
        s2 += ul[2] * d;
        s3 += ul[3] * d;
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
}

/* The dot-product phase of an update belongs to the first 8 warps: warp w takes rows 4w..4w+3,
 * lane c column c. */
#define PULL_DOT_WARPS (LD / 4)

/* b -= u^T du; sym: only c >= r (the lower triangle is left for d_mirror_upper: a mirrored
 * store per update, lanes 32 values apart, was a 32-way bank conflict). */
template <typename R>
__device__ void d_sub_utdu(int mk, int mi, int mj, const R *u, const R *du, R *b,
                           bool sym)
{
    int r0 = 4 * threadIdx.y, c = threadIdx.x;
    if (threadIdx.y < PULL_DOT_WARPS && r0 < mi && c < mj && (!sym || c >= r0)) {
        R s[4];
        d_pull_dot4(mk, u, du, r0, c, s);
        for (int q = 0; q < 4; q++) {
            int r = r0 + q;
            if (r < mi && (!sym || c >= r)) {
                b[r * LD + c] = b[r * LD + c] - s[q];
            }
        }
    }
    __syncthreads();
}

/* This thread's share of a stored tile: the (ty, tx) entry of a dense tile, entry tid of a
 * sparse one (p = its place, ld 32; p < 0: none). Reads global memory only, so a caller can
 * issue the reads of several tiles before it waits for any of them. */
template <typename R> struct tile_share { R v; int p; };

/* ... of the tile (mk x m when dense) at offset o with nz entries (nz < 0: dense). */
template <typename R>
__device__ __forceinline__ tile_share<R> d_tile_fetch_at(const dev_tiles &T, int64_t o, int32_t nz, int mk, int m)
{
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    tile_share<R> r = {(R)0, -1};
    if (nz >= 0) {
        if (tid < nz) {
            r.p = T.idx[o + tid];
            r.v = fac_val<R>(T)[o + tid];
        }
    } else if (ty < mk && tx < m) {
        r.p = ty * LD + tx;
        r.v = fac_val<R>(T)[o + ty * m + tx];
    }
    return r;
}

/* ... of stored tile t (mi x mj when dense). */
template <typename R>
__device__ __forceinline__ tile_share<R> d_tile_fetch(const dev_tiles &T, int64_t t, int mi, int mj, bool sparse)
{
    return d_tile_fetch_at<R>(T, T.off[t], sparse ? T.nnz[t] : -1, mi, mj);
}

/* One update b -= U_ki^T D_k U_kj as read from global memory into registers (d_pull_fetch),
 * then applied (d_pull_commit): both tiles and D_k are requested at once, one memory latency
 * per update instead of one per tile and one for D_k. (Fetching the next update while applying
 * the current one gained nothing measurable.) */
template <typename R> struct pull_fetch {
    tile_share<R> pi, pj;     /* this thread's share of U_ki and U_kj */
    R dd, e;          /* row l = ty of D_k: diagonal, and the off-diagonal of a 2x2 */
    int mk, mode;          /* rows of block k; row l is 1x1 (0), first (1) / second (2) of a 2x2 */
    bool same, si_sparse, sj_sparse;
};

/* Row l = threadIdx.y < mk of D_k (block k's first row bk) into f: its diagonal, and the
 * off-diagonal and the row's place when it is in a 2x2. */
template <typename R>
__device__ __forceinline__ void d_pull_fetch_d(const dev_tiles &T, int32_t bk, pull_fetch<R> *f)
{
    int l = threadIdx.y;
    int8_t ty = T.piv_type[bk + l];
    f->dd = T.d_diag[bk + l];
    if (ty == 2 && l + 1 < f->mk) {
        f->mode = 1;
        f->e = T.d_off[bk + l];
    } else if (ty == 0 && l > 0 && T.piv_type[bk + l - 1] == 2) {
        f->mode = 2;
        f->e = T.d_off[bk + l - 1];
    }
}

/* Read the update of tiles tki = (k,i) and tkj = (k,j) (tki == tkj: the symmetric diagonal
 * update) into f: only global reads, no barrier. */
template <typename R>
__device__ __forceinline__ void d_pull_fetch(const dev_tiles &T, int64_t tki, int64_t tkj, int mi, int mj,
                                             pull_fetch<R> *f)
{
    int l = threadIdx.y;
    int32_t k = T.row[tki];
    f->same = tki == tkj;
    f->mk = dev_bsize(T, k);
    f->sj_sparse = T.format[tkj] == ILDL_TILE_SPARSE;
    f->si_sparse = !f->same && T.format[tki] == ILDL_TILE_SPARSE;
    f->pj = d_tile_fetch<R>(T, tkj, f->mk, mj, f->sj_sparse);
    f->pi.v = 0.0;
    f->pi.p = -1;
    if (!f->same) f->pi = d_tile_fetch<R>(T, tki, f->mk, mi, f->si_sparse);
    f->mode = 0;
    f->dd = f->e = 0.0;
    if (l < f->mk) d_pull_fetch_d(T, T.bstart[k], f);
}

/* Step 1 of applying a fetched update: its tiles into shared memory (su: U_ki, unused when
 * same; sj: U_kj), a dense tile's entries directly, zeros under a sparse one. The caller
 * syncs, then calls d_pull_scatter when any tile is sparse, and syncs again. */
template <typename R>
__device__ __forceinline__ void d_pull_windows(const pull_fetch<R> &f, int mi, int mj, R *su, R *sj)
{
    int l = threadIdx.y, c = threadIdx.x;
    if (l < f.mk && c < mj) sj[l * LD + c] = f.sj_sparse ? 0.0 : f.pj.v;
    if (!f.same && l < f.mk && c < mi) su[l * LD + c] = f.si_sparse ? 0.0 : f.pi.v;
}

template <typename R>
__device__ __forceinline__ void d_pull_scatter(const pull_fetch<R> &f, R *su, R *sj)
{
    if (f.sj_sparse && f.pj.p >= 0) sj[f.pj.p] = f.pj.v;
    if (f.si_sparse && f.pi.p >= 0) su[f.pi.p] = f.pi.v;
}

/* Step 2: sdu = D_k U_kj (apply_d in src/cpu/factor.c). */
template <typename R>
__device__ __forceinline__ void d_pull_apply_d(const pull_fetch<R> &f, int mj, const R *sj, R *sdu)
{
    int l = threadIdx.y, c = threadIdx.x;
    if (l < f.mk && c < mj) {
        R v;
        if (f.mode == 1) v = f.dd * sj[l * LD + c] + f.e * sj[(l + 1) * LD + c];
        else if (f.mode == 2) v = f.e * sj[(l - 1) * LD + c] + f.dd * sj[l * LD + c];
        else v = f.dd * sj[l * LD + c];
        sdu[l * LD + c] = v;
    }
}

/* Steps 1 and 2 of a fetched update, block-wide: U_ki (unused when same) into su, U_kj into sj,
 * D_k U_kj into sdu; ends with a barrier. */
template <typename R>
__device__ void d_pull_stage(const pull_fetch<R> &f, int mi, int mj, R *su, R *sj, R *sdu)
{
    d_pull_windows(f, mi, mj, su, sj);
    __syncthreads();
    if (f.sj_sparse || f.si_sparse) {
        d_pull_scatter(f, su, sj);
        __syncthreads();
    }
    d_pull_apply_d(f, mj, sj, sdu);
    __syncthreads();
}

/* Apply a fetched update: b -= U_ki^T D_k U_kj (sym: only the upper half, mirrored), the
 * update of apply_d and sub_utdu in src/cpu/factor.c in the same order per entry. su holds
 * U_ki (unused when same), sj U_kj, sdu D_k U_kj. Block-wide; ends with a barrier. */
template <typename R>
__device__ void d_pull_commit(const pull_fetch<R> &f, int mi, int mj, R *b, R *su, R *sj,
                              R *sdu)
{
    d_pull_stage(f, mi, mj, su, sj, sdu);
    d_sub_utdu(f.mk, mi, mj, f.same ? sj : su, sdu, b, f.same);
}

/* Two consecutive updates k1 < k2 of a tile at once: b = (b - s1) - s2 per entry, the bits of
 * applying them one after the other, with half the barriers. s[0..2]: U_ki, U_kj, D_k U_kj of
 * the first update, s[3..5] of the second. sym (a diagonal tile): only c >= r, as d_sub_utdu.
 * Ends with a barrier. */
template <typename R>
__device__ void d_pull_commit2(const pull_fetch<R> &f1, const pull_fetch<R> &f2, int mi, int mj, R *b,
                               R *const *s, bool sym)
{
    int r0 = 4 * threadIdx.y, c = threadIdx.x;
    d_pull_windows(f1, mi, mj, s[0], s[1]);
    d_pull_windows(f2, mi, mj, s[3], s[4]);
    __syncthreads();
    if (f1.sj_sparse || f1.si_sparse || f2.sj_sparse || f2.si_sparse) {
        d_pull_scatter(f1, s[0], s[1]);
        d_pull_scatter(f2, s[3], s[4]);
        __syncthreads();
    }
    d_pull_apply_d(f1, mj, s[1], s[2]);
    d_pull_apply_d(f2, mj, s[4], s[5]);
    __syncthreads();
    if (threadIdx.y < PULL_DOT_WARPS && r0 < mi && c < mj && (!sym || c >= r0)) {
        R s1[4], s2[4];
        d_pull_dot4(f1.mk, s[0], s[2], r0, c, s1);
        d_pull_dot4(f2.mk, s[3], s[5], r0, c, s2);
        for (int q = 0; q < 4; q++) {
            int r = r0 + q;
            if (r < mi && (!sym || c >= r)) {
                R v = b[r * LD + c] - s1[q];
                b[r * LD + c] = v - s2[q];
            }
        }
    }
    __syncthreads();
}

/* The next k < i present in both block columns i and j, from positions qi < ei, qj < ej of
 * col_tiles (advanced past it): its tiles (k,i) and (k,j); false when there is none. */
__device__ __forceinline__ bool d_next_common(const dev_tiles &T, int32_t i, int64_t *qi, int64_t ei, int64_t *qj,
                                              int64_t ej, int64_t *ti, int64_t *tj)
{
    while (*qi < ei && *qj < ej) {
        int64_t a = T.col_tiles[*qi], b = T.col_tiles[*qj];
        int32_t ki = T.row[a], kj = T.row[b];
        if (ki >= i || kj >= i) return false;
        if (ki < kj) (*qi)++;
        else if (kj < ki) (*qj)++;
        else {
            *ti = a;
            *tj = b;
            (*qi)++;
            (*qj)++;
            return true;
        }
    }
    return false;
}

/* The common k < i of block columns i and j, as a list built by the whole block: each column's
 * first entries (rows k ascending) go to shared memory with all loads in flight, each entry of
 * column i looks for its k in column j by binary search there, and a ballot per warp compacts
 * the matches in k order. d_next_common walks the two columns instead, one dependent pair of
 * loads per step: on control70 a tile's pulls waited for tens of such steps. Same pairs in the
 * same order, so the same bits. */
#define PULL_LIST 256
struct pull_list {
    int64_t ti[PULL_LIST], tj[PULL_LIST]; /* tiles (k,i), (k,j); then the pairs, compacted */
    int32_t ki[PULL_LIST], kj[PULL_LIST]; /* their rows k */
    int32_t wsum[PULL_LIST / 32];         /* matches per warp */
};

/* The pairs into L->ti[0..n), L->tj[0..n); returns n, or -1 (the block's threads agree) when a
 * column has more than PULL_LIST entries above row i: the caller then walks the columns. */
static __device__ int d_common_list(const dev_tiles &T, int32_t i, int32_t j, pull_list *L)
{
    int tid = threadIdx.y * LD + threadIdx.x;
    int64_t ci = T.col_ptr[i], li = T.col_diag[i] - ci;
    int64_t cj = T.col_ptr[j], lj_all = T.col_ptr[j + 1] - cj;
    if (li > PULL_LIST) return -1;
    int lj = lj_all < PULL_LIST ? (int)lj_all : PULL_LIST;
    if (tid < li) {
        int64_t a = T.col_tiles[ci + tid];
        L->ti[tid] = a;
        L->ki[tid] = T.row[a];
    } else if (tid >= PULL_LIST && tid - PULL_LIST < lj) {
        int x = tid - PULL_LIST;
        int64_t b = T.col_tiles[cj + x];
        L->tj[x] = b;
        L->kj[x] = T.row[b];
    }
    __syncthreads();
    /* nj: column j's loaded entries above row i (lower bound of i; the same in every thread) */
    int lo = 0, hi = lj;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (L->kj[mid] < i) lo = mid + 1;
        else hi = mid;
    }
    int nj = lo;
    if (nj == PULL_LIST && lj_all > PULL_LIST) return -1; /* more may follow */
    int64_t a = 0, b = 0;
    bool hit = false;
    if (tid < li) {
        int32_t k = L->ki[tid];
        lo = 0;
        hi = nj;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (L->kj[mid] < k) lo = mid + 1;
            else hi = mid;
        }
        hit = lo < nj && L->kj[lo] == k;
        a = L->ti[tid];
        if (hit) b = L->tj[lo];
    }
    unsigned mask = 0;
    if (tid < PULL_LIST) {
        mask = __ballot_sync(0xffffffffu, hit);
        if ((tid & 31) == 0) L->wsum[tid >> 5] = __popc(mask);
    }
    __syncthreads(); /* every read of ti, tj, kj above is done: the pairs may overwrite them */
    int n = 0, off = 0;
    for (int w = 0; w < PULL_LIST / 32; w++) {
        if (w == (tid >> 5)) off = n;
        n += L->wsum[w];
    }
    if (hit) {
        int p = off + __popc(mask & ((1u << (tid & 31)) - 1u));
        L->ti[p] = a;
        L->tj[p] = b;
    }
    __syncthreads();
    return n;
}

/* What d_pull_fetch reads before it can ask for an update's values (T.off, T.format, T.nnz of
 * its tile, T.row, then T.bstart of its row k), for every update of a tile: read by the whole
 * block at once before the first update (one dependent chain for all of them instead of one per
 * update), so that each update then waits for one latency, its values and D_k (perf-notes §78).
 * One list per block column: a diagonal tile's column i, an off-diagonal pull's i and j. */
struct pull_meta {
    int64_t off[PULL_LIST]; /* the tile's storage offset */
    int32_t nnz[PULL_LIST]; /* sparse: its entries; dense: -1 */
    int32_t bk[PULL_LIST];  /* first row of block k */
    int8_t mk[PULL_LIST];   /* rows of block k */
};

/* d_pull_fetch of update q from the lists: U_kj (and D_k) from Mj, U_ki from Mi (NULL: the
 * symmetric update, U_ki is U_kj). */
template <typename R>
__device__ __forceinline__ void d_pull_fetch_meta(const dev_tiles &T, const pull_meta *Mi, const pull_meta *Mj,
                                                  int q, int mi, int mj, pull_fetch<R> *f)
{
    int l = threadIdx.y;
    int32_t bk = Mj->bk[q];
    f->same = Mi == NULL;
    f->mk = Mj->mk[q];
    f->sj_sparse = Mj->nnz[q] >= 0;
    f->si_sparse = !f->same && Mi->nnz[q] >= 0;
    f->pj = d_tile_fetch_at<R>(T, Mj->off[q], Mj->nnz[q], f->mk, mj);
    f->pi.v = 0.0;
    f->pi.p = -1;
    if (!f->same) f->pi = d_tile_fetch_at<R>(T, Mi->off[q], Mi->nnz[q], f->mk, mi);
    f->mode = 0;
    f->dd = f->e = 0.0;
    if (l < f->mk) d_pull_fetch_d(T, bk, f);
}

/* Entry q of M from tile t of row k (no barrier). */
__device__ __forceinline__ void d_meta_set(const dev_tiles &T, pull_meta *M, int q, int64_t t)
{
    int32_t k = T.row[t], bk = T.bstart[k];
    M->off[q] = T.off[t];
    M->nnz[q] = T.format[t] == ILDL_TILE_SPARSE ? T.nnz[t] : -1;
    M->bk[q] = bk;
    M->mk[q] = (int8_t)(T.bstart[k + 1] - bk);
}

/* The lower triangle of the mi x mi tile b from its upper one (after updates with sym). Block-wide,
 * after a barrier; ends with one. */
template <typename R>
__device__ void d_mirror_upper(int mi, R *b)
{
    int r = threadIdx.y, c = threadIdx.x;
    if (c > r && c < mi) b[c * LD + r] = b[r * LD + c];
    __syncthreads();
}

/* b -= every update of the diagonal tile of block row i (its column's tiles k < i, k ascending,
 * two at a time), then mirrored; up: 6 shared tiles, up[0] == up[1] and up[3] == up[4] (U_ki is
 * U_kj). */
template <typename R>
__device__ void d_pull_diag_all(const dev_tiles &T, int32_t i, int mi, R *b, R *const *up)
{
    __shared__ pull_meta M;
    int64_t q0 = T.col_ptr[i], qend = T.col_diag[i];
    if (qend - q0 <= PULL_LIST) {
        int n = (int)(qend - q0), tid = threadIdx.y * LD + threadIdx.x;
        if (tid < n) d_meta_set(T, &M, tid, T.col_tiles[q0 + tid]);
        __syncthreads();
        for (int q = 0; q < n; q += 2) {
            pull_fetch<R> f1, f2;
            d_pull_fetch_meta(T, (const pull_meta *)NULL, &M, q, mi, mi, &f1);
            if (q + 1 == n) {
                d_pull_commit(f1, mi, mi, b, up[0], up[1], up[2]);
                break;
            }
            d_pull_fetch_meta(T, (const pull_meta *)NULL, &M, q + 1, mi, mi, &f2);
            d_pull_commit2(f1, f2, mi, mi, b, up, true);
        }
        d_mirror_upper(mi, b);
        return;
    }
    for (int64_t q = q0; q < qend; q += 2) {
        pull_fetch<R> f1, f2;
        d_pull_fetch(T, T.col_tiles[q], T.col_tiles[q], mi, mi, &f1);
        if (q + 1 == qend) {
            d_pull_commit(f1, mi, mi, b, up[0], up[1], up[2]);
            break;
        }
        d_pull_fetch(T, T.col_tiles[q + 1], T.col_tiles[q + 1], mi, mi, &f2);
        d_pull_commit2(f1, f2, mi, mi, b, up, true);
    }
    d_mirror_upper(mi, b);
}

/* b -= every update of off-diagonal tile (i,j): the k < i in both block columns, k ascending,
 * two at a time (the pair list L, or a walk of the columns when they are too long for it);
 * up: 6 distinct shared tiles. */
template <typename R>
__device__ void d_pull_offd_all(const dev_tiles &T, int32_t i, int32_t j, int mi, int mj, R *b, R *const *up,
                                pull_list *L)
{
    __shared__ pull_meta Mi, Mj;
    int nc = d_common_list(T, i, j, L);
    int tid = threadIdx.y * LD + threadIdx.x;
    if (tid < nc) {
        d_meta_set(T, &Mi, tid, L->ti[tid]);
        d_meta_set(T, &Mj, tid, L->tj[tid]);
    }
    __syncthreads();
    for (int q = 0; q < nc; q += 2) {
        pull_fetch<R> f1, f2;
        d_pull_fetch_meta(T, &Mi, &Mj, q, mi, mj, &f1);
        if (q + 1 == nc) {
            d_pull_commit(f1, mi, mj, b, up[0], up[1], up[2]);
            break;
        }
        d_pull_fetch_meta(T, &Mi, &Mj, q + 1, mi, mj, &f2);
        d_pull_commit2(f1, f2, mi, mj, b, up, false);
    }
    int64_t qi = T.col_ptr[i], ei = T.col_ptr[i + 1];
    int64_t qj = T.col_ptr[j], ej = T.col_ptr[j + 1];
    int64_t ti, tj;
    while (nc < 0 && d_next_common(T, i, &qi, ei, &qj, ej, &ti, &tj)) { /* columns too long for the list */
        pull_fetch<R> f1, f2;
        d_pull_fetch(T, ti, tj, mi, mj, &f1);
        if (!d_next_common(T, i, &qi, ei, &qj, ej, &ti, &tj)) {
            d_pull_commit(f1, mi, mj, b, up[0], up[1], up[2]);
            break;
        }
        d_pull_fetch(T, ti, tj, mi, mj, &f2);
        d_pull_commit2(f1, f2, mi, mj, b, up, false);
    }
}

/* One update computed apart (the split pulls, plan.cu): the products s of U_ki^T D_k U_kj as
 * d_pull_commit would subtract them, into p (TILE values, entry r*LD + c; sym: only c >= r). */
template <typename R>
__device__ void d_pull_product(const pull_fetch<R> &f, int mi, int mj, R *su, R *sj, R *sdu, R *p)
{
    d_pull_stage(f, mi, mj, su, sj, sdu);
    int r0 = 4 * threadIdx.y, c = threadIdx.x;
    if (threadIdx.y < PULL_DOT_WARPS && r0 < mi && c < mj && (!f.same || c >= r0)) {
        R s[4];
        d_pull_dot4(f.mk, f.same ? sj : su, sdu, r0, c, s);
        for (int q = 0; q < 4; q++) {
            int r = r0 + q;
            if (r < mi && (!f.same || c >= r)) p[r * LD + c] = s[q];
        }
    }
}

/* b -= the n products p[0..n) of a split tile, in order (the bits of pulling them in place:
 * b - s per update, k ascending); sym: only c >= r, mirrored. Each entry is one thread's, so
 * there is no barrier between updates; the loads go out sixteen at a time (the last batch
 * predicated). Ends with a barrier. */
template <typename R>
__device__ void d_pull_products_commit(const R *__restrict__ p, int n, int mi, int mj, R *b, bool sym)
{
    int r = threadIdx.y, c = threadIdx.x, e = r * LD + c;
    if (r < mi && c < mj && (!sym || c >= r)) {
        R v = b[e];
        for (int q = 0; q < n; q += 16) { /* up to 16 loads in flight, the last batch too */
            R x[16];
#pragma unroll
            for (int u = 0; u < 16; u++) x[u] = q + u < n ? __ldcg(p + (int64_t)(q + u) * TILE + e) : (R)0;
#pragma unroll
            for (int u = 0; u < 16; u++)
                if (q + u < n) v = v - x[u];
        }
        b[e] = v;
        if (sym) b[c * LD + r] = v;
    }
    __syncthreads();
}

/* b (zeroed) += A's entries of tile t; sym mirrors. */
template <typename R>
__device__ void d_load_a(const dev_tiles &T, int64_t t, bool sym, R *b)
{
    int tid = threadIdx.y * LD + threadIdx.x;
    for (int64_t q = T.a_ptr[t] + tid; q < T.a_ptr[t + 1]; q += TILE) {
        int r = T.a_idx[q] >> 5, c = T.a_idx[q] & 31;
        R v = (R)T.a_val[q]; /* float: A rounded once, here, as the CPU reference does */
        b[r * LD + c] = v;
        if (sym) b[c * LD + r] = v;
    }
    __syncthreads();
}

template <typename R>
__device__ void d_zero_tile(R *b)
{
    b[threadIdx.y * LD + threadIdx.x] = 0.0;
    __syncthreads();
}

#endif
