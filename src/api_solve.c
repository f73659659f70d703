/* api_solve.c -- ildl_solve: SQMR on the current factor, a right-hand side scaled where its norm
 * would over- or underflow, and the ladder (docs/robustness.md): where SQMR fails, A is analysed
 * and factored again with more fill, then completely, within the memory and time budgets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api_internal.h"
#include "core/util.h"
#include "krylov/reduce.h"
#include "krylov/sqmr.h"
#include "analyse/cost.h"

/* ------------------------------------------------------------------ the ladder */

/* The options of rung r (see ildl_escalation in blockildl.h) for the user's options u. */
static void rung_options(const ildl_options *u, int rung, ildl_options *o)
{
    *o = *u;
    if (rung > 0) o->method = ILDL_METHOD_ILDL; /* the ladder climbs to block-iLDL^T factors */
    if (rung == 1) {
        if (o->fill_level < 3) o->fill_level = 3;
        if (o->fill_factor > 0.0 && o->fill_factor < 16.0) o->fill_factor = 16.0;
        if (o->drop_tol > 1e-6) o->drop_tol = 1e-6;
    } else if (rung == 2) {
        o->fill_level = ILDL_MAX_FILL_LEVEL;
        o->fill_factor = 0.0;
        o->drop_tol = 0.0;
    }
}

/* The next rung above h's that escalation allows and whose factor differs from the current
 * one (equal options would factor the same), or -1. */
static int next_rung(const ildl_handle *h)
{
    for (int r = h->rung + 1; r <= h->user_opt.escalation; r++) {
        ildl_options o;
        rung_options(&h->user_opt, r, &o);
        if (o.method != h->opt.method || o.fill_level != h->opt.fill_level || o.fill_factor != h->opt.fill_factor ||
            o.drop_tol != h->opt.drop_tol)
            return r;
    }
    return -1;
}

/* Factor h's current values for a rung: ildl_factor's work, but info.factor_seconds stays that
 * of the caller's last ildl_factor (the rung's time is in rung_seconds). */
static int rung_factor(ildl_handle *h)
{
    double t = h->info.factor_seconds;
    int st = ildl_api_factor(h, NULL);
    h->info.factor_seconds = t;
    return st;
}

/* A modeled step of the complete rung must cost less than this share of the current rung's. */
#define COST_SHARE 0.5
/* Its candidate analyses are made only where they cost less than this many current steps (a
 * switch saves at least half a step per step). */
#define COST_HORIZON 20.0
/* SQMR iterations a step of the complete rung is modeled with (1 on most complete factors). */
#define COST_COMPLETE_ITERATIONS 2

/* The model's step of a complete factor of analysis an: on the CUDA backend's model whatever
 * h's backend, so that both backends choose the same analysis (the CPU's factor is the GPU's
 * reference, and a ladder's results agree across them). */
static double complete_step_model(const ildl_analysis *an, double drop_tol)
{
    ildl_step_cost c;
    ildl_cost_model(an, drop_tol, ILDL_BACKEND_CUDA, 1, &c);
    return c.factor + COST_COMPLETE_ITERATIONS * c.iteration;
}

/* The analysis of a rung's options *o (max_entries: the budget, 0 = none). The complete rung
 * with the ordering left to the library (AUTO) takes, of three analyses, the one whose step the
 * cost model (analyse/cost.h) puts lowest: supernodal blocking (SN: chains of the elimination
 * tree) of METIS's and of AMD's order of the rows, then the options' blocking and order, the
 * first on ties; each later one runs with the fewest entries so far as its limit, so it is
 * refused before allocating if it is not smaller. (The fewest entries alone would take AMD's
 * order of sqd_liswet1, a chain of 600-950 levels, or the options' BR of sqd_hues-mod, 9 992
 * blocks of 3 rows: 33x and 7x the model's step of the one chosen. SN tried first spares the
 * allocation of BR's larger factor.) Where the first needs more than 4x the
 * budget the others are not tried. *o becomes the options used; *needed the fewest entries
 * asked for where every one is refused for the budget (0 where none could say). */
