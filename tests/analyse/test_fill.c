/* test_fill.c -- the coarse block pattern and its block level of fill against dense
 * brute force on the nb x nb block graph. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "analyse/fill.h"
#include "blockildl.h"

#define NOLVL INT_MAX

/* Random partition of n rows into blocks of 1..maxbs rows; returns nb, bstart malloc'ed. */
static int32_t random_bstart(int32_t n, int maxbs, uint64_t *s, int32_t **bstart)
{
    int32_t *b = malloc(sizeof(int32_t) * (size_t)(n + 1));
    assert_non_null(b);
    int32_t nb = 0;
    b[0] = 0;
    while (b[nb] < n) {
        int32_t sz = 1 + (int32_t)(ildl_test_rand(s) * maxbs);
        if (sz > maxbs) sz = maxbs;
        if (b[nb] + sz > n) sz = n - b[nb];
        b[nb + 1] = b[nb] + sz;
        nb++;
    }
    *bstart = b;
    return nb;
}

/* Dense nb x nb level matrix of the upper block pattern of A (level 0, diagonal forced),
 * NOLVL where absent. */
static int *dense_level0(const ildl_csr *A, int32_t nb, const int32_t *bstart)
{
    int *lv = malloc(sizeof(int) * (size_t)nb * (size_t)nb);
    assert_non_null(lv);
    for (size_t k = 0; k < (size_t)nb * (size_t)nb; k++) lv[k] = NOLVL;
    for (int32_t bi = 0; bi < nb; bi++) {
        lv[(size_t)bi * nb + bi] = 0;
        for (int32_t i = bstart[bi]; i < bstart[bi + 1]; i++)
            for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
                int32_t j = A->col[p], bj = 0;
                while (bstart[bj + 1] <= j) bj++;
                if (bj >= bi) lv[(size_t)bi * nb + bj] = 0;
                else lv[(size_t)bj * nb + bi] = 0; /* lower entry: its mirror is upper */
            }
    }
    return lv;
}

/* Symbolic elimination with levels, triple loop in elimination order. */
static void brute_levels(int32_t nb, int lf, int *lv)
{
    for (int32_t k = 0; k < nb; k++)
        for (int32_t i = k + 1; i < nb; i++) {
            int a = lv[(size_t)k * nb + i];
            if (a == NOLVL || a > lf) continue;
            for (int32_t j = i + 1; j < nb; j++) {
                int b = lv[(size_t)k * nb + j];
                if (b == NOLVL || b > lf) continue;
                long long c = (long long)a + b + 1;
                if (c < lv[(size_t)i * nb + j]) lv[(size_t)i * nb + j] = (int)c;
            }
        }
}

/* Structural invariants of C and exact agreement with the dense expectation. */
static void check_against(const ildl_coarse *C, int32_t nb, int lf, const int *lv)
{
    /* the complete fill (lf >= ILDL_MAX_FILL_LEVEL) computes no levels: fill blocks have 1 */
    int exact = lf < ILDL_MAX_FILL_LEVEL;
    assert_int_equal(C->nb, nb);
    assert_int_equal(C->row_ptr[0], 0);
    int64_t expected = 0;
    for (int32_t i = 0; i < nb; i++)
        for (int32_t j = i; j < nb; j++)
            if (lv[(size_t)i * nb + j] != NOLVL && lv[(size_t)i * nb + j] <= lf) expected++;
    assert_int_equal(C->nblocks, expected);
    assert_int_equal(C->row_ptr[nb], C->nblocks);
    for (int32_t i = 0; i < nb; i++) {
        assert_true(C->row_ptr[i + 1] > C->row_ptr[i]);
        assert_int_equal(C->col[C->row_ptr[i]], i); /* diagonal first */
        for (int64_t p = C->row_ptr[i]; p < C->row_ptr[i + 1]; p++) {
            int32_t j = C->col[p];
            if (p > C->row_ptr[i]) assert_true(j > C->col[p - 1]);
            assert_true(j >= i && j < nb);
            if (exact) assert_int_equal(C->lvl[p], lv[(size_t)i * nb + j]);
            else assert_int_equal(C->lvl[p], lv[(size_t)i * nb + j] > 0);
        }
    }
}

