/* test_dense_rook.c -- rook-pivoted dense tile factorization P A P^T = U^T D U: hand-worked
 * pivot searches (including one where Bunch-Kaufman settles for a worse 2x2), the growth
 * bound rook guarantees and BK does not, backward error on random indefinite and KKT
 * matrices, near-singular fallback and the off-diagonal solve. */
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
#define ALPHA ILDL_BK_ALPHA
#define TOL 1e-10
#define PERTURB 1e-6
/* rook: |u| <= 1/alpha for 1x1 steps and <= 1/(1-alpha) for 2x2 steps */
#define ROOK_UMAX (1 / (1 - ALPHA))

static ildl_dense_params params(void)
{
    ildl_dense_params p = {TOL, PERTURB, NULL};
    return p;
}

/* ------------------------------------------------------------------ hand-worked cases */

static void load4(const double v[4][4], double *a)
{
    memset(a, 0, sizeof(double) * LD * LD);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) a[i * LD + j] = v[i][j];
}

/* A = [0 1 0 0; 1 0 2 0; 0 2 0 .5; 0 0 .5 1].
 * BK, k=0: lambda = |a01| = 1 (r=1), sigma = |a12| = 2, |a11| = 0 < alpha*2 -> 2x2 (0,1)
 *   with off-diagonal 1, no swap.
 * Rook, k=0: colmax = 1 (r=1), |a00| = 0 < alpha. Scan row 1: rowmax = |a12| = 2 at j=2;
 *   |a11| = 0 < alpha*2; j=2 != q=0 and 2 > 1 -> move: q=1, r=2, colmax=2. Scan row 2:
 *   rowmax = |a21| = 2 at j=1 = q -> 2x2 (1,2), off-diagonal 2 (the largest entry).
 *   Swap 0<->1 then 1<->2: perm = [1 2 0 3]. D = [0 2; 2 0], det = -4, D^-1 = [0 .5; .5 0].
 *   Order (1,2,0,3): j=2 (row 0): [w1 w2] = [1 0] -> U(0,2) = 0, U(1,2) = .5;
 *   j=3 (row 3): [w1 w2] = [0 .5] -> U(0,3) = .25, U(1,3) = 0.
 *   Schur: a22 = 0 - (1*0 + 0*.5) = 0, a23 = 0 - (1*.25 + 0*0) = -.25, a33 = 1 - 0 = 1.
 * Rook, k=2: [0 -.25; -.25 1]: colmax = .25 (r=3), |a22| = 0 < alpha*.25; row 3: rowmax =
 *   .25, |a33| = 1 >= alpha*.25 -> 1x1 at 3: swap 2<->3, perm = [1 2 3 0].
 *   D2 = 1, U(2,3) = -.25, D3 = 0 - (-.25)(-.25)/1 = -1/16. The last swap also swaps
 *   columns 2,3 of U rows 0,1: U(0,2:3) = (.25, 0), U(1,2:3) = (0, .5). */
static void test_hand_rook_beats_bk(void **state)
{
    (void)state;
    const double v[4][4] = {{0, 1, 0, 0}, {1, 0, 2, 0}, {0, 2, 0, .5}, {0, 0, .5, 1}};
    double a[LD * LD], a0[LD * LD];
    ildl_dense_params p = params();
    ildl_dense_result res;

    load4(v, a);
    ildl_dense_factor_bk(4, a, &p, &res);
    assert_int_equal(res.type[0], 2);
    assert_int_equal(res.perm[0], 0);
    assert_int_equal(res.perm[1], 1);
    assert_true(res.d_off[0] == 1);

    load4(v, a);
    memcpy(a0, a, sizeof a);
    ildl_dense_factor_rook(4, a, &p, &res);
    dt_check_structure(4, a, &res);
    const int perm[4] = {1, 2, 3, 0}, type[4] = {2, 0, 1, 1};
    const double d[4] = {0, 0, 1, -1.0 / 16};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(res.perm[r], perm[r]);
        assert_int_equal(res.type[r], type[r]);
        assert_true(res.d_diag[r] == d[r]);
    }
    assert_true(res.d_off[0] == 2);
    assert_true(a[0 * LD + 2] == .25 && a[0 * LD + 3] == 0);
    assert_true(a[1 * LD + 2] == 0 && a[1 * LD + 3] == .5);
    assert_true(a[2 * LD + 3] == -.25);
    assert_int_equal(res.nperturbed, 0);
    assert_true(dt_recon_error(4, a0, a, &res) <= 1e-15);
}

/* A = [0 1 0 0; 1 0 2 0; 0 2 3 0; 0 0 0 1].
 * Rook, k=0: colmax = 1 (r=1); row 1: rowmax = 2 at j=2, |a11| = 0 < alpha*2, move:
 *   q=1, r=2, colmax=2; row 2: rowmax = |a21| = 2, |a22| = 3 >= alpha*2 = 1.28 -> 1x1 at 2:
 *   swap 0<->2, perm[0] = 2, D0 = 3.
 * BK, k=0: lambda = 1 (r=1), sigma = 2, |a11| = 0 < alpha*2 -> 2x2 (0,1). */
