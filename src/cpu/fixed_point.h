/* fixed_point.h -- the fixed-point (Jacobi-sweep) block factorization (stretching-Jacobi
 * Alg. 2 after Chow and Patel's sweeps; docs/methods.md): U^T D U on the analysis' block
 * pattern, every tile recomputed in each sweep from the previous sweep's factor, so a sweep
 * has no order among block rows (two parallel phases instead of one step per level).
 *
 * The state of a sweep: per block row i, its pivot order p_i (analysed row bstart[i] + p_i[r]
 * is factored row r), D_i (1x1/2x2 pivots) and its tiles, dense: U_ii (strict upper part) and
 * U_ij, j > i, rows in p_i's order and columns in p_j's. Two copies: a sweep reads one and
 * writes the other. The initial state is U = 0 (no updates in sweep 1), so sweep k computes
 * the rows of the first k levels exactly as the level-scheduled factorization would without
 * dropping (up to the pivot orders).
 *
 * Sweep s (1-based), threshold g_s = max(eps delta^(s-1) ||A||_inf, pivot_tol) and magnitude
 * h_s = max(eps delta^(s-1) ||A||_inf, pivot_perturb) (||A||_inf of the scaled, permuted A):
 *   phase 1, every block row i: B = A_ii(p_i, p_i) - sum_{k<i} U_ki^T D_k U_ki (k ascending,
 *            the update order of factor.c), factored by the pivot rules with pivot_tol g_s
 *            and perturb h_s: U''_ii, D''_i and the interchanges q_i; p''_i = p_i o q_i;
 *   phase 2, every tile (i,j), j > i: C = A_ij(p_i, p_j) - sum_{k<i in both columns}
 *            U_ki^T D_k U_kj (k ascending), C <- C(q_i, q_j) (rows and columns into the new
 *            pivot orders, in sync), U''_ij = D''_i^-1 U''_ii^-T C (ildl_dense_solve_offdiag).
 * After the last sweep the tiles go into the tile store through ildl_cpu_factor_store (row
 * norms, tau-dropping, capacities): the rest of the library sees an ordinary factor.
 *
 * The residual ||A - U^T D U||_F / ||A||_F on the pattern (every tile (i,j), j >= i, of the
 * analysis, each off-diagonal one counted twice for its mirror): R_ij = A_ij(p_i, p_j) -
 * sum_{k<i} U_ki^T D_k U_kj - U_ii^T D_i U_ij with U_ii's unit diagonal, tile_sq[t] =
 * sum of R(r,c)^2 over r ascending, c ascending (diagonal tiles: all m_i^2 entries), then
 * sum over t ascending of tile_sq[t] (diagonal) or 2 tile_sq[t] (off-diagonal). The CUDA
 * backend (src/cuda/fixed_point.cu) computes sweeps and tile_sq with the same bits. */
#ifndef ILDL_CPU_FIXED_POINT_H
#define ILDL_CPU_FIXED_POINT_H
#include <stdint.h>
#include "analyse/tiles.h"
#include "cpu/factor.h"

typedef struct ildl_fp_state {
    int64_t len;       /* values of one copy: sum over tiles of m_i m_j */
    int64_t *soff;     /* [ntiles] tile t's first value (row-major, leading dimension m_j) */
    double *u[2];      /* [len] the tiles, two copies */
    int32_t *perm[2];  /* [n] p_i, block-local */
    double *dd[2], *de[2]; /* [n] D: diagonal, off-diagonal of a 2x2 (first row) */
    int8_t *ty[2];     /* [n] 1: 1x1, 2: first row of a 2x2, 0: its second row */
    int32_t *q;        /* [n] the last sweep's interchanges q_i, block-local */
    int32_t *npert;    /* [nb] the last sweep's perturbed pivots per block row */
    int32_t *n2x2;     /* [nb] its 2x2 pivots per block row */
    int cur;           /* the copy holding the last sweep (0 before any) */
} ildl_fp_state;

/* Allocate S for T's pattern and set it to the initial state (identity orders, D = I, U = 0).
 * ILDL_ERR_OUT_OF_MEMORY (S then empty). */
int ildl_fp_state_init(const ildl_tiles *T, ildl_fp_state *S);
void ildl_fp_state_free(ildl_fp_state *S);

/* ||A||_inf of the scaled, permuted A in T (a_val loaded): the largest row sum of |a_ij| over
 * both triangles. */
double ildl_fp_norm_inf(const ildl_tiles *T);
/* The threshold and magnitude of sweep s (1-based) as in the header. */
void ildl_fp_schedule(int s, double eps, double delta, double norm_inf, double pivot_tol,
                      double pivot_perturb, double *tol, double *perturb);

/* One sweep (first: sweep 1, no updates) from copy S->cur into the other, which becomes
 * S->cur. pivoting and pair_hint (analysed order, or NULL) as ildl_factor_params. */
void ildl_fp_sweep(const ildl_tiles *T, int pivoting, const int8_t *pair_hint, double tol,
                   double perturb, int first, ildl_fp_state *S, int nthreads);
/* tile_sq[ntiles] of the state S->cur (header); the residual from them with
 * ildl_fp_residual. */
void ildl_fp_tile_residuals(const ildl_tiles *T, const ildl_fp_state *S, double *tile_sq, int nthreads);
/* sqrt(sum tile_sq weighted as in the header) / ||A||_F on the pattern (0 if A is zero). */
double ildl_fp_residual(const ildl_tiles *T, const double *tile_sq);

/* The whole CPU method: sweeps sweeps (>= 1) with the schedule (eps, delta), the residual of
 * the last into st->fp_residual, the factor into T's store (ildl_cpu_factor_store).
 * p->block_perturbed, if set, gets the first sweep's perturbed pivots per block row (the
 * blocks push-back moves). ILDL_ERR_OUT_OF_MEMORY or the store's status. */
int ildl_cpu_factor_fixed_point(ildl_tiles *T, const ildl_factor_params *p, ildl_factor_stats *st);

/* The fill of ildl_cpu_factor_store from a finished state (ctx: the ildl_fp_state). */
void ildl_fp_fill_row(void *ctx, ildl_tiles *T, int32_t i, double *slot, ildl_dense_result *res);

#endif
