/* test_dense_rules.c -- the pivot rules both backends share (core/dense_rules.h), for double
 * and float: perturbation of small 1x1 pivots, the 2x2 safety test and solve, Bunch-Kaufman's
 * choice and the rook walk's step, each at and around its thresholds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include "core/dense_rules.h"

static void test_pivot1(void **state)
{
    int pert = -1;
    (void)state;
    /* kept: |d| >= tol */
    assert_true(ildl_pivot1(0.5, 1e-8, 1e-4, &pert) == 0.5 && pert == 0);
    assert_true(ildl_pivot1(-1e-8, 1e-8, 1e-4, &pert) == -1e-8 && pert == 0);
    /* replaced by copysign(perturb, d); perturb for d == 0, also with tol == 0 */
    assert_true(ildl_pivot1(-1e-9, 1e-8, 1e-4, &pert) == -1e-4 && pert == 1);
    assert_true(ildl_pivot1(3e-12, 1e-8, 1e-4, &pert) == 1e-4 && pert == 1);
    assert_true(ildl_pivot1(0.0, 0.0, 1e-4, &pert) == 1e-4 && pert == 1);
    assert_true(ildl_pivot1(-0.0, 0.0, 2.0, &pert) == 2.0 && pert == 1);
    assert_true(ildl_pivot1_s(-1e-9f, 1e-8f, 1e-4f, &pert) == -1e-4f && pert == 1);
    assert_true(ildl_pivot1_s(2.0f, 1e-8f, 1e-4f, &pert) == 2.0f && pert == 0);
}

static void test_pivot2(void **state)
{
    double y0, y1, a = 1, b = 3, c = 2, det;
    float f0, f1;
    (void)state;
    /* [1 3; 3 2]: det -7, well conditioned */
    assert_true(ildl_pivot2_ok(a, b, c, 1e-8));
    det = ildl_pivot2_det(a, b, c);
    assert_true(det == -7);
    /* solves [1 3; 3 2] y = (4, 5): y = (1, 1) exactly */
    ildl_pivot2_solve(a, b, c, det, 4, 5, &y0, &y1);
    assert_true(y0 == 1 && y1 == 1);
    ildl_pivot2_solve_s(1, 3, 2, ildl_pivot2_det_s(1, 3, 2), 4, 5, &f0, &f1);
    assert_true(f0 == 1 && f1 == 1);
    /* singular [1 2; 2 4]; nearly singular against tol; all zero; tiny against tol */
    assert_false(ildl_pivot2_ok(1, 2, 4, 1e-8));
    assert_false(ildl_pivot2_ok(1, 1, 1 + 1e-10, 1e-8));
    assert_true(ildl_pivot2_ok(1, 1, 1 + 1e-6, 1e-8));
    assert_false(ildl_pivot2_ok(0, 0, 0, 0));
    assert_false(ildl_pivot2_ok(1e-10, 1e-9, 1e-10, 1e-8));
    /* huge entries: the test must not overflow (g^2 would) */
    assert_true(ildl_pivot2_ok(0, 1e200, 0, 1e-8));
    assert_true(ildl_pivot2_ok_s(0, 1e30f, 0, 1e-8f));
    /* NaN is never safe */
    assert_false(ildl_pivot2_ok(NAN, 1, 1, 1e-8));
}

/* |[a b; b c]|^{-1} x: |A| y = x with |A| = (A^2 + |det A| I) / sqrt(tr A^2 + 2 |det A|) (the
 * square root of A^2, in long double), to rounding; = A^{-1} x for a positive definite A;
 * the eigenvalues' signs do not matter; b = 0 and b tiny against a - c (tau^2 would overflow). */
static void abs_check(double a, double b, double c, double x0, double x1)
{
    double y0, y1;
    ildl_pivot2_abs_solve(a, b, c, x0, x1, &y0, &y1);
    long double A = a, B = b, C = c;
    long double s00 = A * A + B * B, s01 = B * (A + C), s11 = C * C + B * B;
    long double det = fabsl(A * C - B * B), nrm = sqrtl(s00 + s11 + 2 * det);
    long double m00 = (s00 + det) / nrm, m01 = s01 / nrm, m11 = (s11 + det) / nrm;
    long double r0 = m00 * y0 + m01 * y1 - x0, r1 = m01 * y0 + m11 * y1 - x1;
    long double scale = (fabsl(m00) + fabsl(m01) + fabsl(m11)) * (fabsl(y0) + fabsl(y1)) + fabsl(x0) + fabsl(x1);
    assert_true(fabsl(r0) <= 1e-14L * scale);
    assert_true(fabsl(r1) <= 1e-14L * scale);
}

