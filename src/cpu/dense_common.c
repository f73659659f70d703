/* dense_common.c -- the elimination steps shared by the three pivoting strategies, the
 * strategy dispatch and the off-diagonal tile solve. Every loop runs in a fixed order and
 * each Schur entry is computed once (upper triangle) and mirrored, so the tile stays exactly
 * symmetric and the result is bit-for-bit reproducible by the warp kernels. */
#include <assert.h>
#include <math.h>
#include "blockildl.h"
#include "cpu/dense_factor.h"
#include "cpu/real.h"

#define LD ILDL_TILE

/* Reset res for an m x m tile: identity perm, no pivots yet. */
void RN(ildl_dense_begin)(int m, ildl_dense_result *res)
{
    assert(m >= 0 && m <= LD);
    for (int r = 0; r < LD; r++) {
        res->perm[r] = r;
        res->d_diag[r] = 0;
        res->d_off[r] = 0;
        res->type[r] = 0;
    }
    res->n2x2 = 0;
    res->nperturbed = 0;
}

/* Symmetrically interchange rows/cols i and j of the tile (all m rows/cols) and of perm. */
void RN(ildl_dense_swap)(int m, ildl_real *a, ildl_dense_result *res, int i, int j)
{
    ildl_real t;
    int32_t pt;
    if (i == j) return;
    /* Rows above the active part hold finished U rows: permuting their columns is exactly the
     * P applied to U; their lower-triangle entries are already zero, so swapping is harmless. */
    for (int c = 0; c < m; c++) {
        t = a[i * LD + c];
        a[i * LD + c] = a[j * LD + c];
        a[j * LD + c] = t;
    }
    for (int r = 0; r < m; r++) {
        t = a[r * LD + i];
        a[r * LD + i] = a[r * LD + j];
        a[r * LD + j] = t;
    }
    pt = res->perm[i];
    res->perm[i] = res->perm[j];
    res->perm[j] = pt;
}

/* max_{k <= j < m, j != skip} |a(row, j)| (0 if empty); the smallest such j on ties. */
ildl_real RN(ildl_dense_absmax)(int m, const ildl_real *a, int row, int k, int skip, int *jmax)
{
    ildl_real best = -1;
    *jmax = -1;
    for (int j = k; j < m; j++) {
        ildl_real v = RABS(a[row * LD + j]);
        if (j != skip && v > best) {
            best = v;
            *jmax = j;
        }
    }
    return best < 0 ? 0 : best;
}

/* Bring row piv (>= k) to k and eliminate it as a 1x1 pivot; returns 1. */
int RN(ildl_dense_take1)(int m, ildl_real *a, int k, int piv, const ildl_dense_params *p,
                     ildl_dense_result *res)
{
    ildl_real u[LD], d, *ak = a + k * LD;
    int perturbed;
    assert(p && p->perturb > 0 && piv >= k && piv < m);
    RN(ildl_dense_swap)(m, a, res, k, piv);
    d = RN(ildl_pivot1)(ak[k], (ildl_real)p->pivot_tol, (ildl_real)p->perturb, &perturbed);
    res->nperturbed += perturbed;
    for (int j = k + 1; j < m; j++) u[j] = ak[j] / d;
    /* A(j,l) -= A(k,j) * U(k,l): the unscaled row times the scaled one, upper then mirror */
    for (int j = k + 1; j < m; j++) {
        ildl_real wj = ak[j];
        for (int l = j; l < m; l++) {
            ildl_real v = a[j * LD + l] - wj * u[l];
            a[j * LD + l] = v;
            a[l * LD + j] = v;
        }
    }
    for (int j = k + 1; j < m; j++) {
        ak[j] = u[j];
        a[j * LD + k] = 0;
    }
    ak[k] = 0;
    res->d_diag[k] = d;
    res->d_off[k] = 0;
    res->type[k] = 1;
    return 1;
}

/* Bring rows q, r to k, k+1 and eliminate them as a 2x2 pivot (or a 1x1 at q when the pair
 * is numerically singular); returns the rows consumed. */