static void test_hand_rook_1x1_far(void **state)
{
    (void)state;
    const double v[4][4] = {{0, 1, 0, 0}, {1, 0, 2, 0}, {0, 2, 3, 0}, {0, 0, 0, 1}};
    double a[LD * LD], a0[LD * LD];
    ildl_dense_params p = params();
    ildl_dense_result res;

    load4(v, a);
    ildl_dense_factor_bk(4, a, &p, &res);
    assert_int_equal(res.type[0], 2);
    assert_int_equal(res.perm[0], 0);

    load4(v, a);
    memcpy(a0, a, sizeof a);
    ildl_dense_factor_rook(4, a, &p, &res);
    dt_check_structure(4, a, &res);
    assert_int_equal(res.perm[0], 2);
    assert_int_equal(res.type[0], 1);
    assert_true(res.d_diag[0] == 3);
    assert_true(a[0 * LD + 1] == 2.0 / 3); /* row 0 of U: (a21, a20, a23) / 3 in new order */
    assert_true(dt_recon_error(4, a0, a, &res) <= 1e-15);
}

/* A = [4 2 0 0; 2 5 0 0; 0 0 3 0; 0 0 0 -2]: |a00| = 4 >= alpha*2 -> 1x1 at 0, no search;
 * then a11 = 5 - 1 = 4 and two trivial columns: perm = identity, D = (4, 4, 3, -2). */
static void test_hand_no_swap(void **state)
{
    (void)state;
    const double v[4][4] = {{4, 2, 0, 0}, {2, 5, 0, 0}, {0, 0, 3, 0}, {0, 0, 0, -2}};
    const double d[4] = {4, 4, 3, -2};
    double a[LD * LD];
    ildl_dense_params p = params();
    ildl_dense_result res;
    load4(v, a);
    ildl_dense_factor_rook(4, a, &p, &res);
    dt_check_structure(4, a, &res);
    for (int r = 0; r < 4; r++) {
        assert_int_equal(res.perm[r], r);
        assert_true(res.d_diag[r] == d[r]);
    }
    assert_true(a[1] == 0.5);
}

/* Zero diagonal, a(i,i+1) = i+1: every scan finds a larger entry one column further, so the
 * search walks the whole tile (m-1 scans) and ends at the 2x2 (m-2, m-1) with off-diagonal
 * m-1: swaps 0<->m-2 then 1<->m-1 give perm[0] = m-2, perm[1] = m-1. (Even m only: with an
 * odd order this zero-diagonal tridiagonal matrix is singular.) */
static void test_long_chain(void **state)
{
    (void)state;
    for (int m = 2; m <= LD; m += 2) {
        double a[LD * LD] = {0}, a0[LD * LD];
        ildl_dense_params p = params();
        ildl_dense_result res;
        for (int i = 0; i + 1 < m; i++) a[i * LD + i + 1] = a[(i + 1) * LD + i] = i + 1;
        memcpy(a0, a, sizeof a);
        ildl_dense_factor_rook(m, a, &p, &res);
        dt_check_structure(m, a, &res);
        assert_int_equal(res.type[0], 2);
        assert_int_equal(res.perm[0], m - 2);
        assert_int_equal(res.perm[1], m - 1);
        assert_true(res.d_off[0] == m - 1);
        assert_true(res.d_diag[0] == 0 && res.d_diag[1] == 0);
        assert_true(dt_max_abs_u(m, a) <= ROOK_UMAX);
        assert_int_equal(res.nperturbed, 0);
        assert_true(dt_recon_error(m, a0, a, &res) <= 1e-14);
    }
}

/* ------------------------------------------------------------------ trivial cases */

static void test_zero_identity_m1(void **state)
{
    (void)state;
    double a[LD * LD] = {0};
    ildl_dense_params p = params();
    ildl_dense_result res;
    ildl_dense_factor_rook(LD, a, &p, &res);
    dt_check_structure(LD, a, &res);
    assert_int_equal(res.nperturbed, LD);
    for (int r = 0; r < LD; r++) assert_true(res.perm[r] == r && res.d_diag[r] == PERTURB);
    assert_true(dt_max_abs_u(LD, a) == 0);

    for (int r = 0; r < LD; r++) a[r * LD + r] = 1;
    ildl_dense_factor_rook(LD, a, &p, &res);
    dt_check_structure(LD, a, &res);
    assert_int_equal(res.nperturbed, 0);
    for (int r = 0; r < LD; r++) assert_true(res.perm[r] == r && res.d_diag[r] == 1);
    assert_true(dt_max_abs_u(LD, a) == 0);

    memset(a, 0, sizeof a);
    a[0] = 2.5;
    ildl_dense_factor_rook(1, a, &p, &res);
    assert_true(res.d_diag[0] == 2.5 && res.type[0] == 1 && res.perm[0] == 0 && a[0] == 0);
    ildl_dense_factor_rook(1, a, &p, &res); /* a[0] is now 0 */
    assert_true(res.d_diag[0] == PERTURB && res.nperturbed == 1);
}

