/* dense_factor.h -- factor one dense symmetric tile (<= 32 x 32) as P A P^T = U^T D U with
 * unit upper triangular U and block diagonal D of 1x1/2x2 pivots. One file per pivoting
 * strategy (dense_none.c, dense_bk.c, dense_rook.c), mirrored by the CUDA warp kernels.
 *
 * Tile layout: row-major, leading dimension ILDL_TILE_LD (32). On entry a[r*32+c] holds
 * the symmetric m x m matrix in BOTH triangles. On return the strictly upper triangle of
 * a holds U in pivot order (a[r*32+c], c > r), the diagonal and lower triangle are zero,
 * and res describes P and D. Elimination runs top-left to bottom-right (right-looking,
 * push updates inside the tile), so the result is bit-for-bit defined by this order. */
#ifndef ILDL_CPU_DENSE_FACTOR_H
#define ILDL_CPU_DENSE_FACTOR_H
#include <stdint.h>

#define ILDL_TILE_LD 32
#define ILDL_BK_ALPHA 0.6403882032022076 /* (1 + sqrt(17)) / 8 */

typedef struct ildl_dense_result {
    int32_t perm[32];  /* factored row r is input row perm[r] */
    double d_diag[32]; /* D(r,r) */
    double d_off[32];  /* D(r,r+1) for the first row of a 2x2 pivot, else 0 */
    int8_t type[32];   /* 1: 1x1 pivot; 2: first row of a 2x2; 0: second row of a 2x2 */
    int n2x2;          /* number of 2x2 pivots */
    int nperturbed;    /* pivots whose magnitude was below pivot_tol and were perturbed */
} ildl_dense_result;

/* Parameters shared by the strategies. A 1x1 pivot d with |d| < pivot_tol (or d == 0) is
 * replaced by copysign(perturb, d) (perturb if d == 0); perturb must be > 0. A 2x2 pivot
 * [a b; b c] with largest entry magnitude g is numerically singular when g < pivot_tol or
 * |ac - b^2| < pivot_tol * g^2 (or det == 0); it then falls back to a 1x1 pivot at its
 * first index (perturbed if needed), and the next step searches again. */
typedef struct ildl_dense_params {
    double pivot_tol;
    double perturb;
    const int8_t *pair_hint; /* optional [m]: pair_hint[r] = 1 if rows r, r+1 form a static 2x2 pivot */
} ildl_dense_params;

/* Static pivoting: no row interchanges; 1x1 pivots, or 2x2 pivots where pair_hint says. */
void ildl_dense_factor_none(int m, double *a, const ildl_dense_params *p, ildl_dense_result *res);
/* Bunch-Kaufman partial pivoting (scans at most 2 columns per step). */
void ildl_dense_factor_bk(int m, double *a, const ildl_dense_params *p, ildl_dense_result *res);
/* Rook pivoting (alternates column scans until a pivot is acceptable). */
void ildl_dense_factor_rook(int m, double *a, const ildl_dense_params *p, ildl_dense_result *res);

/* Dispatch on strategy (ildl_pivoting). */
void ildl_dense_factor(int strategy, int m, double *a, const ildl_dense_params *p,
                       ildl_dense_result *res);

/* Apply the inverse of the factor to a tile's columns: given B (mi x mj, ld 32, rows already
 * in pivot order), overwrite B with D^{-1} U^{-T} B, where U is the factored tile u (ld 32,
 * strictly upper part) and D from res. This is the off-diagonal solve U_ij = D^-1 U_ii^-T P A_ij. */
void ildl_dense_solve_offdiag(int mi, int mj, const double *u, const ildl_dense_result *res,
                              double *b);

/* Steps shared by the strategy files (dense_common.c); not for use outside src/cpu. */
/* Reset res for an m x m tile: identity perm, no pivots yet. */
void ildl_dense_begin(int m, ildl_dense_result *res);
/* Symmetrically interchange rows/cols i and j of the tile (all m rows/cols) and of res->perm. */
void ildl_dense_swap(int m, double *a, ildl_dense_result *res, int i, int j);
/* max_{k <= j < m, j != skip} |a(row, j)| (0 if empty); its smallest such j goes to *jmax. */
double ildl_dense_absmax(int m, const double *a, int row, int k, int skip, int *jmax);
/* Bring row piv (>= k) to k and eliminate it as a 1x1 pivot; returns 1 (rows consumed). */
int ildl_dense_take1(int m, double *a, int k, int piv, const ildl_dense_params *p,
                     ildl_dense_result *res);
/* Bring rows q, r (>= k, q != r) to k, k+1 and eliminate them as a 2x2 pivot; a numerically
 * singular pair falls back to a 1x1 pivot at q. Returns the rows consumed (2 or 1). */
int ildl_dense_take2(int m, double *a, int k, int q, int r, const ildl_dense_params *p,
                     ildl_dense_result *res);

#endif
