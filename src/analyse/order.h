/* order.h -- fill-reducing / level-reducing orderings of a symmetric graph.
 * All functions take a graph in CSR form with the full symmetric pattern (self loops
 * allowed and ignored) and return perm[new] = old, a permutation of 0..n-1. */
#ifndef ILDL_ANALYSE_ORDER_H
#define ILDL_ANALYSE_ORDER_H
#include <stddef.h>
#include <stdint.h>

/* Dispatch on method (ildl_ordering); fill_level: the level of fill the order will be used
 * with (GMC_FILL colours at distance fill_level + 1; the others ignore it). *used (may be
 * NULL) receives the method whose order was returned (AUTO: AMD or METIS). Returns
 * ILDL_SUCCESS, ILDL_ERR_INVALID_OPTION, ILDL_ERR_OUT_OF_MEMORY, ILDL_ERR_NOT_SUPPORTED (graph
 * too large or too dense for the method) or ILDL_ERR_INTERNAL (library failure), with msg set
 * on failure. */
int ildl_order_graph(int32_t n, const int64_t *rowptr, const int32_t *col, int method,
                     int fill_level, int32_t *perm, int *used, char *msg, size_t msglen);

int ildl_order_amd(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm);
int ildl_order_rcm(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm);
int ildl_order_gmc(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm);
/* Greedy multicolouring at graph distance `distance`, hubs (very high degree) last: every
 * colour class stays a level set after level-of-fill distance - 1 (order.c says why). */
int ildl_order_gmc_fill(int32_t n, const int64_t *rowptr, const int32_t *col, int distance,
                        int32_t *perm, int32_t *ncolours, int32_t *nhubs);
int ildl_order_metis(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm);

/* GMC_FILL's order of a graph, computed ahead for AUTO's rule (beside AMD: the two are
 * independent): perm[n], its colours and hubs, and ildl_order_gmc_fill's status. */
typedef struct ildl_colouring {
    int32_t *perm;
    int32_t ncolours, nhubs;
    int status;
} ildl_colouring;

/* Levels of a triangular solve with the pattern of (n, rowptr, col) ordered by perm after
 * level-1 fill, in linear time. work: 3n int32. */
int32_t ildl_order_depth_fill1(int32_t n, const int64_t *rowptr, const int32_t *col, const int32_t *perm,
                               int32_t *work);

/* 1 if AUTO's colouring rule applies to a block graph of n vertices at this fill level. */
int ildl_order_auto_colour_wanted(int32_t n, int fill_level);

/* The depth perm gives (n, rowptr, col) after level-of-fill fill_level: the levels the
 * analysis will find when the graph is the block graph (-1 when out of memory). */
int32_t ildl_order_depth_after_fill(int32_t n, const int64_t *rowptr, const int32_t *col,
                                    const int32_t *perm, int fill_level);

/* 1 if AUTO's rule takes colouring c over an order of the given depth after the fill. */
int ildl_order_auto_prefers_colouring(const ildl_colouring *c, int32_t depth);

/* AUTO's rule for block graphs (BR blocking orders the coarse graph, whose level-of-fill the
 * levels come from): replace perm, AUTO's AMD or METIS order, by GMC_FILL's (*used set) when
 * the graph has at least 1000 vertices and the colouring bounds the levels by at most a quarter
 * of perm's depth after the fill (order.c says why). pre: the colouring computed ahead, or NULL
 * to compute it here. Never fails: perm stands when anything goes wrong. */
int ildl_order_auto_colour(int32_t n, const int64_t *rowptr, const int32_t *col, int fill_level,
                           const ildl_colouring *pre, int32_t *perm, int *used);

/* 1 if perm is a permutation of 0..n-1. */
int ildl_is_permutation(int32_t n, const int32_t *perm);

#endif
