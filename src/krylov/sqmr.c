/* sqmr.c -- simplified QMR (Freund & Nachtigal 1994) for symmetric A with a symmetric,
 * possibly indefinite preconditioner M (split M1 = I, M2 = M, so only z = M^{-1} r is
 * needed). Convergence is declared only on the TRUE relative residual ||b - A x|| / ||b||
 * of the iterate that is returned, computed with a fresh matvec.
 *
 * Estimate.  tau_k is the norm of the QMR least-squares residual.  With M1 = I the Lanczos
 * vectors have unit 2-norm, so in exact arithmetic ||b - A x_k|| <= sqrt(k+1) tau_k.  The
 * stopping TRIGGER is the plain tau_k / ||b|| (the usual practical estimate): the sqrt(k+1)
 * factor is pessimistic by orders of magnitude in practice and would run many iterations past
 * convergence, while an optimistic trigger costs at most one extra matvec per check_every
 * iterations, because every "converged" is confirmed by a true residual anyway.
 *
 * Failed check.  If the true residual still respects the exact-arithmetic bound
 * sqrt(k+1) tau_k, the estimate was merely optimistic and the recurrence continues (keeping
 * its Krylov space).  If it violates the bound, rounding errors have decoupled the recurrence
 * from the iterate (residual gap), so more iterations of it cannot help: the recurrence is
 * restarted from the current x with the fresh true residual.  Restarts that repeatedly fail to
 * halve the best true residual mean the attainable accuracy is reached: stagnation.
 *
 * Returned iterate.  The best iterate by true residual is kept (x0 included); on every exit
 * the final iterate's true residual is computed too, and the better of the two is returned, so
 * res->true_residual is always the true relative residual of the x handed back.
 *
 * Breakdown.  sigma = q^T A q = 0, rho = r^T M^{-1} r = 0 or any non-finite scalar or iterate
 * ends the solve with ILDL_ERR_BREAKDOWN (no look-ahead, no restart: the same residual would
 * break down again); the best finite iterate is returned.  Whatever the reason for stopping,
 * a returned x that meets tol is reported as ILDL_SUCCESS, except that a preconditioner error
 * is always passed on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"
#include "krylov/reduce.h"
#include "krylov/sqmr.h"


typedef struct sqmr_state {
    int32_t n;
    ildl_matvec_fn matvec;
    void *mctx;
    ildl_precond_fn precond;
    void *pctx;
    const double *b;
    double bnorm;
    double *r, *t, *q, *d, *u, *xbest; /* work vectors, one allocation (r owns it) */
    double tau, theta, rho;            /* recurrence scalars */
    int k;                             /* iterations since the last (re)start */
    double best;                       /* true relative residual of xbest */
    int mark_iter;                     /* the stall window's start (iteration) ... */
    double mark_est;                   /* ... and the estimate there */
    int stagnated;
} sqmr_state;

/* Scratch for the fixed-order inner products (krylov/reduce.h): the CUDA backend's SQMR
 * sums in the same order, so both backends produce identical scalars and iterations. */
static _Thread_local double *sqmr_lanes;

static double sqmr_dot(int32_t n, const double *x, const double *y)
{
    return ildl_dot_fixed(n, x, y, sqmr_lanes);
}

/* 2-norm without overflow or harmful underflow, in the same fixed order (reduce.h) */
static double sqmr_nrm2(int32_t n, const double *x) { return ildl_nrm2_fixed(n, x, sqmr_lanes); }

/* 1 if every entry of x is finite (x*0 is NaN exactly for Inf/NaN entries) */
static int sqmr_allfinite(int32_t n, const double *x)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += x[i] * 0.0;
    return s == 0.0;
}

/* w = b - A x; returns ||w|| / ||b|| */
static double sqmr_true_res(sqmr_state *S, const double *x, double *w)
{
    S->matvec(S->mctx, x, w);
    for (int32_t i = 0; i < S->n; i++) w[i] = S->b[i] - w[i];
    return sqmr_nrm2(S->n, w) / S->bnorm;
}

/* z = M^{-1} r (identity when no preconditioner); the preconditioner's status */
static int sqmr_prec(sqmr_state *S, const double *r, double *z)
{
    if (!S->precond) {
        memcpy(z, r, sizeof(double) * (size_t)S->n);
        return ILDL_SUCCESS;
    }
    return S->precond(S->pctx, r, z);
}

/* (Re)start the recurrence from the true residual held in S->r. */
static int sqmr_start(sqmr_state *S)
{
    int32_t n = S->n;
    int st = sqmr_prec(S, S->r, S->q);
    if (st != ILDL_SUCCESS) return st;
    S->tau = sqmr_nrm2(n, S->r);
    S->theta = 0.0;
    S->rho = sqmr_dot(n, S->r, S->q);
    memset(S->d, 0, sizeof(double) * (size_t)n);
    S->k = 0;
    /* rho = 0 would make every later alpha zero: no progress is possible */
    if (S->rho == 0.0 || !ildl_isfinite(S->rho)) return ILDL_ERR_BREAKDOWN;
    return ILDL_SUCCESS;
}

