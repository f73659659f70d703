/* test_dense_bk.c -- Bunch-Kaufman dense tile factorization P A P^T = U^T D U: hand-worked
 * pivot choices, backward error on random indefinite and KKT matrices, the 2x2 determinant
 * and growth properties BK guarantees, near-singular fallback and the off-diagonal solve. */
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

#define LD ILDL_TILE_LD
#define ALPHA ILDL_BK_ALPHA
#define TOL 1e-10
#define PERTURB 1e-6

static ildl_dense_params params(void)
{
    ildl_dense_params p = {TOL, PERTURB, NULL};
    return p;
}

/* ------------------------------------------------------------------ checking helpers */

/* The result is well formed: perm is a permutation, types pair up, the factored tile holds U
 * strictly above the diagonal and zeros elsewhere, U(k,k+1) = 0 inside a 2x2, D finite. */
static void check_structure(int m, const double *f, const ildl_dense_result *res)
{
    int seen[LD] = {0}, n2 = 0;
    for (int r = 0; r < m; r++) {
        assert_true(res->perm[r] >= 0 && res->perm[r] < m);
        assert_int_equal(seen[res->perm[r]], 0);
        seen[res->perm[r]] = 1;
        assert_true(isfinite(res->d_diag[r]) && isfinite(res->d_off[r]));
        if (res->type[r] == 2) {
            assert_true(r + 1 < m);
            assert_int_equal(res->type[r + 1], 0);
            assert_true(f[r * LD + r + 1] == 0);
            n2++;
        } else if (res->type[r] == 0) {
            assert_true(r > 0 && res->type[r - 1] == 2);
            assert_true(res->d_off[r] == 0);
        } else {
            assert_int_equal(res->type[r], 1);
            assert_true(res->d_off[r] == 0);
            assert_true(res->d_diag[r] != 0);
        }
        for (int c = 0; c < m; c++) {
            if (c <= r) assert_true(f[r * LD + c] == 0);
            else assert_true(isfinite(f[r * LD + c]));
        }
    }
    assert_int_equal(n2, res->n2x2);
}

/* M = U^T D U, and G = |U|^T |D| |U| (the scale of rounding errors) if G != NULL. */
static void reconstruct(int m, const double *f, const ildl_dense_result *res, double *M,
                        double *G)
{
    double U[LD][LD] = {{0}}, DU[LD][LD] = {{0}}, GU[LD][LD] = {{0}};
    for (int r = 0; r < m; r++) {
        U[r][r] = 1;
        for (int c = r + 1; c < m; c++) U[r][c] = f[r * LD + c];
    }
    for (int r = 0; r < m; r++)
        for (int c = 0; c < m; c++) {
            if (res->type[r] == 1) {
                DU[r][c] = res->d_diag[r] * U[r][c];
                GU[r][c] = fabs(res->d_diag[r]) * fabs(U[r][c]);
            } else if (res->type[r] == 2) {
                double da = res->d_diag[r], db = res->d_off[r], dc = res->d_diag[r + 1];
                DU[r][c] = da * U[r][c] + db * U[r + 1][c];
                DU[r + 1][c] = db * U[r][c] + dc * U[r + 1][c];
                GU[r][c] = fabs(da) * fabs(U[r][c]) + fabs(db) * fabs(U[r + 1][c]);
                GU[r + 1][c] = fabs(db) * fabs(U[r][c]) + fabs(dc) * fabs(U[r + 1][c]);
            }
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double s = 0, g = 0;
            for (int q = 0; q <= i; q++) {
                s += U[q][i] * DU[q][j];
                g += fabs(U[q][i]) * GU[q][j];
            }
            M[i * LD + j] = s;
            if (G) G[i * LD + j] = g;
        }
}