/* Full symbolic block Cholesky pattern by boolean elimination (upper part in pat). */
static char *boolean_cholesky(const int *lv0, int32_t nb)
{
    char *g = calloc((size_t)nb * (size_t)nb, 1);
    assert_non_null(g);
    for (int32_t i = 0; i < nb; i++)
        for (int32_t j = i; j < nb; j++)
            if (lv0[(size_t)i * nb + j] == 0) g[(size_t)i * nb + j] = g[(size_t)j * nb + i] = 1;
    for (int32_t k = 0; k < nb; k++)
        for (int32_t i = k + 1; i < nb; i++)
            if (g[(size_t)i * nb + k])
                for (int32_t j = k + 1; j < nb; j++)
                    if (g[(size_t)k * nb + j]) g[(size_t)i * nb + j] = 1;
    return g;
}

static void random_case(int32_t n, int deg, int maxbs, uint64_t seed)
{
    ildl_csr A;
    uint64_t s = seed * 7919 + 1;
    ildl_test_random_sym(n, deg, 1.0, 0.2, seed, &A);
    int32_t *bstart;
    int32_t nb = random_bstart(n, maxbs, &s, &bstart);
    int *lv0 = dense_level0(&A, nb, bstart);
    int *lv = malloc(sizeof(int) * (size_t)nb * (size_t)nb);
    assert_non_null(lv);
    const int lfs[] = {0, 1, 2, 3, 1000, ILDL_MAX_FILL_LEVEL, INT_MAX};
    for (size_t t = 0; t < sizeof lfs / sizeof lfs[0]; t++) {
        int lf = lfs[t];
        memcpy(lv, lv0, sizeof(int) * (size_t)nb * (size_t)nb);
        brute_levels(nb, lf, lv);
        ildl_coarse C;
        assert_int_equal(ildl_coarse_build(&A, nb, bstart, lf, &C), ILDL_SUCCESS);
        check_against(&C, nb, lf, lv);
        if (lf >= 1000) {
            /* unlimited fill: exactly the symbolic block Cholesky pattern */
            char *g = boolean_cholesky(lv0, nb);
            int64_t cnt = 0;
            for (int32_t i = 0; i < nb; i++)
                for (int32_t j = i; j < nb; j++) cnt += g[(size_t)i * nb + j] || i == j;
            assert_int_equal(C.nblocks, cnt);
            for (int32_t i = 0; i < nb; i++)
                for (int64_t p = C.row_ptr[i]; p < C.row_ptr[i + 1]; p++)
                    assert_true(C.col[p] == i || g[(size_t)i * nb + C.col[p]]);
            free(g);
        }
        ildl_coarse_free(&C);
        assert_null(C.row_ptr);
    }
    free(lv);
    free(lv0);
    free(bstart);
    ildl_csr_free(&A);
}

static void test_random_vs_bruteforce(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        int32_t n = 10 + (int32_t)(seed * 37 % 110);
        random_case(n, 2 + (int)(seed % 4), 1 + (int)(seed % 5), seed);
    }
    /* scalar blocks and blocks of the full 32 rows */
    random_case(60, 3, 1, 101);
    random_case(200, 4, 32, 102);
}

/* A hand-worked 5-cycle 0-1-2-3-4-0: eliminating 0 joins 1 and 4 (level 1); eliminating 1
 * then joins 2 and 4 at level 0+1+1 = 2; the rest is present already. */
