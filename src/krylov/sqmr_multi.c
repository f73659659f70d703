/* sqmr_multi.c -- SQMR for several right-hand sides in lockstep (sqmr_multi.h).
 *
 * Every column carries the state of sqmr.c (its vectors, tau, theta, rho, the stall window, the
 * best iterate) and takes the same steps in the same order; only the matrix and preconditioner
 * applications are gathered: an iteration is
 *   1. t = A q for the columns still iterating (one matvec call),
 *   2. each column's step (sigma, alpha, r, theta, d, x) and its decision: a true-residual check
 *      (est <= tol and the check due), the stall window's test, or the next direction,
 *   3. u = b - A x for the columns whose check is due (one matvec call), their outcome
 *      (converged, stagnated, a restart from the fresh residual, or go on),
 *   4. one preconditioner call: q = M^{-1} r for the columns restarting, u = M^{-1} r for those
 *      taking the next direction; then rho, beta and q for each.
 * A column that stops leaves the set; when none is left, the final true residuals still needed
 * are computed in one matvec call and each column returns the better of its final and best
 * iterates, as ildl_sqmr does. The inner products are ildl_dot_fixed / ildl_nrm2_fixed, the
 * order of sqmr.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"
#include "krylov/reduce.h"
#include "krylov/sqmr_multi.h"

enum { COL_ACTIVE = 0, COL_DONE = 1 };

typedef struct col_state {
    const double *b;
    double *x;
    double bnorm;
    double *r, *t, *q, *d, *u, *xbest; /* slices of one allocation */
    double tau, theta, rho;
    int k;            /* iterations since the last (re)start */
    int iter;         /* iterations */
    double best;      /* true relative residual of xbest */
    int mark_iter;
    double mark_est;
    int stagnated, xbad, last_check, stall;
    double xres;      /* x's true residual when just computed, else -1 */
    double est;       /* the estimate at exit */
    int phase;
    int status;
    int finish;       /* 1: goes through ildl_sqmr's finish (returned iterate chosen) */
    double iterate_seconds;
} col_state;

typedef struct multi_ctx {
    int32_t n;
    ildl_matvec_multi_fn matvec;
    void *mctx;
    ildl_precond_multi_fn precond;
    void *pctx;
    double *lanes;
} multi_ctx;

static int allfinite(int32_t n, const double *x)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += x[i] * 0.0;
    return s == 0.0;
}

/* w[j] = b[j] - A x[j] for the m columns listed; res[j] = ||w|| / ||b|| */
static void true_res(multi_ctx *M, col_state *C, const int *list, int m, double *const *x, double *const *w,
                     double *res)
{
    if (m == 0) return;
    M->matvec(M->mctx, m, (const double *const *)x, w);
    for (int a = 0; a < m; a++) {
        col_state *c = &C[list[a]];
        for (int32_t i = 0; i < M->n; i++) w[a][i] = c->b[i] - w[a][i];
        res[a] = ildl_nrm2_fixed(M->n, w[a], M->lanes) / c->bnorm;
    }
}

/* z[j] = M^{-1} r[j] for the m columns (identity without a preconditioner) */
static int prec(multi_ctx *M, int m, double *const *r, double *const *z)
{
    if (m == 0) return ILDL_SUCCESS;
    if (!M->precond) {
        for (int a = 0; a < m; a++) memcpy(z[a], r[a], sizeof(double) * (size_t)M->n);
        return ILDL_SUCCESS;
    }
    return M->precond(M->pctx, m, (const double *const *)r, z);
}

/* sqmr.c's sqmr_start after q = M^{-1} r */
static int start_rest(multi_ctx *M, col_state *c)
{
    c->tau = ildl_nrm2_fixed(M->n, c->r, M->lanes);
    c->theta = 0.0;
    c->rho = ildl_dot_fixed(M->n, c->r, c->q, M->lanes);
    memset(c->d, 0, sizeof(double) * (size_t)M->n);
    c->k = 0;
    if (c->rho == 0.0 || !ildl_isfinite(c->rho)) return ILDL_ERR_BREAKDOWN;
    return ILDL_SUCCESS;
}

