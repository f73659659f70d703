/* factor.cu -- the block-iLDL^T factorization on the GPU: per level (in chunks of rows whose
 * in-flight tiles fit the buffer) three kernels mirror the three phases of the CPU reference
 * (src/cpu/factor.c), with the same floating-point order, so factors agree with the CPU:
 *   k_phase_a_diag     one 32x32-thread block per block row: pull updates into the diagonal
 *                      tile and factor it (none/BK/Rook);
 *   k_phase_a_pull     one block per off-diagonal tile: pull its updates (beside the diagonal
 *                      kernel, on a second stream);
 *   k_phase_a_solve    one warp per off-diagonal tile: permute rows, solve with U_ii and D_i;
 *   k_phase_a_drop     one block per block row: row norms, tau-dropping and counting;
 *   k_phase_b  one block: deterministic leftover grants and storage offsets (prefix sums in
 *              storage order), or k_phase_b_atomic: the paper's racing protocol (option);
 *   k_phase_c  one block per row: keep-largest, compress and store, column permutation;
 * and after all levels k_invert_diagonal: every diagonal tile U_ii becomes U_ii^{-1} (solves).
 * The phase-A and phase-C kernels are templates on the value type R: double, or float for
 * precision single (the CPU reference's single build, every operation in float). */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include "cuda/context.cuh"
extern "C" {
#include "core/util.h"
}
#include "cuda/dense_bk.cuh"
#include "cuda/dense_none.cuh"
#include "cuda/dense_rook.cuh"

/* Dynamic shared memory of k_phase_a_pull: 7 tiles (above the default 48 KiB for double). */
template <typename R> constexpr size_t pull_smem_bytes() { return (size_t)7 * TILE * sizeof(R); }

/* ------------------------------------------------------------ tile helpers (block-wide) */

/* b -= u^T du; sym: only c >= r, mirrored. */
template <typename R>
__device__ void d_sub_utdu(int mk, int mi, int mj, const R *u, const R *du, R *b,
                           bool sym)
{
    int r = threadIdx.y, c = threadIdx.x;
    if (r < mi && c < mj && (!sym || c >= r)) {
        R s = 0.0;
        for (int l = 0; l < mk; l++) s += u[l * LD + r] * du[l * LD + c];
        R v = b[r * LD + c] - s;
        b[r * LD + c] = v;
        if (sym) b[c * LD + r] = v;
    }
    __syncthreads();
}

/* This thread's share of stored tile t: the (ty, tx) entry of a dense tile, entry tid of a
 * sparse one (p = its place, ld 32; p < 0: none). Reads global memory only, so a caller can
 * issue the reads of several tiles before it waits for any of them. */
template <typename R> struct tile_share { R v; int p; };

