/* factor.c -- the CPU reference block-iLDL^T (paper Sec. IV-B, Alg. 1 and 2): U^T D U by
 * block rows, level by level, every block pulling its updates when its level comes.
 *
 * This is the specification the CUDA kernels are tested against, so every floating-point
 * operation happens in an order fixed by the data alone (never by the thread schedule),
 * and the result is bitwise identical for any number of threads.
 *
 * A level is processed in chunks of consecutive rows (level_rows ascending) whose in-flight
 * tiles fit a fixed budget; a chunk runs three phases:
 *   A (parallel over rows)  pull updates, factor the diagonal tile, solve the off-diagonal
 *                           tiles, row norms, tau-dropping; count the entries each tile needs;
 *   B (sequential)          grant leftover capacity and assign offsets in storage order;
 *   C (parallel over rows)  keep-largest, store, and column-permute the tiles of column i
 *                           by the pivot order of block i.
 * Storage order inside a level is tile id order (tiles.h), i.e. rows ascending and tiles of
 * a row in row order, so chunking changes neither the grants nor the offsets.
 *
 * This file is compiled twice (cpu/real.h): for double, and, with every value a float and every
 * operation a float operation, for precision single (ildl_cpu_factor_s). The orders below hold
 * for both.
 *
 * Floating-point orders (the GPU must mirror them):
 *   update     B(r,c) -= s with s = sum_{l ascending} U_ki(l,r) * (D_k U_kj)(l,c), one s per
 *              update block k, blocks k ascending; (D_k U)(l,:) = d_l U(l,:) for a 1x1 pivot,
 *              d_l U(l,:) + e U(l+1,:) and e U(l,:) + d_{l+1} U(l+1,:) for a 2x2 pivot.
 *              Diagonal tiles compute c >= r only and mirror. Products and sums are
 *              separately rounded (no FMA contraction on the CPU build): a bitwise GPU
 *              match needs __dmul_rn/__dadd_rn or -fmad=false in these loops.
 *   row norm   acc = 1 (unit diagonal); acc += U_ii(r,c)^2 for c = r+1..mi-1; then for every
 *              off-diagonal tile in row order acc += U_ij(r,c)^2 for c ascending;
 *              rownorm = sqrt(acc).
 *   dropping   tau-dropping applies to every off-diagonal tile, dense ones included (a dense
 *              tile keeps its dropped entries as stored zeros), except that tau = 0 leaves
 *              dense tiles as they are (it would drop only zeros, storing -0 as +0), so that
 *              a store of dense tiles only skips the pass; keep-largest only to sparse. The
 *              row norms are taken where something is dropped.
 *   leftover   deterministic scan (ILDL_LEFTOVER_SCAN) in storage order: a sparse tile with
 *              need > cap gets min(need - cap, leftover); grants draw only on capacity left
 *              by earlier levels: after a level, leftover += sum over its sparse tiles of
 *              (cap + granted - stored); dense tiles store exactly their cap and add 0. */
#include "cpu/factor.h"
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "blockildl.h"
#include "core/util.h"
#include "cpu/dense_factor.h"
#include "cpu/drop.h"
#include "cpu/real.h"

#define LD ILDL_TILE
#define TILE ILDL_TILE_AREA
#define INFLIGHT_TILES 2048 /* in-flight 32x32 tiles per chunk (16 MiB) unless a row needs more */

/* Workspace of one factorization: in-flight tiles of a chunk and per-thread scratch. */
typedef struct workspace {
    int64_t budget;          /* tiles per chunk */
    int32_t *rowbase;        /* [budget+1] first in-flight slot of each chunk row */
    ildl_real *inflight;        /* [budget*TILE] slot rowbase[r] is the diagonal tile */
    int64_t *need;           /* [budget] entries left after tau-dropping, per slot */
    ildl_dense_result *res;  /* [budget] per chunk row */
    ildl_real *rownorm;         /* [budget*32] per chunk row */
    int nthreads;
    ildl_real *scratch;         /* [nthreads*2*TILE] */
} workspace;

/* ---------------------------------------------------------------- tile helpers */