/* sqmr.c's sqmr_step after t = A q */
static int step_rest(multi_ctx *M, col_state *c)
{
    int32_t n = M->n;
    double *r = c->r, *t = c->t, *q = c->q, *d = c->d, *x = c->x;
    double sigma = ildl_dot_fixed(n, q, t, M->lanes);
    if (sigma == 0.0 || !ildl_isfinite(sigma)) return ILDL_ERR_BREAKDOWN;
    double alpha = c->rho / sigma;
    if (!ildl_isfinite(alpha)) return ILDL_ERR_BREAKDOWN;
    for (int32_t i = 0; i < n; i++) r[i] -= alpha * t[i];
    double theta_old = c->theta;
    double theta = ildl_nrm2_fixed(n, r, M->lanes) / c->tau;
    if (!ildl_isfinite(theta)) return ILDL_ERR_BREAKDOWN;
    double cg = ildl_givens_c(theta);
    double c2 = cg * cg;
    double dcoef = c2 * theta_old * theta_old, qcoef = c2 * alpha;
    for (int32_t i = 0; i < n; i++) {
        d[i] = dcoef * d[i] + qcoef * q[i];
        x[i] += d[i];
    }
    c->theta = theta;
    c->tau = c->tau * theta * cg;
    c->k++;
    if (!ildl_isfinite(c->tau) || !allfinite(n, x)) {
        c->xbad = 1;
        return ILDL_ERR_BREAKDOWN;
    }
    return ILDL_SUCCESS;
}

/* sqmr.c's sqmr_direction after u = M^{-1} r */
static int direction_rest(multi_ctx *M, col_state *c)
{
    double rho = ildl_dot_fixed(M->n, c->r, c->u, M->lanes);
    if (rho == 0.0 || !ildl_isfinite(rho)) return ILDL_ERR_BREAKDOWN;
    double beta = rho / c->rho;
    if (!ildl_isfinite(beta)) return ILDL_ERR_BREAKDOWN;
    for (int32_t i = 0; i < M->n; i++) c->q[i] = c->u[i] + beta * c->q[i];
    c->rho = rho;
    return ILDL_SUCCESS;
}

static void keep_best(int32_t n, col_state *c, double res)
{
    if (ildl_isfinite(res) && res < c->best) {
        c->best = res;
        memcpy(c->xbest, c->x, sizeof(double) * (size_t)n);
    }
}

/* the column leaves the iteration with status st (its loop time and estimate recorded) */
static void col_exit(col_state *c, int st, double t0)
{
    c->status = st;
    c->phase = COL_DONE;
    c->finish = 1;
    c->iterate_seconds = ildl_wtime() - t0;
    c->est = c->tau / c->bnorm;
}

