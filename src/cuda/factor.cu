/* factor.cu -- the block-iLDL^T factorization on the GPU: per level (in chunks of rows whose
 * in-flight tiles fit the buffer) three kernels mirror the three phases of the CPU reference
 * (src/cpu/factor.c), with the same floating-point order, so factors agree with the CPU:
 *   k_phase_a_diag     one 32x32-thread block per block row: pull updates into the diagonal
 *                      tile and factor it (none/BK/Rook);
 *   k_phase_a_offdiag  one block per off-diagonal tile: pull updates, permute, solve;
 *   k_phase_a_drop     one block per block row: row norms, tau-dropping and counting;
 *   k_phase_b  one thread: deterministic leftover scan and storage offsets, in storage order;
 *   k_phase_c  one block per row: keep-largest, compress and store, column permutation. */
#include "cuda/factor_kernels.cuh"
#include "cuda/dense_bk.cuh"
#include "cuda/dense_none.cuh"
#include "cuda/dense_rook.cuh"

/* ------------------------------------------------------------ tile helpers (block-wide) */

/* out (ld 32) = stored tile t (mi x mj), zero elsewhere in the mi x mj window. */
__device__ void d_tile_expand(const dev_tiles &T, int64_t t, int mi, int mj, double *out)
{
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    const double *v = T.val + T.off[t];
    if (T.format[t] == ILDL_TILE_SPARSE) {
        if (ty < mi && tx < mj) out[ty * LD + tx] = 0.0;
        __syncthreads();
        const uint16_t *ix = T.idx + T.off[t];
        int64_t nz = T.nnz[t];
        for (int64_t q = tid; q < nz; q += TILE) out[ix[q]] = v[q];
    } else if (ty < mi && tx < mj) {
        out[ty * LD + tx] = v[ty * mj + tx];
    }
    __syncthreads();
}

/* du = D_k u (see apply_d in src/cpu/factor.c). */
__device__ void d_apply_d(const dev_tiles &T, int32_t k, int mk, int mj, const double *u,
                          double *du)
{
    int l = threadIdx.y, c = threadIdx.x;
    if (l < mk && c < mj) {
        int32_t b = T.bstart[k];
        int8_t ty = T.piv_type[b + l];
        if (ty == 2 && l + 1 < mk) {
            double d0 = T.d_diag[b + l], e = T.d_off[b + l];
            du[l * LD + c] = d0 * u[l * LD + c] + e * u[(l + 1) * LD + c];
        } else if (ty == 0 && l > 0 && T.piv_type[b + l - 1] == 2) {
            double e = T.d_off[b + l - 1], d1 = T.d_diag[b + l];
            du[l * LD + c] = e * u[(l - 1) * LD + c] + d1 * u[l * LD + c];
        } else {
            du[l * LD + c] = T.d_diag[b + l] * u[l * LD + c];
        }
    }
    __syncthreads();
}

/* b -= u^T du; sym: only c >= r, mirrored. */
__device__ void d_sub_utdu(int mk, int mi, int mj, const double *u, const double *du, double *b,
                           bool sym)
{
    int r = threadIdx.y, c = threadIdx.x;
    if (r < mi && c < mj && (!sym || c >= r)) {
        double s = 0.0;
        for (int l = 0; l < mk; l++) s += u[l * LD + r] * du[l * LD + c];
        double v = b[r * LD + c] - s;
        b[r * LD + c] = v;
        if (sym) b[c * LD + r] = v;
    }
    __syncthreads();
}

__device__ void d_pull_update(const dev_tiles &T, int64_t tki, int64_t tkj, int mi, int mj,
                              double *b, double *su, double *sdu)
{
    int32_t k = T.row[tki];
    int mk = dev_bsize(T, k);
    d_tile_expand(T, tkj, mk, mj, su);
    d_apply_d(T, k, mk, mj, su, sdu);
    if (tki != tkj) d_tile_expand(T, tki, mk, mi, su);
    d_sub_utdu(mk, mi, mj, su, sdu, b, tki == tkj);
}

/* b (zeroed) += A's entries of tile t; sym mirrors. */
__device__ void d_load_a(const dev_tiles &T, int64_t t, bool sym, double *b)
{
    int tid = threadIdx.y * LD + threadIdx.x;
    for (int64_t q = T.a_ptr[t] + tid; q < T.a_ptr[t + 1]; q += TILE) {
        int r = T.a_idx[q] >> 5, c = T.a_idx[q] & 31;
        b[r * LD + c] = T.a_val[q];
        if (sym) b[c * LD + r] = T.a_val[q];
    }
    __syncthreads();
}