/* Expand stored tile t (mi x mj, rows and columns as stored) into out (ld 32). */
static void tile_expand(const ildl_tiles *T, int64_t t, int mi, int mj, ildl_real *out)
{
    const ildl_real *v = TVAL(T) + T->off[t];
    for (int r = 0; r < mi; r++) memset(out + r * LD, 0, (size_t)mj * sizeof(ildl_real));
    if (T->format[t] == ILDL_TILE_SPARSE) {
        const uint16_t *ix = T->idx + T->off[t];
        for (int64_t q = 0; q < T->nnz[t]; q++) out[ix[q]] = v[q];
    } else {
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) out[r * LD + c] = v[r * mj + c];
    }
}

void RN(ildl_tile_apply_d)(int mk, int mj, const double *dd, const double *de, const int8_t *ty,
                           const ildl_real *u, ildl_real *du)
{
    for (int l = 0; l < mk; l++) {
        ildl_real d0 = dd[l];
        if (ty[l] == 2 && l + 1 < mk) {
            ildl_real e = de[l], d1 = dd[l + 1];
            for (int c = 0; c < mj; c++) {
                ildl_real u0 = u[l * LD + c], u1 = u[(l + 1) * LD + c];
                du[l * LD + c] = d0 * u0 + e * u1;
                du[(l + 1) * LD + c] = e * u0 + d1 * u1;
            }
            l++;
        } else {
            for (int c = 0; c < mj; c++) du[l * LD + c] = d0 * u[l * LD + c];
        }
    }
}

void RN(ildl_tile_sub_utdu)(int mk, int mi, int mj, const ildl_real *u, const ildl_real *du, ildl_real *b,
                     int sym)
{
    ildl_real s[TILE];
    /* s(r,:) accumulates over l ascending from 0, row by row so the inner loop is contiguous;
     * a zero u(l,r) only adds exact zeros (for finite du), so skipping it changes no bit */
    for (int r = 0; r < mi; r++) memset(s + r * LD, 0, (size_t)mj * sizeof(ildl_real));
    for (int l = 0; l < mk; l++) {
        const ildl_real *dl = du + l * LD;
        for (int r = 0; r < mi; r++) {
            ildl_real ulr = u[l * LD + r];
            if (ulr == 0.0) continue;
            ildl_real *sr = s + r * LD;
            for (int c = sym ? r : 0; c < mj; c++) sr[c] += ulr * dl[c];
        }
    }
    for (int r = 0; r < mi; r++) {
        for (int c = sym ? r : 0; c < mj; c++) {
            b[r * LD + c] -= s[r * LD + c];
            if (sym) b[c * LD + r] = b[r * LD + c];
        }
    }
}

/* b -= U_ki^T D_k U_kj for the stored tiles tki = (k,i) and tkj = (k,j); w: 2 scratch tiles. */
static void pull_update(const ildl_tiles *T, int64_t tki, int64_t tkj, int mi, int mj,
                        ildl_real *b, ildl_real *w)
{
    ildl_real *u = w, *du = w + TILE;
    int32_t k = T->row[tki];
    int mk = ildl_tiles_block_size(T, k);
    int32_t bk = T->bstart[k];
    tile_expand(T, tkj, mk, mj, u);
    RN(ildl_tile_apply_d)(mk, mj, T->d_diag + bk, T->d_off + bk, T->piv_type + bk, u, du);
    if (tki != tkj) tile_expand(T, tki, mk, mi, u);
    RN(ildl_tile_sub_utdu)(mk, mi, mj, u, du, b, tki == tkj);
}

void RN(ildl_tile_load_a)(const ildl_tiles *T, int64_t t, int sym, ildl_real *b)
{
    for (int64_t q = T->a_ptr[t]; q < T->a_ptr[t + 1]; q++) {
        int r = T->a_idx[q] >> 5, c = T->a_idx[q] & 31;
        ildl_real v = (ildl_real)T->a_val[q]; /* the single build rounds A once, here */
        b[r * LD + c] = v;
        if (sym) b[c * LD + r] = v;
    }
}

/* Rows of b (mi x mj, ld 32) into pivot order: new row r = old row perm[r]; w: scratch. */
static void permute_rows(int mi, int mj, const int32_t *perm, ildl_real *b, ildl_real *w)
{
    for (int r = 0; r < mi; r++) memcpy(w + r * LD, b + perm[r] * LD, (size_t)mj * sizeof(ildl_real));
    for (int r = 0; r < mi; r++) memcpy(b + r * LD, w + r * LD, (size_t)mj * sizeof(ildl_real));
}