int RN(ildl_dense_take2)(int m, ildl_real *a, int k, int q, int r, const ildl_dense_params *p,
                     ildl_dense_result *res)
{
    ildl_real u1[LD], u2[LD], da, db, dc, det, *ak, *ak1;
    assert(p && q >= k && r >= k && q < m && r < m && q != r && k + 1 < m);
    /* judged before any interchange, so a rejected pair costs no swap beyond q -> k */
    if (!RN(ildl_pivot2_ok)(a[q * LD + q], a[q * LD + r], a[r * LD + r], (ildl_real)p->pivot_tol))
        return RN(ildl_dense_take1)(m, a, k, q, p, res);
    RN(ildl_dense_swap)(m, a, res, k, q);
    if (r == k) r = q; /* r moved with the first interchange */
    RN(ildl_dense_swap)(m, a, res, k + 1, r);
    ak = a + k * LD;
    ak1 = a + (k + 1) * LD;
    da = ak[k];
    db = ak[k + 1];
    dc = ak1[k + 1];
    det = RN(ildl_pivot2_det)(da, db, dc);
    for (int j = k + 2; j < m; j++) RN(ildl_pivot2_solve)(da, db, dc, det, ak[j], ak1[j], &u1[j], &u2[j]);
    for (int j = k + 2; j < m; j++) {
        ildl_real w1 = ak[j], w2 = ak1[j];
        for (int l = j; l < m; l++) {
            ildl_real v = a[j * LD + l] - (w1 * u1[l] + w2 * u2[l]);
            a[j * LD + l] = v;
            a[l * LD + j] = v;
        }
    }
    for (int j = k + 2; j < m; j++) {
        ak[j] = u1[j];
        ak1[j] = u2[j];
        a[j * LD + k] = 0;
        a[j * LD + k + 1] = 0;
    }
    ak[k] = 0;
    ak[k + 1] = 0;
    ak1[k] = 0;
    ak1[k + 1] = 0;
    res->d_diag[k] = da;
    res->d_diag[k + 1] = dc;
    res->d_off[k] = db;
    res->d_off[k + 1] = 0;
    res->type[k] = 2;
    res->type[k + 1] = 0;
    res->n2x2++;
    return 2;
}

/* Dispatch on strategy (ildl_pivoting); an unknown strategy means no pivoting. */
void RN(ildl_dense_factor)(int strategy, int m, ildl_real *a, const ildl_dense_params *p,
                       ildl_dense_result *res)
{
    switch (strategy) {
    case ILDL_PIVOT_BK: RN(ildl_dense_factor_bk)(m, a, p, res); break;
    case ILDL_PIVOT_ROOK: RN(ildl_dense_factor_rook)(m, a, p, res); break;
    default: RN(ildl_dense_factor_none)(m, a, p, res); break;
    }
}

/* B <- D^{-1} U^{-T} B for the mi x mj tile b (ld 32) and the factored mi x mi tile u. */
void RN(ildl_dense_solve_offdiag)(int mi, int mj, const ildl_real *u, const ildl_dense_result *res,
                              ildl_real *b)
{
    assert(mi >= 0 && mi <= LD && mj >= 0 && mj <= LD);
    /* U^T is unit lower triangular: forward substitution, one row of B at a time */
    for (int r = 1; r < mi; r++) {
        ildl_real *br = b + r * LD;
        for (int q = 0; q < r; q++) {
            ildl_real uqr = u[q * LD + r];
            const ildl_real *bq = b + q * LD;
            for (int c = 0; c < mj; c++) br[c] -= uqr * bq[c];
        }
    }
    for (int r = 0; r < mi; r++) {
        ildl_real *br = b + r * LD;
        if (res->type[r] == 1) {
            ildl_real d = res->d_diag[r];
            for (int c = 0; c < mj; c++) br[c] /= d;
        } else if (res->type[r] == 2) {
            ildl_real da = res->d_diag[r], db = res->d_off[r], dc = res->d_diag[r + 1];
            ildl_real det = RN(ildl_pivot2_det)(da, db, dc), *bs = br + LD;
            for (int c = 0; c < mj; c++) {
                ildl_real x = br[c], y = bs[c];
                RN(ildl_pivot2_solve)(da, db, dc, det, x, y, &br[c], &bs[c]);
            }
        }
    }
}
