/* test_multi.c -- ildl_apply_multi: k columns at once (any k, leading dimensions above n, both
 * apply modes, every precision) give each column the bits of ildl_apply; the argument checks. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