/* The lockstep loop over the columns listed active; returns a preconditioner error, else 0. */
static int loop(multi_ctx *M, col_state *C, int k, const ildl_sqmr_params *prm, double t0)
{
    int list[ILDL_SQMR_MULTI_MAX], chk[ILDL_SQMR_MULTI_MAX], pl[ILDL_SQMR_MULTI_MAX];
    int restart[ILDL_SQMR_MULTI_MAX];
    double *pa[ILDL_SQMR_MULTI_MAX], *pb[ILDL_SQMR_MULTI_MAX], res[ILDL_SQMR_MULTI_MAX];
    for (;;) {
        int m = 0;
        for (int j = 0; j < k; j++) {
            col_state *c = &C[j];
            if (c->phase != COL_ACTIVE) continue;
            if (c->iter >= prm->max_iter) {
                col_exit(c, ILDL_ERR_NOT_CONVERGED, t0);
                continue;
            }
            c->xres = -1.0;
            list[m] = j;
            pa[m] = c->q;
            pb[m] = c->t;
            m++;
        }
        if (m == 0) return ILDL_SUCCESS;
        M->matvec(M->mctx, m, (const double *const *)pa, pb);
        int ms = 0, nchk = 0, np = 0;
        double est_max = 0.0;
        for (int a = 0; a < m; a++) {
            col_state *c = &C[list[a]];
            int st = step_rest(M, c);
            c->iter++;
            if (st != ILDL_SUCCESS) {
                col_exit(c, st, t0);
                continue;
            }
            double est = c->tau / c->bnorm;
            if (ms == 0 || est > est_max) est_max = est;
            ms++;
            if (est <= prm->tol && (c->last_check < 0 || c->iter - c->last_check >= prm->check_every)) {
                chk[nchk++] = list[a];
            } else {
                if (prm->stall_window > 0 && c->iter - c->mark_iter >= prm->stall_window) {
                    if (!(est <= ILDL_SQMR_STALL_DROP * c->mark_est)) {
                        c->stagnated = 1;
                        col_exit(c, ILDL_ERR_NOT_CONVERGED, t0);
                        continue;
                    }
                    c->mark_iter = c->iter;
                    c->mark_est = est;
                }
                restart[np] = 0;
                pl[np++] = list[a];
            }
        }
        /* progress once per iteration: its number is that of every column that took it */
        if (ms > 0 && prm->progress) prm->progress(prm->progress_ctx, C[list[0]].iter, est_max);
        if (nchk > 0) {
            for (int a = 0; a < nchk; a++) {
                pa[a] = C[chk[a]].x;
                pb[a] = C[chk[a]].u;
            }
            true_res(M, C, chk, nchk, pa, pb, res);
            for (int a = 0; a < nchk; a++) {
                col_state *c = &C[chk[a]];
                double est = c->tau / c->bnorm;
                c->last_check = c->iter;
                double prev_best = c->best;
                c->xres = res[a];
                if (!ildl_isfinite(res[a])) {
                    col_exit(c, ILDL_ERR_BREAKDOWN, t0);
                    continue;
                }
                keep_best(M->n, c, res[a]);
                if (res[a] <= prm->tol) {
                    col_exit(c, ILDL_SUCCESS, t0);
                    continue;
                }
                if (res[a] > sqrt((double)c->k + 1.0) * est) {
                    c->stall = (res[a] < 0.5 * prev_best) ? 0 : c->stall + 1;
                    if (c->stall >= ILDL_SQMR_MAX_STALL) {
                        col_exit(c, ILDL_ERR_NOT_CONVERGED, t0);
                        continue;
                    }
                    memcpy(c->r, c->u, sizeof(double) * (size_t)M->n);
                    restart[np] = 1;
                } else {
                    restart[np] = 0;
                }
                pl[np++] = chk[a];
            }
        }
        if (np == 0) continue;
        for (int a = 0; a < np; a++) {
            pa[a] = C[pl[a]].r;
            pb[a] = restart[a] ? C[pl[a]].q : C[pl[a]].u;
        }
        int st = prec(M, np, pa, pb);
        if (st != ILDL_SUCCESS) {
            for (int j = 0; j < k; j++)
                if (C[j].phase == COL_ACTIVE) col_exit(&C[j], st, t0);
            return st;
        }
        for (int a = 0; a < np; a++) {
            col_state *c = &C[pl[a]];
            if (restart[a]) {
                st = start_rest(M, c);
                if (st != ILDL_SUCCESS) {
                    col_exit(c, st, t0);
                    continue;
                }
                c->mark_iter = c->iter;
                c->mark_est = c->tau / c->bnorm;
            } else {
                st = direction_rest(M, c);
                if (st != ILDL_SUCCESS) col_exit(c, st, t0);
            }
        }
    }
}