/* ||P A P^T - U^T D U||_F / ||A||_F (absolute error when A = 0). */
static double recon_error(int m, const double *a0, const double *f, const ildl_dense_result *res)
{
    static double M[LD * LD];
    double num = 0, den = 0;
    reconstruct(m, f, res, M, NULL);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double e = a0[res->perm[i] * LD + res->perm[j]] - M[i * LD + j];
            num += e * e;
            den += a0[i * LD + j] * a0[i * LD + j];
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double max_abs_u(int m, const double *f)
{
    double mx = 0;
    for (int r = 0; r < m; r++)
        for (int c = r + 1; c < m; c++) mx = fmax(mx, fabs(f[r * LD + c]));
    return mx;
}

/* Symmetric random matrix with entries in (-1,1); each diagonal is 0 with probability zfrac. */
static void gen_general(int m, double zfrac, uint64_t seed, double *a)
{
    uint64_t s = seed;
    memset(a, 0, sizeof(double) * LD * LD);
    for (int i = 0; i < m; i++) {
        for (int j = i + 1; j < m; j++) a[i * LD + j] = a[j * LD + i] = 2 * ildl_test_rand(&s) - 1;
        a[i * LD + i] = ildl_test_rand(&s) < zfrac ? 0 : 2 * ildl_test_rand(&s) - 1;
    }
}

/* KKT matrix [[H, B^T], [B, 0]] (m2 = m/3 constraints), rows shuffled if shuffle. */
static void gen_kkt(int m, int shuffle, uint64_t seed, double *a)
{
    uint64_t s = seed;
    int m2 = m / 3, m1 = m - m2, p[LD];
    double t[LD * LD] = {0};
    for (int i = 0; i < m1; i++)
        for (int j = i; j < m1; j++) t[i * LD + j] = t[j * LD + i] = 2 * ildl_test_rand(&s) - 1;
    for (int i = m1; i < m; i++)
        for (int j = 0; j < m1; j++) t[i * LD + j] = t[j * LD + i] = 2 * ildl_test_rand(&s) - 1;
    for (int i = 0; i < m; i++) p[i] = i;
    for (int i = m - 1; shuffle && i > 0; i--) {
        int j = (int)(ildl_test_rand(&s) * (i + 1)), x = p[i];
        p[i] = p[j];
        p[j] = x;
    }
    memset(a, 0, sizeof(double) * LD * LD);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) a[i * LD + j] = t[p[i] * LD + p[j]];
}

/* ------------------------------------------------------------------ hand-worked cases */

/* A = [4 2 0 0; 2 5 0 0; 0 0 3 0; 0 0 0 -2].
 * k=0: lambda = |a10| = 2 (r=1), |a00| = 4 >= alpha*2 = 1.28 -> 1x1 at 0, no swap.
 *      U(0,1) = 2/4 = 0.5; a11 <- 5 - 2*0.5 = 4.
 * k=1,2,3: lambda = 0 -> 1x1 each. perm = identity, D = diag(4, 4, 3, -2). */
static void test_hand_1x1_no_swap(void **state)
{
    (void)state;
    double a[LD * LD] = {0}, a0[LD * LD];
    const double v[4][4] = {{4, 2, 0, 0}, {2, 5, 0, 0}, {0, 0, 3, 0}, {0, 0, 0, -2}};
    ildl_dense_params p = params();
    ildl_dense_result res;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) a[i * LD + j] = v[i][j];
    memcpy(a0, a, sizeof a);
    ildl_dense_factor_bk(4, a, &p, &res);
    check_structure(4, a, &res);
    const double d[4] = {4, 4, 3, -2};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(res.perm[r], r);
        assert_int_equal(res.type[r], 1);
        assert_true(res.d_diag[r] == d[r]);
    }
    assert_true(a[0 * LD + 1] == 0.5);
    assert_int_equal(res.n2x2, 0);
    assert_int_equal(res.nperturbed, 0);
    assert_true(recon_error(4, a0, a, &res) <= 1e-15);
}

