/* test_refactor.c -- options.refactor_scaling, the scaling a refactorization with new values
 * uses: KEEP keeps the analysis' scaling (a power-of-two multiple of A then gives exactly the
 * scaled preconditioner, and values of another scaling a different factor than RECOMPUTE),
 * EQUILIBRATE equilibrates the new values (the factor a fresh handle with scaling EQUILIBRATE
 * makes of them), and every mode solves an interior-point-like sequence whose diagonal spreads
 * over 6 decades, each solve checked on its true residual; the accepted values passed again give
 * the factor of ildl_factor(h, NULL). Runs on the default backend (the GPU where there is one). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "api_internal.h"
#include "analyse/cost.h"
#include "support/testutil.h"

/* The KKT test matrix, 300 constraints and 600 variables. */
static void kkt(ildl_csr *A) { ildl_test_kkt_zero_first(300, 600, 42, A); }

/* vals = A's values with every nonzero diagonal entry a_ii times 10^(decades * u_i), u_i in
 * [-1/2, 1/2) from a fixed seed: an interior-point step. */
static void spread(const ildl_csr *A, double decades, double *vals)
{
    uint64_t seed = 7;
    for (int32_t i = 0; i < A->n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            vals[p] = A->val[p];
            if (A->col[p] == i && A->val[p] != 0.0) vals[p] *= pow(10.0, decades * (ildl_test_rand(&seed) - 0.5));
        }
}