static int rung_analyse(ildl_handle *h, int rung, int64_t max_entries, ildl_options *o, int64_t *needed,
                        ildl_analysis *an, char *msg, size_t msglen)
{
    ildl_options cand[3];
    int ncand = 1, have = 0, st = ILDL_SUCCESS;
    int64_t least = 0;
    cand[0] = *o;
    if (rung == 2 && h->user_opt.ordering == ILDL_ORDER_AUTO) {
        for (int c = 0; c < 2; c++) {
            cand[c] = *o;
            cand[c].blocking = ILDL_BLOCKING_SN;
            cand[c].ordering = c == 0 ? ILDL_ORDER_METIS : ILDL_ORDER_AMD;
        }
        cand[2] = *o;
        ncand = 3;
    }
    *needed = 0;
    int64_t fewest = 0; /* entries of the smallest analysis so far */
    double best = 0.0;  /* the model's step of *an */
    for (int c = 0; c < ncand; c++) {
        int64_t lim = max_entries;
        if (have) {
            if (fewest <= 1) break;
            lim = fewest - 1;
        } else if (c > 0 && max_entries > 0 && least > 4 * max_entries) {
            break;
        }
        ildl_analysis a;
        int64_t nd = 0;
        char m[256] = "";
        int s2 = ildl_analyse_within(&h->A, h->src, &cand[c], lim, &nd, &h->memo, &a, m, sizeof m);
        if (s2 == ILDL_SUCCESS) {
            double step = ncand > 1 ? complete_step_model(&a, cand[c].drop_tol) : 0.0;
            if (!have || a.tiles.total_cap < fewest) fewest = a.tiles.total_cap;
            if (have && !(step < best)) {
                ildl_analysis_free(&a);
                continue;
            }
            if (have) ildl_analysis_free(an);
            *an = a;
            *o = cand[c];
            best = step;
            have = 1;
        } else if (!have) {
            st = s2;
            if (s2 == ILDL_ERR_OUT_OF_MEMORY && nd > 0 && (least == 0 || nd < least)) least = nd;
            ildl_msg(msg, msglen, "%s", m);
        }
    }
    if (have) return ILDL_SUCCESS;
    if (st == ILDL_ERR_OUT_OF_MEMORY && least > 0) {
        *needed = least;
        ildl_msg(msg, msglen, "the factor needs %lld entries, more than the %lld allowed", (long long)least,
                 (long long)max_entries);
    }
    return st;
}

/* Install the analysis *an (taken over) made with rung r's options *o and factor h's current
 * values: the new analysis and backend state replace h's; failures as switch_rung's. */
static int rung_install(ildl_handle *h, int rung, ildl_analysis *an, const ildl_options *o, char *msg, size_t msglen)
{
    int st = ildl_tiles_set_precision(&an->tiles, o->precision == ILDL_PREC_SINGLE);
    if (st) {
        ildl_analysis_free(an);
        ildl_msg(msg, msglen, "out of memory");
        return st;
    }
    st = ildl_api_install(h, an, o, msg, msglen);
    if (st) {
        if (h->bstate) (void)rung_factor(h); /* the old factor back, if it can be */
        return st;
    }
    h->rung = rung;
    h->info.rung = rung;
    h->cost_iters = 0; /* the rung by cost starts again for the new rung */
    h->cost_breakeven = 0.0;
    h->cost_modeled = 0;
    return rung_factor(h);
}

/* Analyse A (its current values) with rung r's options and factor it: the new analysis and
 * backend state replace h's. A factor of more entries than escalation_max_bytes allows is
 * refused before anything of its size is allocated (ILDL_ERR_OUT_OF_MEMORY, *needed = its
 * entries). On a failure before the factorization h keeps its analysis and factor; where the
 * backend's state for them cannot be made again (the new one was tried first, for room on the
 * device), h has none and is not factored: ildl_factor makes it again. */
static int switch_rung(ildl_handle *h, int rung, int64_t *needed, char *msg, size_t msglen)
{
    ildl_options o;
    rung_options(&h->user_opt, rung, &o);
    ildl_analysis an;
    int st = rung_analyse(h, rung, ildl_api_max_entries(h, &o), &o, needed, &an, msg, msglen);
    if (st) return st;
    return rung_install(h, rung, &an, &o, msg, msglen);
}

/* ------------------------------------------------------------------ the rung by cost */

/* After a solve that converged in k iterations: where options.rung_choice is COST and a
 * complete rung lies above an ILDL rung, k is kept for the next ildl_factor or ildl_solve
 * (cost_switch), unless an earlier model found that it would not pay below cost_breakeven. */
static void cost_note(ildl_handle *h, int k)
{
    if (h->user_opt.rung_choice != ILDL_RUNG_CHOICE_COST || h->user_opt.escalation < ILDL_ESCALATE_COMPLETE ||
        h->rung >= 2 || h->opt.method != ILDL_METHOD_ILDL || next_rung(h) < 0)
        return;
    if (k > 0 && (double)k > h->cost_breakeven) h->cost_iters = k;
}

