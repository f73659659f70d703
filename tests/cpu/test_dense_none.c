/* test_dense_none.c -- statically pivoted dense tile factorization A = U^T D U: no
 * interchanges, 2x2 pivots exactly where pair_hint says, graceful perturbation of zero
 * pivots (the perturbation is the only difference to A), hand-worked cases, and the
 * off-diagonal solve. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <math.h>
#include <string.h>
#include "blockildl.h"
#include "cpu/dense_factor.h"
#include "support/dense_check.h"

#define LD ILDL_TILE
#define TOL 1e-10
#define PERTURB 1e-6

static ildl_dense_params params(const int8_t *hint)
{
    ildl_dense_params p = {TOL, PERTURB, hint};
    return p;
}

/* Symmetric matrix of 2x2 diagonal blocks [0 4; 4 0] (pairs (2i, 2i+1)) plus entries in
 * (-.1, .1) elsewhere: every diagonal is zero, but the hinted pairs are strong pivots. */
static void gen_paired(int m, uint64_t seed, double *a)
{
    uint64_t s = seed;
    memset(a, 0, sizeof(double) * LD * LD);
    for (int i = 0; i < m; i++)
        for (int j = i + 1; j < m; j++) {
            double v = 0.2 * ildl_test_rand(&s) - 0.1;
            a[i * LD + j] = a[j * LD + i] = (i % 2 == 0 && j == i + 1) ? 4 : v;
        }
}

/* ------------------------------------------------------------------ hand-worked cases */

/* A = [0 1; 1 0], no hint: d0 = 0 is perturbed to +PERTURB (nperturbed = 1), U(0,1) =
 * 1/PERTURB = 1e6, d1 = 0 - 1 * 1e6 = -1e6. U^T D U = A + PERTURB e0 e0^T. With the hint
 * the same matrix is one exact 2x2 pivot [0 1; 1 0] and nothing is perturbed. */
static void test_zero_diag_perturbs(void **state)
{
    (void)state;
    double a[LD * LD] = {0}, a0[LD * LD];
    const int8_t hint[2] = {1, 0};
    ildl_dense_params p = params(NULL);
    ildl_dense_result res;
    a[1] = a[LD] = 1;
    memcpy(a0, a, sizeof a);
    ildl_dense_factor_none(2, a, &p, &res);
    dt_check_structure(2, a, &res);
    assert_int_equal(res.nperturbed, 1);
    assert_int_equal(res.n2x2, 0);
    assert_true(res.d_diag[0] == PERTURB);
    assert_true(fabs(a[1] - 1e6) <= 1e-9);
    assert_true(fabs(res.d_diag[1] + 1e6) <= 1e-9);
    assert_true(res.perm[0] == 0 && res.perm[1] == 1);

    memcpy(a, a0, sizeof a);
    p = params(hint);
    ildl_dense_factor_none(2, a, &p, &res);
    dt_check_structure(2, a, &res);
    assert_int_equal(res.nperturbed, 0);
    assert_int_equal(res.n2x2, 1);
    assert_true(res.type[0] == 2 && res.type[1] == 0);
    assert_true(res.d_diag[0] == 0 && res.d_off[0] == 1 && res.d_diag[1] == 0);
    assert_true(dt_recon_error(2, a0, a, &res) == 0);
}

/* A = [0 .5 1 0; .5 3 0 0; 1 0 0 0; 0 0 0 -1], hint = {1,0,0,0}.
 * k=0: 2x2 D = [0 .5; .5 3] (no interchange even though a(0,2) = 1 is larger), det = -.25.
 *      j=2: [w1 w2] = [1 0] -> U(0,2) = (3*1 - .5*0)/-.25 = -12, U(1,2) = (0 - .5*1)/-.25 = 2;
 *      a22 <- 0 - (1*(-12) + 0*2) = 12. j=3: zero column.
 * k=2: D2 = 12; k=3: D3 = -1. */
