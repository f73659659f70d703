/* factor_check.c -- see factor_check.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include "support/factor_check.h"
#include "support/testutil.h"

/* Contiguous blocks of random sizes 1..maxbs covering 0..n-1. */
int32_t *ft_make_blocks(int32_t n, int maxbs, uint64_t seed, int32_t *nb)
{
    int32_t *bstart = malloc(sizeof(int32_t) * (size_t)(n + 1));
    assert_non_null(bstart);
    int32_t k = 0, b = 0;
    bstart[0] = 0;
    while (k < n) {
        int sz = 1 + (int)(ildl_test_rand(&seed) * maxbs);
        if (sz > maxbs) sz = maxbs;
        if (k + sz > n) sz = n - k;
        k += sz;
        bstart[++b] = k;
    }
    *nb = b;
    return bstart;
}

/* Global factored order: q[bstart[b]+r] = bstart[b] + piv[bstart[b]+r]; checks it is a
 * permutation inside every block. */
int32_t *ft_global_perm(const ildl_tiles *T)
{
    int32_t *q = malloc(sizeof(int32_t) * (size_t)T->n);
    char *seen = calloc((size_t)T->n, 1);
    assert_true(q && seen);
    for (int32_t b = 0; b < T->nb; b++)
        for (int32_t k = T->bstart[b]; k < T->bstart[b + 1]; k++) {
            int32_t p = T->piv[k];
            assert_true(p >= 0 && p < ildl_tiles_block_size(T, b));
            q[k] = T->bstart[b] + p;
            assert_false(seen[q[k]]);
            seen[q[k]] = 1;
        }
    free(seen);
    return q;
}
