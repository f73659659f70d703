/* block.h -- cosine-similarity blocking (Saad 2003) of the rows of a symmetric matrix into
 * diagonal blocks of at most max_bs (<= 32) rows, strategies RB and BR (paper Sec. III-A). */
#ifndef ILDL_ANALYSE_BLOCK_H
#define ILDL_ANALYSE_BLOCK_H
#include <stddef.h>
#include "core/csr.h"

typedef struct ildl_blocking {
    int32_t n;
    int32_t nb;      /* number of blocks */
    int32_t *perm;   /* [n] perm[new] = old: the full symmetric permutation (ordering + blocking) */
    int32_t *bstart; /* [nb+1] block b holds new rows bstart[b] .. bstart[b+1]-1 */
    int ordering_used; /* the ordering method that was applied (AUTO resolved) */
} ildl_blocking;

/* Strategy RB: apply the given ordering order[new]=old first, then group only consecutive
 * rows of that order whose patterns have cosine similarity >= threshold with the block's
 * first row, up to max_bs rows. perm equals order (RB never reorders). pair (optional,
 * [n] in original indices, pair[i] = partner or -1) forbids splitting a 2x2 pair.
 * Returns ILDL_SUCCESS, ILDL_ERR_INVALID_OPTION or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_block_rb(const ildl_csr *A, const int32_t *order, const int32_t *pair, int max_bs,
                  double threshold, ildl_blocking *out);

/* Strategy SN (block_sn.c): the order's rows (pairs kept adjacent) in a postorder of their
 * elimination tree, cut into chains of the tree of at most max_bs rows where the factor's
 * column structure changes little: the blocks of a complete factor; amalgamate != 0: then,
 * where those chains average fewer than 6 rows, adjacent blocks merged up to max_bs rows where
 * one hangs below or beside the next (fewer, larger blocks with explicit zeros: what the GPU's
 * kernels need). perm is order postordered (the same fill). max_work > 0: refused
 * (ILDL_ERR_OUT_OF_MEMORY, *over = 1 when over is not NULL) once the factor is known to hold
 * more than max_work entries, before they are all counted. Returns ILDL_SUCCESS,
 * ILDL_ERR_INVALID_OPTION or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_block_sn(const ildl_csr *A, const int32_t *order, const int32_t *pair, int max_bs, int amalgamate,
                  int64_t max_work, int *over, ildl_blocking *out);

/* Strategy BR: cluster rows of similar pattern (cosine >= threshold) into groups of <=
 * max_bs rows, then repeat on the coarse matrix with threshold *= decay per level (down to a
 * floor of min(threshold, 0.1); steps that would merge nothing are skipped; stops when blocks
 * average 75% of max_bs, when levels at the floor merge under 1%, or after 40 steps; decay = 1
 * stops at the first level that merges nothing), then order the coarse graph with `ordering`
 * (ildl_ordering; fill_level: the level of fill it is for, as ildl_order_graph) and expand:
 * rows of one block are contiguous. */
int ildl_block_br(const ildl_csr *A, int ordering, int fill_level, const int32_t *pair, int max_bs,
                  double threshold, double decay, ildl_blocking *out);

/* BR in two steps, for a caller that orders the coarse graph itself (the analysis, when AUTO
 * speculates on its colouring): the coarse graph with the rows of each vertex, then the
 * blocking of an order of its vertices. ildl_block_br is the two around ildl_order_graph. */
typedef struct ildl_br_graph {
    int32_t n;            /* rows of A */
    int32_t nv;           /* vertices: the blocks to be */
    int64_t *p;           /* [nv+1] symmetric pattern with self loops, sorted rows */
    int32_t *i;           /* [p[nv]] */
    int32_t *w;           /* [nv] rows per vertex */
    int32_t *voff, *rows; /* vertex v's rows: rows[voff[v] .. voff[v+1]) */
} ildl_br_graph;

/* The coarse graph of BR (arguments as ildl_block_br) into *g (allocated here). */
int ildl_block_br_graph(const ildl_csr *A, const int32_t *pair, int max_bs, double threshold,
                        double decay, ildl_br_graph *g);
/* The blocking of g's vertices in the order operm (vertex operm[k] is block k); used: the
 * ordering method to record. ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_block_br_expand(const ildl_br_graph *g, const int32_t *operm, int used, ildl_blocking *out);
/* Order g's vertices with `ordering` (as ildl_block_br) and expand: the blocking into *out;
 * msg set on failure. */
int ildl_block_br_order(const ildl_br_graph *g, int ordering, int fill_level, ildl_blocking *out,
                        char *msg, size_t msglen);
void ildl_br_graph_free(ildl_br_graph *g);

void ildl_blocking_free(ildl_blocking *b);

#endif
