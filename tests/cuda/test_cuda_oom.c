/* test_cuda_oom.c -- GPU memory exhaustion through the public API: with almost all device
 * memory taken by the test, backend CUDA fails with a status and a message (never an abort),
 * backend AUTO falls back to the CPU and converges, the caller's arrays stay untouched, and
 * once the memory is back the CUDA backend works again. Skips without a GPU. */
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
/* Leave about `spare` bytes of device memory free; returns the hog (free it with cudaFree) or
 * NULL when the memory could not be taken. */
static void *take_device_memory(size_t spare)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b <= spare) return NULL;
    size_t want = free_b - spare;
    for (int tries = 0; tries < 16; tries++, want -= (size_t)16 << 20) {
        void *p = NULL;
        if (cudaMalloc(&p, want) == cudaSuccess) return p;
        (void)cudaGetLastError(); /* allocation failures are not sticky: clear and retry smaller */
    }
    return NULL;
}

/* Setup + factor + solve with `backend`; returns the first failing status (0: all fine) and
 * the backend that ran in *used. */
static int run(const ildl_csr *A, int backend, const double *b, double *x, int *used, char *msg, size_t ml)
{
    ildl_options o;
    ildl_options_default(&o);
    o.backend = backend;
    ildl_handle *h = NULL;
    int st = ildl_setup(A->n, A->rowptr, A->col, A->val, &o, &h);
    if (st) {
        assert_null(h);
        snprintf(msg, ml, "%s", ildl_last_error(NULL));
        return st;
    }
    st = ildl_factor(h, NULL);
    if (!st) st = ildl_solve(h, b, x);
    if (st) snprintf(msg, ml, "%s", ildl_last_error(h));
    ildl_info info;
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    *used = info.backend;
    if (!st) assert_true(info.converged && info.true_residual <= o.tol);
    ildl_destroy(h);
    return st;
}

static void test_out_of_device_memory(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU memory exhaustion not tested\n");
        skip();
        return;
    }
    ildl_csr A;
    ildl_test_laplace2d(250, 0.0, &A); /* n = 62500: tens of MiB on the device */
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    double *val0 = malloc(sizeof(double) * (size_t)nnz);
    int32_t *col0 = malloc(sizeof(int32_t) * (size_t)nnz);
    assert_true(b && x && val0 && col0);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0;
    memcpy(val0, A.val, sizeof(double) * (size_t)nnz);
    memcpy(col0, A.col, sizeof(int32_t) * (size_t)nnz);
    char msg[512] = "";
    int used = -1;

    void *hog = take_device_memory((size_t)2 << 20);
    assert_non_null(hog);
    int st = run(&A, ILDL_BACKEND_CUDA, b, x, &used, msg, sizeof msg);
    printf("backend cuda, 2 MiB of device memory free: %s (%s)\n", ildl_strerror(st), msg);
    assert_true(st == ILDL_ERR_OUT_OF_MEMORY || st == ILDL_ERR_DEVICE);
    assert_true(strlen(msg) > 0);
    st = run(&A, ILDL_BACKEND_AUTO, b, x, &used, msg, sizeof msg);
    printf("backend auto, 2 MiB free: status %d, ran on %s\n", st, used == ILDL_BACKEND_CPU ? "cpu" : "cuda");
    assert_int_equal(st, ILDL_SUCCESS);
    assert_int_equal(used, ILDL_BACKEND_CPU);
    assert_int_equal(cudaFree(hog), cudaSuccess);

    st = run(&A, ILDL_BACKEND_CUDA, b, x, &used, msg, sizeof msg);
    printf("backend cuda, memory back: status %d\n", st);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_int_equal(used, ILDL_BACKEND_CUDA);
    assert_memory_equal(val0, A.val, sizeof(double) * (size_t)nnz);
    assert_memory_equal(col0, A.col, sizeof(int32_t) * (size_t)nnz);
    free(b); free(x); free(val0); free(col0);
    ildl_csr_free(&A);
}
#else
static void test_out_of_device_memory(void **state)
{
    (void)state;
    printf("SKIP: built without the CUDA backend: GPU memory exhaustion not tested\n");
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_of_device_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
