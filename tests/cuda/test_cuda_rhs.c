/* test_cuda_rhs.c -- right-hand sides whose norms over- or underflow, on the GPU: the CUDA
 * backend's solve equals the CPU backend's bit for bit (x, iterations, true residual) where
 * b is tiny, subnormal, huge or near DBL_MAX (the API scales such a b by a power of two); the
 * GPU's 2-norms equal the CPU's where the sum of squares over- or underflows (the scaled path
 * of krylov/reduce.h, host-driven and inside the step kernel); the device apply of such
 * vectors equals the host's; the ladder takes the same rungs with the same results. Skips
 * without a GPU. */
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
#ifdef ILDL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "blockildl.h"
#include "core/csr.h"
#include "cuda/cuda_backend.h"
#include "krylov/reduce.h"


/* Solve with backend on A (fresh handle; x holds the initial guess if x0); returns the status. */
static int solve_on(const ildl_csr *A, int backend, int x0, const double *b, double *x, ildl_info *info)
{
    ildl_options o;
    ildl_options_default(&o);
    o.backend = backend;
    o.use_initial_guess = x0;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(A->n, A->rowptr, A->col, A->val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    int st = ildl_solve(h, b, x);
    ildl_get_info(h, info);
    assert_int_equal(info->backend, backend);
    ildl_destroy(h);
    return st;
}

/* The CPU and CUDA backends on (A, b, x0): the same status, x, iterations and residual, the
 * residual as recomputed here, and a converged solve (or, with may_fail, an honest failure). */
static void agree(const char *what, const ildl_csr *A, const double *b, const double *x0, int may_fail)
{
    int32_t n = A->n;
    size_t bytes = sizeof(double) * (size_t)n;
    double *xc = malloc(bytes), *xg = malloc(bytes);
    if (x0) {
        memcpy(xc, x0, bytes);
        memcpy(xg, x0, bytes);
    }
    ildl_info ic, ig;
    int sc = solve_on(A, ILDL_BACKEND_CPU, x0 != NULL, b, xc, &ic);
    int sg = solve_on(A, ILDL_BACKEND_CUDA, x0 != NULL, b, xg, &ig);
    double r = ildl_test_residual_ld(A, xg, b);
    printf("%-40s cpu %d gpu %d iterations %d/%d residual %.3e/%.3e (recomputed %.3e) x %s\n", what, sc, sg,
           ic.iterations, ig.iterations, ic.true_residual, ig.true_residual, r,
           memcmp(xc, xg, bytes) ? "DIFFER" : "equal");
    assert_int_equal(sc, sg);
    assert_int_equal(ic.iterations, ig.iterations);
    assert_memory_equal(&ic.true_residual, &ig.true_residual, sizeof(double));
    assert_memory_equal(xc, xg, bytes);
    assert_true(fabs(r - ig.true_residual) <= 1e-6 * r + 1e-300);
    assert_int_equal(ig.converged, r <= 1e-6);
    if (may_fail) assert_true(sg == ILDL_SUCCESS || sg == ILDL_ERR_NOT_CONVERGED);
    else assert_true(sg == ILDL_SUCCESS && ig.converged);
    free(xc);
    free(xg);
}

static void test_scaled_rhs(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU right-hand-side tests not run\n");
        skip();
        return;
    }
    ildl_csr A;
    ildl_test_laplace2d(40, 0.5, &A); /* indefinite: shifted */
    int32_t n = A.n;
    double *b0 = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
    uint64_t seed = 3;
    for (int32_t i = 0; i < n; i++) b0[i] = 2.0 * ildl_test_rand(&seed) - 1.0;
    int ks[] = {0, -1000, -1070, 700, 1015};
    for (int k = 0; k < 5; k++) {
        char what[64];
        for (int32_t i = 0; i < n; i++) b[i] = ldexp(b0[i], ks[k]);
        snprintf(what, sizeof what, "laplace2d(40), b * 2^%d", ks[k]);
        agree(what, &A, b, NULL, ks[k] == -1070); /* subnormal b: x too, with too few bits for tol */
    }
    free(b0);
    free(b);
    ildl_csr_free(&A);
    /* an initial guess whose A x0 overflows is not used, on either backend */
    int32_t ti[4] = {0, 1, 2, 3};
    double tv[4] = {1e300, 1e300, 1.0, 1.0}, bd[4] = {1e300, -1e300, 2.0, 3.0}, x0[4] = {1e10, 1e10, 1e10, 1e10};
    ildl_csr D;
    ildl_test_csr_from_triplets(4, 4, ti, ti, tv, &D);
    agree("diag(1e300, 1e300, 1, 1), A x0 overflows", &D, bd, x0, 0);
    ildl_csr_free(&D);
}