__device__ void d_zero_tile(double *b)
{
    b[threadIdx.y * LD + threadIdx.x] = 0.0;
    __syncthreads();
}

/* ------------------------------------------------------------ phase A */

/* A1, one block per block row: the diagonal tile: A_ii minus the updates of column i, then the
 * dense factorization; writes U_ii to the row's first in-flight slot and P_i, D_i to T. */
__global__ void __launch_bounds__(1024) k_phase_a_diag(dev_tiles T, factor_params_d prm,
                                                       const int32_t *rows, const int32_t *rowbase,
                                                       double *inflight, dense_res *res_out)
{
    __shared__ double W[TILE], sU[TILE], sDU[TILE];
    __shared__ double u1[LD], u2[LD];
    __shared__ dense_res res;
    int tid = threadIdx.y * LD + threadIdx.x;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i];
    double *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;

    d_zero_tile(W);
    d_load_a(T, t0, true, W);
    for (int64_t q = T.col_ptr[i]; q < T.col_ptr[i + 1]; q++) {
        int64_t t = T.col_tiles[q];
        if (T.row[t] >= i) break;
        d_pull_update(T, t, t, mi, mi, W, sU, sDU);
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

/* A2, one block per off-diagonal tile of the chunk: updates from the rows k < i present in
 * block columns i and j, rows into pivot order, U_ij = D_i^-1 U_ii^-T B. */
__global__ void __launch_bounds__(1024) k_phase_a_offdiag(dev_tiles T, const int32_t *rows,
                                                          const int32_t *rowbase, const int32_t *tile_rr,
                                                          const int32_t *tile_s, double *inflight,
                                                          const dense_res *res_in)
{
    __shared__ double W[TILE], sU[TILE], sDU[TILE], sB[TILE];
    __shared__ dense_res res;
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    int32_t rr = tile_rr[blockIdx.x], s = tile_s[blockIdx.x];
    int32_t i = rows[rr];
    int mi = dev_bsize(T, i);
    int64_t t = T.row_ptr[i] + s;
    int32_t j = T.col[t];
    int mj = dev_bsize(T, j);
    double *slot = inflight + (int64_t)rowbase[rr] * TILE;
    W[tid] = slot[tid];
    if (tid < LD) {
        res.perm[tid] = res_in[rr].perm[tid];
        res.d_diag[tid] = res_in[rr].d_diag[tid];
        res.d_off[tid] = res_in[rr].d_off[tid];
        res.type[tid] = res_in[rr].type[tid];
    }
    d_zero_tile(sB); /* also makes W and res visible */
    d_load_a(T, t, false, sB);
    int64_t qi = T.col_ptr[i], ei = T.col_ptr[i + 1];
    int64_t qj = T.col_ptr[j], ej = T.col_ptr[j + 1];
    while (qi < ei && qj < ej) {
        int64_t ti = T.col_tiles[qi], tj = T.col_tiles[qj];
        int32_t ki = T.row[ti], kj = T.row[tj];
        if (ki >= i || kj >= i) break;
        if (ki < kj) qi++;
        else if (kj < ki) qj++;
        else {
            d_pull_update(T, ti, tj, mi, mj, sB, sU, sDU);
            qi++;
            qj++;
        }
    }
    /* rows into pivot order */
    double v = 0.0;
    if (ty < mi && tx < mj) v = sB[res.perm[ty] * LD + tx];
    __syncthreads();
    if (ty < mi && tx < mj) sB[ty * LD + tx] = v;
    __syncthreads();
    /* U^T forward substitution, one thread per column (as ildl_dense_solve_offdiag) */
    if (ty == 0 && tx < mj) {
        for (int r = 1; r < mi; r++)
            for (int q = 0; q < r; q++) sB[r * LD + tx] -= W[q * LD + r] * sB[q * LD + tx];
    }
    __syncthreads();
    if (ty < mi && tx < mj) {
        if (res.type[ty] == 1) {
            sB[ty * LD + tx] /= res.d_diag[ty];
        } else if (res.type[ty] == 2) {
            double da = res.d_diag[ty], db = res.d_off[ty], dc = res.d_diag[ty + 1];
            double det = da * dc - db * db;
            double x = sB[ty * LD + tx], y = sB[(ty + 1) * LD + tx];
            sB[ty * LD + tx] = (dc * x - db * y) / det;
            sB[(ty + 1) * LD + tx] = (da * y - db * x) / det;
        }
    }
    __syncthreads();
    slot[(int64_t)s * TILE + tid] = sB[tid];
}

/* A3, one block per block row: row norms over the whole block row in the reference's order,
 * then tau-dropping of the off-diagonal tiles and their counts. */
__global__ void __launch_bounds__(1024) k_phase_a_drop(dev_tiles T, factor_params_d prm,
                                                       const int32_t *rows, const int32_t *rowbase,
                                                       double *inflight, int64_t *need,
                                                       double *rownorm_out)
{
    __shared__ double rn[LD];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i], nt = T.row_ptr[i + 1] - t0;
    double *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;
    int64_t *nd = need + rowbase[blockIdx.x];
    if (ty == 0 && tx < mi) {
        int r = tx;
        double acc = 1.0;
        for (int c = r + 1; c < mi; c++) acc += slot[r * LD + c] * slot[r * LD + c];
        for (int64_t s = 1; s < nt; s++) {
            int mj = dev_bsize(T, T.col[t0 + s]);
            const double *b = slot + s * TILE + r * LD;
            for (int c = 0; c < mj; c++) acc += b[c] * b[c];
        }
        rn[r] = sqrt(acc);
        rownorm_out[(int64_t)blockIdx.x * LD + r] = rn[r];
    }
    __syncthreads();
    if (tid == 0) nd[0] = (int64_t)mi * mi;
    for (int64_t s = 1; s < nt; s++) {
        int mj = dev_bsize(T, T.col[t0 + s]);
        double *b = slot + s * TILE;
        int keep = 0;
        if (ty < mi && tx < mj) {
            double v = fabs(b[tid]);
            if (v <= prm.drop_tol * rn[ty] || v == 0) b[tid] = 0.0;
            else keep = 1;
        }
        int cnt = __syncthreads_count(keep);
        if (tid == 0) nd[s] = cnt;
    }
}

