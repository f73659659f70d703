/* dense_rules.h -- what the CPU reference (src/cpu) and the CUDA kernels (src/cuda) share about
 * a dense tile: its size, the record of its factorization, the parameters of the pivot rules,
 * and the rules themselves as host/device inline functions. One definition for both backends,
 * so that they choose the same pivots and round the same way by construction, not by copying.
 * Plain C; CUDA sees the functions as __host__ __device__. */
#ifndef ILDL_CORE_DENSE_RULES_H
#define ILDL_CORE_DENSE_RULES_H
#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define ILDL_HD_INLINE static inline __host__ __device__
#else
#define ILDL_HD_INLINE static inline
#endif

/* The tile: a diagonal block has at most ILDL_TILE rows, a tile is ILDL_TILE x ILDL_TILE,
 * stored row-major with leading dimension ILDL_TILE, local index r * ILDL_TILE + c. */
#define ILDL_TILE 32
#define ILDL_TILE_AREA (ILDL_TILE * ILDL_TILE)

/* Bunch-Kaufman's and rook's alpha = (1 + sqrt(17)) / 8: bounds element growth. */
#define ILDL_BK_ALPHA 0.6403882032022076

/* The factorization of one tile, P A P^T = U^T D U (dense_factor.h says how U is stored). */
typedef struct ildl_dense_result {
    int32_t perm[ILDL_TILE];  /* factored row r is input row perm[r] */
    double d_diag[ILDL_TILE]; /* D(r,r) */
    double d_off[ILDL_TILE];  /* D(r,r+1) for the first row of a 2x2 pivot, else 0 */
    int8_t type[ILDL_TILE];   /* 1: 1x1 pivot; 2: first row of a 2x2; 0: second row of a 2x2 */
    int n2x2;                 /* number of 2x2 pivots */
    int nperturbed;           /* pivots whose magnitude was below pivot_tol and were perturbed */
} ildl_dense_result;

/* Parameters of the pivot rules. A 1x1 pivot d with |d| < pivot_tol (or d == 0) is replaced by
 * copysign(perturb, d) (perturb if d == 0); perturb must be > 0. A 2x2 pivot [a b; b c] with
 * largest entry magnitude g is numerically singular when g < pivot_tol or |ac - b^2| <
 * pivot_tol * g^2 (or det == 0); it then falls back to a 1x1 pivot at its first index
 * (perturbed if needed), and the next step searches again. */
typedef struct ildl_dense_params {
    double pivot_tol;
    double perturb;
    const int8_t *pair_hint; /* optional [m]: pair_hint[r] = 1 if rows r, r+1 form a static 2x2 pivot */
} ildl_dense_params;

/* What a pivot search decides at step k (Bunch-Kaufman and rook): a 1x1 pivot at k, a 1x1
 * pivot at the candidate r, the 2x2 pivot of the pair, or (rook only) go on searching. */
enum { ILDL_PICK_K = 0, ILDL_PICK_R = 1, ILDL_PICK_PAIR = 2, ILDL_PICK_MOVE = 3 };

#ifdef __cplusplus
extern "C++" { /* overloads, also where a C++ file includes this inside extern "C" */
#endif

/* The rules for double and for float. In C the float ones are named name_s (as the CPU
 * reference's RN(name)); in C++ (CUDA) both keep the name, overloaded on the value type. */
#define ILDL_RT double
#define ILDL_RR(name) name
#define ILDL_RABS fabs
#define ILDL_RMAX fmax
#define ILDL_RCOPYSIGN copysign
#include "core/dense_rules_t.h"
#undef ILDL_RT
#undef ILDL_RR
#undef ILDL_RABS
#undef ILDL_RMAX
#undef ILDL_RCOPYSIGN

#define ILDL_RT float
#ifdef __cplusplus
#define ILDL_RR(name) name
#else
#define ILDL_RR(name) name##_s
#endif
#define ILDL_RABS fabsf
#define ILDL_RMAX fmaxf
#define ILDL_RCOPYSIGN copysignf
#include "core/dense_rules_t.h"
#undef ILDL_RT
#undef ILDL_RR
#undef ILDL_RABS
#undef ILDL_RMAX
#undef ILDL_RCOPYSIGN

#ifdef __cplusplus
}
#endif

/* (*y0, *y1) = |[a b; b c]|^{-1} (x0, x1): the inverse of the 2x2 pivot's absolute value
 * Q |Lambda| Q^T (its eigenvalues' magnitudes), the D of the SPD preconditioner L|D|L^T. The
 * rotation that diagonalises it is Golub and Van Loan's symmetric Schur step (sym.schur2):
 * tau = (c - a)/(2b), t = sign(tau)/(|tau| + sqrt(1 + tau^2)) (1/(2 tau) where tau^2 would
 * overflow), cs = 1/sqrt(1 + t^2), sn = t cs; eigenvalues a - t b and c + t b. Only correctly
 * rounded operations (no hypot, no FMA contraction): the same bits on both backends. */
ILDL_HD_INLINE void ildl_pivot2_abs_solve(double a, double b, double c, double x0, double x1, double *y0,
                                          double *y1)
{
    if (b == 0) {
        *y0 = x0 / fabs(a);
        *y1 = x1 / fabs(c);
        return;
    }
    double tau = (c - a) / (2 * b), t;
    if (fabs(tau) > 1e150) t = 1 / (2 * tau);
    else t = (tau >= 0 ? 1 : -1) / (fabs(tau) + sqrt(1 + tau * tau));
    double cs = 1 / sqrt(1 + t * t), sn = t * cs;
    double l0 = fabs(a - t * b), l1 = fabs(c + t * b);
    double u0 = (cs * x0 - sn * x1) / l0, u1 = (sn * x0 + cs * x1) / l1;
    *y0 = cs * u0 + sn * u1;
    *y1 = cs * u1 - sn * u0;
}

#endif