int ildl_api_cost_switch(ildl_handle *h)
{
    int k = h->cost_iters, r = h->rung;
    h->cost_iters = 0;
    if (k <= 0) return 0;
    int thr = h->opt.num_threads > 0 ? h->opt.num_threads : ildl_max_threads();
    ildl_step_cost cr, c2;
    ildl_cost_model(&h->an, h->opt.drop_tol, h->backend, thr, &cr);
    double step_r = cr.factor + (double)(k + 1) * cr.iteration, t_an = ildl_cost_analysis(h->A.rowptr[h->A.n]);
    if (t_an > COST_HORIZON * step_r) { /* the iterations from which the analysis is worth trying */
        h->cost_breakeven = (t_an / COST_HORIZON - cr.factor) / cr.iteration - 1.0;
        h->cost_modeled = 0;
        ildl_api_log(h, 1, "rung by cost: rung %d's step (%d iterations) models %.3g s, the complete rung's "
                     "analysis %.3g s: not tried below %.0f iterations", r, k, step_r, t_an, h->cost_breakeven);
        return 0;
    }
    ildl_options o;
    rung_options(&h->user_opt, 2, &o);
    ildl_analysis an;
    int64_t needed = 0;
    char m[sizeof h->err] = "";
    double t0 = ildl_wtime();
    int st = rung_analyse(h, 2, ildl_api_max_entries(h, &o), &o, &needed, &an, m, sizeof m);
    if (st) { /* refused for the memory budget, or failed: not tried again on this rung */
        h->cost_breakeven = INFINITY;
        ildl_api_log(h, 1, "rung by cost: the complete rung's analysis failed (%s)", m);
        return 0;
    }
    ildl_cost_model(&an, o.drop_tol, h->backend, thr, &c2);
    double step_2 = c2.factor + COST_COMPLETE_ITERATIONS * c2.iteration;
    /* past an earlier model's break-even the complete rung pays (an analysis of other values may
     * model a little differently: not a second refusal at the cost of a second analysis) */
    int past = h->cost_modeled && isfinite(h->cost_breakeven) && (double)k > h->cost_breakeven;
    if (!past && !(step_2 < COST_SHARE * step_r)) {
        h->cost_breakeven = (step_2 / COST_SHARE - cr.factor) / cr.iteration - 1.0;
        h->cost_modeled = 1;
        ildl_analysis_free(&an);
        ildl_api_log(h, 1, "rung by cost: rung %d's step (%d iterations) models %.3g s, the complete rung's %.3g s: "
                     "rung %d kept below %.0f iterations", r, k, step_r, step_2, r, h->cost_breakeven);
        return 0;
    }
    ildl_api_log(h, 1, "rung by cost: rung %d's step (%d iterations) models %.3g s, the complete rung's %.3g s "
                 "(%lld entries): rung 2", r, k, step_r, step_2, (long long)an.tiles.total_cap);
    st = rung_install(h, 2, &an, &o, m, sizeof m);
    h->info.rung_seconds[2] = ildl_wtime() - t0;
    if (st == ILDL_SUCCESS) return 1;
    ildl_api_log(h, 1, "rung by cost: rung 2 failed (%s); rung %d again", m, r);
    if (h->rung == 2) { /* its factorization failed: rung r's analysis and factor back */
        int64_t nd = 0;
        char m2[sizeof h->err] = "";
        (void)switch_rung(h, r, &nd, m2, sizeof m2);
    }
    h->cost_breakeven = INFINITY;
    return 0;
}

/* Before a solve: the rung by cost where the last converged solve left iterations to model;
 * ILDL_SUCCESS, or ILDL_ERR_CALL_ORDER (message set) where rung 2 failed and the current rung's
 * factor could not be made again. */
static int cost_before_solve(ildl_handle *h)
{
    if (h->cost_iters <= 0) return ILDL_SUCCESS;
    int prev = h->rung;
    (void)ildl_api_cost_switch(h);
    if (h->factored) return ILDL_SUCCESS;
    return ildl_api_fail(h, ILDL_ERR_CALL_ORDER, "the complete rung (by cost) failed and rung %d could not be made "
                         "again: call ildl_factor", prev);
}

static void progress_cb(void *ctx, int it, double est)
{
    ildl_handle *h = ctx;
    h->iter_last = it;
    it += h->iter_base; /* numbered across the ladder's rungs: 1, 2, ... of the whole solve */
    if (h->opt.progress_fn) h->opt.progress_fn(h->opt.progress_ctx, it, est);
    if (h->opt.verbosity >= 2) ildl_api_log(h, 2, "sqmr %5d  est. rel. residual %.3e", it, est);
}

/* The right-hand side's scaling: 0 when max |b_i| (bmax) is 0 or within [2^-256, 2^256], where
 * SQMR's inner products cannot over- or underflow; otherwise the e of ildl_nrm2_exponent, and
 * the solve runs on b * 2^-e (exact), its x scaled back by 2^e. */
static int rhs_exponent(double bmax)
{
    if (bmax == 0.0 || (bmax >= 0x1p-256 && bmax <= 0x1p256)) return 0;
    return ildl_nrm2_exponent(bmax);
}

