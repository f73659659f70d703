/* analyse.h -- the whole analyse stage: scale -> order -> block -> coarse fill -> levels ->
 * tile store. Produces everything a backend needs (paper Sec. IV-A). */
#ifndef ILDL_ANALYSE_ANALYSE_H
#define ILDL_ANALYSE_ANALYSE_H
#include <stddef.h>
#include "blockildl.h"
#include "core/csr.h"
#include "analyse/block.h"
#include "analyse/fill.h"
#include "analyse/levels.h"
#include "analyse/tiles.h"

typedef struct ildl_analysis {
    int32_t n;
    double *scale;        /* [n] symmetric scaling, original indexing */
    int8_t *pair_hint;    /* [n] analysed order, NULL unless scaling is MATCHING: 1 at k iff
                           * analysed rows k, k+1 are a 2x2 pivot pair (same block) */
    int32_t n_unmatched;  /* MATCHING: rows left unmatched (structurally singular A) */
    ildl_blocking blk;    /* perm[new] = old and block boundaries */
    ildl_coarse coarse;
    ildl_levels levels;
    ildl_tiles tiles;
    double t_scale, t_order_block, t_permute, t_fill, t_levels, t_tiles;
    int64_t needed_entries; /* ildl_analyse_within refused for max_entries: the factor's entries */
} ildl_analysis;

/* The max-product matching's result (ildl_match_scale) for the values it was computed on, kept so
 * that analysing the same values again (the ladder's rungs, the complete rung's candidate
 * orders) reuses it: the same scale, pairs and unmatched count, so the same analysis. The
 * owner clears it (ildl_match_memo_clear) when the values change. */
typedef struct ildl_match_memo {
    int valid;
    int32_t n, n_unmatched;
    double *scale;  /* [n] */
    int32_t *pair;  /* [n] */
} ildl_match_memo;
/* Forget the kept matching (its arrays stay for the next one). */
void ildl_match_memo_clear(ildl_match_memo *m);
void ildl_match_memo_free(ildl_match_memo *m);

/* Run the analyse stage on A (validated, sorted; src[k] = index of sorted entry k in the
 * user's values array) with options o. Returns ILDL_SUCCESS, ILDL_ERR_INVALID_OPTION,
 * ILDL_ERR_NOT_SUPPORTED, ILDL_ERR_OUT_OF_MEMORY or ILDL_ERR_INTERNAL (msg set on failure). */
int ildl_analyse(const ildl_csr *A, const int64_t *src, const ildl_options *o,
                 ildl_analysis *out, char *msg, size_t msglen);

/* ildl_analyse with a limit: max_entries > 0 refuses a factor of more entries (tile store
 * capacity) with ILDL_ERR_OUT_OF_MEMORY before its storage is allocated, *needed (may be NULL)
 * then the entries it needs, msg saying so; *needed = 0 otherwise. */
/* memo (may be NULL): with scaling MATCHING, a valid memo of n rows is used instead of a new
 * matching, and an invalid one is filled with the matching computed (A's values must be those
 * of a valid memo's). */
int ildl_analyse_within(const ildl_csr *A, const int64_t *src, const ildl_options *o, int64_t max_entries,
                        int64_t *needed, ildl_match_memo *memo, ildl_analysis *an, char *msg, size_t msglen);

/* Recompute the scaling for new values of A (same pattern) as o->scaling says. MATCHING
 * computes a fresh matching and scaling but the analysis keeps its pairs (pair_hint); with a
 * memo (may be NULL; cleared by the caller when the values changed) the matching is kept there,
 * so that a later analysis of the same values (the ladder's) does not compute it again. */
int ildl_analyse_rescale(const ildl_csr *A, const ildl_options *o, ildl_match_memo *memo, double *scale);

/* Everything after the blocking an->blk (set, with an->n and an->scale): pair hints from pair
 * ([n] original indices, or NULL to keep an->pair_hint as it is), the permuted copy, the block
 * graph's fill, its level sets and the tile store, into an (its times too); max_entries as
 * ildl_analyse_within (an->needed_entries set when refused). On failure the caller frees an. */
int ildl_analyse_after_blocking(const ildl_csr *A, const int64_t *src, const ildl_options *o,
                                int64_t max_entries, const int32_t *pair, ildl_analysis *an);

/* Where st is ILDL_ERR_OUT_OF_MEMORY for the limit max_entries (an->needed_entries > 0): *needed
 * (may be NULL) = the entries needed, and msg says so. Otherwise nothing. */
void ildl_analyse_refusal(int st, const ildl_analysis *an, int64_t max_entries, int64_t *needed, char *msg,
                          size_t msglen);

void ildl_analysis_free(ildl_analysis *an);

#endif