/* Columns of stored tile t (mk x mi) into pivot order: new column c = old column perm[c]. */
static void permute_stored_cols(ildl_tiles *T, int64_t t, int mk, int mi, const int32_t *perm)
{
    ildl_real *v = TVAL(T) + T->off[t];
    if (T->format[t] == ILDL_TILE_SPARSE) {
        uint16_t *ix = T->idx + T->off[t];
        int iperm[LD];
        for (int c = 0; c < mi; c++) iperm[perm[c]] = c;
        for (int64_t q = 0; q < T->nnz[t]; q++)
            ix[q] = (uint16_t)((ix[q] & ~31) | iperm[ix[q] & 31]);
        /* insertion sort: entries stay grouped by row, so each moves at most within its row */
        for (int64_t q = 1; q < T->nnz[t]; q++) {
            uint16_t key = ix[q];
            ildl_real x = v[q];
            int64_t p = q - 1;
            for (; p >= 0 && ix[p] > key; p--) {
                ix[p + 1] = ix[p];
                v[p + 1] = v[p];
            }
            ix[p + 1] = key;
            v[p + 1] = x;
        }
    } else {
        ildl_real tmp[LD];
        for (int r = 0; r < mk; r++) {
            ildl_real *row = v + (int64_t)r * mi;
            for (int c = 0; c < mi; c++) tmp[c] = row[perm[c]];
            memcpy(row, tmp, (size_t)mi * sizeof(ildl_real));
        }
    }
}

/* ---------------------------------------------------------------- phase A */

/* The diagonal tile W of block row i: A_ii minus the updates of column i, then factored.
 * Writes block i's pivot order and D into T. */
static void factor_diag(ildl_tiles *T, const ildl_factor_params *p, int32_t i, ildl_real *W,
                        ildl_dense_result *res, ildl_real *w)
{
    int mi = ildl_tiles_block_size(T, i);
    int32_t b = T->bstart[i];
    ildl_dense_params dp;
    memset(W, 0, TILE * sizeof(ildl_real));
    RN(ildl_tile_load_a)(T, T->row_ptr[i], 1, W);
    for (int64_t q = T->col_ptr[i]; q < T->col_ptr[i + 1]; q++) {
        int64_t t = T->col_tiles[q];
        if (T->row[t] >= i) break;
        pull_update(T, t, t, mi, mi, W, w);
    }
    dp.pivot_tol = p->pivot_tol;
    dp.perturb = p->perturb;
    dp.pair_hint = p->pair_hint ? p->pair_hint + b : NULL;
    RN(ildl_dense_factor)(p->pivoting, mi, W, &dp, res);
    for (int r = 0; r < mi; r++) {
        T->piv[b + r] = res->perm[r];
        T->d_diag[b + r] = res->d_diag[r];
        T->d_off[b + r] = res->d_off[r];
        T->piv_type[b + r] = res->type[r];
    }
}

/* Off-diagonal tile t = (i,j) into B: A_ij minus the updates of the rows k < i present in
 * both columns i and j (merged ascending), rows to pivot order, then U_ij = D^-1 U_ii^-T B. */
static void solve_offdiag(const ildl_tiles *T, int32_t i, int64_t t, const ildl_real *W,
                          const ildl_dense_result *res, ildl_real *B, ildl_real *w)
{
    int32_t j = T->col[t];
    int mi = ildl_tiles_block_size(T, i), mj = ildl_tiles_block_size(T, j);
    int64_t qi = T->col_ptr[i], ei = T->col_ptr[i + 1];
    int64_t qj = T->col_ptr[j], ej = T->col_ptr[j + 1], ti, tj;
    memset(B, 0, TILE * sizeof(ildl_real));
    RN(ildl_tile_load_a)(T, t, 0, B);
    while (ildl_tiles_next_common(T, i, &qi, ei, &qj, ej, &ti, &tj)) pull_update(T, ti, tj, mi, mj, B, w);
    permute_rows(mi, mj, res->perm, B, w);
    RN(ildl_dense_solve_offdiag)(mi, mj, W, res, B);
}

