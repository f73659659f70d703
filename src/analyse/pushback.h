/* pushback.h -- outer pivoting by push-back (stretching-jacobi-thuerck Sec. V-A): the diagonal
 * blocks whose pivots failed go, with their rows and columns, to the end of the order, in
 * their relative order; the analysis after the blocking is made again for that order. */
#ifndef ILDL_ANALYSE_PUSHBACK_H
#define ILDL_ANALYSE_PUSHBACK_H
#include <stdint.h>
#include "analyse/analyse.h"

/* The blocking of `in` with the blocks b where push[b] != 0 moved to the end: first the
 * others, then the pushed ones, each group in its order of `in`; each block keeps its rows in
 * their order. out gets new perm and bstart (ildl_blocking_free); *moved = 0 when the order
 * stays the same (no block pushed, or every pushed block already at the end in order).
 * Returns ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_pushback_blocking(const ildl_blocking *in, const uint8_t *push, ildl_blocking *out, int *moved);

/* The analysis of A (src as ildl_analyse) with old's scaling, pair hints and blocking, the
 * blocks push[b] != 0 pushed to the end (ildl_pushback_blocking), everything after the blocking
 * made again with options o (fill, levels, tiles; max_entries as ildl_analyse_within, *needed
 * may be NULL). *moved = 0: nothing would change, an is left empty and ILDL_SUCCESS returned.
 * Returns the codes of ildl_analyse_within (msg set on failure). */
int ildl_analyse_pushback(const ildl_csr *A, const int64_t *src, const ildl_options *o, int64_t max_entries,
                          const ildl_analysis *old, const uint8_t *push, int *moved, int64_t *needed,
                          ildl_analysis *an, char *msg, size_t msglen);

#endif
