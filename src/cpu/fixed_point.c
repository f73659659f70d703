/* fixed_point.c -- the fixed-point (Jacobi-sweep) block factorization, CPU reference
 * (cpu/fixed_point.h has the method, the state and the floating-point orders). Every value of
 * a sweep depends on the previous sweep's state alone, so the result is bitwise the same for
 * any number of threads, and the CUDA kernels mirror it. */
#include "cpu/fixed_point.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "blockildl.h"
#include "core/util.h"
#include "cpu/dense_factor.h"

#define LD ILDL_TILE
#define TILE ILDL_TILE_AREA

void ildl_fp_state_free(ildl_fp_state *S)
{
    free(S->soff);
    for (int c = 0; c < 2; c++) {
        free(S->u[c]);
        free(S->perm[c]);
        free(S->dd[c]);
        free(S->de[c]);
        free(S->ty[c]);
    }
    free(S->q);
    free(S->npert);
    free(S->n2x2);
    memset(S, 0, sizeof *S);
}

static int64_t state_len(const ildl_tiles *T)
{
    int64_t len = 0;
    for (int64_t t = 0; t < T->ntiles; t++)
        len += (int64_t)ildl_tiles_block_size(T, T->row[t]) * ildl_tiles_block_size(T, T->col[t]);
    return len;
}

