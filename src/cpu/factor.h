/* factor.h -- the CPU reference block-iLDL^T (paper Alg. 1, pull order, level by level)
 * and its level-scheduled block triangular solves. The CUDA backend must reproduce these
 * results (same pivots, same kept entries). */
#ifndef ILDL_CPU_FACTOR_H
#define ILDL_CPU_FACTOR_H
#include <stdint.h>
#include "analyse/tiles.h"
#include "core/dense_rules.h"

typedef struct ildl_factor_params {
    int pivoting;            /* ildl_pivoting */
    double drop_tol;         /* tau */
    double pivot_tol;
    double perturb;
    int leftover;            /* ildl_leftover (the CPU always uses the deterministic scan) */
    const int8_t *pair_hint; /* optional [n] in analysed order: rows k,k+1 form a static 2x2 */
    int num_threads;         /* 0 = OpenMP default */
    int32_t *block_perturbed;/* output, optional [nb]: the pivots perturbed in each block row's
                              * diagonal factorization (the blocks push-back moves) */
    int fp_sweeps;           /* the fixed-point method (cpu/fixed_point.h): sweeps, >= 1 */
    double fp_eps, fp_delta; /* its perturbation schedule */
} ildl_factor_params;

typedef struct ildl_factor_stats {
    int32_t n2x2;
    int32_t nperturbed;
    int32_t inertia_pos, inertia_neg, inertia_zero;
    int64_t factor_nnz;      /* stored entries of U off the diagonal + n (unit diag) + D entries */
    int64_t leftover_granted;/* extra entries granted beyond static capacities */
    double t_upload, t_device, t_stats; /* CUDA backend: A's values up, kernels, statistics (s) */
    double fp_residual;      /* the fixed-point method: ||A - U^T D U||_F / ||A||_F on the pattern
                              * after the last sweep (before dropping); else 0 */
    int schedule;            /* CUDA backend: the ildl_schedule that ran; else LEVELS (0) */
} ildl_factor_stats;

/* Factor T (a_val must be loaded) into T->val/idx/off/nnz/piv/d_*. Returns ILDL_SUCCESS,
 * ILDL_ERR_OUT_OF_MEMORY, or ILDL_ERR_INTERNAL (T->val missing, or a broken invariant). */
int ildl_cpu_factor(ildl_tiles *T, const ildl_factor_params *p, ildl_factor_stats *st);
/* The same in single precision (every operation in float; A rounded to float when loaded):
 * writes T->val32 and D as float values (in the double arrays). ildl_cpu_factor needs T->val,
 * this one T->val32 (ildl_tiles_set_precision); ILDL_ERR_INTERNAL if it is missing. */
int ildl_cpu_factor_s(ildl_tiles *T, const ildl_factor_params *p, ildl_factor_stats *st);

/* A factor from tiles computed elsewhere (the fixed-point method, src/cpu/fixed_point.c):
 * fill->row(ctx, T, i, slot, res) writes block row i's in-flight tiles as phase A's pulls and
 * solves would (slot[0]: U_ii strict upper in pivot order, ld 32; slot[s]: tile s, rows in
 * block i's pivot order, columns in block j's analysed order, ld 32), block i's pivot order
 * and D into T->piv/d_* and res (perm, D, n2x2, nperturbed). The rest is ildl_cpu_factor's:
 * row norms, tau-dropping, leftover grants, storage, column permutation, statistics. Double
 * precision only. */
typedef struct ildl_factor_fill {
    void (*row)(void *ctx, ildl_tiles *T, int32_t i, double *slot, ildl_dense_result *res);
    void *ctx;
} ildl_factor_fill;
int ildl_cpu_factor_store(ildl_tiles *T, const ildl_factor_params *p, const ildl_factor_fill *fill,
                          ildl_factor_stats *st);

/* Steps of the factorization shared with the fixed-point method (tiles ld 32, in the orders
 * factor.c documents); _s for the float build. */
/* du = D u for the mk x mj tile u, D the 1x1/2x2 pivots dd/de/ty of a block (its first row). */
void ildl_tile_apply_d(int mk, int mj, const double *dd, const double *de, const int8_t *ty,
                       const double *u, double *du);
/* b -= u^T du (u: mk x mi, du: mk x mj, b: mi x mj). sym: b is a diagonal tile (mi == mj);
 * only c >= r is computed and mirrored so b stays exactly symmetric. */
void ildl_tile_sub_utdu(int mk, int mi, int mj, const double *u, const double *du, double *b, int sym);
/* Scatter A's entries of tile t into b (zeroed); sym mirrors (diagonal tiles). */
void ildl_tile_load_a(const ildl_tiles *T, int64_t t, int sym, double *b);
void ildl_tile_apply_d_s(int mk, int mj, const double *dd, const double *de, const int8_t *ty,
                         const float *u, float *du);
void ildl_tile_sub_utdu_s(int mk, int mi, int mj, const float *u, const float *du, float *b, int sym);
void ildl_tile_load_a_s(const ildl_tiles *T, int64_t t, int sym, float *b);

/* Prepare the factor for the solves: replace every diagonal tile's U_ii by V_ii = U_ii^{-1}
 * (tiles.h), so that the solves multiply instead of substituting; sets T->diag_inverted (a
 * second call does nothing). ildl_cpu_invert_diagonal_s for the float factor. */
void ildl_cpu_invert_diagonal(ildl_tiles *T);
void ildl_cpu_invert_diagonal_s(ildl_tiles *T);

/* Fill n2x2, the inertia of D and factor_nnz of st from a finished factor in T: shared by
 * the CPU and CUDA backends. */
void ildl_factor_final_stats(const ildl_tiles *T, ildl_factor_stats *st);

/* In place x <- (U^T D U)^{-1} x, x[n] in factored (pivot) order: forward over levels with
 * U^T, then D^{-1}, then backward over levels with U. Needs the diagonal tiles inverted
 * (ildl_cpu_invert_diagonal). */
void ildl_cpu_solve(const ildl_tiles *T, double *x);
/* The same with the float factor of ildl_cpu_factor_s (T->val32), in double arithmetic. */
void ildl_cpu_solve_s(const ildl_tiles *T, double *x);
/* x <- (U^T |D| U)^{-1} x: the symmetric positive definite preconditioner (|D| = each pivot's
 * eigenvalues by magnitude, ildl_pivot2_abs_solve), for MINRES-type methods; _s as above. */
void ildl_cpu_solve_abs(const ildl_tiles *T, double *x);
void ildl_cpu_solve_abs_s(const ildl_tiles *T, double *x);

#define ILDL_SOLVE_MULTI_MAX 16 /* columns of one ildl_cpu_solve_multi */
/* The solves for nc (1..ILDL_SOLVE_MULTI_MAX) vectors at once, row-interleaved (x[r * nc + j]),
 * with D (abs_d = 0) or |D|: the factor read once; each column gets the bits of
 * ildl_cpu_solve (ildl_cpu_solve_abs) of it alone. _s: the float factor. */
void ildl_cpu_solve_multi(const ildl_tiles *T, double *x, int nc, int abs_d);
void ildl_cpu_solve_multi_s(const ildl_tiles *T, double *x, int nc, int abs_d);

#endif