/* Row norms of block row i over its in-flight tiles slot[0..nt-1] (order in the header). */
static void row_norms(const ildl_tiles *T, int32_t i, const ildl_real *slot, ildl_real *rownorm)
{
    int mi = ildl_tiles_block_size(T, i);
    int64_t t0 = T->row_ptr[i], nt = T->row_ptr[i + 1] - t0;
    for (int r = 0; r < mi; r++) {
        ildl_real acc = 1.0;
        for (int c = r + 1; c < mi; c++) acc += slot[r * LD + c] * slot[r * LD + c];
        for (int64_t s = 1; s < nt; s++) {
            int mj = ildl_tiles_block_size(T, T->col[t0 + s]);
            const ildl_real *b = slot + s * TILE + r * LD;
            for (int c = 0; c < mj; c++) acc += b[c] * b[c];
        }
        rownorm[r] = RSQRT(acc);
    }
}

/* Phase A for block row i: in-flight tiles slot[0..], need[s] after tau-dropping. The tiles
 * come from the pulls and solves above, or from fill (the fixed-point method's last sweep). */
static int phase_a_row(ildl_tiles *T, const ildl_factor_params *p, const ildl_factor_fill *fill,
                       int32_t i, ildl_real *slot, ildl_dense_result *res, ildl_real *rownorm,
                       int64_t *need, ildl_real *w)
{
    int mi = ildl_tiles_block_size(T, i);
    int64_t t0 = T->row_ptr[i], nt = T->row_ptr[i + 1] - t0;
    if (nt < 1 || T->col[t0] != i) return ILDL_ERR_INTERNAL;
#ifndef ILDL_SINGLE
    if (fill) {
        fill->row(fill->ctx, T, i, slot, res);
    } else
#endif
    {
        (void)fill;
        factor_diag(T, p, i, slot, res, w);
        for (int64_t s = 1; s < nt; s++) solve_offdiag(T, i, t0 + s, slot, res, slot + s * TILE, w);
    }
    /* tau = 0 leaves dense tiles as they are (see the header: dropping) */
    int drop_dense = p->drop_tol != 0.0, any = drop_dense;
    for (int64_t s = 1; s < nt && !any; s++) any = T->format[t0 + s] == ILDL_TILE_SPARSE;
    if (any) row_norms(T, i, slot, rownorm);
    need[0] = (int64_t)mi * mi;
    for (int64_t s = 1; s < nt; s++) {
        int mj = ildl_tiles_block_size(T, T->col[t0 + s]);
        if (drop_dense || T->format[t0 + s] == ILDL_TILE_SPARSE)
            need[s] = RN(ildl_drop_tile)(mi, mj, slot + s * TILE, rownorm, p->drop_tol, -1);
        else
            need[s] = (int64_t)mi * mj;
    }
    return ILDL_SUCCESS;
}

/* ---------------------------------------------------------------- phase C */


/* Store the in-flight tiles of block row i at the offsets of phase B, then put the columns
 * of column i's tiles (k,i), k < i, into block i's pivot order: block row i was their last
 * reader. Returns ILDL_ERR_INTERNAL if a tile's count differs from its grant. */
static int phase_c_row(ildl_tiles *T, int32_t i, ildl_real *slot, const ildl_dense_result *res,
                       const ildl_real *rownorm, const int64_t *need)
{
    int mi = ildl_tiles_block_size(T, i);
    int64_t t0 = T->row_ptr[i], nt = T->row_ptr[i + 1] - t0;
    int status = ILDL_SUCCESS;
    ildl_real *d = TVAL(T) + T->off[t0];
    for (int r = 0; r < mi; r++)
        for (int c = 0; c < mi; c++) d[r * mi + c] = (c > r) ? slot[r * LD + c] : 0.0;
    for (int64_t s = 1; s < nt; s++) {
        int64_t t = t0 + s;
        int mj = ildl_tiles_block_size(T, T->col[t]);
        ildl_real *b = slot + s * TILE, *v = TVAL(T) + T->off[t];
        if (T->format[t] == ILDL_TILE_SPARSE) {
            if (need[s] > T->nnz[t]) RN(ildl_drop_tile)(mi, mj, b, rownorm, 0.0, (int)T->nnz[t]);
            if (RN(ildl_tile_compress)(mi, mj, b, T->idx + T->off[t], v) != T->nnz[t])
                status = ILDL_ERR_INTERNAL;
        } else {
            for (int r = 0; r < mi; r++) memcpy(v + r * mj, b + r * LD, (size_t)mj * sizeof(ildl_real));
        }
    }
    for (int64_t q = T->col_ptr[i]; q < T->col_ptr[i + 1]; q++) {
        int64_t t = T->col_tiles[q];
        if (T->row[t] >= i) break;
        permute_stored_cols(T, t, ildl_tiles_block_size(T, T->row[t]), mi, res->perm);
    }
    return status;
}

