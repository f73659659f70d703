/* tickets.c -- the sync-free sweeps' ticket order (tickets.h). */
#include "analyse/tickets.h"
#include <stdlib.h>
#include "blockildl.h"

/* The weights of the chains: a tile, a handoff between rows, a row's own work (the V_ii product
 * and the publish). Other weights (no handoff, a handoff of 4 tiles, a row's own work of 8)
 * measured within 0.3% of these at n >= 1M: the order matters, not the exact weights. */
#define CHAIN_TILE 2
#define CHAIN_HANDOFF 1
#define CHAIN_ROW 2

int64_t ildl_sweep_row_tiles(const ildl_tiles *T, int dir, int32_t i)
{
    return dir == ILDL_SWEEP_BACKWARD ? T->row_ptr[i + 1] - T->row_ptr[i] - 1
                                      : ildl_tiles_col_diag(T, i) - T->col_ptr[i];
}

int32_t ildl_sweep_row_dep(const ildl_tiles *T, int dir, int32_t i, int64_t q)
{
    return dir == ILDL_SWEEP_BACKWARD ? T->col[T->row_ptr[i] + 1 + q] : T->row[T->col_tiles[T->col_ptr[i] + q]];
}

int ildl_sweep_split_threshold(const ildl_tiles *T, int dir, int64_t few, int lo, int hi)
{
    int64_t *rows = calloc((size_t)hi + 2, sizeof(int64_t)); /* rows[t]: rows of t tiles; [hi + 1]: longer */
    if (!rows) return hi; /* the unlowered threshold: slower at worst, never wrong */
    for (int32_t i = 0; i < T->nb; i++) {
        int64_t nt = ildl_sweep_row_tiles(T, dir, i);
        rows[nt > hi ? hi + 1 : nt]++;
    }
    int64_t above = rows[hi + 1]; /* rows with more than t tiles as t goes down */
    int t = hi;
    while (t > lo && above + rows[t] <= few) above += rows[t--];
    free(rows);
    return t;
}

/* A row's place in the chain order: by key, then by its level-order ticket. */
typedef struct {
    int64_t key;
    int32_t tie;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = (const keyed *)a, *y = (const keyed *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->tie > y->tie) - (x->tie < y->tie);
}

/* Why the chains: in level order the warps wait at the end of every level for rows with few
 * successors while rows that head long chains sit in the queue (control70's forward sweep was
 * 9-12% faster in chain order). The order is topological because a row's dependency heads
 * every chain through the row, so its chain is strictly longer (CHAIN_ROW >= 1). */
int ildl_sweep_ticket_order(const ildl_tiles *T, int dir, int chain, int32_t *seq)
{
    int32_t nb = T->nb;
    for (int32_t t = 0; t < nb; t++) seq[t] = dir == ILDL_SWEEP_BACKWARD ? nb - 1 - t : t;
    if (!chain || nb == 0) return ILDL_SUCCESS;
    int64_t *len = calloc((size_t)nb, sizeof(int64_t)); /* by block row */
    keyed *kp = malloc(sizeof(keyed) * (size_t)nb);
    int status = len && kp ? ILDL_SUCCESS : ILDL_ERR_OUT_OF_MEMORY;
    if (status) goto cleanup;
    for (int32_t t = nb - 1; t >= 0; t--) { /* a row's dependents come after it in level order */
        int32_t i = T->level_rows[seq[t]];
        int64_t nt = ildl_sweep_row_tiles(T, dir, i);
        len[i] += CHAIN_TILE * nt + CHAIN_ROW;
        for (int64_t q = 0; q < nt; q++) {
            int32_t d = ildl_sweep_row_dep(T, dir, i, q);
            if (len[i] + CHAIN_HANDOFF > len[d]) len[d] = len[i] + CHAIN_HANDOFF;
        }
    }
    for (int32_t t = 0; t < nb; t++) {
        kp[t].key = -len[T->level_rows[seq[t]]];
        kp[t].tie = t;
    }
    qsort(kp, (size_t)nb, sizeof *kp, keyed_cmp);
    for (int32_t t = 0; t < nb; t++) kp[t].tie = seq[kp[t].tie]; /* tickets to positions */
    for (int32_t t = 0; t < nb; t++) seq[t] = kp[t].tie;
cleanup:
    free(len);
    free(kp);
    return status;
}

int ildl_sweep_ticket_orders(const ildl_tiles *T, int chain, int32_t *seq_fwd, int32_t *seq_bwd)
{
    int st[2] = {ILDL_SUCCESS, ILDL_SUCCESS};
    /* 6-13 ms a direction at n = 1M on a slow host: part of every CUDA setup */
#pragma omp parallel sections num_threads(2) if (chain && T->nb >= 4096)
    {
#pragma omp section
        st[0] = ildl_sweep_ticket_order(T, ILDL_SWEEP_FORWARD, chain, seq_fwd);
#pragma omp section
        st[1] = ildl_sweep_ticket_order(T, ILDL_SWEEP_BACKWARD, chain, seq_bwd);
    }
    return st[0] ? st[0] : st[1];
}