static void test_hand_hinted_pair(void **state)
{
    (void)state;
    const double v[4][4] = {{0, .5, 1, 0}, {.5, 3, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, -1}};
    const int8_t hint[4] = {1, 0, 0, 0};
    double a[LD * LD] = {0}, a0[LD * LD];
    ildl_dense_params p = params(hint);
    ildl_dense_result res;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) a[i * LD + j] = v[i][j];
    memcpy(a0, a, sizeof a);
    ildl_dense_factor_none(4, a, &p, &res);
    dt_check_structure(4, a, &res);
    const int type[4] = {2, 0, 1, 1};
    const double d[4] = {0, 3, 12, -1};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(res.perm[r], r);
        assert_int_equal(res.type[r], type[r]);
        assert_true(res.d_diag[r] == d[r]);
    }
    assert_true(res.d_off[0] == .5);
    assert_true(a[0 * LD + 2] == -12 && a[1 * LD + 2] == 2);
    assert_true(a[0 * LD + 3] == 0 && a[1 * LD + 3] == 0 && a[2 * LD + 3] == 0);
    assert_int_equal(res.nperturbed, 0);
    assert_true(dt_recon_error(4, a0, a, &res) <= 1e-15);
}

/* A hint on the last row has no partner and is ignored; a hinted pair that is numerically
 * singular (here all zero) falls back to two perturbed 1x1 pivots. */
static void test_bad_hints(void **state)
{
    (void)state;
    double a[LD * LD] = {0};
    int8_t hint[LD];
    ildl_dense_params p = params(hint);
    ildl_dense_result res;
    memset(hint, 0, sizeof hint);
    hint[2] = 1;
    for (int r = 0; r < 3; r++) a[r * LD + r] = r + 1.0;
    ildl_dense_factor_none(3, a, &p, &res);
    dt_check_structure(3, a, &res);
    for (int r = 0; r < 3; r++) assert_true(res.type[r] == 1 && res.d_diag[r] == r + 1.0);

    memset(a, 0, sizeof a);
    for (int r = 0; r < LD; r += 2) hint[r] = 1, hint[r + 1] = 0;
    ildl_dense_factor_none(LD, a, &p, &res);
    dt_check_structure(LD, a, &res);
    assert_int_equal(res.n2x2, 0);
    assert_int_equal(res.nperturbed, LD);
    for (int r = 0; r < LD; r++) assert_true(res.d_diag[r] == PERTURB);
}

static void test_identity_and_m1(void **state)
{
    (void)state;
    double a[LD * LD] = {0};
    ildl_dense_params p = params(NULL);
    ildl_dense_result res;
    for (int r = 0; r < LD; r++) a[r * LD + r] = -1;
    ildl_dense_factor(ILDL_PIVOT_NONE, LD, a, &p, &res);
    dt_check_structure(LD, a, &res);
    for (int r = 0; r < LD; r++) assert_true(res.perm[r] == r && res.d_diag[r] == -1);
    assert_true(dt_max_abs_u(LD, a) == 0 && res.nperturbed == 0);

    a[0] = 7;
    ildl_dense_factor_none(1, a, &p, &res);
    assert_true(res.d_diag[0] == 7 && res.type[0] == 1 && a[0] == 0 && res.nperturbed == 0);
    a[0] = -0.0; /* d == 0 gets +perturb whatever its sign bit */
    ildl_dense_factor_none(1, a, &p, &res);
    assert_true(res.d_diag[0] == PERTURB && res.nperturbed == 1);
}

/* ------------------------------------------------------------------ random matrices */

/* Zero-diagonal paired matrices: with the hints every pair is a 2x2 pivot and A = U^T D U;
 * without them the zero diagonals are perturbed and U^T D U differs from A only on the
 * perturbed diagonal entries (up to rounding relative to |U|^T |D| |U|). */
