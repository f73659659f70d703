/* factor_check.h -- helpers shared by the block factorization and solve tests. */
#ifndef ILDL_TEST_FACTOR_CHECK_H
#define ILDL_TEST_FACTOR_CHECK_H
#include <stdint.h>
#include "analyse/tiles.h"

/* Random contiguous blocks of 1..maxbs rows covering 0..n-1: returns bstart (malloc'ed, nb+1). */
int32_t *ft_make_blocks(int32_t n, int maxbs, uint64_t seed, int32_t *nb);
/* The factored-position -> analysed-row map q[bstart[b]+r] = bstart[b] + piv[bstart[b]+r]
 * (malloc'ed), asserting that it is a permutation. */
int32_t *ft_global_perm(const ildl_tiles *T);

#endif