/* One SQMR step updating x. *xbad is set when x may hold non-finite values. */
static int sqmr_step(sqmr_state *S, double *x, int *xbad)
{
    int32_t n = S->n;
    double *r = S->r, *t = S->t, *q = S->q, *d = S->d;
    S->matvec(S->mctx, q, t);
    double sigma = sqmr_dot(n, q, t);
    if (sigma == 0.0 || !ildl_isfinite(sigma)) return ILDL_ERR_BREAKDOWN;
    double alpha = S->rho / sigma;
    if (!ildl_isfinite(alpha)) return ILDL_ERR_BREAKDOWN;
    for (int32_t i = 0; i < n; i++) r[i] -= alpha * t[i];
    double theta_old = S->theta;
    double theta = sqmr_nrm2(n, r) / S->tau;
    if (!ildl_isfinite(theta)) return ILDL_ERR_BREAKDOWN;
    double c = ildl_givens_c(theta); /* 1/sqrt(1+theta^2), no overflow for huge theta */
    double c2 = c * c;
    double dcoef = c2 * theta_old * theta_old, qcoef = c2 * alpha;
    for (int32_t i = 0; i < n; i++) {
        d[i] = dcoef * d[i] + qcoef * q[i];
        x[i] += d[i];
    }
    S->theta = theta;
    S->tau = S->tau * theta * c;
    S->k++;
    if (!ildl_isfinite(S->tau) || !sqmr_allfinite(n, x)) {
        *xbad = 1;
        return ILDL_ERR_BREAKDOWN;
    }
    return ILDL_SUCCESS;
}

/* Next search direction q = M^{-1} r + beta q. */
static int sqmr_direction(sqmr_state *S)
{
    int32_t n = S->n;
    double *u = S->u, *q = S->q;
    int st = sqmr_prec(S, S->r, u);
    if (st != ILDL_SUCCESS) return st;
    double rho = sqmr_dot(n, S->r, u);
    if (rho == 0.0 || !ildl_isfinite(rho)) return ILDL_ERR_BREAKDOWN;
    double beta = rho / S->rho;
    if (!ildl_isfinite(beta)) return ILDL_ERR_BREAKDOWN;
    for (int32_t i = 0; i < n; i++) q[i] = u[i] + beta * q[i];
    S->rho = rho;
    return ILDL_SUCCESS;
}

/* Record x as best iterate if its (finite) true residual beats the best so far. */
static void sqmr_keep_best(sqmr_state *S, const double *x, double res)
{
    if (ildl_isfinite(res) && res < S->best) {
        S->best = res;
        memcpy(S->xbest, x, sizeof(double) * (size_t)S->n);
    }
}

/* The SQMR loop on an initialised state. *xbad set if x is left non-finite;
 * *xres receives x's true residual when it was just computed (else -1). */
static int sqmr_loop(sqmr_state *S, double *x, const ildl_sqmr_params *prm, int *iter,
                     int *xbad, double *xres)
{
    int last_check = -1, stall = 0;
    for (;;) {
        if (*iter >= prm->max_iter) return ILDL_ERR_NOT_CONVERGED;
        *xres = -1.0; /* x is about to change */
        int st = sqmr_step(S, x, xbad);
        (*iter)++;
        if (st != ILDL_SUCCESS) return st;
        double est = S->tau / S->bnorm;
        if (prm->progress) prm->progress(prm->progress_ctx, *iter, est);
        if (est <= prm->tol && (last_check < 0 || *iter - last_check >= prm->check_every)) {
            last_check = *iter;
            double prev_best = S->best;
            double res = sqmr_true_res(S, x, S->u);
            *xres = res;
            if (!ildl_isfinite(res)) return ILDL_ERR_BREAKDOWN;
            sqmr_keep_best(S, x, res);
            if (res <= prm->tol) return ILDL_SUCCESS;
            if (res > sqrt((double)S->k + 1.0) * est) {
                /* bound violated: the recurrence has drifted; restart from the true residual */
                stall = (res < 0.5 * prev_best) ? 0 : stall + 1;
                if (stall >= ILDL_SQMR_MAX_STALL) return ILDL_ERR_NOT_CONVERGED;
                memcpy(S->r, S->u, sizeof(double) * (size_t)S->n);
                st = sqmr_start(S);
                if (st != ILDL_SUCCESS) return st;
                S->mark_iter = *iter;
                S->mark_est = S->tau / S->bnorm;
                continue;
            }
        } else if (prm->stall_window > 0 && *iter - S->mark_iter >= prm->stall_window) {
            if (!(est <= ILDL_SQMR_STALL_DROP * S->mark_est)) {
                S->stagnated = 1;
                return ILDL_ERR_NOT_CONVERGED;
            }
            S->mark_iter = *iter;
            S->mark_est = est;
        }
        st = sqmr_direction(S);
        if (st != ILDL_SUCCESS) return st;
    }
}