/* A = [0 .5 1 0; .5 2 0 0; 1 0 3 0; 0 0 0 1].
 * k=0: lambda = |a20| = 1 (r=2); |a00| = 0 < alpha. sigma = max_{j!=2} |a2j| = |a20| = 1;
 *      |a00|*sigma = 0 < alpha*1; |a22| = 3 >= alpha*1 -> 1x1 at r = 2: swap 0 <-> 2.
 *      Order (2,1,0,3): D0 = 3, U(0,2) = 1/3, a22 <- 0 - 1/3.
 * k=1: a11 = 2, lambda = .5 -> 1x1; U(1,2) = .25, a22 <- -1/3 - 1/8 = -11/24.
 * k=2,3: lambda = 0 -> 1x1. perm = [2 1 0 3], D = diag(3, 2, -11/24, 1). */
static void test_hand_1x1_at_r(void **state)
{
    (void)state;
    double a[LD * LD] = {0}, a0[LD * LD];
    const double v[4][4] = {{0, .5, 1, 0}, {.5, 2, 0, 0}, {1, 0, 3, 0}, {0, 0, 0, 1}};
    ildl_dense_params p = params();
    ildl_dense_result res;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) a[i * LD + j] = v[i][j];
    memcpy(a0, a, sizeof a);
    ildl_dense_factor_bk(4, a, &p, &res);
    check_structure(4, a, &res);
    const int perm[4] = {2, 1, 0, 3};
    const double d[4] = {3, 2, -11.0 / 24, 1};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(res.perm[r], perm[r]);
        assert_int_equal(res.type[r], 1);
        assert_true(fabs(res.d_diag[r] - d[r]) <= 1e-15);
    }
    assert_true(fabs(a[0 * LD + 2] - 1.0 / 3) <= 1e-16);
    assert_true(a[1 * LD + 2] == 0.25);
    assert_true(a[0 * LD + 1] == 0 && a[0 * LD + 3] == 0);
    assert_true(recon_error(4, a0, a, &res) <= 1e-15);
}

/* A = [0 .5 1 0; .5 3 0 0; 1 0 0 0; 0 0 0 -1].
 * k=0: lambda = |a20| = 1 (r=2), |a00| = 0 < alpha; sigma = |a20| = 1; |a00|*sigma = 0;
 *      |a22| = 0 < alpha*sigma -> 2x2 at (0, 2): swap 1 <-> 2, D = [0 1; 1 0] (det -1).
 *      Order (0,2,1,3): for j=2, [w1 w2] = [.5 0] -> U(0,2) = 0, U(1,2) = .5; a22 stays 3.
 * k=2,3: 1x1. perm = [0 2 1 3], type = [2 0 1 1], D diag = (0, 0, 3, -1), d_off[0] = 1. */
static void test_hand_2x2(void **state)
{
    (void)state;
    double a[LD * LD] = {0}, a0[LD * LD];
    const double v[4][4] = {{0, .5, 1, 0}, {.5, 3, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, -1}};
    ildl_dense_params p = params();
    ildl_dense_result res;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) a[i * LD + j] = v[i][j];
    memcpy(a0, a, sizeof a);
    ildl_dense_factor_bk(4, a, &p, &res);
    check_structure(4, a, &res);
    const int perm[4] = {0, 2, 1, 3}, type[4] = {2, 0, 1, 1};
    const double d[4] = {0, 0, 3, -1};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(res.perm[r], perm[r]);
        assert_int_equal(res.type[r], type[r]);
        assert_true(res.d_diag[r] == d[r]);
    }
    assert_true(res.d_off[0] == 1);
    assert_int_equal(res.n2x2, 1);
    assert_true(a[0 * LD + 2] == 0 && a[1 * LD + 2] == 0.5);
    assert_true(recon_error(4, a0, a, &res) <= 1e-15);
}

/* ------------------------------------------------------------------ trivial cases */

static void test_zero_matrix(void **state)
{
    (void)state;
    for (int m = 1; m <= LD; m += 31) {
        double a[LD * LD] = {0};
        ildl_dense_params p = params();
        ildl_dense_result res;
        ildl_dense_factor_bk(m, a, &p, &res);
        check_structure(m, a, &res);
        assert_int_equal(res.nperturbed, m);
        assert_int_equal(res.n2x2, 0);
        for (int r = 0; r < m; r++) {
            assert_int_equal(res.perm[r], r);
            assert_true(res.d_diag[r] == PERTURB);
        }
        assert_true(max_abs_u(m, a) == 0);
    }
}

