/* test_levels.c -- level sets of the coarse graph: dependencies respected, levels minimal,
 * grouping consistent, against a longest-path computation done by relaxation. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <stdlib.h>
#include <string.h>
#include "analyse/fill.h"
#include "analyse/levels.h"
#include "blockildl.h"

/* Longest path by Bellman-Ford-like relaxation over the edges in reverse order until
 * nothing changes (no reliance on processing rows in order). */
static int32_t *relaxed_levels(const ildl_coarse *C)
{
    int32_t nb = C->nb;
    int32_t *lv = calloc((size_t)nb + 1, sizeof(int32_t));
    assert_non_null(lv);
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int32_t k = nb - 1; k >= 0; k--)
            for (int64_t p = C->row_ptr[k + 1] - 1; p >= C->row_ptr[k]; p--) {
                int32_t i = C->col[p];
                if (i > k && lv[i] < lv[k] + 1) {
                    lv[i] = lv[k] + 1;
                    changed = 1;
                }
            }
    }
    return lv;
}

/* Every property the factorization and solves rely on. */
static void check_levels(const ildl_coarse *C, const ildl_levels *L)
{
    int32_t nb = C->nb;
    int32_t *ref = relaxed_levels(C);
    int32_t maxl = -1;
    for (int32_t i = 0; i < nb; i++) {
        assert_int_equal(L->row_level[i], ref[i]);
        if (ref[i] > maxl) maxl = ref[i];
    }
    assert_int_equal(L->nlevels, maxl + 1);

    /* dependencies respected, and each level minimal */
    char *has_pred_below = calloc((size_t)nb + 1, 1);
    assert_non_null(has_pred_below);
    for (int32_t k = 0; k < nb; k++)
        for (int64_t p = C->row_ptr[k]; p < C->row_ptr[k + 1]; p++) {
            int32_t i = C->col[p];
            if (i == k) continue;
            assert_true(L->row_level[k] < L->row_level[i]);
            if (L->row_level[k] == L->row_level[i] - 1) has_pred_below[i] = 1;
        }
    for (int32_t i = 0; i < nb; i++) assert_true(L->row_level[i] == 0 || has_pred_below[i]);
    free(has_pred_below);

    /* grouping: a permutation, ascending within a level, matching row_level, no empty level */
    char *seen = calloc((size_t)nb + 1, 1);
    assert_non_null(seen);
    assert_int_equal(L->level_ptr[0], 0);
    assert_int_equal(L->level_ptr[L->nlevels], nb);
    for (int32_t l = 0; l < L->nlevels; l++) {
        assert_true(L->level_ptr[l + 1] > L->level_ptr[l]);
        for (int32_t s = L->level_ptr[l]; s < L->level_ptr[l + 1]; s++) {
            int32_t r = L->level_rows[s];
            assert_true(r >= 0 && r < nb);
            assert_false(seen[r]);
            seen[r] = 1;
            assert_int_equal(L->row_level[r], l);
            if (s > L->level_ptr[l]) assert_true(r > L->level_rows[s - 1]);
        }
    }
    free(seen);
    free(ref);
}

static void test_random_patterns(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        int32_t n = 20 + (int32_t)(seed * 53 % 300);
        int bs = 1 + (int)(seed % 6);
        ildl_csr A;
        ildl_test_random_sym(n, 1 + (int)(seed % 5), 1.0, 0.0, seed, &A);
        int32_t nb = (n + bs - 1) / bs;
        int32_t *bstart = malloc(sizeof(int32_t) * (size_t)(nb + 1));
        assert_non_null(bstart);
        for (int32_t b = 0; b <= nb; b++) bstart[b] = b * bs < n ? b * bs : n;
        for (int lf = 0; lf <= 2; lf++) {
            ildl_coarse C;
            ildl_levels L;
            assert_int_equal(ildl_coarse_build(&A, nb, bstart, lf, &C), ILDL_SUCCESS);
            assert_int_equal(ildl_levels_compute(&C, &L), ILDL_SUCCESS);
            check_levels(&C, &L);
            ildl_levels_free(&L);
            assert_null(L.level_ptr);
            ildl_coarse_free(&C);
        }
        free(bstart);
        ildl_csr_free(&A);
    }
}

