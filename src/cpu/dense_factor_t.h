/* dense_factor_t.h -- the dense tile functions for one value type: included by dense_factor.h
 * once for double and once for float, with ILDL_DT the type and ILDL_DN(name) the name. No
 * include guard on purpose. */
/* Static pivoting: no row interchanges; 1x1 pivots, or 2x2 pivots where pair_hint says. */
void ILDL_DN(ildl_dense_factor_none)(int m, ILDL_DT *a, const ildl_dense_params *p, ildl_dense_result *res);
/* Bunch-Kaufman partial pivoting (scans at most 2 columns per step). */
void ILDL_DN(ildl_dense_factor_bk)(int m, ILDL_DT *a, const ildl_dense_params *p, ildl_dense_result *res);
/* Rook pivoting (alternates column scans until a pivot is acceptable). */
void ILDL_DN(ildl_dense_factor_rook)(int m, ILDL_DT *a, const ildl_dense_params *p, ildl_dense_result *res);

/* Dispatch on strategy (ildl_pivoting). */
void ILDL_DN(ildl_dense_factor)(int strategy, int m, ILDL_DT *a, const ildl_dense_params *p,
                       ildl_dense_result *res);

/* Apply the inverse of the factor to a tile's columns: given B (mi x mj, ld 32, rows already
 * in pivot order), overwrite B with D^{-1} U^{-T} B, where U is the factored tile u (ld 32,
 * strictly upper part) and D from res. This is the off-diagonal solve U_ij = D^-1 U_ii^-T P A_ij. */
void ILDL_DN(ildl_dense_solve_offdiag)(int mi, int mj, const ILDL_DT *u, const ildl_dense_result *res,
                              ILDL_DT *b);

/* Steps shared by the strategy files (dense_common.c); not for use outside src/cpu. */
/* Reset res for an m x m tile: identity perm, no pivots yet. */
void ILDL_DN(ildl_dense_begin)(int m, ildl_dense_result *res);
/* Symmetrically interchange rows/cols i and j of the tile (all m rows/cols) and of res->perm. */
void ILDL_DN(ildl_dense_swap)(int m, ILDL_DT *a, ildl_dense_result *res, int i, int j);
/* max_{k <= j < m, j != skip} |a(row, j)| (0 if empty); its smallest such j goes to *jmax. */
ILDL_DT ILDL_DN(ildl_dense_absmax)(int m, const ILDL_DT *a, int row, int k, int skip, int *jmax);
/* Bring row piv (>= k) to k and eliminate it as a 1x1 pivot; returns 1 (rows consumed). */
int ILDL_DN(ildl_dense_take1)(int m, ILDL_DT *a, int k, int piv, const ildl_dense_params *p,
                     ildl_dense_result *res);
/* Bring rows q, r (>= k, q != r) to k, k+1 and eliminate them as a 2x2 pivot; a numerically
 * singular pair falls back to a 1x1 pivot at q. Returns the rows consumed (2 or 1). */
int ILDL_DN(ildl_dense_take2)(int m, ILDL_DT *a, int k, int q, int r, const ildl_dense_params *p,
                     ildl_dense_result *res);

