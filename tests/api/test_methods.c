/* test_methods.c -- options.method through the public API (docs/methods.md): block-Jacobi
 * solves with a true residual that meets tol, its ildl_apply is the bits of block-Jacobi built
 * independently on the handle's analysis (src/cpu/block_jacobi.c), refactorizations with new
 * values, its statistics, the combinations it refuses with a message, the ladder's climb to
 * block-iLDL^T rungs when it does not converge; on the GPU (skipped visibly without one) the
 * CPU's iterations and x bit for bit, the same apply, and a device memory estimate that is
 * what the factorization allocates; the same on the GPU for the fixed-point method (its CPU
 * reference is tested in tests/cpu/test_fixed_point.c), with the same residual bits. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api_internal.h"
#include "blockildl.h"
#include "cpu/block_jacobi.h"
#include "cuda/cuda_backend.h"

static double *vec(int32_t n)
{
    double *v = calloc((size_t)n, sizeof(double));
    assert_non_null(v);
    return v;
}

static ildl_handle *setup_method(const ildl_csr *A, int method, int backend, int max_iter)
{
    ildl_options o;
    ildl_options_default(&o);
    o.method = method;
    o.backend = backend;
    o.max_iter = max_iter;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(A->n, A->rowptr, A->col, A->val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    return h;
}

/* a system block-Jacobi solves: KKT with its zero block first */
static void make_kkt(ildl_csr *A) { ildl_test_kkt_zero_first(300, 600, 9, A); }