int ildl_sqmr_multi(int32_t n, int k, ildl_matvec_multi_fn matvec, void *mctx, ildl_precond_multi_fn precond,
                    void *pctx, const double *const *b, double *const *x, const ildl_sqmr_params *prm,
                    ildl_sqmr_result *res, int *status)
{
    col_state C[ILDL_SQMR_MULTI_MAX];
    int list[ILDL_SQMR_MULTI_MAX];
    double *pa[ILDL_SQMR_MULTI_MAX], *pb[ILDL_SQMR_MULTI_MAX], rv[ILDL_SQMR_MULTI_MAX];
    multi_ctx M = {n, matvec, mctx, precond, pctx, NULL};
    double *work = NULL;
    int call_st = ILDL_SUCCESS;

    if (!matvec || !b || !x || !prm || !res || !status) return ILDL_ERR_NULL_ARGUMENT;
    if (k < 1 || k > ILDL_SQMR_MULTI_MAX) return ILDL_ERR_INVALID_OPTION;
    for (int j = 0; j < k; j++) {
        memset(&res[j], 0, sizeof res[j]);
        status[j] = ILDL_SUCCESS;
        if (!b[j] || !x[j]) return ILDL_ERR_NULL_ARGUMENT;
    }
    if (n <= 0) return ILDL_ERR_EMPTY;
    if (!(prm->tol >= 0.0) || prm->max_iter < 0 || prm->check_every < 1) return ILDL_ERR_INVALID_OPTION;
    M.lanes = ildl_malloc(sizeof(double) * ILDL_DOT_LANES);
    work = ildl_malloc(sizeof(double) * 6 * (size_t)n * (size_t)k);
    if (!M.lanes || !work) {
        call_st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    memset(C, 0, sizeof C);
    int m = 0;
    for (int j = 0; j < k; j++) {
        col_state *c = &C[j];
        double *w = work + (size_t)6 * n * j;
        c->b = b[j];
        c->x = x[j];
        c->r = w;
        c->t = w + n;
        c->q = w + 2 * (size_t)n;
        c->d = w + 3 * (size_t)n;
        c->u = w + 4 * (size_t)n;
        c->xbest = w + 5 * (size_t)n;
        c->last_check = -1;
        c->phase = COL_DONE;
        c->bnorm = ildl_nrm2_fixed(n, b[j], M.lanes);
        if (!ildl_isfinite(c->bnorm)) {
            status[j] = ILDL_ERR_NAN_INF;
            continue;
        }
        if (c->bnorm == 0.0) { /* x = 0, converged */
            memset(x[j], 0, sizeof(double) * (size_t)n);
            res[j].converged = 1;
            continue;
        }
        if (prm->use_x0 && !allfinite(n, x[j])) {
            status[j] = ILDL_ERR_NAN_INF; /* x left as given */
            continue;
        }
        c->phase = COL_ACTIVE;
        c->finish = 1;
        if (prm->use_x0) {
            list[m] = j;
            pa[m] = c->x;
            pb[m] = c->r;
            m++;
        }
    }
    /* the initial residuals; x0 (or 0) is each column's first candidate for the best iterate */
    true_res(&M, C, list, m, pa, pb, rv);
    for (int a = 0; a < m; a++) C[list[a]].best = rv[a];
    m = 0;
    for (int j = 0; j < k; j++) {
        col_state *c = &C[j];
        if (c->phase != COL_ACTIVE) continue;
        if (!prm->use_x0 || !ildl_isfinite(c->best)) {
            memset(c->x, 0, sizeof(double) * (size_t)n);
            memcpy(c->r, c->b, sizeof(double) * (size_t)n);
            c->best = 1.0;
        }
        memcpy(c->xbest, c->x, sizeof(double) * (size_t)n);
        c->xres = c->best;
        c->est = c->best;
        if (c->best <= prm->tol) {
            c->phase = COL_DONE;
            continue;
        }
        list[m] = j;
        pa[m] = c->r;
        pb[m] = c->q;
        m++;
    }
    double t0 = ildl_wtime();
    int st = prec(&M, m, pa, pb);
    if (st != ILDL_SUCCESS) {
        call_st = st;
        for (int a = 0; a < m; a++) {
            C[list[a]].status = st;
            C[list[a]].phase = COL_DONE;
            C[list[a]].est = 0.0; /* as ildl_sqmr: its tau not yet computed */
        }
    } else {
        for (int a = 0; a < m; a++) {
            col_state *c = &C[list[a]];
            st = start_rest(&M, c);
            c->mark_iter = 0;
            c->mark_est = c->tau / c->bnorm;
            if (st != ILDL_SUCCESS) {
                c->status = st;
                c->phase = COL_DONE;
                c->est = c->tau / c->bnorm;
            }
        }
        call_st = loop(&M, C, k, prm, t0);
    }

    /* finish: the final iterates' true residuals where not just computed, then the better of
     * the final and the best iterate for each column */
    m = 0;
    for (int j = 0; j < k; j++) {
        col_state *c = &C[j];
        if (c->finish && !c->xbad && c->xres < 0.0) {
            list[m] = j;
            pa[m] = c->x;
            pb[m] = c->u;
            m++;
        }
    }
    true_res(&M, C, list, m, pa, pb, rv);
    for (int a = 0; a < m; a++) C[list[a]].xres = rv[a];
    for (int j = 0; j < k; j++) {
        col_state *c = &C[j];
        if (!c->finish) continue;
        double final;
        if (!c->xbad && ildl_isfinite(c->xres) && c->xres <= c->best) {
            final = c->xres;
        } else {
            memcpy(c->x, c->xbest, sizeof(double) * (size_t)n);
            final = c->best;
        }
        res[j].iterations = c->iter;
        res[j].stagnated = c->stagnated;
        res[j].true_residual = final;
        res[j].converged = final <= prm->tol;
        res[j].est_residual = c->est;
        res[j].iterate_seconds = c->iterate_seconds;
        st = c->status;
        if (res[j].converged && (st == ILDL_ERR_NOT_CONVERGED || st == ILDL_ERR_BREAKDOWN)) st = ILDL_SUCCESS;
        if (!res[j].converged && st == ILDL_SUCCESS) st = ILDL_ERR_NOT_CONVERGED;
        status[j] = st;
    }

cleanup:
    free(work);
    free(M.lanes);
    return call_st;
}
