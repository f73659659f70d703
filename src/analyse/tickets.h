/* tickets.h -- the order in which the sync-free sweeps hand out block rows (tickets): any
 * topological order of a sweep's dependencies is correct and gives the same bits; this one
 * decides which rows wait (rows heading long chains of dependent work first, so that warps do
 * not idle at a level's end behind rows few others need). Host code, used by the CUDA backend. */
#ifndef ILDL_ANALYSE_TICKETS_H
#define ILDL_ANALYSE_TICKETS_H
#include <stdint.h>
#include "analyse/tiles.h"

enum { ILDL_SWEEP_FORWARD = 0, ILDL_SWEEP_BACKWARD = 1 };

/* Tiles the sweep dir sums for block row i: forward the tiles (k, i), k < i, of block column i;
 * backward the tiles (i, j), j > i, of block row i. */
int64_t ildl_sweep_row_tiles(const ildl_tiles *T, int dir, int32_t i);

/* The block the sweep dir's row i waits for at its q-th tile, 0 <= q < ildl_sweep_row_tiles:
 * forward k of the q-th tile (k, i) in column order, backward j of the q-th tile (i, j). */
int32_t ildl_sweep_row_dep(const ildl_tiles *T, int dir, int32_t i, int64_t q);

/* The least t in [lo, hi] such that at most `few` block rows have more than t tiles in the sweep
 * dir: the sync-free sweeps split the rows longer than t into work items, and lower t from hi
 * only while the rows above it stay few (a split row's items pass partial sums through global
 * memory, which pays only for the few longest rows, left to finish while the GPU idles).
 * lo <= hi. */
int ildl_sweep_split_threshold(const ildl_tiles *T, int dir, int64_t few, int lo, int hi);

/* The sweep dir's block rows in ticket order, as positions in T->level_rows: seq[t] = p means
 * ticket t goes to row level_rows[p]. chain = 0: level order (backward: reversed). chain = 1:
 * each row by the longest chain of work that waits for it (its tiles, then a handoff and the
 * chain of each row that depends on it), longest first, ties in level order. Both are
 * topological (every dependency of a row has an earlier ticket). Returns ILDL_SUCCESS, or
 * ILDL_ERR_OUT_OF_MEMORY with seq in level order. */
int ildl_sweep_ticket_order(const ildl_tiles *T, int dir, int chain, int32_t *seq);

/* Both sweeps' ticket orders (ildl_sweep_ticket_order), side by side on two threads where
 * OpenMP is there: seq_fwd[nb], seq_bwd[nb]. ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_sweep_ticket_orders(const ildl_tiles *T, int chain, int32_t *seq_fwd, int32_t *seq_bwd);

#endif