/* Dense rows (core/csr.h: rows of more than ILDL_SPMV_LONG_ROW entries, summed by a warp each
 * on the GPU): a saddle point [[L, C], [C^T, 0]] with L the shifted 2D Laplacian of 40 x 40 and
 * C two dense columns (1600 entries each); SQMR on both backends, the same bits, as bloweya's
 * and sqd_hues-mod's dense rows. */
static void test_long_rows_agreement(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU long-row test not run\n");
        skip();
        return;
    }
    ildl_csr L;
    ildl_test_laplace2d(40, 0.5, &L);
    int32_t m = L.n, n = m + 2;
    int64_t cap = L.rowptr[m] + 2 * (int64_t)m;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap), *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap), *b = malloc(sizeof(double) * (size_t)n);
    assert_true(ti && tj && tv && b);
    int64_t nt = 0;
    for (int32_t i = 0; i < m; i++)
        for (int64_t p = L.rowptr[i]; p < L.rowptr[i + 1]; p++)
            if (L.col[p] >= i) ti[nt] = i, tj[nt] = L.col[p], tv[nt++] = L.val[p];
    uint64_t seed = 5;
    for (int32_t i = 0; i < m; i++) {
        ti[nt] = i, tj[nt] = m, tv[nt++] = 0.5 + ildl_test_rand(&seed);
        ti[nt] = i, tj[nt] = m + 1, tv[nt++] = 2.0 * ildl_test_rand(&seed) - 1.0;
    }
    ildl_csr A;
    ildl_test_csr_from_triplets(n, nt, ti, tj, tv, &A);
    assert_true(A.rowptr[m + 1] - A.rowptr[m] > ILDL_SPMV_LONG_ROW);
    for (int32_t i = 0; i < n; i++) b[i] = 2.0 * ildl_test_rand(&seed) - 1.0;
    agree("laplace2d(40) + 2 dense rows", &A, b, NULL, 0);
    free(ti);
    free(tj);
    free(tv);
    free(b);
    ildl_csr_free(&L);
    ildl_csr_free(&A);
}

/* The GPU's 2-norms equal ildl_nrm2_fixed bit for bit on vectors whose squares over- or
 * underflow (and on NaN, Inf, zero), by the host-driven path and by the one-block fallback
 * that the step kernel takes; the fallback agrees with the plain sum to rounding elsewhere. */
/* The ladder (docs/robustness.md) on the GPU: on T - 4 I of 8^3 rows rungs 0 and 1 stagnate and
 * rung 2 (the complete factor) solves; the CUDA backend takes the same rungs with the same
 * iterations, factors and x, bit for bit, as the CPU backend. Also with an initial guess. */
static void test_ladder_agreement(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU ladder test not run\n");
        skip();
        return;
    }
    ildl_csr A;
    ildl_test_laplace3d(8, 4.0, &A);
    int32_t n = A.n;
    size_t bytes = sizeof(double) * (size_t)n;
    double *b = malloc(bytes), *x0 = malloc(bytes), *xc = malloc(bytes), *xg = malloc(bytes);
    for (int32_t i = 0; i < n; i++) {
        b[i] = 1.0 + (double)(i % 7);
        x0[i] = 0.25 * (double)(i % 3);
    }
    for (int guess = 0; guess <= 1; guess++) {
        ildl_info ic, ig;
        memcpy(xc, x0, bytes);
        memcpy(xg, x0, bytes);
        int sc = solve_on(&A, ILDL_BACKEND_CPU, guess, b, xc, &ic);
        int sg = solve_on(&A, ILDL_BACKEND_CUDA, guess, b, xg, &ig);
        printf("ladder (x0 %d): cpu %d gpu %d rung %d/%d iterations %lld,%lld,%lld / %lld,%lld,%lld x %s\n", guess,
               sc, sg, ic.rung, ig.rung, (long long)ic.rung_iterations[0], (long long)ic.rung_iterations[1],
               (long long)ic.rung_iterations[2], (long long)ig.rung_iterations[0], (long long)ig.rung_iterations[1],
               (long long)ig.rung_iterations[2], memcmp(xc, xg, bytes) ? "DIFFER" : "equal");
        assert_int_equal(sc, ILDL_SUCCESS);
        assert_int_equal(sg, ILDL_SUCCESS);
        assert_int_equal(ic.rung, 2);
        assert_int_equal(ig.rung, 2);
        for (int r = 0; r < ILDL_MAX_RUNGS; r++) {
            assert_int_equal(ic.rung_iterations[r], ig.rung_iterations[r]);
            assert_int_equal(ic.rung_factor_nnz[r], ig.rung_factor_nnz[r]);
        }
        assert_memory_equal(&ic.true_residual, &ig.true_residual, sizeof(double));
        assert_memory_equal(xc, xg, bytes);
        assert_true(ildl_test_residual_ld(&A, xg, b) <= 1e-6);
    }
    free(b);
    free(x0);
    free(xc);
    free(xg);
    ildl_csr_free(&A);
}