int ildl_fp_state_init(const ildl_tiles *T, ildl_fp_state *S)
{
    size_t n = (size_t)T->n;
    memset(S, 0, sizeof *S);
    S->len = state_len(T);
    S->soff = ildl_malloc(sizeof(int64_t) * (size_t)(T->ntiles > 0 ? T->ntiles : 1));
    int ok = S->soff != NULL;
    for (int c = 0; c < 2; c++) {
        S->u[c] = ildl_calloc((size_t)(S->len > 0 ? S->len : 1), sizeof(double));
        S->perm[c] = ildl_malloc(sizeof(int32_t) * (n ? n : 1));
        S->dd[c] = ildl_malloc(sizeof(double) * (n ? n : 1));
        S->de[c] = ildl_calloc(n ? n : 1, sizeof(double));
        S->ty[c] = ildl_malloc(n ? n : 1);
        ok = ok && S->u[c] && S->perm[c] && S->dd[c] && S->de[c] && S->ty[c];
    }
    S->q = ildl_malloc(sizeof(int32_t) * (n ? n : 1));
    S->npert = ildl_calloc((size_t)(T->nb > 0 ? T->nb : 1), sizeof(int32_t));
    S->n2x2 = ildl_calloc((size_t)(T->nb > 0 ? T->nb : 1), sizeof(int32_t));
    if (!ok || !S->q || !S->npert || !S->n2x2) {
        ildl_fp_state_free(S);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    int64_t o = 0;
    for (int64_t t = 0; t < T->ntiles; t++) {
        S->soff[t] = o;
        o += (int64_t)ildl_tiles_block_size(T, T->row[t]) * ildl_tiles_block_size(T, T->col[t]);
    }
    for (int32_t i = 0; i < T->nb; i++)
        for (int32_t k = T->bstart[i]; k < T->bstart[i + 1]; k++) {
            S->perm[0][k] = S->q[k] = k - T->bstart[i];
            S->dd[0][k] = 1.0;
            S->ty[0][k] = 1;
        }
    return ILDL_SUCCESS;
}

double ildl_fp_norm_inf(const ildl_tiles *T)
{
    double *sum = ildl_calloc((size_t)(T->n > 0 ? T->n : 1), sizeof(double)), mx = 0.0;
    if (!sum) return 1.0; /* only scales the schedule */
    for (int64_t t = 0; t < T->ntiles; t++) {
        int32_t bi = T->bstart[T->row[t]], bj = T->bstart[T->col[t]];
        for (int64_t q = T->a_ptr[t]; q < T->a_ptr[t + 1]; q++) {
            int r = T->a_idx[q] >> 5, c = T->a_idx[q] & 31;
            double a = fabs(T->a_val[q]);
            sum[bi + r] += a;
            if (bi + r != bj + c) sum[bj + c] += a; /* the lower triangle's mirror */
        }
    }
    for (int32_t k = 0; k < T->n; k++) mx = fmax(mx, sum[k]);
    free(sum);
    return mx;
}

void ildl_fp_schedule(int s, double eps, double delta, double norm_inf, double pivot_tol,
                      double pivot_perturb, double *tol, double *perturb)
{
    double e = eps;
    for (int k = 1; k < s; k++) e *= delta;
    e *= norm_inf;
    *tol = fmax(e, pivot_tol);
    *perturb = fmax(e, pivot_perturb);
}

/* ---------------------------------------------------------------- tile helpers */

/* State tile t of copy c (mi x mj, ld mj) into out (ld 32). */
static void expand(const ildl_fp_state *S, int c, int64_t t, int mi, int mj, double *out)
{
    const double *v = S->u[c] + S->soff[t];
    for (int r = 0; r < mi; r++) memcpy(out + r * LD, v + (int64_t)r * mj, sizeof(double) * (size_t)mj);
}

/* b -= U_ki^T D_k U_kj from copy c's tiles tki = (k,i), tkj = (k,j) (factor.c's pull order:
 * U_kj expanded and multiplied by D_k, then U_ki expanded). w: 2 scratch tiles. */
static void pull(const ildl_tiles *T, const ildl_fp_state *S, int c, int64_t tki, int64_t tkj, int mi,
                 int mj, double *b, double *w)
{
    double *u = w, *du = w + TILE;
    int32_t k = T->row[tki], bk = T->bstart[k];
    int mk = ildl_tiles_block_size(T, k);
    expand(S, c, tkj, mk, mj, u);
    ildl_tile_apply_d(mk, mj, S->dd[c] + bk, S->de[c] + bk, S->ty[c] + bk, u, du);
    if (tki != tkj) expand(S, c, tki, mk, mi, u);
    ildl_tile_sub_utdu(mk, mi, mj, u, du, b, tki == tkj);
}

/* A_ij(p_i, p_j) of tile t = (i,j) into b (ld 32): A's entries in analysed order, then rows
 * and columns into the orders pi, pj (block-local). w: scratch tile. */
static void load_permuted(const ildl_tiles *T, int64_t t, int mi, int mj, const int32_t *pi,
                          const int32_t *pj, double *b, double *w)
{
    memset(w, 0, sizeof(double) * TILE);
    ildl_tile_load_a(T, t, T->row[t] == T->col[t], w);
    for (int r = 0; r < mi; r++)
        for (int c = 0; c < mj; c++) b[r * LD + c] = w[pi[r] * LD + pj[c]];
}

/* b -= the updates of tile t = (i,j) from the rows k < i present in block columns i and j,
 * k ascending, read from copy c. */
static void pull_all(const ildl_tiles *T, const ildl_fp_state *S, int c, int64_t t, int mi, int mj,
                     double *b, double *w)
{
    int32_t i = T->row[t], j = T->col[t];
    int64_t qi = T->col_ptr[i], ei = T->col_ptr[i + 1];
    int64_t qj = T->col_ptr[j], ej = T->col_ptr[j + 1], ti, tj;
    while (ildl_tiles_next_common(T, i, &qi, ei, &qj, ej, &ti, &tj)) pull(T, S, c, ti, tj, mi, mj, b, w);
}

/* The pivots of copy c's block row i as a dense result (for ildl_dense_solve_offdiag). */
static void result_of(const ildl_fp_state *S, int c, int32_t b, int mi, ildl_dense_result *res)
{
    memset(res, 0, sizeof *res);
    for (int r = 0; r < mi; r++) {
        res->perm[r] = S->perm[c][b + r];
        res->d_diag[r] = S->dd[c][b + r];
        res->d_off[r] = S->de[c][b + r];
        res->type[r] = S->ty[c][b + r];
    }
}

static int nthreads_of(int nthreads)
{
#ifdef _OPENMP
    return nthreads > 0 ? nthreads : omp_get_max_threads();
#else
    (void)nthreads;
    return 1;
#endif
}

/* ---------------------------------------------------------------- a sweep */

void ildl_fp_sweep(const ildl_tiles *T, int pivoting, const int8_t *pair_hint, double tol,
                   double perturb, int first, ildl_fp_state *S, int nthreads)
{
    const int a = S->cur, z = 1 - a;
    nthreads = nthreads_of(nthreads);
    /* phase 1: the diagonal blocks */
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
    for (int32_t i = 0; i < T->nb; i++) {
        double W[TILE], w[2 * TILE];
        ildl_dense_result res;
        ildl_dense_params dp;
        int mi = ildl_tiles_block_size(T, i);
        int32_t b = T->bstart[i];
        int64_t td = T->row_ptr[i];
        const int32_t *pa = S->perm[a] + b;
        memset(W, 0, sizeof W);
        load_permuted(T, td, mi, mi, pa, pa, W, w);
        for (int64_t q = T->col_ptr[i]; !first && q < T->col_ptr[i + 1]; q++) {
            int64_t t = T->col_tiles[q];
            if (T->row[t] >= i) break;
            pull(T, S, a, t, t, mi, mi, W, w);
        }
        dp.pivot_tol = tol;
        dp.perturb = perturb;
        dp.pair_hint = pair_hint ? pair_hint + b : NULL;
        ildl_dense_factor(pivoting, mi, W, &dp, &res);
        double *u = S->u[z] + S->soff[td];
        for (int r = 0; r < mi; r++) {
            S->q[b + r] = res.perm[r];
            S->perm[z][b + r] = pa[res.perm[r]];
            S->dd[z][b + r] = res.d_diag[r];
            S->de[z][b + r] = res.d_off[r];
            S->ty[z][b + r] = res.type[r];
            for (int c = 0; c < mi; c++) u[r * mi + c] = W[r * LD + c];
        }
        S->npert[i] = res.nperturbed;
        S->n2x2[i] = res.n2x2;
    }
    /* phase 2: the off-diagonal tiles, from the old state and the new diagonal blocks */
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
    for (int32_t i = 0; i < T->nb; i++) {
        double C[TILE], C2[TILE], U[TILE], w[2 * TILE];
        ildl_dense_result res;
        int mi = ildl_tiles_block_size(T, i);
        int32_t b = T->bstart[i];
        result_of(S, z, b, mi, &res);
        expand(S, z, T->row_ptr[i], mi, mi, U);
        for (int64_t t = T->row_ptr[i] + 1; t < T->row_ptr[i + 1]; t++) {
            int32_t j = T->col[t], bj = T->bstart[j];
            int mj = ildl_tiles_block_size(T, j);
            load_permuted(T, t, mi, mj, S->perm[a] + b, S->perm[a] + bj, C, w);
            if (!first) pull_all(T, S, a, t, mi, mj, C, w);
            for (int r = 0; r < mi; r++) /* the new orders: C2(r,c) = C(q_i[r], q_j[c]) */
                for (int c = 0; c < mj; c++) C2[r * LD + c] = C[S->q[b + r] * LD + S->q[bj + c]];
            ildl_dense_solve_offdiag(mi, mj, U, &res, C2);
            double *v = S->u[z] + S->soff[t];
            for (int r = 0; r < mi; r++) memcpy(v + (int64_t)r * mj, C2 + r * LD, sizeof(double) * (size_t)mj);
        }
    }
    S->cur = z;
}

/* ---------------------------------------------------------------- residual */

void ildl_fp_tile_residuals(const ildl_tiles *T, const ildl_fp_state *S, double *tile_sq, int nthreads)
{
    const int a = S->cur;
    nthreads = nthreads_of(nthreads);
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 16)
    for (int64_t t = 0; t < T->ntiles; t++) {
        double R[TILE], U[TILE], DU[TILE], w[2 * TILE];
        int32_t i = T->row[t], j = T->col[t], b = T->bstart[i];
        int mi = ildl_tiles_block_size(T, i), mj = ildl_tiles_block_size(T, j);
        int diag = i == j;
        load_permuted(T, t, mi, mj, S->perm[a] + b, S->perm[a] + T->bstart[j], R, w);
        pull_all(T, S, a, t, mi, mj, R, w);
        /* - U_ii^T D_i U_ij, U_ii with its unit diagonal */
        if (diag) {
            expand(S, a, t, mi, mi, U);
            for (int r = 0; r < mi; r++) U[r * LD + r] = 1.0;
            ildl_tile_apply_d(mi, mi, S->dd[a] + b, S->de[a] + b, S->ty[a] + b, U, DU);
        } else {
            expand(S, a, t, mi, mj, U);
            ildl_tile_apply_d(mi, mj, S->dd[a] + b, S->de[a] + b, S->ty[a] + b, U, DU);
            expand(S, a, T->row_ptr[i], mi, mi, U);
            for (int r = 0; r < mi; r++) U[r * LD + r] = 1.0;
        }
        ildl_tile_sub_utdu(mi, mi, mj, U, DU, R, diag);
        double acc = 0.0;
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) acc += R[r * LD + c] * R[r * LD + c];
        tile_sq[t] = acc;
    }
}

