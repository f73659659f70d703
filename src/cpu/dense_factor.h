/* dense_factor.h -- factor one dense symmetric tile (<= 32 x 32) as P A P^T = U^T D U with
 * unit upper triangular U and block diagonal D of 1x1/2x2 pivots. One file per pivoting
 * strategy (dense_none.c, dense_bk.c, dense_rook.c), mirrored by the CUDA warp kernels.
 *
 * Tile layout: row-major, leading dimension ILDL_TILE (32). On entry a[r*32+c] holds
 * the symmetric m x m matrix in BOTH triangles. On return the strictly upper triangle of
 * a holds U in pivot order (a[r*32+c], c > r), the diagonal and lower triangle are zero,
 * and res describes P and D. Elimination runs top-left to bottom-right (right-looking,
 * push updates inside the tile), so the result is bit-for-bit defined by this order. */
#ifndef ILDL_CPU_DENSE_FACTOR_H
#define ILDL_CPU_DENSE_FACTOR_H
#include "core/dense_rules.h" /* ILDL_TILE, ildl_dense_result, ildl_dense_params, the rules */

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