/* ------------------------------------------------------------ phase B */

/* Leftover grants and offsets for the rows of one chunk, in storage order (one thread). */
__global__ void k_phase_b(dev_tiles T, const int32_t *rows, int32_t nrows, const int32_t *rowbase,
                          const int64_t *need, const dense_res *res, factor_state *st,
                          int end_of_level, int atomic_mode)
{
    if (threadIdx.x != 0 || blockIdx.x != 0 || st->err) return;
    for (int32_t rr = 0; rr < nrows; rr++) {
        int32_t i = rows[rr];
        int mi = dev_bsize(T, i);
        const int64_t *nd = need + rowbase[rr];
        st->n2x2 += res[rr].n2x2;
        st->nperturbed += res[rr].nperturbed;
        for (int64_t t = T.row_ptr[i]; t < T.row_ptr[i + 1]; t++) {
            int64_t s = t - T.row_ptr[i], stored;
            int64_t dense = (int64_t)mi * dev_bsize(T, T.col[t]);
            if (T.tile_order[st->so++] != t) { st->err = ILDL_ERR_INTERNAL; return; }
            if (s > 0 && T.format[t] == ILDL_TILE_SPARSE) {
                int64_t cap = T.cap[t], granted = 0;
                if (nd[s] > cap) {
                    granted = nd[s] - cap < st->leftover ? nd[s] - cap : st->leftover;
                    if (granted < 0) granted = 0;
                    st->leftover -= granted;
                    st->granted += granted;
                    stored = cap + granted;
                } else {
                    stored = nd[s];
                }
                st->credit += cap + granted - stored;
            } else {
                stored = dense;
            }
            T.off[t] = st->used;
            T.nnz[t] = stored;
            st->used += stored;
            if (st->used > T.total_cap) { st->err = ILDL_ERR_INTERNAL; return; }
        }
    }
    if (end_of_level) {
        st->leftover += st->credit;
        st->credit = 0;
    }
}

/* ------------------------------------------------------------ phase C */

