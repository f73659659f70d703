/* sqmr.h -- simplified QMR (Freund & Nachtigal 1994) for symmetric A with a symmetric,
 * possibly indefinite preconditioner M, on host vectors. Stops on the TRUE relative residual
 * ||b - A x|| / ||b|| of the iterate it returns. */
#ifndef ILDL_KRYLOV_SQMR_H
#define ILDL_KRYLOV_SQMR_H
#include <stdint.h>

/* restarts in a row that fail to halve the best true residual before SQMR calls it stagnation
 * (both backends) */
#define ILDL_SQMR_MAX_STALL 3

/* The ladder's stagnation rule (ildl_sqmr_params.stall_window): SQMR stops when its estimate
 * of the relative residual has not fallen below STALL_DROP times its value stall_window
 * iterations before (counted from the last (re)start); ildl_solve uses STALL_WINDOW where a
 * higher rung may follow. */
#define ILDL_SQMR_STALL_WINDOW 200
#define ILDL_SQMR_STALL_DROP 0.1

/* y = A x */
typedef void (*ildl_matvec_fn)(void *ctx, const double *x, double *y);
/* z = M^{-1} r; returns an ILDL_* status (non-success aborts the solve) */
typedef int (*ildl_precond_fn)(void *ctx, const double *r, double *z);

typedef struct ildl_sqmr_params {
    double tol;        /* target true relative residual */
    int max_iter;
    int check_every;   /* check the true residual when the estimate says converged, and at
                          most every check_every iterations (>= 1) */
    int use_x0;        /* 1: x holds the initial guess */
    void (*progress)(void *ctx, int iter, double est_rel_res); /* optional, may be NULL */
    void *progress_ctx;
    int stall_window;  /* > 0: stop (NOT_CONVERGED, stagnated) when the estimate, at an iteration
                          this many after the window's start and not due for a true-residual
                          check, is above ILDL_SQMR_STALL_DROP times the estimate at the start;
                          else the next window starts there. A (re)start starts a window. 0: off */
} ildl_sqmr_params;

typedef struct ildl_sqmr_result {
    int iterations;
    int converged;           /* true residual <= tol */
    double true_residual;    /* ||b - A x|| / ||b|| of the returned x */
    double est_residual;     /* the recurrence's estimate at exit */
    double iterate_seconds;  /* wall time of the iterations alone (restarts and true-residual
                                checks among them included): not the initial residual and
                                preconditioner application, nor the final true residual */
    int stagnated;           /* stopped by the stall_window rule */
} ildl_sqmr_result;

/* Solve A x = b. precond may be NULL (identity). b = 0 gives x = 0, converged.
 * Returns ILDL_SUCCESS (converged), ILDL_ERR_NOT_CONVERGED, ILDL_ERR_BREAKDOWN (x is the
 * best iterate seen), ILDL_ERR_OUT_OF_MEMORY, or the preconditioner's error. */
int ildl_sqmr(int32_t n, ildl_matvec_fn matvec, void *mctx, ildl_precond_fn precond,
              void *pctx, const double *b, double *x, const ildl_sqmr_params *prm,
              ildl_sqmr_result *res);

#endif