/* Solve A x = b by SQMR; see sqmr.h. res may be NULL. Argument errors (x untouched):
 * ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_EMPTY (n <= 0), ILDL_ERR_INVALID_OPTION (tol < 0 or NaN,
 * max_iter < 0, check_every < 1), ILDL_ERR_NAN_INF (b, or x0 with use_x0, not finite). An x0
 * whose residual b - A x0 is not finite (A x0 overflows) is of no use: the solve starts from 0. */
int ildl_sqmr(int32_t n, ildl_matvec_fn matvec, void *mctx, ildl_precond_fn precond,
              void *pctx, const double *b, double *x, const ildl_sqmr_params *prm,
              ildl_sqmr_result *res)
{
    ildl_sqmr_result out = {0, 0, 0.0, 0.0, 0.0, 0};
    sqmr_state S;
    memset(&S, 0, sizeof S);
    int status = ILDL_SUCCESS, iter = 0, xbad = 0;
    double xres = -1.0, final = 0.0;

    if (res) *res = out;
    if (!matvec || !b || !x || !prm) return ILDL_ERR_NULL_ARGUMENT;
    if (n <= 0) return ILDL_ERR_EMPTY;
    if (!(prm->tol >= 0.0) || prm->max_iter < 0 || prm->check_every < 1)
        return ILDL_ERR_INVALID_OPTION;
    double *lanes = ildl_malloc(sizeof(double) * ILDL_DOT_LANES);
    if (!lanes) return ILDL_ERR_OUT_OF_MEMORY;
    double *lanes_prev = sqmr_lanes; /* a preconditioner may itself run SQMR */
    sqmr_lanes = lanes;
    double bnorm = sqmr_nrm2(n, b);
    if (!ildl_isfinite(bnorm)) {
        status = ILDL_ERR_NAN_INF;
        goto cleanup;
    }
    if (bnorm == 0.0) {
        memset(x, 0, sizeof(double) * (size_t)n);
        out.converged = 1;
        if (res) *res = out;
        goto cleanup;
    }

    S.n = n;
    S.matvec = matvec;
    S.mctx = mctx;
    S.precond = precond;
    S.pctx = pctx;
    S.b = b;
    S.bnorm = bnorm;
    S.r = ildl_malloc(sizeof(double) * 6 * (size_t)n);
    if (!S.r) { /* x untouched */
        status = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    S.t = S.r + n;
    S.q = S.t + n;
    S.d = S.q + n;
    S.u = S.d + n;
    S.xbest = S.u + n;

    /* initial residual; x0 (or 0) is the first candidate for the best iterate */
    if (prm->use_x0 && !sqmr_allfinite(n, x)) {
        status = ILDL_ERR_NAN_INF; /* x left as given */
        goto cleanup;
    }
    if (prm->use_x0) S.best = sqmr_true_res(&S, x, S.r);
    if (!prm->use_x0 || !ildl_isfinite(S.best)) {
        memset(x, 0, sizeof(double) * (size_t)n);
        memcpy(S.r, b, sizeof(double) * (size_t)n);
        S.best = 1.0;
    }
    memcpy(S.xbest, x, sizeof(double) * (size_t)n);
    xres = S.best;
    out.est_residual = S.best;
    if (S.best <= prm->tol) goto finish;

    status = sqmr_start(&S);
    S.mark_iter = 0;
    S.mark_est = S.tau / bnorm;
    if (status == ILDL_SUCCESS) {
        double t0 = ildl_wtime();
        status = sqmr_loop(&S, x, prm, &iter, &xbad, &xres);
        out.iterate_seconds = ildl_wtime() - t0;
    }
    out.est_residual = S.tau / bnorm;

finish:
    /* return the better of the final iterate and the best one seen, by true residual */
    if (!xbad && xres < 0.0) xres = sqmr_true_res(&S, x, S.u);
    if (!xbad && ildl_isfinite(xres) && xres <= S.best) {
        final = xres;
    } else {
        memcpy(x, S.xbest, sizeof(double) * (size_t)n);
        final = S.best;
    }
    out.iterations = iter;
    out.stagnated = S.stagnated;
    out.true_residual = final;
    out.converged = final <= prm->tol;
    /* a preconditioner failure is always reported; otherwise success means converged */
    if (out.converged && (status == ILDL_ERR_NOT_CONVERGED || status == ILDL_ERR_BREAKDOWN))
        status = ILDL_SUCCESS;
    if (!out.converged && status == ILDL_SUCCESS) status = ILDL_ERR_NOT_CONVERGED;
    if (res) *res = out;

cleanup:
    free(S.r);
    sqmr_lanes = lanes_prev;
    free(lanes);
    return status;
}