__global__ void __launch_bounds__(1024) k_phase_c(dev_tiles T, const int32_t *rows,
                                                  const int32_t *rowbase, double *inflight,
                                                  const int64_t *need, factor_state *st)
{
    __shared__ double sB[TILE];
    __shared__ int rowcnt[LD], rowoff[LD + 1], iperm[LD];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i], nt = T.row_ptr[i + 1] - t0;
    const double *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;
    const int64_t *nd = need + rowbase[blockIdx.x];
    const int32_t *perm = T.piv + T.bstart[i];

    /* the diagonal tile as dense strict upper part */
    if (ty < mi && tx < mi) T.val[T.off[t0] + ty * mi + tx] = (tx > ty) ? slot[tid] : 0.0;

    for (int64_t s = 1; s < nt; s++) {
        int64_t t = t0 + s;
        int mj = dev_bsize(T, T.col[t]);
        double *v = T.val + T.off[t];
        sB[tid] = slot[s * TILE + tid];
        __syncthreads();
        if (T.format[t] == ILDL_TILE_SPARSE) {
            int64_t keep = T.nnz[t];
            if (nd[s] > keep) {
                /* keep the `keep` largest: rank by (magnitude desc, local index asc) */
                int rank = 0;
                bool mine = ty < mi && tx < mj && sB[tid] != 0.0;
                if (mine) {
                    double a = fabs(sB[tid]);
                    for (int r = 0; r < mi; r++)
                        for (int c = 0; c < mj; c++) {
                            double b = fabs(sB[r * LD + c]);
                            if (b != 0.0 && (b > a || (b == a && r * LD + c < tid))) rank++;
                        }
                }
                __syncthreads();
                if (mine && rank >= keep) sB[tid] = 0.0;
                __syncthreads();
            }
            /* compress in ascending local index: warp ty holds row ty */
            bool nz = ty < mi && tx < mj && sB[tid] != 0.0;
            unsigned ballot = __ballot_sync(0xffffffffu, nz);
            if (tx == 0) rowcnt[ty] = __popc(ballot);
            __syncthreads();
            if (tid == 0) {
                rowoff[0] = 0;
                for (int r = 0; r < LD; r++) rowoff[r + 1] = rowoff[r] + rowcnt[r];
                if (rowoff[LD] != keep && !st->err) st->err = ILDL_ERR_INTERNAL;
            }
            __syncthreads();
            if (nz) {
                int pos = rowoff[ty] + __popc(ballot & ((1u << tx) - 1u));
                T.idx[T.off[t] + pos] = (uint16_t)tid;
                v[pos] = sB[tid];
            }
        } else if (ty < mi && tx < mj) {
            v[ty * mj + tx] = sB[tid];
        }
        __syncthreads();
    }

    /* columns of the tiles (k,i), k < i, into block i's pivot order */
    if (tid < mi) iperm[perm[tid]] = tid;
    __syncthreads();
    for (int64_t q = T.col_ptr[i]; q < T.col_ptr[i + 1]; q++) {
        int64_t t = T.col_tiles[q];
        if (T.row[t] >= i) break;
        int mk = dev_bsize(T, T.row[t]);
        double *v = T.val + T.off[t];
        if (T.format[t] == ILDL_TILE_SPARSE) {
            uint16_t *ix = T.idx + T.off[t];
            int64_t nzt = T.nnz[t];
            for (int64_t e = tid; e < nzt; e += TILE)
                ix[e] = (uint16_t)((ix[e] & ~31) | iperm[ix[e] & 31]);
            __syncthreads();
            if (tid < mk) {
                /* entries of row tid are contiguous (rows stay sorted): find and sort them */
                int64_t lo = 0, hi = nzt;
                while (lo < hi) { int64_t m = (lo + hi) / 2; if ((ix[m] >> 5) < tid) lo = m + 1; else hi = m; }
                int64_t beg = lo;
                hi = nzt;
                while (lo < hi) { int64_t m = (lo + hi) / 2; if ((ix[m] >> 5) <= tid) lo = m + 1; else hi = m; }
                int64_t end = lo;
                for (int64_t a = beg + 1; a < end; a++) {
                    uint16_t key = ix[a];
                    double x = v[a];
                    int64_t b = a - 1;
                    for (; b >= beg && ix[b] > key; b--) {
                        ix[b + 1] = ix[b];
                        v[b + 1] = v[b];
                    }
                    ix[b + 1] = key;
                    v[b + 1] = x;
                }
            }
            __syncthreads();
        } else {
            double x = 0.0;
            if (ty < mk && tx < mi) x = v[ty * mi + perm[tx]];
            __syncthreads();
            if (ty < mk && tx < mi) v[ty * mi + tx] = x;
            __syncthreads();
        }
    }
}