static void test_identity_and_m1(void **state)
{
    (void)state;
    double a[LD * LD] = {0};
    ildl_dense_params p = params();
    ildl_dense_result res;
    for (int r = 0; r < LD; r++) a[r * LD + r] = 1;
    ildl_dense_factor_bk(LD, a, &p, &res);
    check_structure(LD, a, &res);
    for (int r = 0; r < LD; r++) {
        assert_int_equal(res.perm[r], r);
        assert_true(res.d_diag[r] == 1);
    }
    assert_true(max_abs_u(LD, a) == 0);
    assert_int_equal(res.nperturbed, 0);

    memset(a, 0, sizeof a);
    a[0] = -3;
    ildl_dense_factor_bk(1, a, &p, &res);
    assert_true(res.d_diag[0] == -3 && res.type[0] == 1 && res.perm[0] == 0 && a[0] == 0);
    a[0] = 1e-13; /* below pivot_tol: perturbed with its sign */
    ildl_dense_factor_bk(1, a, &p, &res);
    assert_true(res.d_diag[0] == PERTURB && res.nperturbed == 1);
    a[0] = -1e-13;
    ildl_dense_factor_bk(1, a, &p, &res);
    assert_true(res.d_diag[0] == -PERTURB && res.nperturbed == 1);
}

/* A tiny column k makes BK pick a 2x2 that is numerically zero: it must fall back to a
 * perturbed 1x1 rather than invert it. [0 e; e 0] with e = 1e-12 < pivot_tol. */
static void test_tiny_pair_falls_back(void **state)
{
    (void)state;
    double a[LD * LD] = {0};
    ildl_dense_params p = params();
    ildl_dense_result res;
    a[1] = a[LD] = 1e-12;
    ildl_dense_factor_bk(2, a, &p, &res);
    check_structure(2, a, &res);
    assert_int_equal(res.n2x2, 0);
    assert_int_equal(res.nperturbed, 2);
    assert_true(res.d_diag[0] == PERTURB && res.d_diag[1] == -PERTURB);
    assert_true(fabs(a[1] - 1e-6) <= 1e-20);
}

/* ------------------------------------------------------------------ random matrices */

/* Check one random factorization; returns 1 if it pivoted (perm != identity). */
static int check_random(int m, const double *a0, int *n2)
{
    double a[LD * LD];
    ildl_dense_params p = params();
    ildl_dense_result res, res2;
    int moved = 0;
    memcpy(a, a0, sizeof a);
    ildl_dense_factor_bk(m, a, &p, &res);
    check_structure(m, a, &res);
    assert_int_equal(res.nperturbed, 0);
    assert_true(recon_error(m, a0, a, &res) <= 1e-12);
    /* Growth: BK does not bound |U| in theory (a 1x1 at k accepted through the sigma test
     * gives |u| <= sigma/(alpha lambda)), which is why rook exists; on these matrices the
     * worst seen is ~10.4, while missing pivoting gives 1/pivot_tol-sized entries. */
    assert_true(max_abs_u(m, a) <= 30);
    for (int r = 0; r < m; r++) {
        if (res.type[r] == 2) {
            /* BK 2x2 pivots satisfy |a_kk a_rr| < alpha^2 b^2: det <= -(1-alpha^2) b^2 */
            double da = res.d_diag[r], db = res.d_off[r], dc = res.d_diag[r + 1];
            assert_true(da * dc - db * db <= -(1 - ALPHA * ALPHA) * db * db * (1 - 1e-14));
        }
        moved |= res.perm[r] != r;
    }
    *n2 += res.n2x2;
    /* bitwise reproducible */
    double b[LD * LD];
    memcpy(b, a0, sizeof b);
    ildl_dense_factor(ILDL_PIVOT_BK, m, b, &p, &res2);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(&res, &res2, sizeof res);
    return moved;
}