static ildl_handle *make(const ildl_csr *A, int scaling, int refactor_scaling)
{
    ildl_options o;
    ildl_options_default(&o);
    o.scaling = scaling;
    o.refactor_scaling = refactor_scaling;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(A->n, A->rowptr, A->col, A->val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    return h;
}

static void apply(ildl_handle *h, const double *r, double *z)
{
    assert_int_equal(ildl_apply(h, r, z, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
}

static double *ramp(int32_t n)
{
    double *r = malloc(sizeof(double) * (size_t)n);
    assert_non_null(r);
    for (int32_t i = 0; i < n; i++) r[i] = 1.0 + (double)(i % 7) / 8.0;
    return r;
}

/* KEEP: the values 4A are S(4A)S = 4 SAS under the kept scaling, exactly (a power of two), and
 * the factor of 4M is M's with D times 4, so M^{-1} r is a quarter of the first one, bit for
 * bit; A again restores the first factor. Values whose diagonal spread over 6 decades give a
 * different preconditioner under KEEP than under RECOMPUTE (a new matching). */
static void test_keep(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(&A);
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    double *v4 = malloc(sizeof(double) * (size_t)nnz), *vs = malloc(sizeof(double) * (size_t)nnz);
    double *r = ramp(n), *z0 = malloc(sizeof(double) * (size_t)n), *z = malloc(sizeof(double) * (size_t)n);
    double *zr = malloc(sizeof(double) * (size_t)n);
    assert_non_null(v4), assert_non_null(vs), assert_non_null(z0), assert_non_null(z), assert_non_null(zr);
    for (int64_t p = 0; p < nnz; p++) v4[p] = 4.0 * A.val[p];
    spread(&A, 6.0, vs);
    ildl_handle *h = make(&A, ILDL_SCALING_MATCHING, ILDL_REFACTOR_SCALING_KEEP);
    apply(h, r, z0);
    assert_int_equal(ildl_factor(h, v4), ILDL_SUCCESS);
    apply(h, r, z);
    for (int32_t i = 0; i < n; i++) assert_true(4.0 * z[i] == z0[i]);
    assert_int_equal(ildl_factor(h, A.val), ILDL_SUCCESS);
    apply(h, r, z);
    assert_memory_equal(z, z0, sizeof(double) * (size_t)n);
    /* new diagonal: KEEP and RECOMPUTE part */
    ildl_handle *hr = make(&A, ILDL_SCALING_MATCHING, ILDL_REFACTOR_SCALING_RECOMPUTE);
    assert_int_equal(ildl_factor(h, vs), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(hr, vs), ILDL_SUCCESS);
    apply(h, r, z);
    apply(hr, r, zr);
    assert_true(memcmp(z, zr, sizeof(double) * (size_t)n) != 0);
    ildl_destroy(h);
    ildl_destroy(hr);
    free(v4), free(vs), free(r), free(z0), free(z), free(zr);
    ildl_csr_free(&A);
}

/* EQUILIBRATE: the factor of the new values is the one a fresh handle with scaling EQUILIBRATE
 * makes of them (the analysis of a pattern does not depend on its values without a matching). */
static void test_equilibrate(void **state)
{
    (void)state;
    ildl_csr A, B;
    kkt(&A);
    kkt(&B);
    int32_t n = A.n;
    spread(&A, 6.0, B.val);
    double *r = ramp(n), *z = malloc(sizeof(double) * (size_t)n), *zf = malloc(sizeof(double) * (size_t)n);
    assert_non_null(z), assert_non_null(zf);
    ildl_handle *h = make(&A, ILDL_SCALING_EQUILIBRATE, ILDL_REFACTOR_SCALING_EQUILIBRATE);
    ildl_handle *hf = make(&B, ILDL_SCALING_EQUILIBRATE, ILDL_REFACTOR_SCALING_RECOMPUTE);
    assert_int_equal(ildl_factor(h, B.val), ILDL_SUCCESS);
    apply(h, r, z);
    apply(hf, r, zf);
    assert_memory_equal(z, zf, sizeof(double) * (size_t)n);
    /* and not the factor of A's scaling kept */
    ildl_handle *hk = make(&A, ILDL_SCALING_EQUILIBRATE, ILDL_REFACTOR_SCALING_KEEP);
    assert_int_equal(ildl_factor(hk, B.val), ILDL_SUCCESS);
    apply(hk, r, z);
    assert_true(memcmp(z, zf, sizeof(double) * (size_t)n) != 0);
    ildl_destroy(h), ildl_destroy(hf), ildl_destroy(hk);
    free(r), free(z), free(zf);
    ildl_csr_free(&A);
    ildl_csr_free(&B);
}

/* An interior-point-like sequence, 6 steps to 6 decades, in every mode: each solve converges
 * (the true residual checked here in long double) with b = A_t * ones. */
static void test_sequence(void **state)
{
    (void)state;
    ildl_csr A, At;
    kkt(&A);
    kkt(&At);
    int32_t n = A.n;
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    double *ones = malloc(sizeof(double) * (size_t)n);
    assert_non_null(b), assert_non_null(x), assert_non_null(ones);
    for (int32_t i = 0; i < n; i++) ones[i] = 1.0;
    const int modes[3] = {ILDL_REFACTOR_SCALING_RECOMPUTE, ILDL_REFACTOR_SCALING_KEEP,
                          ILDL_REFACTOR_SCALING_EQUILIBRATE};
    for (int m = 0; m < 3; m++) {
        ildl_handle *h = make(&A, ILDL_SCALING_MATCHING, modes[m]);
        for (int t = 1; t <= 6; t++) {
            spread(&A, (double)t, At.val);
            ildl_csr_matvec(&At, ones, b);
            assert_int_equal(ildl_factor(h, At.val), ILDL_SUCCESS);
            assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
            ildl_info info;
            assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
            double res = ildl_test_residual_ld(&At, x, b);
            assert_true(res <= 1e-6);
            assert_true(fabs(res - info.true_residual) <= 1e-3 * res + 1e-12); /* rounding below */
        }
        ildl_destroy(h);
    }
    free(b), free(x), free(ones);
    ildl_csr_free(&A);
    ildl_csr_free(&At);
}

/* The accepted values passed again (ildl_setup's to the first ildl_factor: the library skips
 * their check and, with RECOMPUTE, their matching) give the factor of ildl_factor(h, NULL), bit
 * for bit, with RECOMPUTE and KEEP; EQUILIBRATE equilibrates them as it would new values. */
static void test_same_values(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(&A);
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    double *r = ramp(n), *z0 = malloc(sizeof(double) * (size_t)n), *z = malloc(sizeof(double) * (size_t)n);
    double *v = malloc(sizeof(double) * (size_t)nnz);
    assert_non_null(z0), assert_non_null(z), assert_non_null(v);
    const int modes[3] = {ILDL_REFACTOR_SCALING_RECOMPUTE, ILDL_REFACTOR_SCALING_KEEP,
                          ILDL_REFACTOR_SCALING_EQUILIBRATE};
    for (int m = 0; m < 2; m++) {
        ildl_handle *h = make(&A, ILDL_SCALING_MATCHING, modes[m]); /* factored with NULL */
        apply(h, r, z0);
        memcpy(v, A.val, sizeof(double) * (size_t)nnz);
        assert_int_equal(ildl_factor(h, v), ILDL_SUCCESS);
        apply(h, r, z);
        assert_memory_equal(z, z0, sizeof(double) * (size_t)n);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        apply(h, r, z);
        assert_memory_equal(z, z0, sizeof(double) * (size_t)n);
        ildl_destroy(h);
    }
    /* EQUILIBRATE equilibrates the same values as new ones: the factor of a handle that got them
     * after other values */
    ildl_handle *h1 = make(&A, ILDL_SCALING_MATCHING, modes[2]), *h2 = make(&A, ILDL_SCALING_MATCHING, modes[2]);
    assert_int_equal(ildl_factor(h1, A.val), ILDL_SUCCESS);
    for (int64_t p = 0; p < nnz; p++) v[p] = 2.0 * A.val[p];
    assert_int_equal(ildl_factor(h2, v), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h2, A.val), ILDL_SUCCESS);
    apply(h1, r, z0);
    apply(h2, r, z);
    assert_memory_equal(z, z0, sizeof(double) * (size_t)n);
    ildl_destroy(h1), ildl_destroy(h2);
    free(r), free(z0), free(z), free(v);
    ildl_csr_free(&A);
}

/* Solve A x = b on h, check the status, the true residual of x, and return info. */
static ildl_info solved(ildl_handle *h, const ildl_csr *A, const double *b, double *x)
{
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    ildl_info info;
    ildl_get_info(h, &info);
    assert_true(info.converged);
    assert_true(ildl_test_residual_ld(A, x, b) <= 1e-6);
    return info;
}

/* An arrow KKT system [H B^T; B -0.01 I]: H = diag(1 + i mod 5) of order k, B 2 x k dense: its
 * BR blocks are k / 3 small ones below two dense rows, SN's a few merged ones. */
static void arrow_kkt(int32_t k, ildl_csr *A)
{
    int64_t nt = (int64_t)3 * k + 2;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)nt), *tj = malloc(sizeof(int32_t) * (size_t)nt);
    double *tv = malloc(sizeof(double) * (size_t)nt);
    assert_true(ti && tj && tv);
    uint64_t seed = 3;
    int64_t q = 0;
    for (int32_t i = 0; i < k; i++, q++) ti[q] = tj[q] = i, tv[q] = 1.0 + (double)(i % 5);
    for (int32_t r = 0; r < 2; r++) {
        for (int32_t j = 0; j < k; j++, q++) ti[q] = k + r, tj[q] = j, tv[q] = 2.0 * ildl_test_rand(&seed) - 1.0;
        ti[q] = tj[q] = k + r, tv[q] = -0.01, q++;
    }
    ildl_test_csr_from_triplets(k + 2, q, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

/* The complete rung's analysis: of SN + METIS, SN + AMD and the options' own blocking and order
 * (each later one only where it holds fewer entries than the fewest so far), the one whose step
 * the CUDA model puts lowest (the first on ties), on either backend. Checked against the three
 * analyses made here on three systems moved to the complete rung by cost; on the arrow KKT
 * system the options' BR holds the fewest entries and is not the one taken. */
static void test_complete_rung_choice(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++) {
        ildl_csr A;
        if (m == 0) ildl_test_laplace2d(40, 0.2, &A);
        else if (m == 1) ildl_test_kkt_zero_first(300, 600, 42, &A);
        else arrow_kkt(3000, &A);
        double *b = ramp(A.n), *x = malloc(sizeof(double) * (size_t)A.n);
        assert_non_null(x);
        ildl_options o;
        ildl_options_default(&o);
        ildl_handle *h = NULL;
        assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        int st = ildl_solve(h, b, x);
        assert_true(st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED);
        if (h->rung < 2) { /* a rung-0 step of 100 000 iterations: the complete rung pays */
            h->cost_iters = 100000;
            h->cost_breakeven = 0.0;
            h->cost_modeled = 0;
            assert_int_equal(ildl_api_cost_switch(h), 1);
        }
        assert_int_equal(h->rung, 2);
        ildl_options cand[3];
        for (int c = 0; c < 3; c++) {
            cand[c] = h->opt;
            cand[c].blocking = c < 2 ? ILDL_BLOCKING_SN : h->user_opt.blocking;
            cand[c].ordering = c == 0 ? ILDL_ORDER_METIS : c == 1 ? ILDL_ORDER_AMD : h->user_opt.ordering;
        }
        int chosen = -1;
        int64_t fewest = 0, entries[3] = {-1, -1, -1};
        double best = 0.0, step[3] = {0, 0, 0};
        for (int c = 0; c < 3; c++) {
            ildl_analysis an;
            int64_t need = 0;
            char msg[256] = "";
            if (ildl_analyse_within(&h->A, h->src, &cand[c], 0, &need, NULL, &an, msg, sizeof msg)) continue;
            ildl_step_cost sc;
            ildl_cost_model(&an, cand[c].drop_tol, ILDL_BACKEND_CUDA, 1, &sc);
            entries[c] = an.tiles.total_cap;
            step[c] = sc.factor + 2.0 * sc.iteration;
            ildl_analysis_free(&an);
            if (chosen >= 0 && entries[c] >= fewest) continue; /* refused by the limit */
            if (chosen < 0 || entries[c] < fewest) fewest = entries[c];
            if (chosen < 0 || step[c] < best) {
                chosen = c;
                best = step[c];
            }
        }
        printf("complete rung, system %d: entries %lld / %lld / %lld, modeled steps %.3g / %.3g / %.3g ms: %d "
               "(the handle: %lld entries)\n", m, (long long)entries[0], (long long)entries[1], (long long)entries[2],
               1e3 * step[0], 1e3 * step[1], 1e3 * step[2], chosen, (long long)h->an.tiles.total_cap);
        assert_true(chosen >= 0);
        if (m == 2) assert_true(entries[2] >= 0 && entries[2] < entries[chosen]); /* not the fewest */
        assert_int_equal(h->opt.blocking, cand[chosen].blocking);
        assert_int_equal(h->opt.ordering, cand[chosen].ordering);
        assert_int_equal(h->an.tiles.total_cap, entries[chosen]);
        ildl_destroy(h);
        free(b);
        free(x);
        ildl_csr_free(&A);
    }
}

/* An SQD system of chains [I B^T; B -reg I]: B (k-1) x k with b(r,r) = 1, b(r,r+1) = -1 (a
 * least-squares problem's KKT form, as the shared sqd_liswet ones). */
static void sqd_chain(int32_t k, double reg, ildl_csr *A)
{
    int64_t nt = (int64_t)k + 3 * (int64_t)(k - 1);
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)nt), *tj = malloc(sizeof(int32_t) * (size_t)nt);
    double *tv = malloc(sizeof(double) * (size_t)nt);
    assert_true(ti && tj && tv);
    int64_t q = 0;
    for (int32_t i = 0; i < k; i++, q++) ti[q] = tj[q] = i, tv[q] = 1.0;
    for (int32_t r = 0; r < k - 1; r++) {
        ti[q] = k + r, tj[q] = r, tv[q++] = 1.0;
        ti[q] = k + r, tj[q] = r + 1, tv[q++] = -1.0;
        ti[q] = tj[q] = k + r, tv[q++] = -reg;
    }
    ildl_test_csr_from_triplets(2 * k - 1, q, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

/* The rung by cost (options.rung_choice): the 2D Laplacian of 40 x 40 shifted by 0.2 takes rung
 * 0 over a hundred SQMR iterations, and its complete factor is small. With COST the first solve
 * stays on rung 0 (a solve that converged never pays for the model); the next ildl_solve on the
 * same factor, and on a second handle the next ildl_factor with new values (2A), take the
 * complete rung and solve in at most 2 iterations; with FAILURE both stay on rung 0 (the same
 * iterations on the same factor). An SQD system of chains (sqd_chain, 2 000 + 1 999 rows, its
 * (2,2) block -1e-2 I), whose rung 0 solves in about 11 iterations, stays on rung 0 with COST on
 * either backend's model (the complete rung models below half from about 20 iterations on the
 * CUDA model, whose dense path makes complete factors cheap, and 120 on the CPU's; the analysis'
 * gate lets both decide from 9), and takes the complete rung where an earlier model's break-even
 * lies below its iterations. */
static void test_rung_by_cost(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(40, 0.2, &A);
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    double *b = ramp(n), *x = malloc(sizeof(double) * (size_t)n), *v2 = malloc(sizeof(double) * (size_t)nnz);
    double *b2 = malloc(sizeof(double) * (size_t)n);
    assert_true(x && v2 && b2);
    for (int64_t p = 0; p < nnz; p++) v2[p] = 2.0 * A.val[p];
    for (int choice = ILDL_RUNG_CHOICE_COST; choice <= ILDL_RUNG_CHOICE_FAILURE; choice++) {
        int cost = choice == ILDL_RUNG_CHOICE_COST;
        ildl_options o;
        ildl_options_default(&o);
        assert_int_equal(o.rung_choice, ILDL_RUNG_CHOICE_COST);
        o.rung_choice = choice;
        for (int path = 0; path < 2; path++) { /* 0: solve again; 1: factor new values, then solve */
            ildl_handle *h = NULL;
            assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
            assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
            ildl_info i0 = solved(h, &A, b, x);
            assert_int_equal(i0.rung, 0);
            assert_true(i0.iterations > 50);
            ildl_info i1;
            if (path == 0) {
                i1 = solved(h, &A, b, x);
                /* a change of rung by cost at the solve's start is the solve's, and rung 2's, time */
                if (cost) assert_true(i1.rung_seconds[2] > 0.0 && i1.solve_seconds >= i1.rung_seconds[2]);
            } else {
                ildl_csr A2 = A;
                A2.val = v2;
                assert_int_equal(ildl_factor(h, v2), ILDL_SUCCESS);
                ildl_get_info(h, &i1);
                assert_int_equal(i1.rung, cost ? 2 : 0);
                for (int32_t i = 0; i < n; i++) b2[i] = 2.0 * b[i];
                i1 = solved(h, &A2, b2, x);
            }
            printf("rung choice %s, %s: rung %d, %d iterations, then rung %d, %d iterations\n", cost ? "cost" : "failure",
                   path ? "factor 2A" : "solve again", (int)i0.rung, i0.iterations, (int)i1.rung, i1.iterations);
            assert_int_equal(i1.rung, cost ? 2 : 0);
            if (cost) assert_true(i1.iterations <= 2);
            else if (path == 0) assert_int_equal(i1.iterations, i0.iterations); /* the same factor */
            else assert_true(i1.iterations > 50);
            ildl_destroy(h);
        }
    }
    ildl_csr R;
    sqd_chain(2000, 1e-2, &R);
    double *bR = ramp(R.n), *xR = malloc(sizeof(double) * (size_t)R.n);
    assert_non_null(xR);
    ildl_handle *h = NULL;
    ildl_options o;
    ildl_options_default(&o);
    assert_int_equal(ildl_setup(R.n, R.rowptr, R.col, R.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    ildl_info r0 = solved(h, &R, bR, xR), r1 = solved(h, &R, bR, xR);
    printf("SQD chain: rung %d, %d iterations, then rung %d, %d iterations\n", (int)r0.rung, r0.iterations,
           (int)r1.rung, r1.iterations);
    assert_int_equal(r0.rung, 0);
    assert_true(r0.iterations >= 3 && r0.iterations <= 40);
    assert_int_equal(r1.rung, 0);
    assert_int_equal(r1.iterations, r0.iterations);
    /* past the break-even of an earlier model the complete rung is taken without a second
     * decision: the same handle, its iterations put past a break-even of 2 */
    h->cost_iters = r1.iterations;
    h->cost_breakeven = 0.0; /* no earlier model: this one decides, and stays */
    h->cost_modeled = 0;
    assert_int_equal(ildl_api_cost_switch(h), 0);
    printf("SQD chain: the complete rung models below half of rung 0's step from %.1f iterations\n",
           h->cost_breakeven);
    assert_true(h->cost_modeled && h->cost_breakeven > (double)r1.iterations);
    h->cost_iters = r1.iterations; /* past the break-even of the analysis' gate alone: decides */
    h->cost_breakeven = 2.0;
    h->cost_modeled = 0;
    assert_int_equal(ildl_api_cost_switch(h), 0);
    h->cost_iters = r1.iterations;
    h->cost_breakeven = 2.0;
    h->cost_modeled = 1;
    assert_int_equal(ildl_api_cost_switch(h), 1);
    ildl_info r2 = solved(h, &R, bR, xR);
    assert_int_equal(r2.rung, 2);
    assert_true(r2.iterations <= 2);
    ildl_destroy(h);
    free(bR), free(xR);
    ildl_csr_free(&R);
    free(b), free(x), free(v2), free(b2);
    ildl_csr_free(&A);
}

static void test_bad_option(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(&A);
    ildl_options o;
    ildl_options_default(&o);
    assert_int_equal(o.refactor_scaling, ILDL_REFACTOR_SCALING_KEEP);
    ildl_handle *h = (ildl_handle *)&o; /* must be overwritten with NULL */
    o.refactor_scaling = 3;
    assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h), ILDL_ERR_INVALID_OPTION);
    assert_null(h);
    o.refactor_scaling = -1;
    assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h), ILDL_ERR_INVALID_OPTION);
    ildl_options_default(&o);
    o.rung_choice = 2;
    assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h), ILDL_ERR_INVALID_OPTION);
    assert_null(h);
    assert_string_equal(ildl_last_error(NULL), "unknown rung_choice 2");
    ildl_csr_free(&A);
}

int main(void)
{
    if (ildl_test_apply_tuning()) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep),
        cmocka_unit_test(test_equilibrate),
        cmocka_unit_test(test_sequence),
        cmocka_unit_test(test_same_values),
        cmocka_unit_test(test_rung_by_cost),
        cmocka_unit_test(test_complete_rung_choice),
        cmocka_unit_test(test_bad_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