double ildl_fp_residual(const ildl_tiles *T, const double *tile_sq)
{
    double num = 0.0, den = 0.0;
    for (int64_t t = 0; t < T->ntiles; t++) {
        int diag = T->row[t] == T->col[t];
        num += diag ? tile_sq[t] : 2.0 * tile_sq[t];
        for (int64_t q = T->a_ptr[t]; q < T->a_ptr[t + 1]; q++) {
            double a = T->a_val[q];
            int r = T->a_idx[q] >> 5, c = T->a_idx[q] & 31;
            den += (diag && r == c) ? a * a : 2.0 * a * a;
        }
    }
    return den > 0.0 ? sqrt(num) / sqrt(den) : 0.0;
}

/* ---------------------------------------------------------------- into the store */

void ildl_fp_fill_row(void *ctx, ildl_tiles *T, int32_t i, double *slot, ildl_dense_result *res)
{
    const ildl_fp_state *S = ctx;
    const int a = S->cur;
    int mi = ildl_tiles_block_size(T, i);
    int32_t b = T->bstart[i];
    int64_t t0 = T->row_ptr[i], nt = T->row_ptr[i + 1] - t0;
    result_of(S, a, b, mi, res);
    res->n2x2 = S->n2x2[i];
    res->nperturbed = S->npert[i];
    for (int r = 0; r < mi; r++) {
        T->piv[b + r] = res->perm[r];
        T->d_diag[b + r] = res->d_diag[r];
        T->d_off[b + r] = res->d_off[r];
        T->piv_type[b + r] = res->type[r];
    }
    memset(slot, 0, sizeof(double) * TILE);
    expand(S, a, t0, mi, mi, slot);
    /* off-diagonal tiles: columns back to block j's analysed order (phase C puts them into
     * its pivot order, as after a level-scheduled pull) */
    for (int64_t s = 1; s < nt; s++) {
        int64_t t = t0 + s;
        int32_t bj = T->bstart[T->col[t]];
        int mj = ildl_tiles_block_size(T, T->col[t]);
        const double *v = S->u[a] + S->soff[t];
        double *o = slot + s * TILE;
        memset(o, 0, sizeof(double) * TILE);
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) o[r * LD + S->perm[a][bj + c]] = v[(int64_t)r * mj + c];
    }
}

