/* pushback.c -- outer pivoting by push-back: the pushed blocks to the end of the order, and the
 * analysis after the blocking made again for it (pushback.h). The paper keeps the pattern and
 * re-sorts the block references; here the block graph's fill depends on the order, so the fill,
 * level sets and tile store are made again, from the permuted matrix. */
#include "analyse/pushback.h"
#include <stdlib.h>
#include <string.h>
#include "core/util.h"

int ildl_pushback_blocking(const ildl_blocking *in, const uint8_t *push, ildl_blocking *out, int *moved)
{
    int32_t n = in->n, nb = in->nb;
    memset(out, 0, sizeof *out);
    *moved = 0;
    /* the order changes iff a block that stays comes after a pushed one */
    int32_t first_pushed = nb;
    for (int32_t b = 0; b < nb && first_pushed == nb; b++)
        if (push[b]) first_pushed = b;
    for (int32_t b = first_pushed; b < nb; b++)
        if (!push[b]) *moved = 1;
    out->n = n;
    out->nb = nb;
    out->ordering_used = in->ordering_used;
    out->perm = ildl_malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    out->bstart = ildl_malloc(sizeof(int32_t) * ((size_t)nb + 1));
    if (!out->perm || !out->bstart) {
        ildl_blocking_free(out);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    int32_t nbo = 0, r = 0;
    for (int pass = 0; pass < 2; pass++) /* pass 0: the blocks that stay; 1: the pushed ones */
        for (int32_t b = 0; b < nb; b++) {
            if ((push[b] != 0) != (pass == 1)) continue;
            out->bstart[nbo++] = r;
            for (int32_t k = in->bstart[b]; k < in->bstart[b + 1]; k++) out->perm[r++] = in->perm[k];
        }
    out->bstart[nb] = r;
    return ILDL_SUCCESS;
}

/* hint_out: old's pair hints with each block's run moved as the rows of the blocking blk (whose
 * blocks are old's, reordered by push as ildl_pushback_blocking). */
static void move_hints(const ildl_blocking *old, const uint8_t *push, const int8_t *hint, int8_t *hint_out)
{
    int32_t r = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t b = 0; b < old->nb; b++) {
            if ((push[b] != 0) != (pass == 1)) continue;
            int32_t len = old->bstart[b + 1] - old->bstart[b];
            memcpy(hint_out + r, hint + old->bstart[b], (size_t)len);
            r += len;
        }
}

int ildl_analyse_pushback(const ildl_csr *A, const int64_t *src, const ildl_options *o, int64_t max_entries,
                          const ildl_analysis *old, const uint8_t *push, int *moved, int64_t *needed,
                          ildl_analysis *an, char *msg, size_t msglen)
{
    int32_t n = A->n;
    if (needed) *needed = 0;
    memset(an, 0, sizeof *an);
    an->n = n;
    int st = ildl_pushback_blocking(&old->blk, push, &an->blk, moved);
    if (st || !*moved) goto cleanup;
    double t = ildl_wtime();
    an->scale = ildl_malloc(sizeof(double) * (size_t)n);
    if (!an->scale) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    memcpy(an->scale, old->scale, sizeof(double) * (size_t)n); /* original indexing: unchanged */
    if (old->pair_hint) {
        an->pair_hint = ildl_malloc((size_t)n);
        if (!an->pair_hint) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
        move_hints(&old->blk, push, old->pair_hint, an->pair_hint);
    }
    an->n_unmatched = old->n_unmatched;
    an->t_order_block = ildl_wtime() - t;
    st = ildl_analyse_after_blocking(A, src, o, max_entries, NULL, an);

cleanup:
    ildl_analyse_refusal(st, an, max_entries, needed, msg, msglen);
    if (st && !(st == ILDL_ERR_OUT_OF_MEMORY && an->needed_entries > 0))
        ildl_msg(msg, msglen, "push-back analysis failed with status %d", st);
    if (st || !*moved) ildl_analysis_free(an);
    return st;
}