/* ---------------------------------------------------------------- driver */

static void workspace_free(workspace *ws)
{
    free(ws->rowbase);
    free(ws->inflight);
    free(ws->need);
    free(ws->res);
    free(ws->rownorm);
    free(ws->scratch);
    memset(ws, 0, sizeof(*ws));
}

/* Size the chunk budget (longest row at least) and allocate everything once. */
static int workspace_alloc(const ildl_tiles *T, int nthreads, workspace *ws)
{
    int64_t longest = 1, budget;
    memset(ws, 0, sizeof(*ws));
    for (int32_t i = 0; i < T->nb; i++) {
        int64_t len = T->row_ptr[i + 1] - T->row_ptr[i];
        if (len > longest) longest = len;
    }
    budget = T->ntiles < INFLIGHT_TILES ? T->ntiles : INFLIGHT_TILES;
    if (budget < longest) budget = longest;
    ws->budget = budget;
    ws->nthreads = nthreads;
    ws->rowbase = ildl_malloc((size_t)(budget + 1) * sizeof(int32_t));
    ws->inflight = ildl_malloc((size_t)budget * TILE * sizeof(ildl_real));
    ws->need = ildl_malloc((size_t)budget * sizeof(int64_t));
    ws->res = ildl_malloc((size_t)budget * sizeof(ildl_dense_result));
    ws->rownorm = ildl_malloc((size_t)budget * LD * sizeof(ildl_real));
    ws->scratch = ildl_malloc((size_t)nthreads * 2 * TILE * sizeof(ildl_real));
    if (!ws->rowbase || !ws->inflight || !ws->need || !ws->res || !ws->rownorm || !ws->scratch) {
        workspace_free(ws);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    return ILDL_SUCCESS;
}

static int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* Phase B for the chunk rows level_rows[r0..r0+nrows): leftover grants, offsets, counts.
 * *so is the chunk's position in tile_order, *used the running offset, *credit the
 * capacity this level leaves unused. */
static int phase_b(ildl_tiles *T, int32_t r0, int32_t nrows, const workspace *ws,
                   int64_t *so, int64_t *used, int64_t *leftover, int64_t *credit,
                   int32_t *block_perturbed, ildl_factor_stats *st)
{
    for (int32_t rr = 0; rr < nrows; rr++) {
        int32_t i = T->level_rows[r0 + rr];
        int mi = ildl_tiles_block_size(T, i);
        const int64_t *need = ws->need + ws->rowbase[rr];
        st->n2x2 += ws->res[rr].n2x2;
        st->nperturbed += ws->res[rr].nperturbed;
        if (block_perturbed) block_perturbed[i] = ws->res[rr].nperturbed;
        for (int64_t t = T->row_ptr[i]; t < T->row_ptr[i + 1]; t++) {
            int64_t s = t - T->row_ptr[i], stored;
            int64_t dense = (int64_t)mi * ildl_tiles_block_size(T, T->col[t]);
            if (T->tile_order[(*so)++] != t) return ILDL_ERR_INTERNAL; /* storage order */
            if (s > 0 && T->format[t] == ILDL_TILE_SPARSE) {
                int64_t cap = T->cap[t], granted = 0;
                if (need[s] > cap) {
                    granted = need[s] - cap < *leftover ? need[s] - cap : *leftover;
                    *leftover -= granted;
                    st->leftover_granted += granted;
                    stored = cap + granted;
                } else {
                    stored = need[s];
                }
                *credit += cap + granted - stored;
            } else {
                stored = dense;
            }
            T->off[t] = *used;
            T->nnz[t] = stored;
            *used += stored;
            if (*used > T->total_cap) return ILDL_ERR_INTERNAL;
        }
    }
    return ILDL_SUCCESS;
}

#ifndef ILDL_SINGLE /* one definition, in the double build */
/* Inertia of D and factor_nnz: stored off-diagonal entries of U (dense tiles count every
 * entry, diagonal tiles their strict upper part) + n (unit diagonal) + D's stored values
 * (n diagonal + one off-diagonal per 2x2 pivot). Inertia of a 2x2 pivot: det < 0 gives one
 * of each sign, det > 0 two of the trace's sign, det == 0 one zero and the trace's sign. */
void ildl_factor_final_stats(const ildl_tiles *T, ildl_factor_stats *st)
{
    /* the 2x2 count is read off D itself, the one record both backends share */
    int32_t n2 = 0;
    for (int32_t k = 0; k < T->n; k++) n2 += T->piv_type[k] == 2;
    st->n2x2 = n2;
    int64_t nnz = (int64_t)T->n + st->n2x2;
    st->inertia_pos = st->inertia_neg = st->inertia_zero = 0;
#pragma omp parallel for schedule(static) reduction(+ : nnz)
    for (int64_t t = 0; t < T->ntiles; t++) {
        int64_t mi = ildl_tiles_block_size(T, T->row[t]);
        nnz += (T->col[t] == T->row[t]) ? mi * (mi - 1) / 2 : T->nnz[t];
    }
    st->factor_nnz = nnz;
    for (int32_t k = 0; k < T->n; k++) {
        double a = T->d_diag[k];
        if (T->piv_type[k] == 2 && k + 1 < T->n) {
            double b = T->d_off[k], c = T->d_diag[k + 1];
            double det = a * c - b * b, tr = a + c;
            if (det < 0.0) {
                st->inertia_pos++;
                st->inertia_neg++;
            } else {
                /* det > 0: both eigenvalues have the trace's sign; det == 0: one is zero */
                int32_t *other = tr > 0.0 ? &st->inertia_pos
                                          : (tr < 0.0 ? &st->inertia_neg : &st->inertia_zero);
                *other += 1;
                if (det > 0.0) *other += 1;
                else st->inertia_zero++;
            }
            k++;
        } else if (a > 0.0) {
            st->inertia_pos++;
        } else if (a < 0.0) {
            st->inertia_neg++;
        } else {
            st->inertia_zero++;
        }
    }
}
#endif

/* The strict upper part of V = U^{-1}, in place, for the unit upper U whose strict upper part
 * is a (m x m, ld m). Entry (r,c), c > r: s = u(r,c), then s += u(r,k) v(k,c) for
 * k = r+1..c-1 ascending, v(r,c) = -s, with rows r descending, so every v(k,c) read is final
 * and row r of U is still intact when row r of V replaces it. The GPU computes each entry with
 * the same sequence (k_invert_diagonal). */
static void invert_unit_upper(int m, ildl_real *a)
{
    for (int r = m - 2; r >= 0; r--) {
        ildl_real row[LD];
        for (int c = r + 1; c < m; c++) {
            ildl_real s = a[r * m + c];
            for (int k = r + 1; k < c; k++) s += a[r * m + k] * a[k * m + c];
            row[c] = -s;
        }
        for (int c = r + 1; c < m; c++) a[r * m + c] = row[c];
    }
}

void RN(ildl_cpu_invert_diagonal)(ildl_tiles *T)
{
    assert(TVAL(T)); /* the factor of this precision */
    if (T->diag_inverted) return;
#pragma omp parallel for schedule(dynamic, 64)
    for (int32_t i = 0; i < T->nb; i++)
        invert_unit_upper(ildl_tiles_block_size(T, i), TVAL(T) + T->off[T->row_ptr[i]]);
    T->diag_inverted = 1;
}

/* T->chunk_f for the factor just computed (the pattern of its sparse tiles is now fixed). */
static int set_chunk_codes(ildl_tiles *T)
{
    if (!T->chunk_f && T->ntiles > 0) {
        T->chunk_f = (uint8_t *)malloc((size_t)T->ntiles);
        if (!T->chunk_f) return ILDL_ERR_OUT_OF_MEMORY;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < T->ntiles; t++)
        T->chunk_f[t] = (uint8_t)(T->format[t] == ILDL_TILE_SPARSE
                                      ? ildl_sparse_chunk_code(T->nnz[t], T->idx + T->off[t], 1)
                                      : 0);
    return ILDL_SUCCESS;
}

static int factor_driver(ildl_tiles *T, const ildl_factor_params *p, const ildl_factor_fill *fill,
                         ildl_factor_stats *st)
{
    int status = ILDL_SUCCESS, nthreads = 1;
    int64_t so = 0, used = 0, leftover = 0;
    ildl_factor_stats local;
    workspace ws;
    if (!st) st = &local;
    memset(st, 0, sizeof(*st));
    if (!TVAL(T)) return ILDL_ERR_INTERNAL; /* storage of the other precision (ildl_tiles_set_precision) */
    T->diag_inverted = 0;
#ifdef _OPENMP
    nthreads = p->num_threads > 0 ? p->num_threads : omp_get_max_threads();
#endif
    if (nthreads < 1) nthreads = 1;
    if ((status = workspace_alloc(T, nthreads, &ws)) != ILDL_SUCCESS) return status;

    for (int32_t lev = 0; lev < T->nlevels && status == ILDL_SUCCESS; lev++) {
        int32_t r0 = T->level_ptr[lev], rend = T->level_ptr[lev + 1];
        int64_t credit = 0;
        while (r0 < rend && status == ILDL_SUCCESS) {
            /* chunk: consecutive rows of the level whose tiles fit the in-flight budget */
            int32_t nrows = 0;
            int64_t ntl = 0;
            while (r0 + nrows < rend) {
                int32_t i = T->level_rows[r0 + nrows];
                int64_t len = T->row_ptr[i + 1] - T->row_ptr[i];
                if (nrows > 0 && ntl + len > ws.budget) break;
                ws.rowbase[nrows++] = (int32_t)ntl;
                ntl += len;
            }
            ws.rowbase[nrows] = (int32_t)ntl;

            int err = ILDL_SUCCESS;
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
            for (int32_t rr = 0; rr < nrows; rr++) {
                int tid = thread_id();
                int s = phase_a_row(T, p, fill, T->level_rows[r0 + rr],
                                    ws.inflight + (int64_t)ws.rowbase[rr] * TILE, ws.res + rr,
                                    ws.rownorm + (int64_t)rr * LD, ws.need + ws.rowbase[rr],
                                    ws.scratch + (int64_t)tid * 2 * TILE);
                if (s != ILDL_SUCCESS) {
#pragma omp atomic write
                    err = s;
                }
            }
            if (err == ILDL_SUCCESS)
                err = phase_b(T, r0, nrows, &ws, &so, &used, &leftover, &credit, p->block_perturbed, st);
            if (err == ILDL_SUCCESS) {
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
                for (int32_t rr = 0; rr < nrows; rr++) {
                    int s = phase_c_row(T, T->level_rows[r0 + rr],
                                        ws.inflight + (int64_t)ws.rowbase[rr] * TILE,
                                        ws.res + rr, ws.rownorm + (int64_t)rr * LD,
                                        ws.need + ws.rowbase[rr]);
                    if (s != ILDL_SUCCESS) {
#pragma omp atomic write
                        err = s;
                    }
                }
            }
            status = err;
            r0 += nrows;
        }
        leftover += credit;
    }
    if (status == ILDL_SUCCESS) status = set_chunk_codes(T);
    if (status == ILDL_SUCCESS) ildl_factor_final_stats(T, st);
    workspace_free(&ws);
    return status;
}

int RN(ildl_cpu_factor)(ildl_tiles *T, const ildl_factor_params *p, ildl_factor_stats *st)
{
    return factor_driver(T, p, NULL, st);
}

#ifndef ILDL_SINGLE
int ildl_cpu_factor_store(ildl_tiles *T, const ildl_factor_params *p, const ildl_factor_fill *fill,
                          ildl_factor_stats *st)
{
    return factor_driver(T, p, fill, st);
}
#endif