/* Build an ildl_coarse directly from a dense upper boolean pattern (diagonal implied). */
static void coarse_from_dense(int32_t nb, const char *up, ildl_coarse *C)
{
    C->nb = nb;
    C->row_ptr = malloc(sizeof(int64_t) * (size_t)(nb + 1));
    C->col = malloc(sizeof(int32_t) * (size_t)nb * (size_t)nb);
    C->lvl = calloc((size_t)nb * (size_t)nb, sizeof(int32_t));
    assert_true(C->row_ptr && C->col && C->lvl);
    int64_t m = 0;
    for (int32_t i = 0; i < nb; i++) {
        C->row_ptr[i] = m;
        C->col[m++] = i;
        for (int32_t j = i + 1; j < nb; j++)
            if (up[(size_t)i * nb + j]) C->col[m++] = j;
    }
    C->row_ptr[nb] = m;
    C->nblocks = m;
}

static void test_tridiagonal_and_diagonal(void **state)
{
    (void)state;
    const int32_t nb = 17;
    char *up = calloc((size_t)nb * nb, 1);
    assert_non_null(up);
    ildl_coarse C;
    ildl_levels L;

    /* block diagonal: all rows independent */
    coarse_from_dense(nb, up, &C);
    assert_int_equal(ildl_levels_compute(&C, &L), ILDL_SUCCESS);
    assert_int_equal(L.nlevels, 1);
    check_levels(&C, &L);
    ildl_levels_free(&L);
    ildl_coarse_free(&C);

    /* block tridiagonal: a chain, one row per level */
    for (int32_t i = 0; i + 1 < nb; i++) up[(size_t)i * nb + i + 1] = 1;
    coarse_from_dense(nb, up, &C);
    assert_int_equal(ildl_levels_compute(&C, &L), ILDL_SUCCESS);
    assert_int_equal(L.nlevels, nb);
    for (int32_t i = 0; i < nb; i++) assert_int_equal(L.level_rows[i], i);
    check_levels(&C, &L);
    ildl_levels_free(&L);
    ildl_coarse_free(&C);

    /* two interleaved chains (even and odd rows): nb/2 rounded up levels of two rows each */
    memset(up, 0, (size_t)nb * nb);
    for (int32_t i = 0; i + 2 < nb; i++) up[(size_t)i * nb + i + 2] = 1;
    coarse_from_dense(nb, up, &C);
    assert_int_equal(ildl_levels_compute(&C, &L), ILDL_SUCCESS);
    assert_int_equal(L.nlevels, (nb + 1) / 2);
    check_levels(&C, &L);
    ildl_levels_free(&L);
    ildl_coarse_free(&C);

    /* the same through the fill stage: a tridiagonal matrix with 3-row blocks */
    {
        int32_t n = 3 * nb;
        ildl_csr A;
        int32_t *ti = malloc(sizeof(int32_t) * 2 * (size_t)n);
        int32_t *tj = malloc(sizeof(int32_t) * 2 * (size_t)n);
        double *tv = malloc(sizeof(double) * 2 * (size_t)n);
        assert_true(ti && tj && tv);
        int64_t m = 0;
        for (int32_t i = 0; i < n; i++) {
            ti[m] = i; tj[m] = i; tv[m++] = 2.0;
            if (i + 1 < n) { ti[m] = i; tj[m] = i + 1; tv[m++] = -1.0; }
        }
        ildl_test_csr_from_triplets(n, m, ti, tj, tv, &A);
        int32_t *bstart = malloc(sizeof(int32_t) * (size_t)(nb + 1));
        assert_non_null(bstart);
        for (int32_t b = 0; b <= nb; b++) bstart[b] = 3 * b;
        assert_int_equal(ildl_coarse_build(&A, nb, bstart, 2, &C), ILDL_SUCCESS);
        assert_int_equal(ildl_levels_compute(&C, &L), ILDL_SUCCESS);
        assert_int_equal(L.nlevels, nb);
        check_levels(&C, &L);
        ildl_levels_free(&L);
        ildl_coarse_free(&C);
        free(bstart);
        free(ti);
        free(tj);
        free(tv);
        ildl_csr_free(&A);
    }
    free(up);
    ildl_levels_free(&L); /* zeroed: harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_patterns),
        cmocka_unit_test(test_tridiagonal_and_diagonal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
