/* fill.h -- the coarse (block) graph of the upper triangle and its block level of fill. */
#ifndef ILDL_ANALYSE_FILL_H
#define ILDL_ANALYSE_FILL_H
#include "core/csr.h"

/* Block pattern of U (upper triangle incl. diagonal) by block row. */
typedef struct ildl_coarse {
    int32_t nb;
    int64_t nblocks;
    int64_t *row_ptr; /* [nb+1] */
    int32_t *col;     /* [nblocks] block columns, ascending; the diagonal block is first */
    int32_t *lvl;     /* [nblocks] level of fill: 0 = holds entries of A (or a forced diagonal) */
} ildl_coarse;

/* Build the coarse upper block pattern of Ap (already permuted to the blocked order,
 * bstart[nb+1]) and add fill blocks up to level lf by the Hysom-Pothen rule, row by row:
 * lvl(i,j) = min over k < i with (k,i),(k,j) present of lvl(k,i)+lvl(k,j)+1, kept if <= lf.
 * lf >= ILDL_MAX_FILL_LEVEL (the ladder's complete rung) is the complete fill: the same
 * pattern, by ildl_coarse_build_complete, whose fill blocks all have lvl 1.
 * Missing diagonal blocks are added (lvl 0). Returns ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_coarse_build(const ildl_csr *Ap, int32_t nb, const int32_t *bstart, int lf,
                      ildl_coarse *out);

/* The complete block fill (every fill path) by the elimination tree (fill_complete.c): the
 * pattern of ildl_coarse_build with lf >= nb - 2, in O(|U|) work; fill blocks get lvl 1 (their
 * levels are not computed). ildl_coarse_build takes this way for lf >= ILDL_MAX_FILL_LEVEL. */
int ildl_coarse_build_complete(const ildl_csr *Ap, int32_t nb, const int32_t *bstart, ildl_coarse *out);

void ildl_coarse_free(ildl_coarse *C);

#endif
