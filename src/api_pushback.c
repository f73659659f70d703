/* api_pushback.c -- outer pivoting by push-back after a factorization (options.pushback_rounds,
 * docs/robustness.md), and what it shares with the ladder's change of rung: a new analysis put
 * in place of the handle's, and the memory budget of an analysis. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "api_internal.h"
#include "analyse/pushback.h"
#include "core/util.h"

double ildl_api_budget_bytes(const ildl_handle *h)
{
    double b = h->user_opt.escalation_max_bytes;
    return b > 0.0 ? b : 0.5 * ildl_host_memory_bytes();
}

double ildl_api_entry_bytes(const ildl_options *o) { return o->precision == ILDL_PREC_SINGLE ? 6.0 : 10.0; }

int64_t ildl_api_max_entries(const ildl_handle *h, const ildl_options *o)
{
    double budget = ildl_api_budget_bytes(h);
    if (!(budget > 0.0)) return 0; /* the host's memory unknown: no limit */
    int64_t max_entries = (int64_t)fmin(budget / ildl_api_entry_bytes(o), 9e18);
    return max_entries > 0 ? max_entries : 1;
}

int ildl_api_install(ildl_handle *h, ildl_analysis *an, const ildl_options *o, char *msg, size_t msglen)
{
    ildl_options new_opt = *o; /* o may be &h->opt */
    ildl_analysis old_an = h->an;
    ildl_options old_opt = h->opt;
    /* the old state goes first: its device memory makes room for the new one */
    h->ops->destroy(h->bstate);
    h->bstate = NULL;
    h->factored = 0;
    h->an = *an; /* h->env points at h->an and h->opt */
    h->opt = new_opt;
    int st = h->ops->create(&h->env, &h->bstate, msg, msglen);
    if (st) {
        ildl_analysis_free(&h->an);
        h->an = old_an;
        h->opt = old_opt;
        char m[256];
        if (h->ops->create(&h->env, &h->bstate, m, sizeof m)) h->bstate = NULL;
    } else {
        ildl_analysis_free(&old_an);
    }
    memset(an, 0, sizeof *an);
    ildl_api_info_from_analysis(h);
    return st;
}

int ildl_api_pushback(ildl_handle *h, int32_t *bp)
{
    int32_t nb = h->an.blk.nb, rounds = 0, pushed = 0;
    int st = ILDL_SUCCESS;
    uint8_t *push = ildl_malloc((size_t)nb + 1);
    if (!push) return ildl_api_fail(h, ILDL_ERR_OUT_OF_MEMORY, "out of memory");
    while (rounds < h->opt.pushback_rounds && h->info.num_perturbed > 0) {
        int32_t npush = 0;
        for (int32_t b = 0; b < nb; b++) npush += (push[b] = bp[b] > 0);
        ildl_analysis an;
        int moved = 0;
        char m[256] = "";
        int s2 = ildl_analyse_pushback(&h->A, h->src, &h->opt, ildl_api_max_entries(h, &h->opt), &h->an, push,
                                       &moved, NULL, &an, m, sizeof m);
        if (s2 || !moved) { /* the factor as it is stays */
            if (s2) ildl_api_log(h, 1, "push-back round %d not taken: %s", rounds + 1, m);
            break;
        }
        if (ildl_tiles_set_precision(&an.tiles, h->opt.precision == ILDL_PREC_SINGLE)) {
            ildl_analysis_free(&an);
            ildl_api_log(h, 1, "push-back round %d not taken: out of memory", rounds + 1);
            break;
        }
        if (ildl_api_install(h, &an, &h->opt, m, sizeof m)) {
            ildl_api_log(h, 1, "push-back round %d not taken: %s", rounds + 1, m);
            st = ildl_api_factor_once(h, NULL, bp); /* the factor before it, again */
            break;
        }
        rounds++;
        pushed += npush;
        ildl_api_log(h, 1, "push-back round %d: %d blocks to the end", (int)rounds, (int)npush);
        st = ildl_api_factor_once(h, NULL, bp);
        if (st) break;
    }
    free(push);
    h->info.pushback_rounds = rounds;
    h->info.pushback_blocks = pushed;
    return st;
}