/* *res = ||b - A x|| / ||b|| on the user's system (A as last factored) for the returned x,
 * computed as ||bs - A xs|| / ||bs|| with bs = b 2^-e and xs = x 2^-e (the same ratio, in
 * exact arithmetic; in floating point A x itself may overflow where A xs does not, and b - A x
 * be subnormal where bs - A xs is not). ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
static int user_residual(const ildl_handle *h, const double *bs, int e, const double *x, double *res)
{
    int32_t n = h->A.n;
    double *lanes = ildl_malloc(sizeof(double) * ILDL_DOT_LANES), *w = ildl_malloc(sizeof(double) * (size_t)n);
    double *xs = ildl_malloc(sizeof(double) * (size_t)n);
    if (!lanes || !w || !xs) {
        free(lanes);
        free(w);
        free(xs);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    for (int32_t i = 0; i < n; i++) xs[i] = ildl_scale_pow2(x[i], -e);
    ildl_csr_matvec(&h->A, xs, w);
    for (int32_t i = 0; i < n; i++) w[i] = bs[i] - w[i];
    *res = ildl_nrm2_fixed(n, w, lanes) / ildl_nrm2_fixed(n, bs, lanes);
    free(lanes);
    free(w);
    free(xs);
    return ILDL_SUCCESS;
}

/* The solve on b * 2^-e (x0 * 2^-e), its x scaled back and its residual recomputed on the
 * user's b: SQMR on a right-hand side whose norm would over- or underflow in its inner
 * products. The result and status are those of the user's system. When the iterate, scaled
 * back, exceeds the doubles (a singular or nearly singular A at b's scale), x is the initial
 * guess instead (*overflow = 1), or 0 (*overflow = 2) without one or where the initial guess's
 * own residual exceeds the doubles, with its residual. */
