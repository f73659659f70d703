#define _POSIX_C_SOURCE 200809L
/* test_cuda_devices.c -- options.device_id and the caller's current device: every API call
 * runs on the handle's device and leaves the calling thread on the device it was on; with two
 * GPUs the same problem on device 0 and on device 1 gives bitwise the same solution. And the
 * device's persisting-L2 size: setup raises it to hold the sweeps' output vector, never lowers
 * it, leaves it alone with options.l2_persist OFF, and the window
 * changes no bit of a solve. Skips
 * without a GPU (the two-device part without a second one). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef ILDL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "blockildl.h"
#include "core/csr.h"
#include "cuda/cuda_backend.h"

#ifdef ILDL_HAVE_CUDA
static int current_device(void)
{
    int d = -1;
    assert_int_equal(cudaGetDevice(&d), cudaSuccess);
    return d;
}

/* Setup, factor, solve and a host apply on device_id while the thread's current device is
 * `caller`; after every call the current device must still be `caller`. Returns the SQMR
 * iterations; x receives the solution. */
static int solve_on(const ildl_csr *A, const double *b, int device_id, int caller, int l2_persist, double *x)
{
    assert_int_equal(cudaSetDevice(caller), cudaSuccess);
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CUDA;
    o.device_id = device_id;
    o.l2_persist = l2_persist;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(A->n, A->rowptr, A->col, A->val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(current_device(), caller);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(current_device(), caller);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    assert_int_equal(current_device(), caller);
    double *z = malloc(sizeof(double) * (size_t)A->n);
    assert_non_null(z);
    assert_int_equal(ildl_apply(h, b, z, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
    assert_int_equal(current_device(), caller);
    free(z);
    ildl_info info;
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    ildl_destroy(h);
    assert_int_equal(current_device(), caller);
    return info.iterations;
}

/* The tests' problem: ildl_test_laplace2d(70, 0.02), 4900 rows, b random from seed, and
 * two solution vectors. */
static void test_problem(uint64_t seed, ildl_csr *A, double **b, double **x0, double **x1)
{
    ildl_test_laplace2d(70, 0.02, A);
    size_t n = (size_t)A->n;
    *b = malloc(sizeof(double) * n);
    *x0 = malloc(sizeof(double) * n);
    *x1 = malloc(sizeof(double) * n);
    assert_true(*b && *x0 && *x1);
    for (size_t i = 0; i < n; i++) (*b)[i] = ildl_test_rand(&seed) - 0.5;
}

static void test_device_ids(void **state)
{
    (void)state;
    int ndev = ildl_cuda_device_count();
    if (ndev <= 0) {
        printf("SKIP: no CUDA device: device_id not tested\n");
        skip();
        return;
    }
    ildl_csr A;
    double *b, *x0, *x1;
    test_problem(99, &A, &b, &x0, &x1);
    int32_t n = A.n;

    int it0 = solve_on(&A, b, 0, 0, ILDL_L2_PERSIST_AUTO, x0);
    printf("device 0 from device 0: %d iterations\n", it0);
    /* out of range: a clear error, and the caller's device untouched */
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CUDA;
    o.device_id = ndev;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_ERR_INVALID_OPTION);
    assert_null(h);
    printf("device_id %d of %d: %s\n", ndev, ndev, ildl_last_error(NULL));
    assert_int_equal(current_device(), 0);

    if (ndev >= 2) {
        int it1 = solve_on(&A, b, 0, 1, ILDL_L2_PERSIST_AUTO, x1); /* handle on 0, caller on 1 */
        assert_int_equal(it1, it0);
        assert_memory_equal(x1, x0, sizeof(double) * (size_t)n);
        it1 = solve_on(&A, b, 1, 0, ILDL_L2_PERSIST_AUTO, x1); /* handle on 1, caller on 0 */
        printf("device 1 from device 0: %d iterations\n", it1);
        assert_int_equal(it1, it0);
        assert_memory_equal(x1, x0, sizeof(double) * (size_t)n);
    } else {
        printf("SKIP: one CUDA device: device_id 1 and switching back from it not tested\n");
    }
    free(b); free(x0); free(x1);
    ildl_csr_free(&A);
}

static size_t persisting_limit(void)
{
    size_t v = 0;
    assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize), cudaSuccess);
    return v;
}

static void test_l2_persisting_limit(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: the persisting-L2 size not tested\n");
        skip();
        return;
    }
    int pmax = 0;
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaDeviceGetAttribute(&pmax, cudaDevAttrMaxPersistingL2CacheSize, 0), cudaSuccess);
    ildl_csr A;
    double *b, *x0, *x1;
    test_problem(7, &A, &b, &x0, &x1);
    int32_t n = A.n;
    size_t l_in = persisting_limit(); /* restored at the end */
    if (pmax > 0) /* from none, so that "left alone" can fail: an earlier handle may have raised it */
        assert_int_equal(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), cudaSuccess);
    size_t l0 = persisting_limit();
    int it0 = solve_on(&A, b, 0, 0, ILDL_L2_PERSIST_OFF, x0);
    assert_int_equal(persisting_limit(), l0); /* left alone by the option */
    int it1 = solve_on(&A, b, 0, 0, ILDL_L2_PERSIST_AUTO, x1);
    size_t need = sizeof(double) * (size_t)n, l1 = persisting_limit();
    if (pmax <= 0) {
        printf("SKIP: the device has no persisting L2 lines: the window not tested\n");
        assert_int_equal(l1, l0);
    } else {
        if (need > (size_t)pmax) need = (size_t)pmax;
        printf("persisting L2: %zu bytes before, %zu after (vector %zu, device maximum %d)\n", l0, l1,
               sizeof(double) * (size_t)n, pmax);
        assert_true(l1 >= need && l1 > l0 && l1 <= (size_t)pmax); /* raised from none */
        /* never lowered: set the maximum, set up again */
        assert_int_equal(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)pmax), cudaSuccess);
        size_t lm = persisting_limit();
        (void)solve_on(&A, b, 0, 0, ILDL_L2_PERSIST_AUTO, x1);
        assert_int_equal(persisting_limit(), lm);
        assert_int_equal(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, l_in), cudaSuccess);
    }
    assert_int_equal(it1, it0); /* a cache policy: the same bits */
    assert_memory_equal(x1, x0, sizeof(double) * (size_t)n);
    free(b); free(x0); free(x1);
    ildl_csr_free(&A);
}
#else
static void test_device_ids(void **state)
{
    (void)state;
    printf("SKIP: built without the CUDA backend: device_id not tested\n");
    skip();
}

static void test_l2_persisting_limit(void **state)
{
    (void)state;
    printf("SKIP: built without the CUDA backend: the persisting-L2 size not tested\n");
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_ids),
        cmocka_unit_test(test_l2_persisting_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
