/* test_multi.c -- ildl_apply_multi: k columns at once (any k, leading dimensions above n, both
 * apply modes, every precision) give each column the bits of ildl_apply; ildl_solve_multi: each
 * column gets ildl_solve's x, iterations, residual and status, bit for bit (scaled right-hand
 * sides, zero columns, initial guesses, iteration limits, the ladder); the argument checks. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "support/testutil.h"

static void check_columns(ildl_handle *h, int32_t n, int k, int64_t ldr, int64_t ldz)
{
    double *R = malloc(sizeof(double) * (size_t)(ldr * k + 1)), *Z = malloc(sizeof(double) * (size_t)(ldz * k + 1));
    double *z = malloc(sizeof(double) * n);
    uint64_t seed = 7 + (uint64_t)k;
    for (int64_t i = 0; i < ldr * k; i++) R[i] = 2 * ildl_test_rand(&seed) - 1;
    for (int64_t i = 0; i < ldz * k; i++) Z[i] = -7.0; /* the gaps between columns stay */
    assert_int_equal(ildl_apply_multi(h, k, R, ldr, Z, ldz, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
    for (int j = 0; j < k; j++) {
        assert_int_equal(ildl_apply(h, R + (int64_t)j * ldr, z, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
        assert_memory_equal(Z + (int64_t)j * ldz, z, sizeof(double) * n);
        for (int64_t i = n; i < ldz; i++) assert_true(Z[(int64_t)j * ldz + i] == -7.0);
    }
    free(R); free(Z); free(z);
}

static void test_columns(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_kkt_zero_first(150, 350, 3, &A);
    int32_t n = A.n;
    int precisions[] = {ILDL_PREC_DOUBLE, ILDL_PREC_SINGLE, ILDL_PREC_MIXED};
    for (int p = 0; p < 3; p++)
        for (int mode = ILDL_APPLY_LDLT; mode <= ILDL_APPLY_SPD; mode++) {
            ildl_options o;
            ildl_options_default(&o);
            o.backend = ILDL_BACKEND_CPU;
            o.num_threads = 2;
            o.precision = precisions[p];
            o.apply_mode = mode;
            ildl_handle *h = NULL;
            assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
            assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
            int ks[] = {1, 3, 16, 21};
            for (int q = 0; q < 4; q++) check_columns(h, n, ks[q], n + 3, n + (q % 2) * 5);
            ildl_destroy(h);
        }
    ildl_csr_free(&A);
}

static void test_arguments(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(10, 0.5, &A);
    int32_t n = A.n;
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    double *R = calloc((size_t)n * 4, sizeof(double)), *Z = calloc((size_t)n * 4, sizeof(double));
    assert_int_equal(ildl_apply_multi(h, 2, R, n, Z, n, ILDL_MEMORY_HOST, NULL), ILDL_ERR_CALL_ORDER);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_apply_multi(NULL, 2, R, n, Z, n, ILDL_MEMORY_HOST, NULL), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_apply_multi(h, 0, NULL, n, NULL, n, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_apply_multi(h, -1, R, n, Z, n, ILDL_MEMORY_HOST, NULL), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_apply_multi(h, 2, R, n - 1, Z, n, ILDL_MEMORY_HOST, NULL), ILDL_ERR_INVALID_OPTION);
    assert_non_null(strstr(ildl_last_error(h), "ldr"));
    assert_int_equal(ildl_apply_multi(h, 2, R, n, NULL, n, ILDL_MEMORY_HOST, NULL), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_apply_multi(h, 2, R, n, R + n, n, ILDL_MEMORY_HOST, NULL), ILDL_ERR_INVALID_OPTION);
    assert_non_null(strstr(ildl_last_error(h), "overlap"));
    assert_int_equal(ildl_apply_multi(h, 2, R, n, R + 2 * n, n, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS); /* adjacent */
    assert_int_equal(ildl_apply_multi(h, 2, R, n, Z, n, 5, NULL), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_apply_multi(h, 2, R, n, Z, n, ILDL_MEMORY_DEVICE, NULL), ILDL_ERR_NOT_SUPPORTED);
    ildl_destroy(h);
    free(R); free(Z);
    ildl_csr_free(&A);
}


/* Column j of X and results[j] against ildl_solve on the same handle state (its bits, iterations,
 * residuals and status). */
static void expect_column(ildl_handle *h, const double *b, const double *xj, const double *x0, int32_t n,
                          const ildl_column_result *cr)
{
    double *x = malloc(sizeof(double) * n);
    if (x0) memcpy(x, x0, sizeof(double) * n);
    else for (int32_t i = 0; i < n; i++) x[i] = 3.0; /* ignored without use_initial_guess */
    int st = ildl_solve(h, b, x);
    ildl_info info;
    ildl_get_info(h, &info);
    assert_int_equal(cr->status, st);
    assert_int_equal(cr->iterations, info.iterations);
    assert_true(cr->true_residual == info.true_residual);
    assert_true(cr->estimated_residual == info.estimated_residual);
    assert_int_equal(cr->rung, info.rung);
    assert_memory_equal(xj, x, sizeof(double) * n);
    free(x);
}

/* k right-hand sides (random, zero, scaled to 1e300 and 1e-300 so that they run on their own,
 * 16+ columns so that two lockstep groups run), leading dimensions above n; with and without
 * initial guesses; an iteration limit that stops some columns. */
static void test_solve_columns(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_kkt_zero_first(150, 350, 3, &A);
    int32_t n = A.n;
    const int k = 19;
    int64_t ldb = n + 2, ldx = n + 5;
    double *B = malloc(sizeof(double) * (size_t)(ldb * k)), *X = malloc(sizeof(double) * (size_t)(ldx * k));
    double *X0 = malloc(sizeof(double) * (size_t)(ldx * k));
    ildl_column_result cr[19];
    uint64_t seed = 11;
    for (int64_t i = 0; i < ldb * k; i++) B[i] = 2 * ildl_test_rand(&seed) - 1;
    for (int32_t i = 0; i < n; i++) {
        B[3 * ldb + i] = 0.0;
        B[5 * ldb + i] *= 1e300;
        B[6 * ldb + i] *= 1e-300;
    }
    for (int64_t i = 0; i < ldx * k; i++) X0[i] = 0.01 * (2 * ildl_test_rand(&seed) - 1);
    for (int32_t i = 0; i < n; i++) { /* initial guesses at their right-hand sides' scale */
        X0[5 * ldx + i] *= 1e300;
        X0[6 * ldx + i] *= 1e-300;
    }
    for (int variant = 0; variant < 3; variant++) {
        ildl_options o;
        ildl_options_default(&o);
        o.backend = ILDL_BACKEND_CPU;
        o.num_threads = 2;
        o.use_initial_guess = variant == 1;
        if (variant == 2) {
            o.max_iter = 1; /* the columns stop before tol: NOT_CONVERGED, their best iterates */
            o.escalation = ILDL_ESCALATE_NONE;
        }
        ildl_handle *h = NULL;
        assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        memcpy(X, X0, sizeof(double) * (size_t)(ldx * k));
        int st = ildl_solve_multi(h, k, B, ldb, X, ldx, cr);
        ildl_info info;
        ildl_get_info(h, &info);
        int nconv = 0, most = 0;
        double worst = 0.0;
        for (int j = 0; j < k; j++) {
            nconv += cr[j].status == ILDL_SUCCESS;
            if (cr[j].iterations > most) most = cr[j].iterations;
            if (cr[j].true_residual > worst) worst = cr[j].true_residual;
            for (int64_t i = n; i < ldx; i++) assert_true(X[j * ldx + i] == X0[j * ldx + i]); /* gaps kept */
        }
        assert_int_equal(info.iterations, most);
        assert_true(info.true_residual == worst);
        assert_int_equal(info.converged, nconv == k);
        if (variant < 2) {
            assert_int_equal(st, ILDL_SUCCESS);
            assert_int_equal(nconv, k);
            assert_int_equal(cr[3].iterations, 0);
            assert_true(cr[3].true_residual == 0.0);
        } else {
            assert_int_equal(st, ILDL_ERR_NOT_CONVERGED);
            assert_true(nconv < k - 1);
            assert_non_null(strstr(ildl_last_error(h), "columns not solved"));
        }
        for (int j = 0; j < k; j++) {
            expect_column(h, B + j * ldb, X + j * ldx, o.use_initial_guess ? X0 + j * ldx : NULL, n, &cr[j]);
            if (cr[j].status == ILDL_SUCCESS && j != 3)
                assert_true(ildl_test_residual_ld(&A, X + j * ldx, B + j * ldb) <= o.tol);
        }
        /* results may be NULL; the same bits again */
        double *X2 = malloc(sizeof(double) * (size_t)(ldx * k));
        memcpy(X2, X0, sizeof(double) * (size_t)(ldx * k));
        assert_int_equal(ildl_solve_multi(h, k, B, ldb, X2, ldx, NULL), st);
        assert_memory_equal(X, X2, sizeof(double) * (size_t)(ldx * k));
        free(X2);
        ildl_destroy(h);
    }
    free(B); free(X); free(X0);
    ildl_csr_free(&A);
}

/* The ladder: on the shifted 3D Laplacian (test_api.c's ladder problem) rungs 0 and 1 stagnate
 * for most right-hand sides; columns that are solved at rung 0 (b = 0, and an initial guess
 * that already solves) keep their x, the others climb to rung 2, each with the bits ildl_solve
 * gives it on a fresh handle. */
static void test_solve_ladder(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace3d(8, 4.0, &A);
    int32_t n = A.n;
    const int k = 4;
    double *B = malloc(sizeof(double) * (size_t)n * k), *X = malloc(sizeof(double) * (size_t)n * k);
    double *X0 = calloc((size_t)n * k, sizeof(double));
    for (int32_t i = 0; i < n; i++) {
        B[i] = 1.0 + (double)(i % 7);
        B[n + i] = 0.0;
        B[2 * n + i] = (double)(i % 3) - 1.0;
    }
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.num_threads = 2;
    o.use_initial_guess = 1;
    /* column 3: b = A x0 for the x0 the complete rung gives column 0 */
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, B, X0 + 3 * (size_t)n), ILDL_SUCCESS);
    ildl_destroy(h);
    for (int32_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) s += A.val[p] * X0[3 * (size_t)n + A.col[p]];
        B[3 * (size_t)n + i] = s;
    }
    h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    memcpy(X, X0, sizeof(double) * (size_t)n * k);
    ildl_column_result cr[4];
    assert_int_equal(ildl_solve_multi(h, k, B, n, X, n, cr), ILDL_SUCCESS);
    ildl_info info;
    ildl_get_info(h, &info);
    assert_int_equal(info.rung, 2);
    assert_true(cr[0].rung == 2 && cr[2].rung == 2 && cr[1].rung == 0 && cr[3].rung == 0);
    assert_true(cr[1].iterations == 0 && cr[3].iterations == 0);
    assert_int_equal(info.rung_iterations[0], 200); /* the stall window */
    for (int j = 0; j < k; j++) {
        assert_int_equal(cr[j].status, ILDL_SUCCESS);
        ildl_handle *f = NULL;
        assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &f), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(f, NULL), ILDL_SUCCESS);
        expect_column(f, B + (size_t)n * j, X + (size_t)n * j, X0 + (size_t)n * j, n, &cr[j]);
        ildl_destroy(f);
    }
    ildl_destroy(h);
    free(B); free(X); free(X0);
    ildl_csr_free(&A);
}

