/* test_fixed_point.c -- the fixed-point (Jacobi-sweep) block factorization, CPU reference
 * (src/cpu/fixed_point.c), through the API: with as many sweeps as the block graph has levels,
 * no extra perturbation, no pivoting and no dropping it reaches the level-scheduled factor bit
 * for bit (sweep k is exact on the first k levels) and a residual on the pattern at rounding
 * level, while fewer sweeps leave a larger one; the factor does not depend on the number of
 * threads; with the defaults it preconditions SQMR to a true residual that meets tol, after
 * refactorizations; push-back after the first sweep; and the options it refuses. */
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

static ildl_handle *factored(const ildl_csr *A, const ildl_options *o)
{
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(A->n, A->rowptr, A->col, A->val, o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    return h;
}

/* The two handles' factors (pattern, stored entries, pivots, D) are the same bits. */
static void assert_same_factor(const ildl_handle *h1, const ildl_handle *h2)
{
    const ildl_tiles *T1 = &h1->an.tiles, *T2 = &h2->an.tiles;
    assert_int_equal(T1->ntiles, T2->ntiles);
    assert_int_equal(T1->n, T2->n);
    assert_memory_equal(T1->row, T2->row, sizeof(int32_t) * (size_t)T1->ntiles);
    assert_memory_equal(T1->col, T2->col, sizeof(int32_t) * (size_t)T1->ntiles);
    assert_memory_equal(T1->off, T2->off, sizeof(int64_t) * (size_t)T1->ntiles);
    assert_memory_equal(T1->nnz, T2->nnz, sizeof(int64_t) * (size_t)T1->ntiles);
    for (int64_t t = 0; t < T1->ntiles; t++) {
        assert_memory_equal(T1->val + T1->off[t], T2->val + T2->off[t], sizeof(double) * (size_t)T1->nnz[t]);
        if (T1->format[t] == ILDL_TILE_SPARSE)
            assert_memory_equal(T1->idx + T1->off[t], T2->idx + T2->off[t], sizeof(uint16_t) * (size_t)T1->nnz[t]);
    }
    assert_memory_equal(T1->piv, T2->piv, sizeof(int32_t) * (size_t)T1->n);
    assert_memory_equal(T1->d_diag, T2->d_diag, sizeof(double) * (size_t)T1->n);
    assert_memory_equal(T1->d_off, T2->d_off, sizeof(double) * (size_t)T1->n);
    assert_memory_equal(T1->piv_type, T2->piv_type, (size_t)T1->n);
}

/* As many sweeps as levels: the level-scheduled factor's bits; one sweep: far from it. */
static void check_exact(const ildl_csr *A, const char *what)
{
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.pivoting = ILDL_PIVOT_NONE;
    o.drop_tol = 0.0;
    o.fill_factor = 0.0; /* unlimited: nothing is dropped */
    ildl_handle *hl = factored(A, &o);
    ildl_info il;
    ildl_get_info(hl, &il);
    assert_true(il.num_levels >= 3);
    o.method = ILDL_METHOD_FIXED_POINT;
    o.fp_eps = 0.0; /* the pivot rules of the level-scheduled factor */
    o.fp_sweeps = il.num_levels;
    ildl_handle *hf = factored(A, &o);
    ildl_info ifp;
    ildl_get_info(hf, &ifp);
    assert_same_factor(hl, hf);
    assert_true(ifp.fp_residual <= 1e-13);
    assert_true(il.fp_residual == 0.0);
    o.fp_sweeps = il.num_levels - 1;
    ildl_handle *h1 = factored(A, &o);
    ildl_info i1;
    ildl_get_info(h1, &i1);
    o.fp_sweeps = 1;
    ildl_handle *h0 = factored(A, &o);
    ildl_info i0;
    ildl_get_info(h0, &i0);
    printf("%s: %d levels; residual after 1 sweep %.3e, %d sweeps %.3e, %d sweeps %.3e (factor = level-scheduled)\n",
           what, (int)il.num_levels, i0.fp_residual, (int)il.num_levels - 1, i1.fp_residual, (int)il.num_levels,
           ifp.fp_residual);
    assert_true(i0.fp_residual > 1e-6);
    assert_true(i1.fp_residual <= i0.fp_residual);
    ildl_destroy(hl);
    ildl_destroy(hf);
    ildl_destroy(h1);
    ildl_destroy(h0);
}

static void test_fp_exact_after_levels(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(30, 0.0, &A);
    check_exact(&A, "2D Laplacian");
    ildl_csr_free(&A);
    ildl_test_kkt_zero_first(200, 500, 3, &A); /* 2x2 pivots from the matching's hints */
    check_exact(&A, "KKT");
    ildl_csr_free(&A);
}

static void test_fp_threads(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(2000, 6, 2.0, 0.1, 11, &A);
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.method = ILDL_METHOD_FIXED_POINT;
    o.fp_sweeps = 5;
    o.num_threads = 1;
    ildl_handle *h1 = factored(&A, &o);
    o.num_threads = 3;
    ildl_handle *h3 = factored(&A, &o);
    assert_same_factor(h1, h3);
    ildl_info i1, i3;
    ildl_get_info(h1, &i1);
    ildl_get_info(h3, &i3);
    assert_memory_equal(&i1.fp_residual, &i3.fp_residual, sizeof(double));
    assert_true(i1.fp_residual > 0.0 && isfinite(i1.fp_residual));
    ildl_destroy(h1);
    ildl_destroy(h3);
    ildl_csr_free(&A);
}

static void test_fp_solve(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_kkt_zero_first(300, 600, 9, &A);
    const int32_t n = A.n;
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.method = ILDL_METHOD_FIXED_POINT;
    o.escalation = ILDL_ESCALATE_NONE;
    ildl_handle *h = factored(&A, &o);
    double *b = calloc((size_t)n, sizeof(double)), *x = calloc((size_t)n, sizeof(double));
    double *v3 = malloc(sizeof(double) * (size_t)A.rowptr[n]);
    assert_true(b && x && v3);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 + (i % 7);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    ildl_info info;
    ildl_get_info(h, &info);
    assert_true(ildl_test_residual_ld(&A, x, b) <= 1e-6);
    assert_true(info.fp_residual > 0.0 && isfinite(info.fp_residual));
    assert_int_equal(info.inertia_pos + info.inertia_neg + info.inertia_zero, n);
    printf("KKT n=%d, fixed-point defaults (%d sweeps): %d iterations, residual on the pattern %.3e\n", n,
           o.fp_sweeps, info.iterations, info.fp_residual);
    /* new values: 3 A */
    for (int64_t p = 0; p < A.rowptr[n]; p++) v3[p] = 3.0 * A.val[p];
    assert_int_equal(ildl_factor(h, v3), ILDL_SUCCESS);
    memset(x, 0, sizeof(double) * (size_t)n);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    for (int32_t i = 0; i < n; i++) x[i] *= 3.0;
    assert_true(ildl_test_residual_ld(&A, x, b) <= 1e-5);
    ildl_destroy(h);
    free(b), free(x), free(v3);
    ildl_csr_free(&A);
}

/* Push-back after the first sweep: zero diagonals and no pivoting perturb pivots, whose blocks
 * move to the end; the factor of the new order still preconditions. */
static void test_fp_pushback(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(1500, 5, 1.0, 0.3, 5, &A);
    const int32_t n = A.n;
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.method = ILDL_METHOD_FIXED_POINT;
    o.pivoting = ILDL_PIVOT_NONE;
    o.scaling = ILDL_SCALING_EQUILIBRATE; /* no matching: zero diagonals stay on the diagonal */
    o.escalation = ILDL_ESCALATE_NONE;
    o.fp_eps = 0.0;
    ildl_handle *h0 = factored(&A, &o);
    ildl_info i0, info;
    ildl_get_info(h0, &i0);
    o.pushback_rounds = 2;
    ildl_handle *h = factored(&A, &o);
    ildl_get_info(h, &info);
    double *b = calloc((size_t)n, sizeof(double)), *x = calloc((size_t)n, sizeof(double));
    assert_true(b && x);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0;
    int st = ildl_solve(h, b, x);
    printf("push-back: perturbed pivots %d without, %d after %d rounds (%d blocks moved); solve status %d, "
           "%d iterations\n", (int)i0.num_perturbed, (int)info.num_perturbed, (int)info.pushback_rounds,
           (int)info.pushback_blocks, st, h->info.iterations);
    assert_true(i0.num_perturbed > 0);
    assert_true(info.pushback_rounds >= 1 && info.pushback_blocks >= 1);
    if (st == ILDL_SUCCESS) assert_true(ildl_test_residual_ld(&A, x, b) <= 1e-6);
    else assert_true(st == ILDL_ERR_NOT_CONVERGED || st == ILDL_ERR_BREAKDOWN);
    ildl_destroy(h0);
    ildl_destroy(h);
    free(b), free(x);
    ildl_csr_free(&A);
}

static void test_fp_refusals(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(10, 0.5, &A);
    ildl_options o, d;
    ildl_options_default(&d);
    d.method = ILDL_METHOD_FIXED_POINT;
    o = d, o.precision = ILDL_PREC_SINGLE;
    assert_true(ildl_test_refused(&A, &o, "double precision"));
    o = d, o.precision = ILDL_PREC_MIXED;
    assert_true(ildl_test_refused(&A, &o, "double precision"));
    o = d, o.fp_sweeps = 0;
    assert_true(ildl_test_refused(&A, &o, "fp_sweeps = 0"));
    o = d, o.fp_sweeps = ILDL_MAX_FP_SWEEPS + 1;
    assert_true(ildl_test_refused(&A, &o, "fp_sweeps"));
    o = d, o.fp_eps = -1.0;
    assert_true(ildl_test_refused(&A, &o, "fp_eps"));
    o = d, o.fp_eps = NAN;
    assert_true(ildl_test_refused(&A, &o, "fp_eps"));
    o = d, o.fp_delta = 0.0;
    assert_true(ildl_test_refused(&A, &o, "fp_delta"));
    o = d, o.fp_delta = 1.5;
    assert_true(ildl_test_refused(&A, &o, "fp_delta"));
    ildl_csr_free(&A);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp_exact_after_levels),
        cmocka_unit_test(test_fp_threads),
        cmocka_unit_test(test_fp_solve),
        cmocka_unit_test(test_fp_pushback),
        cmocka_unit_test(test_fp_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
