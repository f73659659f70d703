/* match.h -- matching-based scaling and 2x2 pivot pairs (Duff-Koster MC64 option 5,
 * symmetrized as in Duff-Pralet): a maximum-product matching of rows to columns, a scaling
 * from its dual variables under which every entry is at most 1 in magnitude, and the
 * matching's cycles split into 1x1 pivots and 2x2 pairs for static pivoting. */
#ifndef ILDL_ANALYSE_MATCH_H
#define ILDL_ANALYSE_MATCH_H
#include <stddef.h>
#include "core/csr.h"

/* Maximum-product matching of the rows of A to its columns: among the matchings of largest
 * cardinality it maximizes prod |a_{i,match[i]}| when A is structurally nonsingular (min-cost
 * perfect matching on c_ij = log max_k |a_kj| - log |a_ij|, successive shortest paths).
 * Works on any square sorted CSR; entries stored as 0 are not edges.
 * Inputs: A. Outputs: match[n] (column matched to row i, or -1), logr[n], logc[n] (optional,
 * may be NULL): with r = exp(logr), c = exp(logc), |r_i a_ij c_j| <= 1 for every entry and
 * = 1 on matched entries (up to rounding); *n_unmatched = rows left unmatched (0 iff a
 * perfect matching exists). Returns ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_match_maxprod(const ildl_csr *A, int32_t *match, double *logr, double *logc,
                       int32_t *n_unmatched);

/* Split the matching into pivots: pair[i] = j and pair[j] = i for a 2x2 pair, -1 for a 1x1.
 * A fixed point (match[i] = i) or an unmatched row is a 1x1; a 2-cycle is a pair; a longer
 * cycle or a chain (partial matching) is cut into consecutive pairs (x, match[x]); for a
 * cycle the cut is the one maximizing the product of the scaled pivot entries (sum of log
 * |s_x a_x,match[x] s_match[x]| over its pairs, plus log |s_t a_tt s_t| for the 1x1 that an
 * odd cycle leaves). Pairs always join i != j with a_ij stored and nonzero.
 * Inputs: A, match[n] (from ildl_match_maxprod), s[n] (symmetric scaling). Output: pair[n].
 * Returns ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_match_pairs(const ildl_csr *A, const int32_t *match, const double *s, int32_t *pair);

/* Symmetric matching-based scaling of a symmetric A plus its 2x2 pairs. s_i = sqrt(r_i c_i)
 * from ildl_match_maxprod; as a_ij = a_ji, |s_i a_ij s_j| is the geometric mean of the two
 * unsymmetrically scaled entries (i,j) and (j,i), so it is <= 1, and = 1 on diagonal
 * matches and 2-cycles. Then symmetric Ruiz sweeps lift rows whose largest entry is below 1
 * (longer cycles, unmatched rows), which cannot push any entry above 1, and a last pass
 * shrinks any row that rounding left above 1. Guarantee: max_ij |s_i a_ij s_j| <= 1 up to
 * the rounding of the products themselves (a few ulps); every row with a nonzero entry has
 * its largest scaled entry within about 1e-3 of 1 unless the Ruiz sweeps stalled.
 * Inputs: A (symmetric values). Outputs: s[n] (> 0, finite), pair[n] (as ildl_match_pairs),
 * *n_unmatched (structural singularity; not an error: unmatched rows are 1x1 pivots and
 * keep a valid scaling). Returns ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_match_scale(const ildl_csr *A, double *s, int32_t *pair, int32_t *n_unmatched);

/* Fill-reducing order of A that keeps every pair adjacent: order the quotient graph (each
 * pair merged into one vertex) with ildl_order_graph(method) and expand every vertex to its
 * row, or to its pair (smaller index first). Inputs: A, pair[n], method (ildl_ordering),
 * fill_level (as ildl_order_graph). Output: order[n] (order[new] = old), *used (may be NULL:
 * the method kept). Returns ildl_order_graph's statuses (msg set). */
int ildl_match_order(const ildl_csr *A, const int32_t *pair, int method, int fill_level,
                     int32_t *order, int *used, char *msg, size_t msglen);

/* hint[k] = 1 iff analysed rows k and k+1 (perm[new] = old) form a pair lying in one block
 * of bstart[0..nb], the pair starting at k; 0 otherwise. Output: hint[n]. */
void ildl_match_pair_hint(int32_t n, const int32_t *pair, const int32_t *perm, int32_t nb,
                          const int32_t *bstart, int8_t *hint);

#endif