static void test_random_paired(void **state)
{
    (void)state;
    static double a[LD * LD], a0[LD * LD], M[LD * LD], G[LD * LD];
    int8_t hint[LD];
    for (int r = 0; r < LD; r++) hint[r] = (r % 2 == 0);
    for (int m = 2; m <= LD; m += 2)
        for (uint64_t seed = 1; seed <= 10; seed++) {
            ildl_dense_params p = params(hint);
            ildl_dense_result res, res2;
            gen_paired(m, 100 * m + seed, a0);
            memcpy(a, a0, sizeof a);
            ildl_dense_factor_none(m, a, &p, &res);
            dt_check_structure(m, a, &res);
            assert_int_equal(res.nperturbed, 0);
            assert_int_equal(res.n2x2, m / 2);
            for (int r = 0; r < m; r++) assert_int_equal(res.perm[r], r);
            assert_true(dt_recon_error(m, a0, a, &res) <= 1e-13);
            memcpy(M, a0, sizeof M);
            ildl_dense_factor(ILDL_PIVOT_NONE, m, M, &p, &res2);
            assert_memory_equal(a, M, sizeof M);
            assert_memory_equal(&res, &res2, sizeof res);

            p = params(NULL);
            memcpy(a, a0, sizeof a);
            ildl_dense_factor_none(m, a, &p, &res);
            dt_check_structure(m, a, &res);
            assert_true(res.nperturbed >= 1);
            assert_int_equal(res.n2x2, 0);
            dt_reconstruct(m, a, &res, M, G);
            double gn = 0, en = 0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++) gn += G[i * LD + j] * G[i * LD + j];
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++) {
                    double e = M[i * LD + j] - a0[i * LD + j];
                    if (i == j && fabs(res.d_diag[i]) == PERTURB) continue;
                    en += e * e;
                }
            assert_true(sqrt(en) <= 1e-14 * sqrt(gn));
        }
}

/* Diagonally dominant (definite or not): no hints needed, nothing perturbed. */
static void test_random_dominant(void **state)
{
    (void)state;
    double a[LD * LD], a0[LD * LD];
    for (int m = 1; m <= LD; m++)
        for (uint64_t seed = 1; seed <= 10; seed++) {
            ildl_dense_params p = params(NULL);
            ildl_dense_result res;
            dt_gen_general(m, 0.0, 100 * m + seed, a0);
            for (int r = 0; r < m; r++) a0[r * LD + r] = (seed % 2 && r % 3 == 0 ? -1 : 1) * m;
            memcpy(a, a0, sizeof a);
            ildl_dense_factor_none(m, a, &p, &res);
            dt_check_structure(m, a, &res);
            assert_int_equal(res.nperturbed, 0);
            for (int r = 0; r < m; r++) assert_true(res.perm[r] == r && res.type[r] == 1);
            assert_true(dt_recon_error(m, a0, a, &res) <= 1e-14);
        }
}

/* solve_offdiag with hinted 2x2 pivots: X = D^-1 U^-T B satisfies U^T D X = B. */
static void test_solve_offdiag(void **state)
{
    (void)state;
    uint64_t s = 3;
    int8_t hint[LD];
    for (int r = 0; r < LD; r++) hint[r] = (r % 2 == 0);
    for (int t = 0; t < 60; t++) {
        int mi = 1 + (int)(ildl_test_rand(&s) * LD), mj = 1 + (int)(ildl_test_rand(&s) * LD);
        double a[LD * LD], b[LD * LD] = {0}, x[LD * LD];
        ildl_dense_params p = params(hint);
        ildl_dense_result res;
        gen_paired(mi, 700 + t, a);
        if (mi % 2) a[(mi - 1) * LD + mi - 1] = 2; /* the odd last row is a 1x1 */
        ildl_dense_factor_none(mi, a, &p, &res);
        assert_int_equal(res.nperturbed, 0);
        assert_int_equal(res.n2x2, mi / 2);
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) b[r * LD + c] = 2 * ildl_test_rand(&s) - 1;
        memcpy(x, b, sizeof x);
        ildl_dense_solve_offdiag(mi, mj, a, &res, x);
        assert_true(dt_offdiag_residual(mi, mj, a, &res, x, b) <= 1e-12);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_diag_perturbs),
        cmocka_unit_test(test_hand_hinted_pair),
        cmocka_unit_test(test_bad_hints),
        cmocka_unit_test(test_identity_and_m1),
        cmocka_unit_test(test_random_paired),
        cmocka_unit_test(test_random_dominant),
        cmocka_unit_test(test_solve_offdiag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