static int solve_scaled(ildl_handle *h, const double *b, double *x, int e, const ildl_sqmr_params *prm,
                        ildl_sqmr_result *res, int *overflow, char *msg, size_t msglen)
{
    int32_t n = h->A.n;
    size_t bytes = sizeof(double) * (size_t)n;
    double *bs = ildl_malloc(bytes), *x0 = prm->use_x0 ? ildl_malloc(bytes) : NULL;
    *overflow = 0;
    if (!bs || (prm->use_x0 && !x0)) {
        free(bs);
        free(x0);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    for (int32_t i = 0; i < n; i++) bs[i] = ildl_scale_pow2(b[i], -e);
    ildl_sqmr_params p = *prm;
    if (x0) {
        memcpy(x0, x, bytes);
        int finite = 1;
        for (int32_t i = 0; i < n; i++) {
            x[i] = ildl_scale_pow2(x[i], -e);
            finite &= ildl_isfinite(x[i]);
        }
        /* an x0 beyond the doubles at b's scale has a residual beyond them too: of no use, as
         * an x0 whose A x0 overflows (sqmr.c), so the solve starts from 0 */
        if (!finite) p.use_x0 = 0;
    }
    int st = h->ops->sqmr(h->bstate, bs, x, &p, res, msg, msglen);
    double r = 0.0;
    if (st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED || st == ILDL_ERR_BREAKDOWN) {
        int finite = 1;
        for (int32_t i = 0; i < n; i++) {
            x[i] = ildl_scale_pow2(x[i], e);
            finite &= ildl_isfinite(x[i]);
        }
        int st2 = finite ? user_residual(h, bs, e, x, &r) : ILDL_SUCCESS;
        if (!st2 && (!finite || !ildl_isfinite(r))) {
            *overflow = 2;
            if (x0) {
                memcpy(x, x0, bytes);
                st2 = user_residual(h, bs, e, x, &r);
                if (!st2 && ildl_isfinite(r)) *overflow = 1;
            }
            if (*overflow == 2) { /* x = 0: the residual is b's, 1 */
                memset(x, 0, bytes);
                st2 = user_residual(h, bs, e, x, &r);
            }
            if (st == ILDL_SUCCESS) st = ILDL_ERR_NOT_CONVERGED;
        }
        if (st2) {
            ildl_msg(msg, msglen, "out of memory");
            st = st2;
        }
    } else if (x0) {
        memcpy(x, x0, bytes); /* refused: x as given */
    }
    free(bs);
    free(x0);
    if (st != ILDL_SUCCESS && st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN) return st;
    res->true_residual = r;
    res->converged = r <= prm->tol;
    if (res->converged && st != ILDL_SUCCESS) st = ILDL_SUCCESS;
    if (!res->converged && st == ILDL_SUCCESS) st = ILDL_ERR_NOT_CONVERGED;
    return st;
}

/* One SQMR solve on the current factor (b scaled where it needs to be): status, result, and
 * whether the iterate overflowed (1: x is the initial guess, 2: x = 0). */
static int solve_rung(ildl_handle *h, const double *b, double *x, int e, const ildl_sqmr_params *prm,
                      ildl_sqmr_result *res, int *overflow, char *msg, size_t msglen)
{
    memset(res, 0, sizeof *res);
    *overflow = 0;
    msg[0] = 0;
    if (e) return solve_scaled(h, b, x, e, prm, res, overflow, msg, msglen);
    return h->ops->sqmr(h->bstate, b, x, prm, res, msg, msglen);
}

/* A solve's SQMR parameters from h's options (progress through progress_cb), and the per-rung
 * info of the last solve cleared. */
static ildl_sqmr_params solve_begin(ildl_handle *h)
{
    ildl_sqmr_params prm = {
        .tol = h->opt.tol,
        .max_iter = h->opt.max_iter,
        .check_every = h->opt.check_every,
        .use_x0 = h->opt.use_initial_guess,
        .progress = (h->opt.progress_fn || h->opt.verbosity >= 2) ? progress_cb : NULL,
        .progress_ctx = h,
    };
    for (int r = 0; r < ILDL_MAX_RUNGS; r++) {
        h->info.rung_iterations[r] = -1;
        h->info.rung_factor_nnz[r] = -1;
        h->info.rung_seconds[r] = 0.0;
    }
    return prm;
}

/* Take the ladder's next rung `next` above h's (its SQMR having failed), within the time and
 * memory budgets: 1 when h has its factor, else 0 with why[] saying what stopped the ladder
 * (h keeps the previous rung's factor where it can; *st and msg become a new error where it
 * cannot). */
static int climb(ildl_handle *h, int next, double t0, double *t_rung, const ildl_sqmr_result *res, int *st, char *msg,
                 size_t msglen, char *why, size_t whylen)
{
    ildl_info *I = &h->info;
    int r = h->rung;
    double spent = ildl_wtime() - t0, limit = h->user_opt.escalation_max_seconds;
    if (limit > 0.0 && spent >= limit) {
        snprintf(why, whylen, "; rung %d not tried: %.3g s spent of escalation_max_seconds = %g", next, spent, limit);
        return 0;
    }
    ildl_api_log(h, 1, "ladder: rung %d did not converge (true relative residual %.3e after %d iterations%s); "
                 "rung %d", r, res->true_residual, res->iterations, res->stagnated ? ", stagnated" : "", next);
    *t_rung = ildl_wtime(); /* the next rung's time starts with its analysis */
    char m[sizeof h->err] = "";
    int64_t needed = 0;
    int st2 = switch_rung(h, next, &needed, m, sizeof m);
    I->rung_seconds[next] = ildl_wtime() - *t_rung;
    if (st2 == ILDL_ERR_OUT_OF_MEMORY && needed > 0) I->rung_factor_nnz[next] = needed;
    if (st2 && !h->factored && h->rung != next) {
        snprintf(why, whylen, "; rung %d failed (%.300s) and rung %d's factor could not be restored", next, m, r);
        return 0;
    }
    if (st2 && h->rung == next) { /* its factorization failed: rung r's factor back */
        char m2[sizeof h->err] = "";
        int64_t nd = 0;
        int st3 = switch_rung(h, r, &nd, m2, sizeof m2);
        snprintf(why, whylen, "; rung %d's factorization failed (%.300s)%s", next, h->err,
                 st3 ? ", and rung's factor could not be restored" : "");
        if (st3) {
            *st = st3;
            snprintf(msg, msglen, "%s", m2);
        }
        return 0;
    }
    if (st2 == ILDL_ERR_OUT_OF_MEMORY && needed > 0) {
        snprintf(why, whylen, "; rung %d refused: its factor needs %lld entries (%.2f GiB), more than "
                 "escalation_max_bytes allows (%.2f GiB)", next, (long long)needed,
                 (double)needed * ildl_api_entry_bytes(&h->opt) / 1073741824.0, ildl_api_budget_bytes(h) / 1073741824.0);
        return 0;
    }
    if (st2) {
        snprintf(why, whylen, "; rung %d refused: %.300s", next, m);
        return 0;
    }
    ildl_api_log(h, 1, "ladder: rung %d factored: %lld entries (%.3f s)", next, (long long)I->factor_nnz,
                 I->rung_seconds[next]);
    return 1;
}

int ildl_api_solve(ildl_handle *h, const double *b, double *x)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    if (!b || !x) return ildl_api_fail(h, ILDL_ERR_NULL_ARGUMENT, "b and x must not be NULL");
    if (b == x) return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "x must not alias b");
    if (!h->factored) return ildl_api_fail(h, ILDL_ERR_CALL_ORDER, "ildl_solve called before a successful ildl_factor");
    int32_t n = h->A.n;
    double bmax = 0.0, tlap = ildl_wtime();
    for (int32_t i = 0; i < n; i++) {
        if (!isfinite(b[i])) return ildl_api_fail(h, ILDL_ERR_NAN_INF, "b[%d] = %g", (int)i, b[i]);
        if (fabs(b[i]) > bmax) bmax = fabs(b[i]);
    }
    if (h->opt.use_initial_guess)
        for (int32_t i = 0; i < n; i++)
            if (!isfinite(x[i])) return ildl_api_fail(h, ILDL_ERR_NAN_INF, "initial guess x[%d] = %g", (int)i, x[i]);
    ildl_profile_lap(&tlap, "solve: b checked");
    double t0 = ildl_wtime(); /* the solve's time includes a change of rung by cost, as the rung's */
    int cs = cost_before_solve(h); /* the last solve's iterations: the complete rung may be cheaper */
    if (cs) return cs;
    ildl_sqmr_params prm = solve_begin(h);
    ildl_info *I = &h->info;
    /* the ladder restarts from the caller's x: kept only where a rung may follow */
    double *x0 = NULL;
    if (prm.use_x0 && next_rung(h) >= 0) {
        x0 = ildl_malloc(sizeof(double) * (size_t)n);
        if (!x0) return ildl_api_fail(h, ILDL_ERR_OUT_OF_MEMORY, "out of memory");
        memcpy(x0, x, sizeof(double) * (size_t)n);
    }
    ildl_sqmr_result res;
    int e = rhs_exponent(bmax), st, overflow = 0;
    char msg[sizeof h->err] = "", why[sizeof h->err] = ""; /* why: what stopped the ladder */ /* not h->err itself: ildl_api_fail() formats into it */
    double t_rung = t0;
    int total = 0; /* SQMR iterations over the rungs */
    h->iter_base = h->iter_last = 0;
    for (;;) {
        h->iter_base += h->iter_last; /* continue after what the previous rung reported */
        h->iter_last = 0;
        /* where a higher rung may follow, a stagnating SQMR stops early (krylov/sqmr.h) */
        prm.stall_window = next_rung(h) >= 0 ? ILDL_SQMR_STALL_WINDOW : 0;
        double tl = ildl_wtime();
        st = solve_rung(h, b, x, e, &prm, &res, &overflow, msg, sizeof msg);
        ildl_profile_lap(&tl, "solve: rung %d", h->rung);
        int r = h->rung;
        I->rung_iterations[r] = res.iterations;
        total += res.iterations;
        I->rung_factor_nnz[r] = I->factor_nnz;
        I->rung_seconds[r] = ildl_wtime() - t_rung; /* since its analysis began (rung 0: its SQMR) */
        if (st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN) break;
        int next = next_rung(h);
        if (next < 0) break;
        if (!climb(h, next, t0, &t_rung, &res, &st, msg, sizeof msg, why, sizeof why)) break;
        if (x0) memcpy(x, x0, sizeof(double) * (size_t)n);
    }
    free(x0);
    I->iterations = total;
    I->converged = res.converged;
    I->true_residual = res.true_residual;
    I->estimated_residual = res.est_residual;
    I->solve_seconds = ildl_wtime() - t0;
    I->iterate_seconds = res.iterate_seconds;
    ildl_api_log(h, 1, "solve: %s after %d iterations (%d on rung %d), true relative residual %.3e (%.3f s)",
            res.converged ? "converged" : "NOT converged", total, res.iterations, h->rung, res.true_residual,
            I->solve_seconds);
    if (st == ILDL_SUCCESS) cost_note(h, res.iterations);
    if (st == ILDL_ERR_NOT_CONVERGED && overflow)
        ildl_api_fail(h, st, "the iterate exceeds the largest double at b's scale (is A singular?): x is the %s, true "
             "relative residual %.3e%s", overflow == 1 ? "initial guess" : "zero vector", res.true_residual, why);
    else if (st == ILDL_ERR_NOT_CONVERGED)
        ildl_api_fail(h, st, "true relative residual %.3e > tol %.1e after %d iterations%s%s", res.true_residual,
             h->opt.tol, res.iterations, res.stagnated ? " (stagnated)" : "", why);
    else if (st == ILDL_ERR_BREAKDOWN)
        ildl_api_fail(h, st, "SQMR breakdown after %d iterations (true relative residual %.3e)%s",
             res.iterations, res.true_residual, why);
    else if (st)
        ildl_api_fail(h, st, "%s", msg[0] ? msg : ildl_strerror(st));
    return st;
}