static void test_cycle_by_hand(void **state)
{
    (void)state;
    for (int bs = 1; bs <= 3; bs++) {
        int32_t n = 5 * bs;
        int32_t ti[64], tj[64];
        double tv[64];
        int64_t m = 0;
        const int e[5][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}};
        for (int k = 0; k < 5; k++) { /* one entry per block edge, at varying local rows */
            ti[m] = e[k][0] * bs + (k % bs);
            tj[m] = e[k][1] * bs + ((k + 1) % bs);
            tv[m++] = 1.0;
        }
        for (int32_t i = 0; i < n; i++) { ti[m] = i; tj[m] = i; tv[m++] = 2.0; }
        ildl_csr A;
        ildl_test_csr_from_triplets(n, m, ti, tj, tv, &A);
        int32_t bstart[6];
        for (int b = 0; b <= 5; b++) bstart[b] = b * bs;

        ildl_coarse C;
        assert_int_equal(ildl_coarse_build(&A, 5, bstart, 0, &C), ILDL_SUCCESS);
        assert_int_equal(C.nblocks, 5 + 5);
        ildl_coarse_free(&C);

        assert_int_equal(ildl_coarse_build(&A, 5, bstart, 1, &C), ILDL_SUCCESS);
        assert_int_equal(C.nblocks, 11);
        /* block row 1: {1, 2, 4} with (1,4) at level 1 */
        assert_int_equal(C.row_ptr[2] - C.row_ptr[1], 3);
        assert_int_equal(C.col[C.row_ptr[1] + 2], 4);
        assert_int_equal(C.lvl[C.row_ptr[1] + 2], 1);
        assert_int_equal(C.row_ptr[3] - C.row_ptr[2], 2); /* row 2: {2, 3} */
        ildl_coarse_free(&C);

        assert_int_equal(ildl_coarse_build(&A, 5, bstart, 2, &C), ILDL_SUCCESS);
        assert_int_equal(C.nblocks, 12);
        assert_int_equal(C.row_ptr[3] - C.row_ptr[2], 3); /* row 2: {2, 3, 4} */
        assert_int_equal(C.col[C.row_ptr[2] + 2], 4);
        assert_int_equal(C.lvl[C.row_ptr[2] + 2], 2);
        assert_int_equal(C.lvl[C.row_ptr[2] + 1], 0);
        ildl_coarse_free(&C);
        ildl_csr_free(&A);
    }
}

/* A block whose diagonal block holds no entry of A still gets its diagonal tile. */
static void test_zero_diagonal_block(void **state)
{
    (void)state;
    /* blocks {0,1} {2,3} {4}; block 0 couples only to block 1, block 2 is empty but for
     * a coupling to block 0 */
    int32_t ti[] = {0, 1, 2, 3, 0};
    int32_t tj[] = {2, 3, 2, 3, 4};
    double tv[] = {1, 1, 1, 1, 1};
    ildl_csr A;
    ildl_test_csr_from_triplets(5, 5, ti, tj, tv, &A);
    int32_t bstart[] = {0, 2, 4, 5};
    ildl_coarse C;
    assert_int_equal(ildl_coarse_build(&A, 3, bstart, 0, &C), ILDL_SUCCESS);
    for (int32_t b = 0; b < 3; b++) {
        assert_int_equal(C.col[C.row_ptr[b]], b);
        assert_int_equal(C.lvl[C.row_ptr[b]], 0);
    }
    /* (0,0) (0,1) (0,2) | (1,1) | (2,2), and with fill (1,2) at level 1 */
    assert_int_equal(C.nblocks, 5);
    ildl_coarse_free(&C);
    assert_int_equal(ildl_coarse_build(&A, 3, bstart, 1, &C), ILDL_SUCCESS);
    assert_int_equal(C.nblocks, 6);
    assert_int_equal(C.row_ptr[2] - C.row_ptr[1], 2);
    assert_int_equal(C.col[C.row_ptr[1] + 1], 2);
    assert_int_equal(C.lvl[C.row_ptr[1] + 1], 1);
    ildl_coarse_free(&C);
    ildl_coarse_free(&C); /* freeing a zeroed pattern is harmless */
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_bruteforce),
        cmocka_unit_test(test_cycle_by_hand),
        cmocka_unit_test(test_zero_diagonal_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
