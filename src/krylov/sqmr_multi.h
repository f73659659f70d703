/* sqmr_multi.h -- SQMR (sqmr.h) for up to ILDL_SQMR_MULTI_MAX right-hand sides in lockstep: every
 * iteration applies A to the columns still iterating in one call, and M^{-1} in one call, so that
 * a matrix or a factor read once serves them all. Each column follows ildl_sqmr's rules exactly
 * (its scalars, checks, restarts, stagnation and returned iterate): given matvec and precond
 * callbacks whose columns equal the single-vector ones bit for bit, every column's x, result and
 * status equal those of ildl_sqmr on that column alone. */
#ifndef ILDL_KRYLOV_SQMR_MULTI_H
#define ILDL_KRYLOV_SQMR_MULTI_H
#include <stdint.h>
#include "krylov/sqmr.h"

#define ILDL_SQMR_MULTI_MAX 16 /* columns of one ildl_sqmr_multi */

/* y[j] = A x[j] for j < m (1 <= m <= ILDL_SQMR_MULTI_MAX) */
typedef void (*ildl_matvec_multi_fn)(void *ctx, int m, const double *const *x, double *const *y);
/* z[j] = M^{-1} r[j] for j < m; an ILDL_* status (non-success aborts the solve of every column) */
typedef int (*ildl_precond_multi_fn)(void *ctx, int m, const double *const *r, double *const *z);

/* Solve A x[j] = b[j], j < k (1 <= k <= ILDL_SQMR_MULTI_MAX), from x0 = x[j] if prm->use_x0.
 * res[k] and status[k] receive each column's result and its ildl_sqmr status. prm->progress is
 * called once per iteration with the largest estimate among the columns that took it. Returns
 * ILDL_SUCCESS when every column ran its course (converged or not: see status[]), else an error
 * of the call: ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_EMPTY, ILDL_ERR_INVALID_OPTION (as ildl_sqmr, or
 * k out of range), ILDL_ERR_OUT_OF_MEMORY (x untouched), or the preconditioner's error (every
 * column still iterating then stops with it, its x the best iterate seen). */
int ildl_sqmr_multi(int32_t n, int k, ildl_matvec_multi_fn matvec, void *mctx, ildl_precond_multi_fn precond,
                    void *pctx, const double *const *b, double *const *x, const ildl_sqmr_params *prm,
                    ildl_sqmr_result *res, int *status);

#endif