static void test_bj_solve_and_apply(void **state)
{
    (void)state;
    ildl_csr A;
    make_kkt(&A);
    const int32_t n = A.n;
    ildl_handle *h = setup_method(&A, ILDL_METHOD_BLOCK_JACOBI, ILDL_BACKEND_CPU, 1000);
    double *b = vec(n), *x = vec(n), *r = vec(n), *z = vec(n), *zr = vec(n);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 + (i % 7);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    ildl_info info;
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    assert_int_equal(info.rung, 0);
    assert_true(info.iterations > 1);
    assert_true(ildl_test_residual_ld(&A, x, b) <= 1e-6);
    /* the inverses' entries, no inertia */
    int64_t entries = 0;
    for (int32_t k = 0; k < h->an.blk.nb; k++) {
        int64_t m = h->an.blk.bstart[k + 1] - h->an.blk.bstart[k];
        entries += m * m;
    }
    assert_int_equal(info.factor_nnz, entries);
    assert_int_equal(info.inertia_pos + info.inertia_neg + info.inertia_zero, 0);
    /* ildl_apply = block-Jacobi built here on the handle's analysis, bit for bit */
    ildl_block_jacobi bj;
    assert_int_equal(ildl_block_jacobi_create(&h->an.blk, h->an.scale, &bj), ILDL_SUCCESS);
    ildl_block_jacobi_factor(&bj, &h->A, 1e-10, 1e-6);
    uint64_t seed = 4;
    for (int32_t i = 0; i < n; i++) r[i] = ildl_test_rand(&seed) - 0.5;
    assert_int_equal(ildl_apply(h, r, z, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
    ildl_block_jacobi_apply(&bj, r, zr);
    assert_memory_equal(z, zr, sizeof(double) * (size_t)n);
    ildl_block_jacobi_free(&bj);
    /* two right-hand sides at once: each column the bits of its solve alone */
    {
        double *B2 = vec(2 * n), *X2 = vec(2 * n), *xk = vec(n);
        for (int32_t i = 0; i < n; i++) B2[i] = b[i], B2[n + i] = r[i];
        ildl_column_result cr[2];
        assert_int_equal(ildl_solve_multi(h, 2, B2, n, X2, n, cr), ILDL_SUCCESS);
        for (int j = 0; j < 2; j++) {
            memset(xk, 0, sizeof(double) * (size_t)n);
            assert_int_equal(ildl_solve(h, B2 + (int64_t)j * n, xk), ILDL_SUCCESS);
            assert_memory_equal(xk, X2 + (int64_t)j * n, sizeof(double) * (size_t)n);
        }
        free(B2), free(X2), free(xk);
    }
    /* new values (every entry times 3) on the same pattern: solved again, x scaled by 1/3 */
    double *v3 = malloc(sizeof(double) * (size_t)A.rowptr[n]);
    assert_non_null(v3);
    for (int64_t p = 0; p < A.rowptr[n]; p++) v3[p] = 3.0 * A.val[p];
    assert_int_equal(ildl_factor(h, v3), ILDL_SUCCESS);
    memset(x, 0, sizeof(double) * (size_t)n);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    for (int32_t i = 0; i < n; i++) x[i] *= 3.0;
    assert_true(ildl_test_residual_ld(&A, x, b) <= 1e-5);
    free(v3);
    free(b), free(x), free(r), free(z), free(zr);
    ildl_destroy(h);
    ildl_csr_free(&A);
}

static void test_bj_refusals(void **state)
{
    (void)state;
    ildl_csr A;
    make_kkt(&A);
    ildl_options o;
    ildl_options_default(&o);
    o.method = ILDL_METHOD_BLOCK_JACOBI;
    o.precision = ILDL_PREC_SINGLE;
    assert_true(ildl_test_refused(&A, &o, "double precision"));
    o.precision = ILDL_PREC_DOUBLE;
    o.apply_mode = ILDL_APPLY_SPD;
    assert_true(ildl_test_refused(&A, &o, "apply_mode SPD"));
    o.apply_mode = ILDL_APPLY_LDLT;
    o.pushback_rounds = 2;
    assert_true(ildl_test_refused(&A, &o, "pushback_rounds"));
    o.pushback_rounds = 0;
    o.method = 7;
    assert_true(ildl_test_refused(&A, &o, "unknown method 7"));
    ildl_csr_free(&A);
}

/* block-Jacobi does not converge in 60 iterations here (it needs ~600): ildl_solve climbs to a
 * block-iLDL^T rung, which does */
static void test_bj_ladder(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(40, 0.5, &A); /* indefinite shifted Laplacian: block-Jacobi is slow */
    const int32_t n = A.n;
    ildl_options o;
    ildl_options_default(&o);
    o.method = ILDL_METHOD_BLOCK_JACOBI;
    o.backend = ILDL_BACKEND_CPU;
    o.max_iter = 60;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    double *b = vec(n), *x = vec(n);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0;
    int st = ildl_solve(h, b, x);
    ildl_info info;
    ildl_get_info(h, &info);
    printf("ladder from block-Jacobi: status %d, rung %d, rung iterations %lld %lld %lld\n", st, (int)info.rung,
           (long long)info.rung_iterations[0], (long long)info.rung_iterations[1], (long long)info.rung_iterations[2]);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_true(ildl_test_residual_ld(&A, x, b) <= 1e-6);
    assert_true(info.rung >= 1);
    assert_true(info.rung_iterations[0] > 0 && h->opt.method == ILDL_METHOD_ILDL);
    free(b), free(x);
    ildl_destroy(h);
    ildl_csr_free(&A);
}

/* The GPU's solve, multi-column solve, refactorization and memory estimate against the CPU's. */
static void gpu_agreement(int method, const char *what)
{
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU %s agreement not run\n", what);
        skip();
        return;
    }
    ildl_csr A;
    make_kkt(&A);
    const int32_t n = A.n;
    ildl_handle *hc = setup_method(&A, method, ILDL_BACKEND_CPU, 1000), *hg = setup_method(&A, method, ILDL_BACKEND_CUDA, 1000);
    ildl_info ic, ig;
    double *b = vec(n), *xc = vec(n), *xg = vec(n), *zc = vec(n), *zg = vec(n);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 + (i % 5);
    assert_int_equal(ildl_apply(hc, b, zc, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_apply(hg, b, zg, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
    assert_memory_equal(zc, zg, sizeof(double) * (size_t)n);
    assert_int_equal(ildl_solve(hc, b, xc), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(hg, b, xg), ILDL_SUCCESS);
    ildl_get_info(hc, &ic);
    ildl_get_info(hg, &ig);
    assert_int_equal(ig.backend, ILDL_BACKEND_CUDA);
    assert_int_equal(ic.iterations, ig.iterations);
    assert_memory_equal(xc, xg, sizeof(double) * (size_t)n);
    assert_int_equal(ic.num_perturbed, ig.num_perturbed);
    assert_int_equal(ic.factor_nnz, ig.factor_nnz);
    assert_memory_equal(&ic.fp_residual, &ig.fp_residual, sizeof(double));
    printf("GPU %s: %d iterations on both backends, x the same bits, device bytes %zu, fp_residual %.3e\n", what,
           ig.iterations, ig.device_bytes, ig.fp_residual);
    /* several right-hand sides at once (the CUDA backend's solvers on streams of their own):
     * each column the bits of the CPU's solve of it alone */
    {
        enum { K = 3 };
        double *B = vec(n * K), *X = vec(n * K), *xk = vec(n);
        for (int j = 0; j < K; j++)
            for (int32_t i = 0; i < n; i++) B[(int64_t)j * n + i] = b[i] * (j + 1) + (i % (j + 2));
        ildl_column_result cr[K];
        assert_int_equal(ildl_solve_multi(hg, K, B, n, X, n, cr), ILDL_SUCCESS);
        for (int j = 0; j < K; j++) {
            assert_int_equal(cr[j].status, ILDL_SUCCESS);
            memset(xk, 0, sizeof(double) * (size_t)n);
            assert_int_equal(ildl_solve(hc, B + (int64_t)j * n, xk), ILDL_SUCCESS);
            assert_memory_equal(xk, X + (int64_t)j * n, sizeof(double) * (size_t)n);
        }
        free(B), free(X), free(xk);
        printf("GPU %s: ildl_solve_multi's %d columns the CPU's bits\n", what, K);
    }
    /* a refactorization with new values (3 A) on both: the same bits again */
    {
        double *v3 = malloc(sizeof(double) * (size_t)A.rowptr[n]);
        assert_non_null(v3);
        for (int64_t p = 0; p < A.rowptr[n]; p++) v3[p] = 3.0 * A.val[p];
        assert_int_equal(ildl_factor(hc, v3), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(hg, v3), ILDL_SUCCESS);
        memset(xc, 0, sizeof(double) * (size_t)n);
        memset(xg, 0, sizeof(double) * (size_t)n);
        assert_int_equal(ildl_solve(hc, b, xc), ILDL_SUCCESS);
        assert_int_equal(ildl_solve(hg, b, xg), ILDL_SUCCESS);
        assert_memory_equal(xc, xg, sizeof(double) * (size_t)n);
        free(v3);
        ildl_get_info(hc, &ic);
        ildl_get_info(hg, &ig);
        assert_memory_equal(&ic.fp_residual, &ig.fp_residual, sizeof(double));
        printf("GPU %s: refactorization with new values, x the CPU's bits\n", what);
    }
    ildl_destroy(hc);
    ildl_destroy(hg);
    /* the estimate of ildl_analyse_matrix is what the factorization allocates */
    ildl_matrix m;
    ildl_matrix_init(&m);
    m.n = n;
    m.nnz = A.rowptr[n];
    m.rows = A.rowptr;
    m.cols = A.col;
    m.values = A.val;
    ildl_options o;
    ildl_options_default(&o);
    o.method = method;
    o.backend = ILDL_BACKEND_CUDA;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_analyse_matrix(&m, &o, &h), ILDL_SUCCESS);
    ildl_info ie;
    ildl_get_info(h, &ie);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    ildl_get_info(h, &ig);
    assert_int_equal((int64_t)ig.device_bytes, ie.device_bytes_estimate);
    ildl_destroy(h);
    free(b), free(xc), free(xg), free(zc), free(zg);
    ildl_csr_free(&A);
}

static void test_bj_gpu_agreement(void **state)
{
    (void)state;
    gpu_agreement(ILDL_METHOD_BLOCK_JACOBI, "block-Jacobi");
}

static void test_fp_gpu_agreement(void **state)
{
    (void)state;
    gpu_agreement(ILDL_METHOD_FIXED_POINT, "fixed-point");
    if (ildl_cuda_device_count() <= 0) return;
    /* the other pivot rules, a 2D Laplacian with 1 to 12 sweeps: the same residual and
     * preconditioner bits */
    ildl_csr A;
    ildl_test_laplace2d(60, 0.7, &A);
    const int32_t n = A.n;
    double *r = vec(n), *zc = vec(n), *zg = vec(n);
    uint64_t seed = 8;
    for (int32_t i = 0; i < n; i++) r[i] = ildl_test_rand(&seed) - 0.5;
    const int piv[3] = {ILDL_PIVOT_NONE, ILDL_PIVOT_BK, ILDL_PIVOT_ROOK}, sweeps[3] = {1, 4, 12};
    for (int k = 0; k < 3; k++) {
        ildl_options o;
        ildl_options_default(&o);
        o.method = ILDL_METHOD_FIXED_POINT;
        o.pivoting = piv[k];
        o.fp_sweeps = sweeps[k];
        ildl_handle *h[2] = {NULL, NULL};
        ildl_info in[2];
        for (int b = 0; b < 2; b++) {
            o.backend = b ? ILDL_BACKEND_CUDA : ILDL_BACKEND_CPU;
            assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h[b]), ILDL_SUCCESS);
            assert_int_equal(ildl_factor(h[b], NULL), ILDL_SUCCESS);
            ildl_get_info(h[b], &in[b]);
        }
        assert_int_equal(in[1].backend, ILDL_BACKEND_CUDA);
        assert_memory_equal(&in[0].fp_residual, &in[1].fp_residual, sizeof(double));
        assert_int_equal(in[0].num_perturbed, in[1].num_perturbed);
        assert_int_equal(in[0].num_2x2_pivots, in[1].num_2x2_pivots);
        assert_int_equal(ildl_apply(h[0], r, zc, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
        assert_int_equal(ildl_apply(h[1], r, zg, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
        assert_memory_equal(zc, zg, sizeof(double) * (size_t)n);
        printf("GPU fixed-point, pivoting %d, %d sweeps (%d levels): residual %.3e, %d 2x2 pivots, apply the CPU's bits\n",
               piv[k], sweeps[k], (int)in[0].num_levels, in[0].fp_residual, (int)in[0].num_2x2_pivots);
        ildl_destroy(h[0]);
        ildl_destroy(h[1]);
    }
    free(r), free(zc), free(zg);
    ildl_csr_free(&A);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bj_solve_and_apply),
        cmocka_unit_test(test_bj_refusals),
        cmocka_unit_test(test_bj_ladder),
        cmocka_unit_test(test_bj_gpu_agreement),
        cmocka_unit_test(test_fp_gpu_agreement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