/* The SQMR solves of ildl_solve_multi on the current rung for the columns listed (their
 * exponents e[]): the columns whose right-hand side needs no scaling in lockstep, up to
 * ILDL_SQMR_MULTI_MAX at a time, the others one by one. res[], st[] and overflow[] are indexed by
 * column. Returns an error of the call (msg set), else ILDL_SUCCESS. */
static int solve_columns(ildl_handle *h, const int *list, int m, const double *B, int64_t ldb, double *X,
                         int64_t ldx, const int *e, const ildl_sqmr_params *prm, ildl_sqmr_result *res, int *st,
                         int *overflow, char *msg, size_t msglen)
{
    const double *bp[ILDL_SQMR_MULTI_MAX];
    double *xp[ILDL_SQMR_MULTI_MAX];
    int cols[ILDL_SQMR_MULTI_MAX], cst[ILDL_SQMR_MULTI_MAX];
    ildl_sqmr_result cres[ILDL_SQMR_MULTI_MAX];
    int nc = 0;
    for (int a = 0; a <= m; a++) {
        int j = a < m ? list[a] : -1;
        if (j >= 0 && e[j] != 0) {
            int s = solve_rung(h, B + (int64_t)j * ldb, X + (int64_t)j * ldx, e[j], prm, &res[j], &overflow[j], msg,
                               msglen);
            st[j] = s;
            if (s && s != ILDL_ERR_NOT_CONVERGED && s != ILDL_ERR_BREAKDOWN) return s;
            continue;
        }
        if (j >= 0) {
            cols[nc] = j;
            bp[nc] = B + (int64_t)j * ldb;
            xp[nc] = X + (int64_t)j * ldx;
            nc++;
        }
        if (nc == ILDL_SQMR_MULTI_MAX || (j < 0 && nc > 0)) {
            msg[0] = 0;
            int s = h->ops->sqmr_multi(h->bstate, nc, bp, xp, prm, cres, cst, msg, msglen);
            for (int c = 0; c < nc; c++) {
                res[cols[c]] = cres[c];
                st[cols[c]] = cst[c];
                overflow[cols[c]] = 0;
            }
            if (s) return s;
            nc = 0;
        }
    }
    return ILDL_SUCCESS;
}

