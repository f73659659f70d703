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

/* The functions, declared for double (ildl_dense_*) and for float (ildl_dense_*_s): the CPU
 * reference is compiled for both value types (cpu/real.h). */
#define ILDL_DT double
#define ILDL_DN(name) name
#include "cpu/dense_factor_t.h"
#undef ILDL_DT
#undef ILDL_DN
#define ILDL_DT float
#define ILDL_DN(name) name##_s
#include "cpu/dense_factor_t.h"
#undef ILDL_DT
#undef ILDL_DN

#endif
