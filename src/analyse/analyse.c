#include "analyse/analyse.h"
#include <stdlib.h>
#include <string.h>
#include "analyse/match.h"
#include "analyse/order.h"
#include "analyse/scale.h"
#include "core/util.h"

int ildl_analyse_rescale(const ildl_csr *A, const ildl_options *o, double *scale)
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
        int st = ildl_match_scale(A, scale, pair, &unmatched);
        free(pair);
        return st;
    }
    default:
        return ILDL_ERR_NOT_SUPPORTED;
    }
}

static int check_options(const ildl_options *o, char *msg, size_t msglen)
{
    if (o->max_block_size < 1 || o->max_block_size > 32) {
        ildl_msg(msg, msglen, "max_block_size = %d, must be in 1..32", o->max_block_size);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (o->fill_level < 0) {
        ildl_msg(msg, msglen, "fill_level = %d, must be >= 0", o->fill_level);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (o->blocking != ILDL_BLOCKING_RB && o->blocking != ILDL_BLOCKING_BR) {
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

int ildl_analyse(const ildl_csr *A, const int64_t *src, const ildl_options *o,
                 ildl_analysis *an, char *msg, size_t msglen)
{
    int32_t n = A->n;
    int64_t nnz = A->rowptr[n];
    int32_t *order = NULL, *pair = NULL;
    int64_t *srcp = NULL;
    ildl_csr Ap = {0};
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
        st = ildl_match_scale(A, an->scale, pair, &an->n_unmatched);
    } else {
        st = ildl_analyse_rescale(A, o, an->scale);
    }
    if (st) { ildl_msg(msg, msglen, "scaling failed"); goto cleanup; }
    an->t_scale = ildl_wtime() - t;

    t = ildl_wtime();
    if (o->blocking == ILDL_BLOCKING_RB) {
        int used = o->ordering;
        order = ildl_malloc(sizeof(int32_t) * (size_t)n);
        if (!order) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
        /* with pairs, order the graph of pairs so that RB finds every pair adjacent */
        st = ildl_match_order(A, pair, o->ordering, o->fill_level, order, &used, msg, msglen);
        if (st) goto cleanup;
        st = ildl_block_rb(A, order, pair, o->max_block_size, o->block_threshold, &an->blk);
        an->blk.ordering_used = used;
    } else {
        st = ildl_block_br(A, o->ordering, o->fill_level, pair, o->max_block_size, o->block_threshold,
                           o->block_decay, &an->blk);
    }
    if (st) { ildl_msg(msg, msglen, "blocking failed (%d)", st); goto cleanup; }
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE lap */
    if (pair) {
        an->pair_hint = ildl_malloc((size_t)n);
        if (!an->pair_hint) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
        ildl_match_pair_hint(n, pair, an->blk.perm, an->blk.nb, an->blk.bstart, an->pair_hint);
    }
    ildl_profile_lap(&tp, "pair hints");
    an->t_order_block = ildl_wtime() - t;

    t = ildl_wtime();
    srcp = ildl_malloc(sizeof(int64_t) * (size_t)nnz);
    if (!srcp) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    /* srcp[q]: the user's index of the permuted matrix's entry q */
    st = ildl_csr_permute_src(A, an->blk.perm, src, &Ap, srcp);
    if (st) goto cleanup;
    an->t_permute = ildl_wtime() - t;

    t = ildl_wtime();
    st = ildl_coarse_build(&Ap, an->blk.nb, an->blk.bstart, o->fill_level, &an->coarse);
    if (st) goto cleanup;
    an->t_fill = ildl_wtime() - t;
    t = ildl_wtime();
    st = ildl_levels_compute(&an->coarse, &an->levels);
    if (st) goto cleanup;
    an->t_levels = ildl_wtime() - t;
    t = ildl_wtime();
    st = ildl_tiles_build(&Ap, srcp, an->blk.perm, an->blk.nb, an->blk.bstart, &an->coarse,
                          &an->levels, o->fill_factor, &an->tiles);
    if (st) goto cleanup;
    an->t_tiles = ildl_wtime() - t;

cleanup:
    if (st && st != ILDL_ERR_INVALID_OPTION && st != ILDL_ERR_NOT_SUPPORTED && msg && !msg[0])
        ildl_msg(msg, msglen, "analyse stage failed with status %d", st);
    free(order); free(pair); free(srcp);
    ildl_csr_free(&Ap);
    if (st) ildl_analysis_free(an);
    return st;
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