static int is_failure(int st) { return st == ILDL_ERR_NOT_CONVERGED || st == ILDL_ERR_BREAKDOWN; }

int ildl_api_solve_multi(ildl_handle *h, int k, const double *B, int64_t ldb, double *X, int64_t ldx,
                         ildl_column_result *results)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    h->err[0] = 0;
    int32_t n = h->A.n;
    if (k < 0) return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "k = %d, must be >= 0", k);
    if (ldb < n || ldx < n)
        return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "ldb = %lld and ldx = %lld must be >= n = %d", (long long)ldb,
                             (long long)ldx, (int)n);
    if (k > 0 && (!B || !X)) return ildl_api_fail(h, ILDL_ERR_NULL_ARGUMENT, "B and X must not be NULL");
    if (!h->factored)
        return ildl_api_fail(h, ILDL_ERR_CALL_ORDER, "ildl_solve_multi called before a successful ildl_factor");
    if (k == 0) return ILDL_SUCCESS;
    uintptr_t b0 = (uintptr_t)B, b1 = (uintptr_t)(B + (int64_t)(k - 1) * ldb + n);
    uintptr_t x0a = (uintptr_t)X, x1a = (uintptr_t)(X + (int64_t)(k - 1) * ldx + n);
    if (b0 < x1a && x0a < b1) return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "X must not overlap B");
    int use_x0 = h->opt.use_initial_guess;
    for (int j = 0; j < k; j++) {
        const double *b = B + (int64_t)j * ldb, *x = X + (int64_t)j * ldx;
        for (int32_t i = 0; i < n; i++)
            if (!isfinite(b[i])) return ildl_api_fail(h, ILDL_ERR_NAN_INF, "B[%d, column %d] = %g", (int)i, j, b[i]);
        if (use_x0)
            for (int32_t i = 0; i < n; i++)
                if (!isfinite(x[i]))
                    return ildl_api_fail(h, ILDL_ERR_NAN_INF, "initial guess X[%d, column %d] = %g", (int)i, j, x[i]);
    }
    double t0 = ildl_wtime();
    int cs = cost_before_solve(h); /* the last solve's iterations: the complete rung may be cheaper */
    if (cs) return cs;
    ildl_sqmr_params prm = solve_begin(h);
    ildl_info *I = &h->info;
    size_t kk = (size_t)k;
    int *e = ildl_malloc(sizeof(int) * kk * 5), *list = NULL;
    ildl_sqmr_result *res = ildl_malloc(sizeof(ildl_sqmr_result) * kk);
    double *X0 = NULL;
    if (use_x0 && next_rung(h) >= 0) X0 = ildl_malloc(sizeof(double) * (size_t)n * kk);
    if (!e || !res || (use_x0 && next_rung(h) >= 0 && !X0)) {
        free(e);
        free(res);
        free(X0);
        return ildl_api_fail(h, ILDL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    int *cst = e + kk, *overflow = cst + kk, *total = overflow + kk, *crung = total + kk;
    list = ildl_malloc(sizeof(int) * kk);
    if (!list) {
        free(e);
        free(res);
        free(X0);
        return ildl_api_fail(h, ILDL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int j = 0; j < k; j++) {
        const double *b = B + (int64_t)j * ldb;
        double bmax = 0.0;
        for (int32_t i = 0; i < n; i++)
            if (fabs(b[i]) > bmax) bmax = fabs(b[i]);
        e[j] = rhs_exponent(bmax);
        cst[j] = ILDL_SUCCESS;
        overflow[j] = total[j] = 0;
        list[j] = j;
        if (X0) memcpy(X0 + (size_t)n * j, X + (int64_t)j * ldx, sizeof(double) * (size_t)n);
    }
    memset(res, 0, sizeof(ildl_sqmr_result) * kk);
    int m = k, st = ILDL_SUCCESS;
    char msg[sizeof h->err] = "", why[sizeof h->err] = "";
    double t_rung = t0, iterate = 0.0;
    h->iter_base = h->iter_last = 0;
    for (;;) {
        h->iter_base += h->iter_last;
        h->iter_last = 0;
        prm.stall_window = next_rung(h) >= 0 ? ILDL_SQMR_STALL_WINDOW : 0;
        msg[0] = 0;
        st = solve_columns(h, list, m, B, ldb, X, ldx, e, &prm, res, cst, overflow, msg, sizeof msg);
        int r = h->rung, most = 0, worst = list[0];
        double it_s = 0.0;
        for (int a = 0; a < m; a++) {
            int j = list[a];
            total[j] += res[j].iterations;
            crung[j] = r;
            if (res[j].iterations > most) most = res[j].iterations;
            if (res[j].iterate_seconds > it_s) it_s = res[j].iterate_seconds;
            if (res[j].true_residual > res[worst].true_residual) worst = j;
        }
        iterate += it_s;
        I->rung_iterations[r] = most;
        I->rung_factor_nnz[r] = I->factor_nnz;
        I->rung_seconds[r] = ildl_wtime() - t_rung;
        if (st) break; /* an error of the call */
        int nf = 0;
        for (int a = 0; a < m; a++)
            if (is_failure(cst[list[a]])) list[nf++] = list[a];
        if (nf == 0) break;
        int next = next_rung(h);
        if (next < 0) break;
        if (!climb(h, next, t0, &t_rung, &res[worst], &st, msg, sizeof msg, why, sizeof why)) break;
        m = nf;
        for (int a = 0; a < m; a++) {
            int j = list[a];
            if (X0) memcpy(X + (int64_t)j * ldx, X0 + (size_t)n * j, sizeof(double) * (size_t)n);
        }
    }
    /* the call's outcome: its columns' */
    int nfail = 0, first = -1, any_nc = 0, most = 0;
    double worst_true = 0.0, worst_est = 0.0;
    for (int j = 0; j < k; j++) {
        if (is_failure(cst[j])) {
            if (first < 0) first = j;
            nfail++;
            any_nc |= cst[j] == ILDL_ERR_NOT_CONVERGED;
        }
        if (total[j] > most) most = total[j];
        if (res[j].true_residual > worst_true) worst_true = res[j].true_residual;
        if (res[j].est_residual > worst_est) worst_est = res[j].est_residual;
        if (results) {
            memset(&results[j], 0, sizeof results[j]);
            results[j].status = cst[j];
            results[j].iterations = total[j];
            results[j].true_residual = res[j].true_residual;
            results[j].estimated_residual = res[j].est_residual;
            results[j].rung = crung[j];
        }
    }
    I->iterations = most;
    I->converged = nfail == 0 && st == ILDL_SUCCESS;
    I->true_residual = worst_true;
    I->estimated_residual = worst_est;
    I->solve_seconds = ildl_wtime() - t0;
    I->iterate_seconds = iterate;
    ildl_api_log(h, 1, "solve_multi: %d of %d columns converged, at most %d iterations, largest true relative "
                 "residual %.3e (%.3f s)", k - nfail, k, most, worst_true, I->solve_seconds);
    if (st == ILDL_SUCCESS && nfail == 0) {
        int last = 0; /* the most iterations a column took on the last rung */
        for (int a = 0; a < m; a++)
            if (res[list[a]].iterations > last) last = res[list[a]].iterations;
        cost_note(h, last);
    }
    if (st) {
        ildl_api_fail(h, st, "%s", msg[0] ? msg : ildl_strerror(st));
    } else if (nfail > 0) {
        st = any_nc ? ILDL_ERR_NOT_CONVERGED : ILDL_ERR_BREAKDOWN;
        const ildl_sqmr_result *f = &res[first];
        ildl_api_fail(h, st, "%d of %d columns not solved; column %d: %s after %d iterations, true relative residual "
                      "%.3e > tol %.1e%s%s%s", nfail, k, first,
                      cst[first] == ILDL_ERR_BREAKDOWN ? "SQMR breakdown" : "not converged", total[first],
                      f->true_residual, h->opt.tol, f->stagnated ? " (stagnated)" : "",
                      overflow[first] ? " (the iterate exceeds the largest double at b's scale)" : "", why);
    }
    free(e);
    free(res);
    free(X0);
    free(list);
    return st;
}
