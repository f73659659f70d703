#include "analyse/analyse.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "analyse/match.h"
#include "analyse/order.h"
#include "analyse/scale.h"
#include "core/util.h"

static int match_scale_memo(const ildl_csr *A, ildl_match_memo *memo, double *scale, int32_t *pair,
                            int32_t *n_unmatched);

int ildl_analyse_rescale(const ildl_csr *A, const ildl_options *o, ildl_match_memo *memo, double *scale)
{
    switch (o->scaling) {
    case ILDL_SCALING_NONE:
        for (int32_t i = 0; i < A->n; i++) scale[i] = 1.0;
        return ILDL_SUCCESS;
    case ILDL_SCALING_EQUILIBRATE:
        return ildl_scale_equilibrate(A, 20, 1e-3, scale);
    case ILDL_SCALING_MATCHING: {
        /* New values: a fresh matching and scaling; the pairs found by ildl_analyse (and the
         * ordering built around them) are kept, so they may no longer be this matching's. */
        int32_t unmatched, *pair = ildl_malloc(sizeof(int32_t) * (size_t)A->n);
        if (!pair) return ILDL_ERR_OUT_OF_MEMORY;
        int st = match_scale_memo(A, memo, scale, pair, &unmatched);
        free(pair);
        return st;
    }
    default:
        return ILDL_ERR_NOT_SUPPORTED;
    }
}