/* Push-back on the GPU: the same per-block record of perturbed pivots, so the same rounds, the
 * same blocks pushed, the same factor and x, bit for bit, as the CPU backend: on [[0, B], [B^T, H]]
 * (natural order, complete fill: one round, an exact factor) and on a random indefinite matrix
 * with zero diagonals under the default incomplete factor (several rounds). */
static void pushback_case(const char *what, const ildl_csr *A, const ildl_options *base, int exact)
{
    int32_t n = A->n;
    size_t bytes = sizeof(double) * (size_t)n;
    double *b = malloc(bytes), *xc = calloc((size_t)n, sizeof(double)), *xg = calloc((size_t)n, sizeof(double));
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 + (double)(i % 5);
    ildl_info inf[2];
    int st[2];
    for (int k = 0; k < 2; k++) {
        ildl_options o = *base;
        o.backend = k ? ILDL_BACKEND_CUDA : ILDL_BACKEND_CPU;
        ildl_handle *h = NULL;
        assert_int_equal(ildl_setup(n, A->rowptr, A->col, A->val, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        st[k] = ildl_solve(h, b, k ? xg : xc);
        ildl_get_info(h, &inf[k]);
        assert_int_equal(inf[k].backend, o.backend);
        ildl_destroy(h);
    }
    printf("push-back, %s: cpu/gpu rounds %d/%d blocks %d/%d perturbed %d/%d iterations %d/%d x %s\n", what,
           inf[0].pushback_rounds, inf[1].pushback_rounds, inf[0].pushback_blocks, inf[1].pushback_blocks,
           inf[0].num_perturbed, inf[1].num_perturbed, inf[0].iterations, inf[1].iterations,
           memcmp(xc, xg, bytes) ? "DIFFER" : "equal");
    assert_int_equal(st[0], st[1]);
    assert_true(inf[0].pushback_rounds >= 1);
    assert_int_equal(inf[0].pushback_rounds, inf[1].pushback_rounds);
    assert_int_equal(inf[0].pushback_blocks, inf[1].pushback_blocks);
    assert_int_equal(inf[0].num_perturbed, inf[1].num_perturbed);
    assert_int_equal(inf[0].factor_nnz, inf[1].factor_nnz);
    assert_int_equal(inf[0].iterations, inf[1].iterations);
    assert_memory_equal(&inf[0].true_residual, &inf[1].true_residual, sizeof(double));
    assert_memory_equal(xc, xg, bytes);
    if (exact) {
        assert_int_equal(inf[1].num_perturbed, 0);
        assert_int_equal(inf[1].iterations, 1);
        assert_true(ildl_test_residual_ld(A, xg, b) <= 1e-12);
    }
    free(b); free(xc); free(xg);
}

static void test_pushback_agreement(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU push-back test not run\n");
        skip();
        return;
    }
    ildl_csr A;
    ildl_options o;
    ildl_test_kkt_zero_first(96, 160, 3, &A);
    ildl_options_default(&o);
    o.ordering = ILDL_ORDER_NATURAL;
    o.blocking = ILDL_BLOCKING_RB;
    o.scaling = ILDL_SCALING_NONE;
    o.max_block_size = 8;
    o.fill_level = ILDL_MAX_FILL_LEVEL;
    o.fill_factor = 0.0;
    o.drop_tol = 0.0;
    o.escalation = ILDL_ESCALATE_NONE;
    o.pushback_rounds = 4;
    pushback_case("KKT, zero block first, complete fill", &A, &o, 1);
    ildl_csr_free(&A);
    ildl_test_random_sym(3000, 6, 1.0, 0.3, 9, &A);
    ildl_options_default(&o);
    o.scaling = ILDL_SCALING_NONE;
    o.escalation = ILDL_ESCALATE_NONE;
    o.pushback_rounds = 4;
    o.max_iter = 300;
    pushback_case("random, 30% zero diagonal, defaults", &A, &o, 0);
    ildl_csr_free(&A);
}

/* ildl_apply_multi on the CUDA backend: each column the bits of ildl_apply, and of the CPU
 * backend's ildl_apply_multi (host vectors, leading dimensions above n, 21 columns). */
static void test_apply_multi_agreement(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU ildl_apply_multi test not run\n");
        skip();
        return;
    }
    ildl_csr A;
    ildl_test_kkt_zero_first(150, 350, 3, &A);
    int32_t n = A.n;
    const int k = 21;
    int64_t ldr = n + 3, ldz = n + 5;
    double *R = malloc(sizeof(double) * (size_t)(ldr * k)), *Z[2], *z = malloc(sizeof(double) * n);
    uint64_t seed = 11;
    for (int64_t i = 0; i < ldr * k; i++) R[i] = 2 * ildl_test_rand(&seed) - 1;
    Z[0] = malloc(sizeof(double) * (size_t)(ldz * k));
    Z[1] = malloc(sizeof(double) * (size_t)(ldz * k));
    int precisions[] = {ILDL_PREC_DOUBLE, ILDL_PREC_SINGLE, ILDL_PREC_MIXED};
    for (int p = 0; p < 3; p++)
        for (int mode = ILDL_APPLY_LDLT; mode <= ILDL_APPLY_SPD; mode++) {
            for (int b = 0; b < 2; b++) {
                ildl_options o;
                ildl_options_default(&o);
                o.backend = b ? ILDL_BACKEND_CUDA : ILDL_BACKEND_CPU;
                o.precision = precisions[p];
                o.apply_mode = mode;
                ildl_handle *h = NULL;
                assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
                assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
                assert_int_equal(ildl_apply_multi(h, k, R, ldr, Z[b], ldz, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
                for (int j = 0; j < k; j++) {
                    assert_int_equal(ildl_apply(h, R + (int64_t)j * ldr, z, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
                    assert_memory_equal(Z[b] + (int64_t)j * ldz, z, sizeof(double) * n);
                }
                ildl_destroy(h);
            }
            for (int j = 0; j < k; j++)
                assert_memory_equal(Z[0] + (int64_t)j * ldz, Z[1] + (int64_t)j * ldz, sizeof(double) * n);
        }
    printf("ildl_apply_multi, 21 columns, apply modes LDLT and SPD, 3 precisions: GPU = GPU ildl_apply = CPU, bitwise\n");
    free(R); free(Z[0]); free(Z[1]); free(z);
    ildl_csr_free(&A);
}

/* ildl_solve_multi on the GPU (one device SQMR per column) and on the CPU (lockstep): the same
 * x, iterations and residuals for every column, bit for bit. */
static void test_solve_multi_agreement(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU ildl_solve_multi test not run\n");
        skip();
        return;
    }
    ildl_csr A;
    ildl_test_kkt_zero_first(150, 350, 3, &A);
    int32_t n = A.n;
    const int k = 18;
    double *B = malloc(sizeof(double) * (size_t)n * k), *X[2];
    ildl_column_result cr[2][18];
    uint64_t seed = 5;
    for (int64_t i = 0; i < (int64_t)n * k; i++) B[i] = 2 * ildl_test_rand(&seed) - 1;
    for (int32_t i = 0; i < n; i++) B[(int64_t)n * 4 + i] *= 1e-300; /* solved on its own, scaled */
    for (int b = 0; b < 2; b++) {
        X[b] = calloc((size_t)n * k, sizeof(double));
        ildl_options o;
        ildl_options_default(&o);
        o.backend = b ? ILDL_BACKEND_CUDA : ILDL_BACKEND_CPU;
        ildl_handle *h = NULL;
        assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        assert_int_equal(ildl_solve_multi(h, k, B, n, X[b], n, cr[b]), ILDL_SUCCESS);
        ildl_destroy(h);
    }
    assert_memory_equal(X[0], X[1], sizeof(double) * (size_t)n * k);
    for (int j = 0; j < k; j++) {
        assert_int_equal(cr[0][j].iterations, cr[1][j].iterations);
        assert_true(cr[0][j].true_residual == cr[1][j].true_residual);
    }
    printf("ildl_solve_multi, 18 columns: GPU = CPU (lockstep), bitwise\n");
    free(B); free(X[0]); free(X[1]);
    ildl_csr_free(&A);
}

/* ildl_analyse_matrix's device_bytes_estimate is what the first ildl_factor allocates, exactly,
 * and what ildl_setup_matrix allocates: every precision, both solve-kernel choices, a matching
 * with 2x2 hints and without, and an ordering with wide levels (the lanes of the kernels without
 * staging tiles). */
static void test_memory_estimate(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: the device memory estimate is not checked\n");
        skip();
        return;
    }
    ildl_csr K, L;
    ildl_test_kkt_zero_first(300, 700, 3, &K);
    ildl_test_laplace2d(60, 0.3, &L);
    const ildl_csr *mats[2] = {&K, &L};
    int precisions[] = {ILDL_PREC_DOUBLE, ILDL_PREC_SINGLE, ILDL_PREC_MIXED};
    int checked = 0;
    for (int a = 0; a < 2; a++)
        for (int p = 0; p < 3; p++)
            for (int v = 0; v < 4; v++) {
                const ildl_csr *A = mats[a];
                ildl_matrix m;
                ildl_matrix_init(&m);
                m.n = A->n;
                m.nnz = A->rowptr[A->n];
                m.rows = A->rowptr;
                m.cols = A->col;
                m.values = A->val;
                ildl_options o;
                ildl_options_default(&o);
                o.backend = ILDL_BACKEND_CUDA;
                o.precision = precisions[p];
                o.solve_kernels = v & 1 ? ILDL_SOLVE_KERNELS_STAGED : ILDL_SOLVE_KERNELS_AUTO;
                if (v & 2) {
                    o.ordering = ILDL_ORDER_GMC_FILL;
                    o.scaling = ILDL_SCALING_EQUILIBRATE; /* no matching: no 2x2 hints */
                }
                ildl_handle *h = NULL;
                ildl_info i1, i2;
                assert_int_equal(ildl_setup_matrix(&m, &o, &h), ILDL_SUCCESS);
                assert_int_equal(ildl_get_info(h, &i1), ILDL_SUCCESS);
                assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
                assert_int_equal(ildl_get_info(h, &i2), ILDL_SUCCESS);
                assert_true(i1.device_bytes_estimate == (int64_t)i1.device_bytes);
                assert_true(i2.device_bytes == i1.device_bytes); /* nothing more at the factorization */
                ildl_destroy(h);
                h = NULL;
                assert_int_equal(ildl_analyse_matrix(&m, &o, &h), ILDL_SUCCESS);
                assert_int_equal(ildl_get_info(h, &i2), ILDL_SUCCESS);
                assert_true(i2.device_bytes == 0 && i2.backend == ILDL_BACKEND_CUDA);
                if (i2.device_bytes_estimate != (int64_t)i1.device_bytes)
                    printf("estimate MISMATCH: matrix %d precision %d variant %d: estimate %lld, setup allocated %zu\n",
                           a, p, v, (long long)i2.device_bytes_estimate, i1.device_bytes);
                assert_true(i2.device_bytes_estimate == (int64_t)i1.device_bytes);
                assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
                ildl_info i3;
                ildl_get_info(h, &i3);
                assert_true(i3.device_bytes == i1.device_bytes);
                ildl_destroy(h);
                checked++;
            }
    printf("device memory estimate: exact in %d of 24 configurations (setup and analyse + factor)\n", checked);
    ildl_csr_free(&K);
    ildl_csr_free(&L);
}

static void test_nrm2_device(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        skip();
        return;
    }
    double *lanes = malloc(sizeof(double) * ILDL_DOT_LANES);
    int32_t sizes[] = {1, 1000, ILDL_DOT_LANES + 4097};
    int ks[] = {0, -1000, -1070, 600, 1020};
    for (int si = 0; si < 3; si++) {
        int32_t n = sizes[si];
        double *x = malloc(sizeof(double) * n);
        for (int k = 0; k < 5 + 4; k++) {
            uint64_t seed = 5 + (uint64_t)k;
            for (int32_t i = 0; i < n; i++) x[i] = ldexp(2.0 * ildl_test_rand(&seed) - 1.0, k < 5 ? ks[k] : 0);
            if (k == 5) x[n / 2] = NAN;
            if (k == 6) x[n - 1] = -INFINITY;
            if (k == 7) memset(x, 0, sizeof(double) * n);
            if (k == 8) { memset(x, 0, sizeof(double) * n); x[n / 3] = 0x1p-1074; }
            double cpu = ildl_nrm2_fixed(n, x, lanes), host_path = 0, fallback = 0;
            assert_int_equal(ildl_cuda_nrm2_test(0, n, x, &host_path, &fallback), ILDL_SUCCESS);
            if (isnan(cpu)) {
                assert_true(isnan(host_path) && isnan(fallback));
                continue;
            }
            assert_memory_equal(&host_path, &cpu, sizeof cpu);
            if (k == 0) assert_true(fabs(fallback - cpu) <= 1e-14 * cpu);
            else assert_memory_equal(&fallback, &cpu, sizeof cpu);
        }
        free(x);
    }
    printf("GPU 2-norms of vectors scaled by 2^-1000, 2^-1070, 2^600, 2^1020, with NaN, Inf, zero: ildl_nrm2_fixed's bits\n");
    free(lanes);
    /* a solve whose residual becomes exactly 0 in the step kernel (a diagonal system of powers of
     * two with an exact preconditioner): the kernel's fallback for a zero sum of squares */
    ildl_csr D;
    int32_t n = 70, ti[70], tj[70];
    double tv[70], b[70];
    for (int32_t i = 0; i < n; i++) {
        ti[i] = tj[i] = i;
        tv[i] = ldexp(1.0, (int)(i % 5) - 2);
        b[i] = (double)(i % 9) - 4.0;
    }
    ildl_test_csr_from_triplets(n, n, ti, tj, tv, &D);
    agree("diagonal of powers of two (r = 0 exactly)", &D, b, NULL, 0);
    ildl_csr_free(&D);
}

/* The device apply of vectors scaled far out (and of one holding a NaN) equals the host's. */
static void test_device_apply_extreme(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        skip();
        return;
    }
#ifdef ILDL_HAVE_CUDA
    ildl_csr A;
    ildl_test_laplace2d(30, 0.5, &A);
    int32_t n = A.n;
    size_t bytes = sizeof(double) * (size_t)n;
    double *r = malloc(bytes), *zh = malloc(bytes), *zd = malloc(bytes), *dr = NULL, *dz = NULL;
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CUDA;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(cudaMalloc((void **)&dr, bytes), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&dz, bytes), cudaSuccess);
    int ks[] = {-1060, -1000, 1000, 1020};
    for (int k = 0; k <= 4; k++) {
        uint64_t seed = 11;
        for (int32_t i = 0; i < n; i++) r[i] = ldexp(2.0 * ildl_test_rand(&seed) - 1.0, k < 4 ? ks[k] : 0);
        if (k == 4) r[n / 3] = NAN;
        assert_int_equal(ildl_apply(h, r, zh, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
        assert_int_equal(cudaMemcpy(dr, r, bytes, cudaMemcpyHostToDevice), cudaSuccess);
        assert_int_equal(ildl_apply(h, dr, dz, ILDL_MEMORY_DEVICE, NULL), ILDL_SUCCESS);
        assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
        assert_int_equal(cudaMemcpy(zd, dz, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
        assert_memory_equal(zh, zd, bytes);
    }
    printf("device apply of r * 2^-1060, 2^-1000, 2^1000, 2^1020 and of r with a NaN: equal to the host apply\n");
    /* a solve refuses a NaN in b on either path, before any device work */
    assert_int_equal(ildl_solve(h, r, zh), ILDL_ERR_NAN_INF);
    cudaFree(dr);
    cudaFree(dz);
    ildl_destroy(h);
    free(r); free(zh); free(zd);
    ildl_csr_free(&A);
#endif
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scaled_rhs),
        cmocka_unit_test(test_long_rows_agreement),
        cmocka_unit_test(test_ladder_agreement),
        cmocka_unit_test(test_pushback_agreement),
        cmocka_unit_test(test_apply_multi_agreement),
        cmocka_unit_test(test_solve_multi_agreement),
        cmocka_unit_test(test_memory_estimate),
        cmocka_unit_test(test_nrm2_device),
        cmocka_unit_test(test_device_apply_extreme),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
