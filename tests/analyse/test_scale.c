/* test_scale.c -- symmetric Ruiz equilibration: row maxima reach 1 on badly scaled matrices,
 * symmetry is kept, zero rows are left alone, and ildl_scale_apply is S A S. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include "analyse/scale.h"
#include "blockildl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Multiply a random symmetric matrix by 10^(e_i + e_j + h_ij), e_i in [-3,3] per row and h_ij
 * in [-3,3] per symmetric entry pair: magnitudes spread over ~10^(+-9). */
static void badly_scaled(int32_t n, uint64_t seed, ildl_csr *A)
{
    uint64_t s = seed;
    ildl_test_random_sym(n, 6, 1.0, 0.2, seed, A);
    double *e = malloc(sizeof(double) * (size_t)n);
    assert_non_null(e);
    for (int32_t i = 0; i < n; i++) e[i] = 6.0 * ildl_test_rand(&s) - 3.0;
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = A->col[p];
            uint64_t h = ((uint64_t)(i < j ? i : j) << 32) ^ (uint64_t)(i < j ? j : i) ^ seed;
            double hij = 6.0 * ildl_test_rand(&h) - 3.0;
            A->val[p] *= pow(10.0, e[i] + e[j] + hij);
        }
    free(e);
}

/* max |a_ij| of row i (0 for an empty or all-zero row). */
static double row_max(const ildl_csr *A, int32_t i)
{
    double m = 0.0;
    for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (fabs(A->val[p]) > m) m = fabs(A->val[p]);
    return m;
}

static void test_equilibrate_random(void **state)
{
    (void)state;
    const double tol = 1e-3;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        ildl_csr A = {0};
        badly_scaled(800, seed, &A);
        double lo = INFINITY, hi = 0.0;
        for (int32_t i = 0; i < A.n; i++) {
            double r = row_max(&A, i);
            if (r > 0 && r < lo) lo = r;
            if (r > hi) hi = r;
        }
        assert_true(hi / lo > 1e8); /* the test matrix really is badly scaled */
        double *s = malloc(sizeof(double) * (size_t)A.n);
        assert_non_null(s);
        assert_int_equal(ildl_scale_equilibrate(&A, 100, tol, s), ILDL_SUCCESS);
        for (int32_t i = 0; i < A.n; i++) assert_true(isfinite(s[i]) && s[i] > 0.0);
        ildl_scale_apply(&A, s);
        for (int32_t i = 0; i < A.n; i++) {
            double r = row_max(&A, i);
            assert_true(fabs(1.0 - r) <= 1e-2);
            assert_true(r <= 1.0 + tol);
        }
        free(s);
        ildl_csr_free(&A);
    }
}

static void test_symmetry_preserved(void **state)
{
    (void)state;
    ildl_csr A = {0};
    badly_scaled(120, 77, &A);
    double *s = malloc(sizeof(double) * (size_t)A.n);
    assert_non_null(s);
    assert_int_equal(ildl_scale_equilibrate(&A, 100, 1e-6, s), ILDL_SUCCESS);
    ildl_scale_apply(&A, s);
    double *D = ildl_test_dense(&A);
    for (int32_t i = 0; i < A.n; i++)
        for (int32_t j = 0; j < i; j++) assert_true(D[(size_t)i * A.n + j] == D[(size_t)j * A.n + i]);
    free(D); free(s);
    ildl_csr_free(&A);
}

/* Row 2 stores only explicit zeros, row 4 stores nothing; both must keep s = 1 while the
 * others equilibrate. */
static void test_zero_rows(void **state)
{
    (void)state;
    int32_t ti[] = {0, 0, 1, 1, 2, 3, 3, 5};
    int32_t tj[] = {0, 1, 1, 2, 2, 3, 5, 5};
    double tv[] = {1e6, 3e2, 1e-4, 0.0, 0.0, -5e-7, 2.0, 1e3};
    ildl_csr A = {0};
    ildl_test_csr_from_triplets(6, 8, ti, tj, tv, &A);
    double s[6];
    assert_int_equal(ildl_scale_equilibrate(&A, 200, 1e-8, s), ILDL_SUCCESS);
    assert_true(s[2] == 1.0);
    assert_true(s[4] == 1.0);
    ildl_scale_apply(&A, s);
    for (int32_t i = 0; i < 6; i++) {
        assert_true(isfinite(s[i]) && s[i] > 0.0);
        if (i == 2 || i == 4) assert_true(row_max(&A, i) == 0.0);
        else assert_true(fabs(1.0 - row_max(&A, i)) <= 1e-6);
    }
    ildl_csr_free(&A);
}

/* A diagonal matrix is equilibrated by s_i = 1/sqrt|a_ii| (after which every entry is +-1). */
static void test_diagonal(void **state)
{
    (void)state;
    int32_t ti[4] = {0, 1, 2, 3};
    double tv[4] = {4e10, -2.5e-9, 1.0, -9.0};
    ildl_csr A = {0};
    ildl_test_csr_from_triplets(4, 4, ti, ti, tv, &A);
    double s[4];
    assert_int_equal(ildl_scale_equilibrate(&A, 50, 1e-12, s), ILDL_SUCCESS);
    for (int i = 0; i < 4; i++) assert_true(fabs(s[i] * sqrt(fabs(tv[i])) - 1.0) <= 1e-10);
    ildl_csr_free(&A);
}

static void test_apply_matches_dense(void **state)
{
    (void)state;
    ildl_csr A = {0};
    ildl_test_random_sym(60, 5, 2.0, 0.1, 5, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *s = malloc(sizeof(double) * (size_t)n);
    assert_non_null(s);
    uint64_t r = 9;
    for (int32_t i = 0; i < n; i++) s[i] = pow(10.0, 4.0 * ildl_test_rand(&r) - 2.0);
    ildl_scale_apply(&A, s);
    double *E = ildl_test_dense(&A);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) {
            double want = s[i] * D[(size_t)i * n + j] * s[j];
            assert_true(fabs(E[(size_t)i * n + j] - want) <= 1e-14 * fabs(want));
        }
    free(D); free(E); free(s);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equilibrate_random),
        cmocka_unit_test(test_symmetry_preserved),
        cmocka_unit_test(test_zero_rows),
        cmocka_unit_test(test_diagonal),
        cmocka_unit_test(test_apply_matches_dense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