static int check_options(const ildl_options *o, char *msg, size_t msglen)
{
    if (o->max_block_size < 1 || o->max_block_size > ILDL_TILE) {
        ildl_msg(msg, msglen, "max_block_size = %d, must be in 1..%d", o->max_block_size, ILDL_TILE);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (o->fill_level < 0) {
        ildl_msg(msg, msglen, "fill_level = %d, must be >= 0", o->fill_level);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (o->blocking != ILDL_BLOCKING_RB && o->blocking != ILDL_BLOCKING_BR && o->blocking != ILDL_BLOCKING_SN) {
        ildl_msg(msg, msglen, "unknown blocking strategy %d", o->blocking);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (o->ordering < ILDL_ORDER_AMD || o->ordering > ILDL_ORDER_GMC_FILL) {
        ildl_msg(msg, msglen, "unknown ordering %d", o->ordering);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (o->scaling < ILDL_SCALING_NONE || o->scaling > ILDL_SCALING_MATCHING) {
        ildl_msg(msg, msglen, "unknown scaling %d", o->scaling);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (!(o->block_threshold >= 0.0 && o->block_threshold <= 1.0) ||
        !(o->block_decay > 0.0 && o->block_decay <= 1.0)) {
        ildl_msg(msg, msglen, "block_threshold must be in [0,1] and block_decay in (0,1]");
        return ILDL_ERR_INVALID_OPTION;
    }
    return ILDL_SUCCESS;
}

int ildl_analyse_after_blocking(const ildl_csr *A, const int64_t *src, const ildl_options *o,
                                  int64_t max_entries, const int32_t *pair, ildl_analysis *an)
{
    int32_t n = A->n;
    int64_t *srcp = NULL;
    ildl_csr Ap = {0};
    int st = ILDL_SUCCESS;
    double t = ildl_wtime();
    if (pair) {
        an->pair_hint = ildl_malloc((size_t)n);
        if (!an->pair_hint) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
        ildl_match_pair_hint(n, pair, an->blk.perm, an->blk.nb, an->blk.bstart, an->pair_hint);
    }
    srcp = ildl_malloc(sizeof(int64_t) * (size_t)A->rowptr[n]);
    if (!srcp) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    /* srcp[q]: the user's index of the permuted matrix's entry q */
    st = ildl_csr_permute_src(A, an->blk.perm, src, &Ap, srcp);
    if (st) goto cleanup;
    an->t_permute = ildl_wtime() - t;

    t = ildl_wtime();
    st = ildl_coarse_build(&Ap, an->blk.nb, an->blk.bstart, o->fill_level, &an->coarse);
    if (st) goto cleanup;
    an->t_fill = ildl_wtime() - t;
    if (max_entries > 0 && !(o->fill_factor > 0.0)) {
        /* unlimited capacity: every tile dense, so the factor's entries are known here, before
         * the level sets and the tile store (whose per-tile arrays are large too) */
        int64_t need = 0;
        const int32_t *bs = an->blk.bstart;
        for (int32_t i = 0; i < an->blk.nb; i++)
            for (int64_t p = an->coarse.row_ptr[i]; p < an->coarse.row_ptr[i + 1]; p++) {
                int32_t j = an->coarse.col[p];
                need += (int64_t)(bs[i + 1] - bs[i]) * (int64_t)(bs[j + 1] - bs[j]);
            }
        if (need > max_entries) {
            an->needed_entries = need;
            st = ILDL_ERR_OUT_OF_MEMORY;
            goto cleanup;
        }
    }
    t = ildl_wtime();
    st = ildl_levels_compute(&an->coarse, &an->levels);
    if (st) goto cleanup;
    an->t_levels = ildl_wtime() - t;
    t = ildl_wtime();
    st = ildl_tiles_build(&Ap, srcp, an->blk.perm, an->blk.nb, an->blk.bstart, &an->coarse,
                          &an->levels, o->fill_factor, max_entries, &an->tiles);
    if (st == ILDL_ERR_OUT_OF_MEMORY && an->tiles.total_cap > 0) an->needed_entries = an->tiles.total_cap;
    if (st) goto cleanup;
    an->t_tiles = ildl_wtime() - t;

cleanup:
    free(srcp);
    ildl_csr_free(&Ap);
    return st;
}

/* Speculate (analyse_br_auto) only with at least this many threads: the colouring's analysis
 * runs on one thread fewer when the threads take every core, which costs it 1/(threads - 1)
 * and saves AMD's time (0.07 s of a 0.3 s setup on control70 at 16 threads); with 2 threads
 * it made the setup 40% slower. */
#define AUTO_SPECULATE_MIN_THREADS 8

/* AUTO's order of the block graph (AMD, or METIS on a near path) and its depth after the fill:
 * the yardstick of the colouring rule. Run on a thread of its own beside the colouring. */
typedef struct {
    const ildl_br_graph *g;
    int fill_level;
    int32_t *perm;   /* [g->nv] out */
    int used;        /* out: ILDL_ORDER_AMD or ILDL_ORDER_METIS */
    int32_t depth;   /* out: perm's depth after the fill, -1 if unknown */
    int status;      /* out */
    char msg[256];   /* the ordering's message (unused: the caller reports the status) */
} auto_order_job;

static void *auto_order_run(void *arg)
{
    auto_order_job *j = arg;
    ildl_set_threads(1); /* this thread's own setting: the caller's threads are busy */
    const ildl_br_graph *g = j->g;
    j->depth = -1;
    j->status = ildl_order_graph(g->nv, g->p, g->i, ILDL_ORDER_AUTO, j->fill_level, j->perm, &j->used,
                                 j->msg, sizeof j->msg);
    if (!j->status) j->depth = ildl_order_depth_after_fill(g->nv, g->p, g->i, j->perm, j->fill_level);
    return NULL;
}

/* BR with ordering AUTO where the colouring rule applies (an->blk and the rest into an).
 * The rule needs AMD's depth, but AMD is sequential library code and on large block graphs
 * the colouring usually wins: so AMD runs on a thread of its own while the other threads
 * colour the graph and carry the whole analysis on with the colouring's order. The rule then
 * keeps that analysis or throws it away and analyses AMD's order: the result is exactly
 * ildl_block_br's either way, only AMD's time is hidden when the colouring wins.
 * *speculated: 0 if no thread could be started (nothing done then: the caller goes the
 * ordinary way); 1 if done, an complete or the failure's msg set (else the caller's generic
 * one), as ildl_analyse's would be. */
static int analyse_br_auto(const ildl_csr *A, const int64_t *src, const ildl_options *o, int64_t max_entries,
                           const int32_t *pair, const ildl_br_graph *g, ildl_analysis *an,
                           int *speculated, char *msg, size_t msglen)
{
    int st = ILDL_SUCCESS, spec_st = ILDL_ERR_INTERNAL;
    ildl_analysis spec = {0};
    ildl_colouring c = {0};
    auto_order_job job = {.g = g, .fill_level = o->fill_level};
    pthread_t th;
    *speculated = 0;
    int threads = ildl_max_threads(), beside = ildl_threads_beside_helper();
    if (threads < AUTO_SPECULATE_MIN_THREADS) return ILDL_SUCCESS;
    job.perm = ildl_malloc(sizeof(int32_t) * (size_t)g->nv);
    c.perm = ildl_malloc(sizeof(int32_t) * (size_t)g->nv);
    if (!job.perm || !c.perm || pthread_create(&th, NULL, auto_order_run, &job)) {
        free(job.perm);
        free(c.perm);
        return ILDL_SUCCESS;
    }
    *speculated = 1;
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    ildl_set_threads(beside); /* AMD's thread needs a core */
    c.status = ildl_order_gmc_fill(g->nv, g->p, g->i, o->fill_level + 1, c.perm, &c.ncolours, &c.nhubs);
    an->t_order_block += ildl_wtime() - tp;
    ildl_profile_lap(&tp, "AUTO colouring (beside AMD)");
    if (c.status == ILDL_SUCCESS) {
        double t = ildl_wtime();
        spec_st = ildl_block_br_expand(g, c.perm, ILDL_ORDER_GMC_FILL, &spec.blk);
        spec.t_order_block = ildl_wtime() - t;
        if (!spec_st) spec_st = ildl_analyse_after_blocking(A, src, o, max_entries, pair, &spec);
        ildl_profile_lap(&tp, "AUTO analysis of the colouring (beside AMD)");
    }
    double t0 = ildl_wtime();
    pthread_join(th, NULL);
    ildl_set_threads(threads);
    double t_wait = ildl_wtime() - t0, t_spent = ildl_wtime() - tp;
    ildl_profile_lap(&tp, "AUTO waited for AMD");
    if (job.status) { /* the ordering itself failed: as ildl_block_br would */
        ildl_msg(msg, msglen, "blocking failed (%d)", job.status);
        st = job.status;
        goto cleanup;
    }
    if (ildl_order_auto_prefers_colouring(&c, job.depth)) {
        ildl_profile_lap(&tp, "AUTO colouring rule (depth %d, colours %d + hubs %d): kept",
                         (int)job.depth, (int)c.ncolours, (int)c.nhubs);
        st = spec_st; /* the analysis of the colouring is the result, failure included */
        an->needed_entries = spec.needed_entries;
        if (!st) {
            an->blk = spec.blk; an->pair_hint = spec.pair_hint; an->coarse = spec.coarse;
            an->levels = spec.levels; an->tiles = spec.tiles;
            an->t_permute = spec.t_permute; an->t_fill = spec.t_fill;
            an->t_levels = spec.t_levels; an->t_tiles = spec.t_tiles;
            an->t_order_block += spec.t_order_block + t_wait; /* AMD's time not hidden */
            memset(&spec, 0, sizeof spec);
        }
        goto cleanup;
    }
    ildl_analysis_free(&spec);
    ildl_profile_lap(&tp, "AUTO colouring rule (depth %d, colours %d + hubs %d): AMD's order",
                     (int)job.depth, (int)c.ncolours, (int)c.nhubs);
    double t = ildl_wtime();
    st = ildl_block_br_expand(g, job.perm, job.used, &an->blk);
    an->t_order_block += t_spent + ildl_wtime() - t; /* the colouring's analysis was in vain */
    if (!st) st = ildl_analyse_after_blocking(A, src, o, max_entries, pair, an);
cleanup:
    ildl_analysis_free(&spec);
    free(job.perm);
    free(c.perm);
    return st;
}

int ildl_analyse(const ildl_csr *A, const int64_t *src, const ildl_options *o,
                 ildl_analysis *an, char *msg, size_t msglen)
{
    return ildl_analyse_within(A, src, o, 0, NULL, NULL, an, msg, msglen);
}

void ildl_match_memo_clear(ildl_match_memo *m)
{
    if (m) m->valid = 0;
}

void ildl_match_memo_free(ildl_match_memo *m)
{
    if (!m) return;
    free(m->scale);
    free(m->pair);
    memset(m, 0, sizeof *m);
}

/* The matching of A: from a valid memo, or computed (and kept in an invalid memo's arrays,
 * allocated at its first use; a memo that cannot get them stays invalid). */
static int match_scale_memo(const ildl_csr *A, ildl_match_memo *memo, double *scale, int32_t *pair,
                            int32_t *n_unmatched)
{
    int32_t n = A->n;
    if (memo && memo->valid && memo->n == n) {
        memcpy(scale, memo->scale, sizeof(double) * (size_t)n);
        memcpy(pair, memo->pair, sizeof(int32_t) * (size_t)n);
        *n_unmatched = memo->n_unmatched;
        return ILDL_SUCCESS;
    }
    int st = ildl_match_scale(A, scale, pair, n_unmatched);
    if (st || !memo) return st;
    if (memo->n != n || !memo->scale || !memo->pair) {
        ildl_match_memo_free(memo);
        memo->scale = ildl_malloc(sizeof(double) * (size_t)n);
        memo->pair = ildl_malloc(sizeof(int32_t) * (size_t)n);
        if (!memo->scale || !memo->pair) {
            ildl_match_memo_free(memo);
            return ILDL_SUCCESS; /* nothing kept: the next analysis matches again */
        }
        memo->n = n;
    }
    memcpy(memo->scale, scale, sizeof(double) * (size_t)n);
    memcpy(memo->pair, pair, sizeof(int32_t) * (size_t)n);
    memo->n_unmatched = *n_unmatched;
    memo->valid = 1;
    return ILDL_SUCCESS;
}

int ildl_analyse_within(const ildl_csr *A, const int64_t *src, const ildl_options *o, int64_t max_entries,
                        int64_t *needed, ildl_match_memo *memo, ildl_analysis *an, char *msg, size_t msglen)
{
    if (needed) *needed = 0;
    int32_t n = A->n;
    int32_t *order = NULL, *pair = NULL;
    ildl_br_graph g = {0};
    memset(an, 0, sizeof *an);
    an->n = n;
    int st = check_options(o, msg, msglen);
    if (st) return st;

    double t = ildl_wtime();
    an->scale = ildl_malloc(sizeof(double) * (size_t)n);
    if (!an->scale) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    if (o->scaling == ILDL_SCALING_MATCHING) {
        /* structural singularity is no failure: unmatched rows become 1x1 pivots, and the
         * scaling stays bounded by 1 (n_unmatched tells the caller) */
        pair = ildl_malloc(sizeof(int32_t) * (size_t)n);
        if (!pair) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
        st = match_scale_memo(A, memo, an->scale, pair, &an->n_unmatched);
    } else {
        st = ildl_analyse_rescale(A, o, NULL, an->scale);
    }
    if (st) { ildl_msg(msg, msglen, "scaling failed"); goto cleanup; }
    an->t_scale = ildl_wtime() - t;

    t = ildl_wtime();
    if (o->blocking == ILDL_BLOCKING_RB || o->blocking == ILDL_BLOCKING_SN) {
        int used = o->ordering;
        order = ildl_malloc(sizeof(int32_t) * (size_t)n);
        if (!order) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
        /* with pairs, order the graph of pairs so that RB finds every pair adjacent */
        st = ildl_match_order(A, pair, o->ordering, o->fill_level, order, &used, msg, msglen);
        if (st) goto cleanup;
        if (o->blocking == ILDL_BLOCKING_SN) {
            int over = 0;
            /* short chains merged into fewer, larger blocks (block_sn.c, perf-notes §86) */
            st = ildl_block_sn(A, order, pair, o->max_block_size, 1, max_entries, &over, &an->blk);
            if (over) { /* refused while counting the factor's entries */
                ildl_msg(msg, msglen, "the factor needs more than the %lld entries allowed", (long long)max_entries);
                goto cleanup;
            }
        } else
            st = ildl_block_rb(A, order, pair, o->max_block_size, o->block_threshold, &an->blk);
        an->blk.ordering_used = used;
    } else {
        char bmsg[256] = "";
        int speculated = 0;
        st = ildl_block_br_graph(A, pair, o->max_block_size, o->block_threshold, o->block_decay, &g);
        if (!st && o->ordering == ILDL_ORDER_AUTO && ildl_order_auto_colour_wanted(g.nv, o->fill_level)) {
            an->t_order_block = ildl_wtime() - t;
            st = analyse_br_auto(A, src, o, max_entries, pair, &g, an, &speculated, msg, msglen);
            if (speculated) goto cleanup; /* the whole analysis, or its failure (msg set) */
        }
        if (!st) st = ildl_block_br_order(&g, o->ordering, o->fill_level, &an->blk, bmsg, sizeof bmsg);
    }
    if (st) { ildl_msg(msg, msglen, "blocking failed (%d)", st); goto cleanup; }
    an->t_order_block = ildl_wtime() - t;
    st = ildl_analyse_after_blocking(A, src, o, max_entries, pair, an);

cleanup:
    ildl_analyse_refusal(st, an, max_entries, needed, msg, msglen);
    if (st && st != ILDL_ERR_INVALID_OPTION && st != ILDL_ERR_NOT_SUPPORTED && msg && !msg[0])
        ildl_msg(msg, msglen, "analyse stage failed with status %d", st);
    free(order); free(pair);
    ildl_br_graph_free(&g);
    if (st) ildl_analysis_free(an);
    return st;
}

void ildl_analyse_refusal(int st, const ildl_analysis *an, int64_t max_entries, int64_t *needed, char *msg,
                          size_t msglen)
{
    if (st != ILDL_ERR_OUT_OF_MEMORY || an->needed_entries <= 0) return;
    if (needed) *needed = an->needed_entries;
    ildl_msg(msg, msglen, "the factor needs %lld entries, more than the %lld allowed", (long long)an->needed_entries,
             (long long)max_entries);
}

void ildl_analysis_free(ildl_analysis *an)
{
    if (!an) return;
    free(an->scale);
    free(an->pair_hint);
    ildl_blocking_free(&an->blk);
    ildl_coarse_free(&an->coarse);
    ildl_levels_free(&an->levels);
    ildl_tiles_free(&an->tiles);
    memset(an, 0, sizeof *an);
}