static void test_random_indefinite(void **state)
{
    (void)state;
    double a0[LD * LD];
    int moved = 0, n2 = 0, ncase = 0;
    for (int m = 1; m <= LD; m++)
        for (uint64_t seed = 1; seed <= 12; seed++) {
            gen_general(m, 0.0, 1000 * m + seed, a0);
            moved += check_random(m, a0, &n2);
            gen_general(m, m > 1 ? 0.5 : 0.0, 2000 * m + seed, a0); /* [0] is singular */
            moved += check_random(m, a0, &n2);
            if (m >= 3) {
                gen_kkt(m, (int)(seed & 1), 3000 * m + seed, a0);
                moved += check_random(m, a0, &n2);
            }
            ncase += 3;
        }
    /* the sweep must exercise interchanges and 2x2 pivots, or it tests nothing */
    assert_true(moved > ncase / 4);
    assert_true(n2 > ncase / 4);
}

/* A diagonally dominant matrix needs no interchange: BK must keep the natural order. */
static void test_dominant_no_swap(void **state)
{
    (void)state;
    double a[LD * LD], a0[LD * LD];
    ildl_dense_params p = params();
    ildl_dense_result res;
    gen_general(LD, 0.0, 77, a0);
    for (int r = 0; r < LD; r++) a0[r * LD + r] = (r % 2 ? -1 : 1) * (LD + 1.0);
    memcpy(a, a0, sizeof a);
    ildl_dense_factor_bk(LD, a, &p, &res);
    check_structure(LD, a, &res);
    for (int r = 0; r < LD; r++) {
        assert_int_equal(res.perm[r], r);
        assert_int_equal(res.type[r], 1);
    }
    assert_true(recon_error(LD, a0, a, &res) <= 1e-14);
}

/* solve_offdiag: X = D^-1 U^-T B must satisfy U^T D X = B. */
static void test_solve_offdiag(void **state)
{
    (void)state;
    uint64_t s = 99;
    for (int t = 0; t < 60; t++) {
        int mi = 1 + (int)(ildl_test_rand(&s) * LD), mj = 1 + (int)(ildl_test_rand(&s) * LD);
        double a[LD * LD], b[LD * LD] = {0}, x[LD * LD], y[LD * LD] = {0};
        ildl_dense_params p = params();
        ildl_dense_result res;
        gen_general(mi, 0.5, 500 + t, a);
        ildl_dense_factor_bk(mi, a, &p, &res);
        assert_int_equal(res.nperturbed, 0);
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) b[r * LD + c] = 2 * ildl_test_rand(&s) - 1;
        memcpy(x, b, sizeof x);
        ildl_dense_solve_offdiag(mi, mj, a, &res, x);
        /* y = D x, then b' = U^T y */
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) {
                if (res.type[r] == 1) {
                    y[r * LD + c] = res.d_diag[r] * x[r * LD + c];
                } else if (res.type[r] == 2) {
                    double xa = x[r * LD + c], xb = x[(r + 1) * LD + c];
                    y[r * LD + c] = res.d_diag[r] * xa + res.d_off[r] * xb;
                    y[(r + 1) * LD + c] = res.d_off[r] * xa + res.d_diag[r + 1] * xb;
                }
            }
        double num = 0, den = 0;
        for (int r = 0; r < mi; r++)
            for (int c = 0; c < mj; c++) {
                double v = y[r * LD + c];
                for (int q = 0; q < r; q++) v += a[q * LD + r] * y[q * LD + c];
                num += (v - b[r * LD + c]) * (v - b[r * LD + c]);
                den += b[r * LD + c] * b[r * LD + c];
            }
        assert_true(sqrt(num / den) <= 1e-12);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_1x1_no_swap),
        cmocka_unit_test(test_hand_1x1_at_r),
        cmocka_unit_test(test_hand_2x2),
        cmocka_unit_test(test_zero_matrix),
        cmocka_unit_test(test_identity_and_m1),
        cmocka_unit_test(test_tiny_pair_falls_back),
        cmocka_unit_test(test_random_indefinite),
        cmocka_unit_test(test_dominant_no_swap),
        cmocka_unit_test(test_solve_offdiag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
