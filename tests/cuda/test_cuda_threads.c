/* test_cuda_threads.c -- handles on several threads at once: each of NJOBS threads sets up,
 * factors and solves its own problem with the CUDA backend while the others do the same; every
 * status, iteration count and solution must be bitwise what the job gives when it runs alone.
 * Skips without a GPU. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/csr.h"
#include "cuda/cuda_backend.h"

#define NJOBS 4

typedef struct {
    const ildl_csr *A;
    const double *b;
    double *x;       /* out */
    int status;      /* out: first failing call's status, or the solve's */
    int iterations;  /* out */
    char msg[256];   /* out: the error message, if any */
} job;

/* Setup, factor and solve of one job with the CUDA backend (at most 300 iterations). */
static void *run_job(void *arg)
{
    job *j = (job *)arg;
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CUDA;
    o.max_iter = 300;
    ildl_handle *h = NULL;
    int st = ildl_setup(j->A->n, j->A->rowptr, j->A->col, j->A->val, &o, &h);
    if (!st) st = ildl_factor(h, NULL);
    if (!st) st = ildl_solve(h, j->b, j->x);
    j->status = st;
    j->msg[0] = 0;
    if (st) snprintf(j->msg, sizeof j->msg, "%s", ildl_last_error(h));
    ildl_info info;
    j->iterations = h && ildl_get_info(h, &info) == ILDL_SUCCESS ? info.iterations : -1;
    ildl_destroy(h);
    return NULL;
}

static void test_concurrent_handles(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: concurrent CUDA handles not tested\n");
        skip();
        return;
    }
    ildl_csr A[NJOBS];
    double *b[NJOBS], *x_alone[NJOBS], *x_together[NJOBS];
    job alone[NJOBS], together[NJOBS];
    for (int k = 0; k < NJOBS; k++) {
        /* different sizes, shifted past the smallest eigenvalues (mildly indefinite); on the
         * CPU backend they converge in 25-64 iterations */
        ildl_test_laplace2d(60 + 10 * k, 0.02, &A[k]);
        int32_t n = A[k].n;
        b[k] = malloc(sizeof(double) * (size_t)n);
        x_alone[k] = malloc(sizeof(double) * (size_t)n);
        x_together[k] = malloc(sizeof(double) * (size_t)n);
        assert_true(b[k] && x_alone[k] && x_together[k]);
        uint64_t seed = 1234 + (uint64_t)k;
        for (int32_t i = 0; i < n; i++) b[k][i] = ildl_test_rand(&seed) - 0.5;
        alone[k] = (job){.A = &A[k], .b = b[k], .x = x_alone[k]};
        together[k] = (job){.A = &A[k], .b = b[k], .x = x_together[k]};
    }
    for (int k = 0; k < NJOBS; k++) run_job(&alone[k]);
    pthread_t th[NJOBS];
    for (int k = 0; k < NJOBS; k++) assert_int_equal(pthread_create(&th[k], NULL, run_job, &together[k]), 0);
    for (int k = 0; k < NJOBS; k++) assert_int_equal(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < NJOBS; k++) {
        printf("job %d (n = %d): alone %s, %d iterations; with %d others %s, %d iterations%s%s\n", k,
               (int)A[k].n, ildl_strerror(alone[k].status), alone[k].iterations, NJOBS - 1,
               ildl_strerror(together[k].status), together[k].iterations,
               together[k].msg[0] ? ": " : "", together[k].msg);
        assert_int_equal(alone[k].status, ILDL_SUCCESS);
        assert_int_equal(together[k].status, alone[k].status);
        assert_int_equal(together[k].iterations, alone[k].iterations);
        assert_memory_equal(x_together[k], x_alone[k], sizeof(double) * (size_t)A[k].n);
        free(b[k]);
        free(x_alone[k]);
        free(x_together[k]);
        ildl_csr_free(&A[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