static void test_solve_arguments(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(10, 0.5, &A);
    int32_t n = A.n;
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    double *B = calloc((size_t)n * 4, sizeof(double)), *X = calloc((size_t)n * 4, sizeof(double));
    for (int32_t i = 0; i < 2 * n; i++) B[i] = 1.0;
    assert_int_equal(ildl_solve_multi(h, 2, B, n, X, n, NULL), ILDL_ERR_CALL_ORDER);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve_multi(NULL, 2, B, n, X, n, NULL), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_solve_multi(h, 0, NULL, n, NULL, n, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve_multi(h, -1, B, n, X, n, NULL), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_solve_multi(h, 2, B, n, X, n - 1, NULL), ILDL_ERR_INVALID_OPTION);
    assert_non_null(strstr(ildl_last_error(h), "ldx"));
    assert_int_equal(ildl_solve_multi(h, 2, NULL, n, X, n, NULL), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_solve_multi(h, 2, B, n, B + n, n, NULL), ILDL_ERR_INVALID_OPTION);
    assert_non_null(strstr(ildl_last_error(h), "overlap"));
    /* a NaN in column 1: nothing solved, X as given */
    B[n + 7] = NAN;
    for (int32_t i = 0; i < 2 * n; i++) X[i] = 5.0;
    assert_int_equal(ildl_solve_multi(h, 2, B, n, X, n, NULL), ILDL_ERR_NAN_INF);
    assert_non_null(strstr(ildl_last_error(h), "column 1"));
    for (int32_t i = 0; i < 2 * n; i++) assert_true(X[i] == 5.0);
    B[n + 7] = 1.0;
    ildl_column_result cr[2];
    assert_int_equal(ildl_solve_multi(h, 2, B, n, X, n, cr), ILDL_SUCCESS);
    assert_true(cr[0].status == ILDL_SUCCESS && cr[1].status == ILDL_SUCCESS);
    ildl_destroy(h);
    free(B); free(X);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_solve_columns),
        cmocka_unit_test(test_solve_ladder),
        cmocka_unit_test(test_solve_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
