/* levels.h -- level sets of the coarse graph: the order of the factorization and solves. */
#ifndef ILDL_ANALYSE_LEVELS_H
#define ILDL_ANALYSE_LEVELS_H
#include "analyse/fill.h"

typedef struct ildl_levels {
    int32_t nlevels;
    int32_t *level_ptr;  /* [nlevels+1] */
    int32_t *level_rows; /* [nb] block rows grouped by level, ascending inside a level */
    int32_t *row_level;  /* [nb] level of each block row */
} ildl_levels;

/* level(i) = 1 + max level(k) over k < i with block (k,i) in C (0 if none).
 * Returns ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_levels_compute(const ildl_coarse *C, ildl_levels *out);

void ildl_levels_free(ildl_levels *L);

#endif
