/* gen_build.c -- CSR assembly from row functions, and the seeded random number generator. */
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"
#include "gen.h"

/* Sort one short row by column (rows here have a handful of entries). */
static void sort_row(int len, int32_t *col, double *val)
{
    for (int a = 1; a < len; a++) {
        int32_t c = col[a];
        double v = val[a];
        int b = a - 1;
        while (b >= 0 && col[b] > c) {
            col[b + 1] = col[b];
            val[b + 1] = val[b];
            b--;
        }
        col[b + 1] = c;
        val[b + 1] = v;
    }
}

int ildl_gen_build(int32_t n, int maxrow, ildl_gen_row_fn row, const void *ctx, ildl_csr *A)
{
    int st = ILDL_SUCCESS;
    memset(A, 0, sizeof *A);
    int32_t *tc = ildl_malloc(sizeof(int32_t) * (size_t)maxrow);
    double *tv = ildl_malloc(sizeof(double) * (size_t)maxrow);
    int64_t *rowptr = ildl_malloc(sizeof(int64_t) * ((size_t)n + 1));
    if (!tc || !tv || !rowptr) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    /* pass 1: sizes only, so the 5M-row cases allocate exactly once */
    rowptr[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int len = row(ctx, i, tc, tv);
        if (len < 0 || len > maxrow) {
            st = ILDL_ERR_INTERNAL;
            goto cleanup;
        }
        rowptr[i + 1] = rowptr[i] + len;
    }
    int64_t nnz = rowptr[n];
    A->n = n;
    A->rowptr = rowptr;
    rowptr = NULL;
    A->col = ildl_malloc(sizeof(int32_t) * (size_t)nnz);
    A->val = ildl_malloc(sizeof(double) * (size_t)nnz);
    if (!A->col || !A->val) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    /* pass 2: write straight into place, then sort the row where it lies */
    for (int32_t i = 0; i < n; i++) {
        int64_t p = A->rowptr[i];
        int len = (int)(A->rowptr[i + 1] - p);
        int32_t *c = A->col + p;
        double *v = A->val + p;
        if (row(ctx, i, c, v) != len) {
            st = ILDL_ERR_INTERNAL;
            goto cleanup;
        }
        sort_row(len, c, v);
        for (int a = 0; a < len; a++) {
            if (c[a] < 0 || c[a] >= n || (a > 0 && c[a] == c[a - 1])) {
                st = ILDL_ERR_INTERNAL;
                goto cleanup;
            }
        }
    }
cleanup:
    free(tc);
    free(tv);
    free(rowptr);
    if (st != ILDL_SUCCESS) ildl_csr_free(A);
    return st;
}

/* splitmix64 step: spreads a small seed over all bits of the xoshiro state. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void ildl_gen_rng_seed(uint64_t seed, ildl_gen_rng *r)
{
    uint64_t x = seed;
    for (int k = 0; k < 4; k++) r->s[k] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ildl_gen_rng_next(ildl_gen_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double ildl_gen_rng_uniform(ildl_gen_rng *r)
{
    return (double)(ildl_gen_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}