int ildl_cpu_factor_fixed_point(ildl_tiles *T, const ildl_factor_params *p, ildl_factor_stats *st)
{
    ildl_fp_state S;
    ildl_factor_stats local;
    if (!st) st = &local;
    if (!T->val || p->fp_sweeps < 1) return ILDL_ERR_INTERNAL;
    int status = ildl_fp_state_init(T, &S);
    if (status) return status;
    double nrm = ildl_fp_norm_inf(T);
    for (int s = 1; s <= p->fp_sweeps; s++) {
        double tol, pert;
        ildl_fp_schedule(s, p->fp_eps, p->fp_delta, nrm, p->pivot_tol, p->perturb, &tol, &pert);
        ildl_fp_sweep(T, p->pivoting, p->pair_hint, tol, pert, s == 1, &S, p->num_threads);
        if (s == 1 && p->block_perturbed)
            memcpy(p->block_perturbed, S.npert, sizeof(int32_t) * (size_t)T->nb);
    }
    double *tile_sq = ildl_malloc(sizeof(double) * (size_t)(T->ntiles > 0 ? T->ntiles : 1));
    if (!tile_sq) {
        ildl_fp_state_free(&S);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    ildl_fp_tile_residuals(T, &S, tile_sq, p->num_threads);
    double resid = ildl_fp_residual(T, tile_sq);
    free(tile_sq);
    ildl_factor_params q = *p;
    q.block_perturbed = NULL; /* the first sweep's, above */
    ildl_factor_fill fill = {ildl_fp_fill_row, &S};
    status = ildl_cpu_factor_store(T, &q, &fill, st);
    st->fp_residual = resid;
    ildl_fp_state_free(&S);
    return status;
}