/* A numerically zero column: the 2x2 rook lands on is below pivot_tol, so it falls back to
 * perturbed 1x1 pivots instead of inverting it. */
static void test_tiny_pair_falls_back(void **state)
{
    (void)state;
    double a[LD * LD] = {0};
    ildl_dense_params p = params();
    ildl_dense_result res;
    a[1] = a[LD] = -1e-12;
    a[2 * LD + 2] = 5;
    ildl_dense_factor_rook(3, a, &p, &res);
    dt_check_structure(3, a, &res);
    assert_int_equal(res.n2x2, 0);
    assert_int_equal(res.nperturbed, 2);
    assert_true(res.d_diag[2] == 5);
}

/* ------------------------------------------------------------------ random matrices */

/* Check one random factorization; returns max |U| of BK on the same matrix. */
static double check_random(int m, const double *a0, int *n2, int *moved)
{
    double a[LD * LD], b[LD * LD];
    ildl_dense_params p = params();
    ildl_dense_result res, res2;
    memcpy(a, a0, sizeof a);
    ildl_dense_factor_rook(m, a, &p, &res);
    dt_check_structure(m, a, &res);
    assert_int_equal(res.nperturbed, 0);
    assert_true(dt_recon_error(m, a0, a, &res) <= 1e-12);
    assert_true(dt_max_abs_u(m, a) <= ROOK_UMAX * (1 + 1e-13));
    for (int r = 0; r < m; r++) {
        if (res.type[r] == 2) {
            /* |a_pp|, |a_rr| < alpha |b|: det <= -(1-alpha^2) b^2 */
            double da = res.d_diag[r], db = res.d_off[r], dc = res.d_diag[r + 1];
            assert_true(da * dc - db * db <= -(1 - ALPHA * ALPHA) * db * db * (1 - 1e-14));
        }
        *moved += res.perm[r] != r;
    }
    *n2 += res.n2x2;
    memcpy(b, a0, sizeof b);
    ildl_dense_factor(ILDL_PIVOT_ROOK, m, b, &p, &res2);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(&res, &res2, sizeof res);
    memcpy(b, a0, sizeof b);
    ildl_dense_factor_bk(m, b, &p, &res2);
    return dt_max_abs_u(m, b);
}

static void test_random_indefinite(void **state)
{
    (void)state;
    double a0[LD * LD], bk_worst = 0;
    int moved = 0, n2 = 0, ncase = 0;
    for (int m = 1; m <= LD; m++)
        for (uint64_t seed = 1; seed <= 12; seed++) {
            dt_gen_general(m, 0.0, 1000 * m + seed, a0);
            bk_worst = fmax(bk_worst, check_random(m, a0, &n2, &moved));
            dt_gen_general(m, m > 1 ? 0.5 : 0.0, 2000 * m + seed, a0); /* [0] is singular */
            bk_worst = fmax(bk_worst, check_random(m, a0, &n2, &moved));
            if (m >= 3) {
                dt_gen_kkt(m, (int)(seed & 1), 3000 * m + seed, a0);
                bk_worst = fmax(bk_worst, check_random(m, a0, &n2, &moved));
            }
            ncase += 3;
        }
    assert_true(moved > ncase);
    assert_true(n2 > ncase / 4);
    /* the same matrices push BK past rook's bound: the search is doing real work */
    assert_true(bk_worst > ROOK_UMAX);
}

/* solve_offdiag: X = D^-1 U^-T B must satisfy U^T D X = B (with rook's 2x2 blocks). */
static void test_solve_offdiag(void **state)
{
    (void)state;
    uint64_t s = 7;
    for (int t = 0; t < 60; t++) {
        int mi = 1 + (int)(ildl_test_rand(&s) * LD), mj = 1 + (int)(ildl_test_rand(&s) * LD);
        double a[LD * LD], b[LD * LD] = {0}, x[LD * LD];
        ildl_dense_params p = params();
        ildl_dense_result res;
        dt_gen_kkt(mi, 1, 600 + t, a);
        if (mi < 3) dt_gen_general(mi, 0.0, 600 + t, a);
        ildl_dense_factor_rook(mi, a, &p, &res);
        assert_int_equal(res.nperturbed, 0);
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
        cmocka_unit_test(test_hand_rook_beats_bk),
        cmocka_unit_test(test_hand_rook_1x1_far),
        cmocka_unit_test(test_hand_no_swap),
        cmocka_unit_test(test_long_chain),
        cmocka_unit_test(test_zero_identity_m1),
        cmocka_unit_test(test_tiny_pair_falls_back),
        cmocka_unit_test(test_random_indefinite),
        cmocka_unit_test(test_solve_offdiag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
