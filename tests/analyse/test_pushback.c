/* test_pushback.c -- the push-back's reordering: the pushed blocks last, each group in its
 * order, every block's rows unchanged; "moved" exactly when a kept block follows a pushed one;
 * the analysis for the new order keeps the scaling and moves each pair hint with its block. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "analyse/pushback.h"

/* A random blocking of n rows: a random permutation cut into blocks of 1..8 rows. */
static void random_blocking(int32_t n, uint64_t *s, ildl_blocking *b)
{
    b->n = n;
    b->perm = malloc(sizeof(int32_t) * (size_t)n);
    b->bstart = malloc(sizeof(int32_t) * ((size_t)n + 1));
    assert_non_null(b->perm);
    assert_non_null(b->bstart);
    for (int32_t i = 0; i < n; i++) b->perm[i] = i;
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)(ildl_test_rand(s) * (i + 1)), t = b->perm[i];
        b->perm[i] = b->perm[j];
        b->perm[j] = t;
    }
    int32_t nb = 0, r = 0;
    while (r < n) {
        b->bstart[nb++] = r;
        r += 1 + (int32_t)(ildl_test_rand(s) * 8);
        if (r > n) r = n;
    }
    b->bstart[nb] = n;
    b->nb = nb;
    b->ordering_used = ILDL_ORDER_NATURAL;
}

static void test_blocking(void **state)
{
    (void)state;
    uint64_t s = 7;
    for (int trial = 0; trial < 200; trial++) {
        ildl_blocking in, out;
        random_blocking(1 + (int32_t)(ildl_test_rand(&s) * 120), &s, &in);
        uint8_t *push = malloc((size_t)in.nb);
        double p = trial % 4 == 0 ? 0.0 : ildl_test_rand(&s);
        for (int32_t b = 0; b < in.nb; b++) push[b] = ildl_test_rand(&s) < p;
        if (trial % 7 == 1) /* pushed blocks already last */
            for (int32_t b = 0; b < in.nb; b++) push[b] = b >= in.nb / 2;
        int moved = -1, expect = 0, seen = 0;
        for (int32_t b = 0; b < in.nb; b++) {
            if (push[b]) seen = 1;
            else if (seen) expect = 1;
        }
        assert_int_equal(ildl_pushback_blocking(&in, push, &out, &moved), ILDL_SUCCESS);
        assert_int_equal(moved, expect);
        assert_int_equal(out.nb, in.nb);
        assert_int_equal(out.n, in.n);
        assert_int_equal(out.bstart[0], 0);
        assert_int_equal(out.bstart[out.nb], in.n);
        /* block q of out is the q-th of (kept blocks in order, then pushed blocks in order) */
        int32_t q = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int32_t b = 0; b < in.nb; b++) {
                if ((push[b] != 0) != (pass == 1)) continue;
                int32_t len = in.bstart[b + 1] - in.bstart[b];
                assert_int_equal(out.bstart[q + 1] - out.bstart[q], len);
                assert_memory_equal(out.perm + out.bstart[q], in.perm + in.bstart[b], sizeof(int32_t) * (size_t)len);
                q++;
            }
        assert_int_equal(q, in.nb);
        if (!expect) assert_memory_equal(out.perm, in.perm, sizeof(int32_t) * (size_t)in.n);
        free(push);
        ildl_blocking_free(&in);
        ildl_blocking_free(&out);
    }
}

static void test_analysis(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(300, 4, 1.0, 0.3, 5, &A);
    int32_t n = A.n;
    ildl_options o;
    ildl_options_default(&o);
    o.scaling = ILDL_SCALING_MATCHING;
    o.blocking = ILDL_BLOCKING_RB;
    o.ordering = ILDL_ORDER_AMD;
    ildl_analysis an, an2;
    char msg[256] = "";
    assert_int_equal(ildl_analyse(&A, NULL, &o, &an, msg, sizeof msg), ILDL_SUCCESS);
    assert_non_null(an.pair_hint);
    uint8_t *push = calloc((size_t)an.blk.nb, 1);
    push[0] = push[2] = 1;
    int moved = 0;
    int64_t needed = -1;
    assert_int_equal(ildl_analyse_pushback(&A, NULL, &o, 0, &an, push, &moved, &needed, &an2, msg, sizeof msg),
                     ILDL_SUCCESS);
    assert_int_equal(moved, 1);
    assert_int_equal(needed, 0);
    assert_memory_equal(an2.scale, an.scale, sizeof(double) * (size_t)n);
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)n);
    for (int32_t k = 0; k < n; k++) pos[an.blk.perm[k]] = k;
    int32_t hints = 0, hints2 = 0;
    for (int32_t k = 0; k < n; k++) {
        hints += an.pair_hint[k];
        hints2 += an2.pair_hint[k];
        assert_int_equal(an2.pair_hint[k], an.pair_hint[pos[an2.blk.perm[k]]]);
    }
    assert_true(hints > 0);
    assert_int_equal(hints2, hints);
    /* the last two blocks are old blocks 0 and 2 */
    int32_t nb = an.blk.nb;
    assert_int_equal(an2.blk.perm[an2.blk.bstart[nb - 2]], an.blk.perm[an.blk.bstart[0]]);
    assert_int_equal(an2.blk.perm[an2.blk.bstart[nb - 1]], an.blk.perm[an.blk.bstart[2]]);
    assert_true(an2.tiles.ntiles >= nb);
    assert_true(an2.levels.nlevels >= 1);
    /* a budget below what the new order needs is refused with the entries it needs */
    ildl_analysis an3;
    assert_int_equal(ildl_analyse_pushback(&A, NULL, &o, 10, &an, push, &moved, &needed, &an3, msg, sizeof msg),
                     ILDL_ERR_OUT_OF_MEMORY);
    assert_true(needed > 10);
    assert_non_null(strstr(msg, "entries"));
    /* nothing to move: an is left empty */
    memset(push, 0, (size_t)nb);
    push[nb - 1] = 1;
    assert_int_equal(ildl_analyse_pushback(&A, NULL, &o, 0, &an, push, &moved, NULL, &an3, msg, sizeof msg),
                     ILDL_SUCCESS);
    assert_int_equal(moved, 0);
    assert_null(an3.scale);
    free(pos); free(push);
    ildl_analysis_free(&an);
    ildl_analysis_free(&an2);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking),
        cmocka_unit_test(test_analysis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
