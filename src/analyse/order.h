/* order.h -- fill-reducing / level-reducing orderings of a symmetric graph.
 * All functions take a graph in CSR form with the full symmetric pattern (self loops
 * allowed and ignored) and return perm[new] = old, a permutation of 0..n-1. */
#ifndef ILDL_ANALYSE_ORDER_H
#define ILDL_ANALYSE_ORDER_H
#include <stddef.h>
#include <stdint.h>

/* Dispatch on method (ildl_ordering); *used (may be NULL) receives the method whose order was
 * returned (AUTO: AMD or METIS). Returns ILDL_SUCCESS, ILDL_ERR_INVALID_OPTION,
 * ILDL_ERR_OUT_OF_MEMORY or ILDL_ERR_INTERNAL (library failure), with msg set on failure. */
int ildl_order_graph(int32_t n, const int64_t *rowptr, const int32_t *col, int method,
                     int32_t *perm, int *used, char *msg, size_t msglen);

int ildl_order_amd(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm);
int ildl_order_rcm(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm);
int ildl_order_gmc(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm);
int ildl_order_metis(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm);

/* 1 if perm is a permutation of 0..n-1. */
int ildl_is_permutation(int32_t n, const int32_t *perm);

#endif