static void test_pivot2_abs(void **state)
{
    (void)state;
    double cases[][3] = {{2, 1, 3}, {-2, 1, -3}, {1, 3, -1}, {0, 1, 0}, {1e-8, 1, 1e-8}, {4, 0, -5},
                         {1, 1e-160, 2}, {1e200, 1e199, -1e200}, {1e-200, 3e-200, 1e-201}, {5, -2, 5}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        abs_check(cases[k][0], cases[k][1], cases[k][2], 1.0, -0.5);
        abs_check(cases[k][0], cases[k][1], cases[k][2], -3.0, 7.0);
    }
    /* a positive definite pivot: |A| = A */
    double y0, y1, z0, z1;
    ildl_pivot2_abs_solve(2, 1, 3, 1, 2, &y0, &y1);
    ildl_pivot2_solve(2, 1, 3, ildl_pivot2_det(2, 1, 3), 1, 2, &z0, &z1);
    assert_true(fabs(y0 - z0) <= 1e-15 && fabs(y1 - z1) <= 1e-15);
    /* a negative definite one: |A| = -A */
    ildl_pivot2_abs_solve(-2, -1, -3, 1, 2, &y0, &y1);
    assert_true(fabs(y0 - z0) <= 1e-15 && fabs(y1 - z1) <= 1e-15);
    /* b = 0: the diagonal by magnitude */
    ildl_pivot2_abs_solve(-4, 0, 8, 2, 2, &y0, &y1);
    assert_true(y0 == 0.5 && y1 == 0.25);
}

static void test_bk(void **state)
{
    const double al = ILDL_BK_ALPHA;
    (void)state;
    assert_true(al > 0.6403 && al < 0.6404 && fabs(al - (1 + sqrt(17.0)) / 8) < 1e-15);
    /* first test: an empty column or a dominant diagonal takes a(k,k) */
    assert_true(ildl_pivot_diag_first(0.0, 0.0, al));
    assert_true(ildl_pivot_diag_first(al * 2, 2.0, al));
    assert_false(ildl_pivot_diag_first(0.5 * al * 2, 2.0, al));
    /* second: akk * sigma >= alpha lambda^2 keeps k */
    assert_int_equal(ildl_pivot_bk_choose(1.0, 2.0, 4 * al, 0.0, al), ILDL_PICK_K);
    /* else a dominant a(r,r) against sigma takes r */
    assert_int_equal(ildl_pivot_bk_choose(0.1, 2.0, 3.0, 3 * al, al), ILDL_PICK_R);
    /* else the pair */
    assert_int_equal(ildl_pivot_bk_choose(0.1, 2.0, 3.0, 0.5, al), ILDL_PICK_PAIR);
    assert_int_equal(ildl_pivot_bk_choose_s(0.1f, 2.0f, 3.0f, 0.5f, (float)al), ILDL_PICK_PAIR);
}

static void test_rook(void **state)
{
    const double al = ILDL_BK_ALPHA;
    (void)state;
    /* a(r,r) dominates its column: 1x1 at r */
    assert_int_equal(ildl_pivot_rook_step(2 * al, 2.0, 1.0, 5, 0, 0, 8, al), ILDL_PICK_R);
    /* the largest entry of column r is back at q: the pair */
    assert_int_equal(ildl_pivot_rook_step(0.0, 2.0, 1.0, 0, 0, 0, 8, al), ILDL_PICK_PAIR);
    /* column r's max no larger than column q's: the pair */
    assert_int_equal(ildl_pivot_rook_step(0.0, 1.0, 1.0, 5, 0, 0, 8, al), ILDL_PICK_PAIR);
    /* a larger entry elsewhere: move on */
    assert_int_equal(ildl_pivot_rook_step(0.0, 3.0, 1.0, 5, 0, 0, 8, al), ILDL_PICK_MOVE);
    /* ... unless the walk has used its m moves (non-finite input) */
    assert_int_equal(ildl_pivot_rook_step(0.0, 3.0, 1.0, 5, 0, 8, 8, al), ILDL_PICK_PAIR);
    assert_int_equal(ildl_pivot_rook_step_s(0.0f, 3.0f, 1.0f, 5, 0, 0, 8, (float)al), ILDL_PICK_MOVE);
    /* NaN in the scanned column never walks on forever: rowmax NaN compares false -> move,
     * bounded by it >= m */
    assert_int_equal(ildl_pivot_rook_step(0.0, NAN, 1.0, 5, 0, 8, 8, al), ILDL_PICK_PAIR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pivot1),
        cmocka_unit_test(test_pivot2),
        cmocka_unit_test(test_pivot2_abs),
        cmocka_unit_test(test_bk),
        cmocka_unit_test(test_rook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
