/* test_drop.c -- dual-threshold tile dropping (tau rule, then keep the largest with ties to
 * the smaller local index) and tile compression (ascending local indices). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <math.h>
#include <string.h>
#include "cpu/drop.h"

#define LD 32
#define SENTINEL 99.0

/* Fill everything outside the mi x mj corner with SENTINEL (dropping must not look there). */
static void fence(int mi, int mj, double *t)
{
    for (int r = 0; r < LD; r++)
        for (int c = 0; c < LD; c++)
            if (r >= mi || c >= mj) t[r * LD + c] = SENTINEL;
}

static void check_fence(int mi, int mj, const double *t)
{
    for (int r = 0; r < LD; r++)
        for (int c = 0; c < LD; c++)
            if (r >= mi || c >= mj) assert_true(t[r * LD + c] == SENTINEL);
}

/* rownorm = (10, 2, 0), tau = .5: thresholds 5, 1, 0; |u| equal to the threshold drops. */
static void test_tau_rule(void **state)
{
    (void)state;
    double t[LD * LD];
    const double v[3][4] = {{5, 5.5, -4, -6}, {1, -1, 1.25, 0}, {0, 1e-300, -0.0, 3}};
    const double want[3][4] = {{0, 5.5, 0, -6}, {0, 0, 1.25, 0}, {0, 1e-300, 0, 3}};
    const double rownorm[3] = {10, 2, 0};
    fence(3, 4, t);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) t[r * LD + c] = v[r][c];
    assert_int_equal(ildl_drop_tile(3, 4, t, rownorm, 0.5, -1), 5);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            assert_true(t[r * LD + c] == want[r][c]);
            assert_false(signbit(t[r * LD + c]) && t[r * LD + c] == 0); /* no -0 left */
        }
    check_fence(3, 4, t);
    /* tau = 0 drops only zeros; a limit above the count changes nothing */
    assert_int_equal(ildl_drop_tile(3, 4, t, rownorm, 0, 5), 5);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) assert_true(t[r * LD + c] == want[r][c]);
}

/* 2 x 5 tile, tau = 0. Order by (|u| desc, index asc), index = r*32 + c:
 *   3 (0,3)=3, -3 (1,2)=34, -2 (0,1)=1, 2 (1,0)=32, 1 (0,0)=0, 1 (0,2)=2, -1 (0,4)=4,
 *   1 (1,1)=33, 1 (1,3)=35, .5 (1,4)=36.
 * keep 3 -> {3, 34, 1}: the |2| tie goes to index 1 over 32.
 * keep 7 -> also {32, 0, 2, 4}: of the five |1| entries, indices 0, 2, 4 beat 33, 35.
 * keep 0 -> nothing. */
static void test_keep_ties(void **state)
{
    (void)state;
    const double v[2][5] = {{1, -2, 1, 3, -1}, {2, 1, -3, 1, 0.5}};
    const double rownorm[2] = {1, 1};
    const int keep[3] = {3, 7, 0};
    const int kept[3][7] = {{3, 34, 1}, {3, 34, 1, 32, 0, 2, 4}, {0}};
    for (int t = 0; t < 3; t++) {
        double a[LD * LD];
        fence(2, 5, a);
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 5; c++) a[r * LD + c] = v[r][c];
        assert_int_equal(ildl_drop_tile(2, 5, a, rownorm, 0, keep[t]), keep[t]);
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 5; c++) {
                int in = 0;
                for (int q = 0; q < keep[t]; q++) in |= kept[t][q] == r * LD + c;
                assert_true(a[r * LD + c] == (in ? v[r][c] : 0));
            }
        check_fence(2, 5, a);
    }
}

/* Random tiles with many exact ties: the survivors are exactly those whose rank in the
 * (magnitude desc, index asc) order, counted independently here, is below keep. */
static void test_keep_random(void **state)
{
    (void)state;
    uint64_t s = 11;
    static double a[LD * LD], a0[LD * LD], rownorm[LD];
    for (int t = 0; t < 400; t++) {
        int mi = 1 + (int)(ildl_test_rand(&s) * LD), mj = 1 + (int)(ildl_test_rand(&s) * LD);
        double tau = (t % 4 == 0) ? 0 : 0.3 * ildl_test_rand(&s);
        int coarse = t % 2; /* values from a 5-point set: lots of ties */
        int nz_tau = 0, keep, got;
        fence(mi, mj, a0);
        for (int r = 0; r < mi; r++) {
            double ss = 0;
            for (int c = 0; c < mj; c++) {
                double u = 2 * ildl_test_rand(&s) - 1;
                if (coarse) u = floor(u * 2.5) / 2;
                if (ildl_test_rand(&s) < 0.2) u = 0;
                a0[r * LD + c] = u;
                ss += u * u;
            }
            rownorm[r] = sqrt(ss);
        }
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) nz_tau += fabs(a0[r * LD + c]) > tau * rownorm[r];
        keep = (t % 5 == 0) ? -1 : (int)(ildl_test_rand(&s) * (nz_tau + 3));
        memcpy(a, a0, sizeof a);
        got = ildl_drop_tile(mi, mj, a, rownorm, tau, keep);
        assert_int_equal(got, (keep < 0 || keep > nz_tau) ? nz_tau : keep);
        check_fence(mi, mj, a);
        int count = 0;
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) {
                double u = a0[r * LD + c];
                int i = r * LD + c, rank = 0, pass = fabs(u) > tau * rownorm[r];
                for (int r2 = 0; pass && r2 < mi; r2++)
                    for (int c2 = 0; c2 < mj; c2++) {
                        double w = fabs(a0[r2 * LD + c2]);
                        int i2 = r2 * LD + c2;
                        if (w > tau * rownorm[r2] && (w > fabs(u) || (w == fabs(u) && i2 < i)))
                            rank++;
                    }
                int survive = pass && (keep < 0 || rank < keep);
                assert_true(a[i] == (survive ? u : 0));
                count += a[i] != 0;
            }
        assert_int_equal(count, got);
    }
}

/* compress: nonzeros of the corner only, ascending local index r*32+c, values intact. */
static void test_compress(void **state)
{
    (void)state;
    uint64_t s = 5;
    static double a[LD * LD], val[LD * LD];
    static uint16_t idx[LD * LD];
    for (int t = 0; t < 20; t++) {
        int mi = 1 + (int)(ildl_test_rand(&s) * LD), mj = 1 + (int)(ildl_test_rand(&s) * LD);
        int nz = 0, n;
        fence(mi, mj, a);
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) {
                a[r * LD + c] = ildl_test_rand(&s) < 0.4 ? 2 * ildl_test_rand(&s) - 1 : 0;
                nz += a[r * LD + c] != 0;
            }
        n = ildl_tile_compress(mi, mj, a, idx, val);
        assert_int_equal(n, nz);
        for (int q = 0; q < n; q++) {
            int r = idx[q] / LD, c = idx[q] % LD;
            assert_true(r < mi && c < mj);
            assert_true(val[q] == a[idx[q]] && val[q] != 0);
            if (q > 0) assert_true(idx[q] > idx[q - 1]);
        }
    }
    assert_int_equal(ildl_tile_compress(0, 0, a, idx, val), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tau_rule),
        cmocka_unit_test(test_keep_ties),
        cmocka_unit_test(test_keep_random),
        cmocka_unit_test(test_compress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