template <typename R>
__device__ __forceinline__ tile_share<R> d_tile_fetch(const dev_tiles &T, int64_t t, int mi, int mj, bool sparse)
{
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    tile_share<R> r = {(R)0, -1};
    const int64_t o = T.off[t];
    if (sparse) {
        if (tid < T.nnz[t]) { r.p = T.idx[o + tid]; r.v = fac_val<R>(T)[o + tid]; }
    } else if (ty < mi && tx < mj) {
        r.p = ty * LD + tx;
        r.v = fac_val<R>(T)[o + ty * mj + tx];
    }
    return r;
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
    if (l < f->mk) {
        int32_t bk = T.bstart[k];
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

/* Step 3 for entry (r, c): sum_l U_ki(l,r) (D_k U_kj)(l,c) over l ascending (sub_utdu). */
template <typename R>
__device__ __forceinline__ R d_pull_dot(int mk, const R *u, const R *du, int r, int c)
{
    R s = 0.0;
    for (int l = 0; l < mk; l++) s += u[l * LD + r] * du[l * LD + c];
    return s;
}

/* Apply a fetched update: b -= U_ki^T D_k U_kj (sym: only the upper half, mirrored), the
 * update of apply_d and sub_utdu in src/cpu/factor.c in the same order per entry. su holds
 * U_ki (unused when same), sj U_kj, sdu D_k U_kj. Block-wide; ends with a barrier. */
template <typename R>
__device__ void d_pull_commit(const pull_fetch<R> &f, int mi, int mj, R *b, R *su, R *sj,
                              R *sdu)
{
    d_pull_windows(f, mi, mj, su, sj);
    __syncthreads();
    if (f.sj_sparse || f.si_sparse) {
        d_pull_scatter(f, su, sj);
        __syncthreads();
    }
    d_pull_apply_d(f, mj, sj, sdu);
    __syncthreads();
    d_sub_utdu(f.mk, mi, mj, f.same ? sj : su, sdu, b, f.same);
}

/* Two consecutive updates k1 < k2 of a tile at once: b = (b - s1) - s2 per entry, the bits of
 * applying them one after the other, with half the barriers. s[0..2]: U_ki, U_kj, D_k U_kj of
 * the first update, s[3..5] of the second. sym (a diagonal tile): only c >= r, mirrored, as
 * d_sub_utdu. Ends with a barrier. */
template <typename R>
__device__ void d_pull_commit2(const pull_fetch<R> &f1, const pull_fetch<R> &f2, int mi, int mj, R *b,
                               R *const *s, bool sym)
{
    int r = threadIdx.y, c = threadIdx.x;
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
    if (r < mi && c < mj && (!sym || c >= r)) {
        R v = b[r * LD + c] - d_pull_dot(f1.mk, s[0], s[2], r, c);
        v = v - d_pull_dot(f2.mk, s[3], s[5], r, c);
        b[r * LD + c] = v;
        if (sym) b[c * LD + r] = v;
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
__device__ int d_common_list(const dev_tiles &T, int32_t i, int32_t j, pull_list *L)
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

/* ------------------------------------------------------------ phase A */

/* A1, one block per block row: the diagonal tile: A_ii minus the updates of column i, then the
 * dense factorization; writes U_ii to the row's first in-flight slot and P_i, D_i to T. */
template <typename R>
__global__ void __launch_bounds__(1024) k_phase_a_diag(dev_tiles T, factor_params_d prm,
                                                       const int32_t *rows, const int32_t *rowbase,
                                                       R *inflight, dense_res *res_out)
{
    __shared__ R W[TILE], sU[TILE], sDU[TILE], sU2[TILE], sDU2[TILE];
    __shared__ R u1[LD], u2[LD];
    R *const up[6] = {sU, sU, sDU, sU2, sU2, sDU2}; /* U_ki is U_kj: one window per update */
    __shared__ dense_res res;
    int tid = threadIdx.y * LD + threadIdx.x;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i];
    R *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;

    d_zero_tile(W);
    d_load_a(T, t0, true, W);
    /* the tiles (k,i), k < i, in k ascending, two at a time (as the off-diagonal tiles) */
    for (int64_t q = T.col_ptr[i], qend = T.col_diag[i]; q < qend; q += 2) {
        pull_fetch<R> f1, f2;
        d_pull_fetch(T, T.col_tiles[q], T.col_tiles[q], mi, mi, &f1);
        if (q + 1 == qend) {
            d_pull_commit(f1, mi, mi, W, sU, sU, sDU);
            break;
        }
        d_pull_fetch(T, T.col_tiles[q + 1], T.col_tiles[q + 1], mi, mi, &f2);
        d_pull_commit2(f1, f2, mi, mi, W, up, true);
    }
    dense_params_d dp;
    dp.pivot_tol = prm.pivot_tol;
    dp.perturb = prm.perturb;
    dp.pair_hint = prm.pair_hint ? prm.pair_hint + T.bstart[i] : NULL;
    if (prm.pivoting == ILDL_PIVOT_BK) dd_factor_bk(mi, W, &dp, &res, u1, u2);
    else if (prm.pivoting == ILDL_PIVOT_ROOK) dd_factor_rook(mi, W, &dp, &res, u1, u2);
    else dd_factor_none(mi, W, &dp, &res, u1, u2);
    if (tid < mi) {
        int32_t b = T.bstart[i];
        T.piv[b + tid] = res.perm[tid];
        T.d_diag[b + tid] = res.d_diag[tid];
        T.d_off[b + tid] = res.d_off[tid];
        T.piv_type[b + tid] = res.type[tid];
    }
    slot[tid] = W[tid];
    if (tid < LD) {
        dense_res *o = res_out + blockIdx.x;
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

/* A2, one block per off-diagonal tile of the chunk: B_ij = A_ij minus the updates from the
 * rows k < i present in block columns i and j, written to the tile's in-flight slot. It does not
 * read row i's diagonal factor, so it runs beside k_phase_a_diag (factor_chunks: two streams);
 * k_phase_a_solve then finishes the tile. */
/* (two blocks per SM: the register cap costs a few spilled bytes and gains 10-20%) */
template <typename R>
__global__ void __launch_bounds__(1024, 2) k_phase_a_pull(dev_tiles T, const int32_t *rows,
                                                       const int32_t *rowbase, const int32_t *tile_rr,
                                                       const int32_t *tile_s, R *inflight)
{
    extern __shared__ __align__(16) unsigned char smem_od_raw[]; /* pull_smem_bytes<R>(): sB and two updates' tiles */
    R *smem_od = reinterpret_cast<R *>(smem_od_raw);
    R *sB = smem_od, *up[6];
    for (int k = 0; k < 6; k++) up[k] = smem_od + (1 + k) * TILE;
    int tid = threadIdx.y * LD + threadIdx.x;
    int32_t rr = tile_rr[blockIdx.x], s = tile_s[blockIdx.x];
    int32_t i = rows[rr];
    int mi = dev_bsize(T, i);
    int64_t t = T.row_ptr[i] + s;
    int32_t j = T.col[t];
    int mj = dev_bsize(T, j);
    d_zero_tile(sB);
    d_load_a(T, t, false, sB);
    /* the k < i in both block columns, in k ascending, two at a time */
    __shared__ pull_list L;
    int nc = d_common_list(T, i, j, &L);
    for (int q = 0; q < nc; q += 2) {
        pull_fetch<R> f1, f2;
        d_pull_fetch(T, L.ti[q], L.tj[q], mi, mj, &f1);
        if (q + 1 == nc) {
            d_pull_commit(f1, mi, mj, sB, up[0], up[1], up[2]);
            break;
        }
        d_pull_fetch(T, L.ti[q + 1], L.tj[q + 1], mi, mj, &f2);
        d_pull_commit2(f1, f2, mi, mj, sB, up, false);
    }
    int64_t qi = T.col_ptr[i], ei = T.col_ptr[i + 1];
    int64_t qj = T.col_ptr[j], ej = T.col_ptr[j + 1];
    int64_t ti, tj;
    while (nc < 0 && d_next_common(T, i, &qi, ei, &qj, ej, &ti, &tj)) { /* columns too long for the list */
        pull_fetch<R> f1, f2;
        d_pull_fetch(T, ti, tj, mi, mj, &f1);
        if (!d_next_common(T, i, &qi, ei, &qj, ej, &ti, &tj)) {
            d_pull_commit(f1, mi, mj, sB, up[0], up[1], up[2]);
            break;
        }
        d_pull_fetch(T, ti, tj, mi, mj, &f2);
        d_pull_commit2(f1, f2, mi, mj, sB, up, false);
    }
    inflight[((int64_t)rowbase[rr] + s) * TILE + tid] = sB[tid];
}

/* Off-diagonal tiles finished per warp (k_phase_a_solve). */
#define SOLVE_TILE_WARPS 4

/* A2', one warp per off-diagonal tile, after k_phase_a_diag and k_phase_a_pull: rows of B into
 * pivot order, then U_ij = D_i^-1 U_ii^-T B. Lane c keeps column c in registers; every entry
 * subtracts its terms q ascending and is divided as in ildl_dense_solve_offdiag, so the bits are
 * the reference's. U_ii is first copied to the warp's shared tile with all loads in flight at
 * once (row q read per step from global memory was one memory latency per pivot row). */
template <typename R>
__global__ void __launch_bounds__(32 * SOLVE_TILE_WARPS) k_phase_a_solve(dev_tiles T, const int32_t *rows,
                                                                          const int32_t *rowbase,
                                                                          const int32_t *tile_rr, const int32_t *tile_s,
                                                                          int64_t nofd, R *inflight,
                                                                          const dense_res *res_in)
{
    __shared__ R sW[SOLVE_TILE_WARPS][TILE];
    int lane = threadIdx.x;
    int64_t e = (int64_t)blockIdx.x * SOLVE_TILE_WARPS + threadIdx.y;
    if (e >= nofd) return; /* whole warps; no block-wide barrier below */
    int32_t rr = tile_rr[e], s = tile_s[e];
    int32_t i = rows[rr];
    int mi = dev_bsize(T, i);
    int mj = dev_bsize(T, T.col[T.row_ptr[i] + s]);
    const R *W = inflight + (int64_t)rowbase[rr] * TILE; /* U_ii, written by k_phase_a_diag */
    R *B = inflight + ((int64_t)rowbase[rr] + s) * TILE;
    R *w = sW[threadIdx.y];
    const dense_res &res = res_in[rr];
    /* lane l holds row l's pivot record; every lane needs every row's, by shuffle */
    int myperm = lane < mi ? res.perm[lane] : 0, mytype = res.type[lane];
    double mydd = res.d_diag[lane], mydo = res.d_off[lane];
    R b[LD];
#pragma unroll
    for (int r = 0; r < LD; r++) {
        int pr = __shfl_sync(0xffffffffu, myperm, r);
        b[r] = (r < mi && lane < mj) ? B[pr * LD + lane] : (R)0;
    }
#pragma unroll 8
    for (int r = 0; r < LD; r++) w[r * LD + lane] = W[r * LD + lane];
    __syncwarp();
    /* U^T forward substitution: b[r] -= U_ii(q, r) b[q], q ascending */
#pragma unroll
    for (int q = 0; q + 1 < LD; q++) {
        if (q + 1 >= mi) break; /* uniform */
        R wq = w[q * LD + lane]; /* row q of U_ii: lane r holds U_ii(q, r) */
        R bq = b[q];
#pragma unroll
        for (int r = q + 1; r < LD; r++) {
            R wr = __shfl_sync(0xffffffffu, wq, r);
            if (r < mi) b[r] -= wr * bq;
        }
    }
#pragma unroll
    for (int r = 0; r < LD; r++) {
        if (r >= mi) break; /* uniform */
        int ty = __shfl_sync(0xffffffffu, mytype, r);
        double ddr = __shfl_sync(0xffffffffu, mydd, r), dor = __shfl_sync(0xffffffffu, mydo, r);
        double ddn = __shfl_sync(0xffffffffu, mydd, (r + 1) & 31);
        if (ty == 1) {
            b[r] /= (R)ddr;
        } else if (ty == 2 && r + 1 < LD) {
            R da = ddr, db = dor, dc = ddn;
            R det = da * dc - db * db;
            R x = b[r], y = b[r + 1];
            b[r] = (dc * x - db * y) / det;
            b[r + 1] = (da * y - db * x) / det;
        }
    }
    if (lane < mj) {
#pragma unroll
        for (int r = 0; r < LD; r++)
            if (r < mi) B[r * LD + lane] = b[r];
    }
}

/* A3, one block per block row: row norms over the whole block row in the reference's order,
 * then tau-dropping of the off-diagonal tiles and their counts. */
template <typename R>
__global__ void __launch_bounds__(1024) k_phase_a_drop(dev_tiles T, factor_params_d prm,
                                                       const int32_t *rows, const int32_t *rowbase,
                                                       R *inflight, int64_t *need,
                                                       R *rownorm_out)
{
    __shared__ R rn[LD];
    __shared__ R sb[LD * (LD + 1)]; /* padded: thread r reads row r without bank conflicts */
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i], nt = T.row_ptr[i + 1] - t0;
    R *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;
    int64_t *nd = need + rowbase[blockIdx.x];
    /* row norms in the reference's order (1, then each tile's row left to right), each tile
     * staged in shared memory by the whole block so the 32 serial sums read no global memory */
    /* the next tile (and its width) is requested before this one is summed: its memory
     * latency hides behind the sum */
    R acc = 1.0, cur = slot[tid];
    int mj_cur = mi, mj_next = 0;
    for (int64_t s = 0; s < nt; s++) {
        sb[ty * (LD + 1) + tx] = cur;
        if (s + 1 < nt) {
            cur = slot[(s + 1) * TILE + tid];
            mj_next = dev_bsize(T, T.col[t0 + s + 1]);
        }
        __syncthreads();
        if (ty == 0 && tx < mi) {
            const R *b = sb + tx * (LD + 1);
            if (s == 0) {
                for (int c = tx + 1; c < mi; c++) acc += b[c] * b[c];
            } else {
                for (int c = 0; c < mj_cur; c++) acc += b[c] * b[c];
            }
        }
        mj_cur = mj_next;
        __syncthreads();
    }
    if (ty == 0 && tx < mi) {
        rn[tx] = r_sqrt(acc);
        rownorm_out[(int64_t)blockIdx.x * LD + tx] = rn[tx];
    }
    __syncthreads();
    if (tid == 0) nd[0] = (int64_t)mi * mi;
    /* again one tile ahead: its value and width are requested before this one's barrier */
    R tol = (ty < mi) ? (R)prm.drop_tol * rn[ty] : (R)0;
    if (nt > 1) {
        cur = slot[TILE + tid];
        mj_cur = dev_bsize(T, T.col[t0 + 1]);
    }
    for (int64_t s = 1; s < nt; s++) {
        R val = cur;
        int mj = mj_cur;
        if (s + 1 < nt) {
            cur = slot[(s + 1) * TILE + tid];
            mj_cur = dev_bsize(T, T.col[t0 + s + 1]);
        }
        int keep = 0;
        if (ty < mi && tx < mj) {
            R v = r_abs(val);
            if (v <= tol || v == 0) slot[s * TILE + tid] = 0.0;
            else keep = 1;
        }
        int cnt = __syncthreads_count(keep);
        if (tid == 0) nd[s] = cnt;
    }
}

/* ------------------------------------------------------------ phase B */

/* What storage slot g needs, from the static slot table (ildl_cuda_create): a dense tile
 * stores its m_i x m_j entries; a sparse off-diagonal tile stores what it keeps, up to its
 * capacity plus a leftover grant. Reading one table entry replaces a binary search over the
 * chunk's rows and five dependent loads per slot. */
struct slot_info {
    int64_t dense, cap;
    bool sparse;
};

__device__ __forceinline__ slot_info slot_get(const int64_t *slot_size, int64_t g)
{
    slot_info x;
    int64_t v = slot_size[g];
    x.sparse = v < 0;
    x.cap = x.sparse ? -v - 1 : 0;
    x.dense = x.sparse ? 0 : v;
    return x;
}

#define SCAN_THREADS 1024
typedef cub::BlockScan<long long, SCAN_THREADS> scan_t;
typedef cub::BlockReduce<long long, SCAN_THREADS> reduce_t;

/* Leftover grants and storage offsets for the nslots tiles of one chunk, deterministic: the
 * reference's sequential rule (src/cpu/factor.c: in storage order, a sparse tile over its
 * capacity gets min(excess, leftover left)) computed with two block-wide prefix sums. The
 * grants before tile f add up to min(E_f, L0), E_f the excesses before f and L0 the leftover
 * at the chunk's start, so tile f gets clamp(L0 - E_f, 0, excess_f). One block; the counts
 * are integer sums, so reducing them in any order is exact. */
__global__ void __launch_bounds__(SCAN_THREADS) k_phase_b(dev_tiles T, int32_t nrows, int64_t nslots,
                                                          const int64_t *slot_size, const int64_t *need,
                                                          const dense_res *res, factor_state *st,
                                                          int end_of_level)
{
    __shared__ union {
        typename scan_t::TempStorage scan;
        typename reduce_t::TempStorage reduce;
    } tmp;
    __shared__ factor_state S;
    int tid = threadIdx.x;
    if (tid == 0) S = *st;
    __syncthreads();
    if (S.err) return; /* uniform */
    long long n2x2 = 0, npert = 0, granted_sum = 0, credit_sum = 0;
    for (int32_t rr = tid; rr < nrows; rr += SCAN_THREADS) {
        n2x2 += res[rr].n2x2;
        npert += res[rr].nperturbed;
    }
    const long long L0 = S.leftover, used0 = S.used, so0 = S.so;
    long long runE = 0, runU = 0;
    for (int64_t base = 0; base < nslots; base += SCAN_THREADS) {
        int64_t f = base + tid;
        bool valid = f < nslots;
        slot_info x = {0, 0, false};
        long long nd = 0;
        if (valid) {
            x = slot_get(slot_size, so0 + f);
            nd = need[f];
        }
        long long excess = (valid && x.sparse && nd > x.cap) ? nd - x.cap : 0, E, aggE;
        scan_t(tmp.scan).ExclusiveSum(excess, E, aggE);
        __syncthreads();
        E += runE;
        long long granted = 0;
        if (excess > 0) {
            long long avail = L0 - E;
            granted = avail <= 0 ? 0 : (avail < excess ? avail : excess);
        }
        long long stored = !valid ? 0 : x.sparse ? (nd > x.cap ? x.cap + granted : nd) : x.dense, U, aggU;
        scan_t(tmp.scan).ExclusiveSum(stored, U, aggU);
        __syncthreads();
        if (valid) {
            int64_t t = T.tile_order[so0 + f];
            T.off[t] = used0 + runU + U;
            T.nnz[t] = stored;
            granted_sum += granted;
            if (x.sparse) credit_sum += x.cap + granted - stored;
        }
        runE += aggE;
        runU += aggU;
    }
    long long sums[4] = {n2x2, npert, granted_sum, credit_sum};
    for (int k = 0; k < 4; k++) {
        long long v = reduce_t(tmp.reduce).Sum(sums[k]);
        __syncthreads();
        sums[k] = v; /* valid in thread 0 */
    }
    if (tid == 0) {
        S.n2x2 += (int)sums[0];
        S.nperturbed += (int)sums[1];
        S.so += nslots;
        S.leftover -= sums[2];
        S.granted += sums[2];
        S.credit += sums[3];
        S.used += runU;
        if (S.used > T.total_cap) S.err = ILDL_ERR_INTERNAL;
        if (end_of_level && !S.err) {
            S.leftover += S.credit;
            S.credit = 0;
        }
        *st = S;
    }
}

/* The paper's conservative atomic protocol (Alg. 2) instead of the scan: one thread per tile of
 * the chunk, in any order. A tile over its capacity subtracts its whole excess from the leftover
 * counter, keeps what was there (never more than its excess) and gives the rest back; storage
 * comes from an atomic counter. Never over-allocates, but grants and the storage layout depend
 * on the race: the factor is not reproducible (ILDL_LEFTOVER_ATOMIC). */
__global__ void k_phase_b_atomic(dev_tiles T, int32_t nrows, int64_t nslots, const int64_t *slot_size,
                                  const int64_t *need, const dense_res *res, factor_state *st)
{
    int64_t f = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (st->err) return;
    if (f < nrows) {
        atomicAdd(&st->n2x2, res[f].n2x2);
        atomicAdd(&st->nperturbed, res[f].nperturbed);
    }
    if (f >= nslots) return;
    int64_t g = st->so + f, t = T.tile_order[g]; /* st->so moves only in k_phase_b_atomic_end */
    slot_info x = slot_get(slot_size, g);
    long long nd = need[f];
    unsigned long long *leftover = (unsigned long long *)&st->leftover;
    long long granted = 0, stored = x.dense;
    if (x.sparse) {
        if (nd > x.cap) {
            long long required = nd - x.cap;
            long long wasfree = (long long)atomicAdd(leftover, (unsigned long long)(-required));
            granted = wasfree <= 0 ? 0 : (wasfree < required ? wasfree : required);
            atomicAdd(leftover, (unsigned long long)(required - granted));
            stored = x.cap + granted;
        } else {
            stored = nd;
        }
        atomicAdd((unsigned long long *)&st->credit, (unsigned long long)(x.cap + granted - stored));
        if (granted) atomicAdd((unsigned long long *)&st->granted, (unsigned long long)granted);
    }
    T.off[t] = (int64_t)atomicAdd((unsigned long long *)&st->used, (unsigned long long)stored);
    T.nnz[t] = stored;
}

/* After the atomic protocol: slots consumed, capacity check, credits at the end of a level. */
__global__ void k_phase_b_atomic_end(dev_tiles T, int64_t nslots, factor_state *st, int end_of_level)
{
    if (st->err) return;
    st->so += nslots;
    if (st->used > T.total_cap) st->err = ILDL_ERR_INTERNAL;
    if (end_of_level && !st->err) {
        st->leftover += st->credit;
        st->credit = 0;
    }
}

/* ------------------------------------------------------------ phase C */

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

/* Phase C over the chunk: blocks 0..nrows-1 take a block row i (its diagonal tile as dense
 * strict upper part, then the columns of the tiles (k,i), k < i, into block i's pivot order);
 * the blocks after them take one off-diagonal tile of the chunk each (d_store_tile), so that a
 * level of few, long rows still fills the GPU. The two kinds touch disjoint tiles. */
template <typename R>
__global__ void __launch_bounds__(1024) k_phase_c(dev_tiles T, const int32_t *rows, int32_t nrows,
                                                  const int32_t *rowbase, const int32_t *tile_rr,
                                                  const int32_t *tile_s, R *inflight,
                                                  const int64_t *need, factor_state *st)
{
    __shared__ R sB[TILE];
    __shared__ int rowcnt[LD], rowoff[LD + 1], iperm[LD], sperm[LD];
    __shared__ unsigned char occ[TILE];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    if ((int32_t)blockIdx.x >= nrows) {
        int32_t q = (int32_t)blockIdx.x - nrows, rr = tile_rr[q], s = tile_s[q];
        const R *slot = inflight + ((int64_t)rowbase[rr] + s) * TILE;
        d_store_tile(T, rows[rr], s, slot, need[rowbase[rr] + s], st, sB, rowcnt, rowoff);
        return;
    }
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i];
    const R *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;
    const int32_t *perm = T.piv + T.bstart[i];

    /* the diagonal tile as dense strict upper part */
    if (ty < mi && tx < mi) fac_val<R>(T)[T.off[t0] + ty * mi + tx] = (tx > ty) ? slot[tid] : 0.0;

    /* columns of the tiles (k,i), k < i, into block i's pivot order; a sparse tile is expanded
     * into shared memory at its new positions and compressed again, which leaves its entries
     * in ascending index order as the reference's insertion sort does */
    if (tid < mi) {
        iperm[perm[tid]] = tid;
        sperm[tid] = perm[tid];
    }
    __syncthreads();
    /* the tiles (k,i), k < i; each one's values read while the previous one is rewritten */
    int64_t q = T.col_ptr[i], qend = T.col_diag[i];
    colperm_fetch<R> nextc;
    if (q < qend) d_colperm_fetch(T, T.col_tiles[q], mi, sperm, &nextc);
    while (q < qend) {
        colperm_fetch<R> cur = nextc;
        if (++q < qend) d_colperm_fetch(T, T.col_tiles[q], mi, sperm, &nextc);
        __syncthreads(); /* every thread has read tile cur (and the last one's shared memory is free) */
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
}

/* ------------------------------------------------------------ solve preparation */

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

/* ------------------------------------------------------------ host side */

/* The chunks of a factorization with value type R (double, or float for precision single):
 * per chunk the phase kernels in order (factor.cu). ILDL_CUDA_PROFILE=1 synchronises after
 * every kernel and prints the wall time per kernel kind (diagnostic only: the synchronisation
 * itself slows the factorization down). */
template <typename R>
static int factor_chunks(ildl_cuda_ctx *c, const factor_params_d &prm, int leftover)
{
    int status = ILDL_SUCCESS;
    dim3 blk(LD, LD);
    R *inflight = reinterpret_cast<R *>(c->fac.d_inflight), *rownorm = reinterpret_cast<R *>(c->fac.d_rownorm);
    int prof = ildl_cuda_profiling();
    double prof_t[6] = {0, 0, 0, 0, 0, 0}, prof_last = ildl_wtime();
#define PROFILE_POINT(k)                                                                  \
    do {                                                                                  \
        if (prof) {                                                                       \
            CU(cudaDeviceSynchronize());                                                  \
            double now_ = ildl_wtime();                                                   \
            prof_t[k] += now_ - prof_last;                                                \
            prof_last = now_;                                                             \
        }                                                                                 \
    } while (0)
    /* per chunk, the pulls of its off-diagonal tiles (s1) run beside its diagonal tiles (s0):
     * both only read what earlier chunks stored, and s1 starts after everything before it on s0
     * (the in-flight buffer is reused); the solves of the off-diagonal tiles join the two.
     * Profiling runs the two one after the other, to time each. */
    cudaStream_t s0 = c->fac.fstream[0], s1 = prof ? c->fac.fstream[0] : c->fac.fstream[1];
    for (int32_t ch = 0; ch < c->fac.nchunks; ch++) {
        int32_t r0 = c->fac.chunk_r0[ch], nrows = c->fac.chunk_n[ch];
        const int32_t *rows = c->d_level_rows + r0, *rb = c->fac.d_rowbase + r0;
        int64_t toff = c->fac.chunk_toff[ch], nofd = c->fac.chunk_toff[ch + 1] - toff;
        if (nofd > 0) {
            CU(cudaEventRecord(c->fac.ev_fork, s0));
            CU(cudaStreamWaitEvent(s1, c->fac.ev_fork, 0));
            k_phase_a_pull<R><<<(unsigned)nofd, blk, pull_smem_bytes<R>(), s1>>>(
                c->T, rows, rb, c->fac.d_tile_rr + toff, c->fac.d_tile_s + toff, inflight);
            CU_LAUNCH();
            PROFILE_POINT(1);
            CU(cudaEventRecord(c->fac.ev_join, s1));
        }
        k_phase_a_diag<R><<<nrows, blk, 0, s0>>>(c->T, prm, rows, rb, inflight, c->fac.d_res);
        CU_LAUNCH();
        PROFILE_POINT(0);
        if (nofd > 0) {
            CU(cudaStreamWaitEvent(s0, c->fac.ev_join, 0));
            k_phase_a_solve<R><<<(unsigned)((nofd + SOLVE_TILE_WARPS - 1) / SOLVE_TILE_WARPS),
                                 dim3(32, SOLVE_TILE_WARPS), 0, s0>>>(c->T, rows, rb, c->fac.d_tile_rr + toff,
                                                                      c->fac.d_tile_s + toff, nofd, inflight, c->fac.d_res);
            CU_LAUNCH();
            PROFILE_POINT(5);
        }
        k_phase_a_drop<R><<<nrows, blk, 0, s0>>>(c->T, prm, rows, rb, inflight, c->fac.d_need, rownorm);
        CU_LAUNCH();
        PROFILE_POINT(2);
        int64_t nslots = c->fac.chunk_slots[ch];
        if (leftover == ILDL_LEFTOVER_ATOMIC) {
            k_phase_b_atomic<<<(unsigned)((nslots + 255) / 256), 256, 0, s0>>>(c->T, nrows, nslots, c->fac.d_slot_size,
                                                                               c->fac.d_need, c->fac.d_res, c->fac.d_state);
            CU_LAUNCH();
            k_phase_b_atomic_end<<<1, 1, 0, s0>>>(c->T, nslots, c->fac.d_state, c->fac.chunk_last[ch]);
        } else {
            k_phase_b<<<1, SCAN_THREADS, 0, s0>>>(c->T, nrows, nslots, c->fac.d_slot_size, c->fac.d_need, c->fac.d_res,
                                                  c->fac.d_state, c->fac.chunk_last[ch]);
        }
        CU_LAUNCH();
        PROFILE_POINT(3);
        k_phase_c<R><<<(unsigned)(nrows + nofd), blk, 0, s0>>>(c->T, rows, nrows, rb, c->fac.d_tile_rr + toff,
                                                               c->fac.d_tile_s + toff, inflight, c->fac.d_need,
                                                               c->fac.d_state);
        CU_LAUNCH();
        PROFILE_POINT(4);
    }
    if (prof) {
        CU(cudaDeviceSynchronize());
        fprintf(stderr, "ILDL_CUDA_PROFILE factor (%d chunks, %s): diag %.4f s, pull %.4f s, offdiag solve %.4f s, "
                "drop %.4f s, scan %.4f s, store %.4f s\n", c->fac.nchunks, sizeof(R) == 4 ? "single" : "double",
                prof_t[0], prof_t[1], prof_t[5], prof_t[2], prof_t[3], prof_t[4]);
    }
#undef PROFILE_POINT
cleanup:
    return status;
}

int factor_run(ildl_cuda_ctx *c, const factor_params_d &prm, int leftover)
{
    int status = c->single ? factor_chunks<float>(c, prm, leftover) : factor_chunks<double>(c, prm, leftover);
    if (status) return status;
    if (c->single) k_invert_diagonal<float><<<c->nb, 32, 0, c->fac.fstream[0]>>>(c->T);
    else k_invert_diagonal<double><<<c->nb, 32, 0, c->fac.fstream[0]>>>(c->T);
    CU_LAUNCH();
cleanup:
    return status;
}

cudaError_t factor_configure(void)
{
    cudaError_t e = cudaFuncSetAttribute(k_phase_a_pull<double>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)pull_smem_bytes<double>());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(k_phase_a_pull<float>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)pull_smem_bytes<float>());
    return e;
}
