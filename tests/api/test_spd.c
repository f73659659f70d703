/* test_spd.c -- options.apply_mode = ILDL_APPLY_SPD: ildl_apply gives M = L|D|L^T, symmetric
 * positive definite (where the LDL^T one is indefinite), and preconditioned MINRES with it
 * converges on the true residual: on a generated KKT matrix, and on tuma1 and stokes64. */
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
#include "io/mmio.h"
#include "support/testutil.h"

static double dot(int32_t n, const double *x, const double *y)
{
    long double s = 0;
    for (int32_t i = 0; i < n; i++) s += (long double)x[i] * y[i];
    return (double)s;
}

/* Preconditioned MINRES (Paige and Saunders; the recurrences of SciPy's minres) from x = 0 with
 * z = M^{-1} r by ildl_apply. Stops when the true relative residual, checked every 10
 * iterations and when the estimate falls below tol, is <= tol. Returns the iterations, or -1
 * (not converged in maxit), -2 (M^{-1} not positive: r'M^{-1}r <= 0). */
static int minres(const ildl_csr *A, ildl_handle *h, const double *b, double *x, double tol, int maxit)
{
    int32_t n = A->n;
    size_t bytes = sizeof(double) * (size_t)n;
    double *r1 = malloc(bytes), *r2 = malloc(bytes), *y = malloc(bytes), *v = malloc(bytes);
    double *w = calloc((size_t)n, sizeof(double)), *w1 = calloc((size_t)n, sizeof(double));
    double *w2 = calloc((size_t)n, sizeof(double)), *t = malloc(bytes);
    memset(x, 0, bytes);
    memcpy(r1, b, bytes);
    memcpy(r2, b, bytes);
    assert_int_equal(ildl_apply(h, r1, y, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
    double beta1 = dot(n, r1, y), nb = sqrt(dot(n, b, b));
    int result = -1;
    if (!(beta1 > 0)) { result = -2; goto done; }
    beta1 = sqrt(beta1);
    double oldb = 0, beta = beta1, dbar = 0, epsln = 0, phibar = beta1, cs = -1, sn = 0;
    for (int it = 1; it <= maxit; it++) {
        double s = 1 / beta;
        for (int32_t i = 0; i < n; i++) v[i] = s * y[i];
        ildl_csr_matvec(A, v, y);
        if (it >= 2)
            for (int32_t i = 0; i < n; i++) y[i] -= (beta / oldb) * r1[i];
        double alfa = dot(n, v, y);
        for (int32_t i = 0; i < n; i++) y[i] -= (alfa / beta) * r2[i];
        memcpy(r1, r2, bytes);
        memcpy(r2, y, bytes);
        assert_int_equal(ildl_apply(h, r2, y, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
        oldb = beta;
        double bb = dot(n, r2, y);
        if (bb < 0) { result = -2; goto done; }
        beta = sqrt(bb);
        double oldeps = epsln, delta = cs * dbar + sn * alfa, gbar = sn * dbar - cs * alfa;
        epsln = sn * beta;
        dbar = -cs * beta;
        double gamma = sqrt(gbar * gbar + beta * beta);
        if (gamma == 0) gamma = 1e-300;
        cs = gbar / gamma;
        sn = beta / gamma;
        double phi = cs * phibar;
        phibar = sn * phibar;
        for (int32_t i = 0; i < n; i++) {
            w1[i] = w2[i];
            w2[i] = w[i];
            w[i] = (v[i] - oldeps * w1[i] - delta * w2[i]) / gamma;
            x[i] += phi * w[i];
        }
        if (it % 10 == 0 || phibar <= tol * beta1 || beta == 0) {
            ildl_csr_matvec(A, x, t);
            for (int32_t i = 0; i < n; i++) t[i] = b[i] - t[i];
            if (sqrt(dot(n, t, t)) <= tol * nb) { result = it; goto done; }
        }
    }
done:
    free(r1); free(r2); free(y); free(v); free(w); free(w1); free(w2); free(t);
    return result;
}

static void options(ildl_options *o, int mode)
{
    ildl_options_default(o);
    o->backend = ILDL_BACKEND_AUTO; /* the GPU where there is one: its apply is the CPU's, bit for bit */
    o->num_threads = 2;
    o->apply_mode = mode;
}

/* r'M^{-1}r for random r: the fewest positive of 20 draws is returned through *neg (count of
 * r'M^{-1}r <= 0); symmetry x'M^{-1}y = y'M^{-1}x to rounding. */
static void probe(ildl_handle *h, int32_t n, int *nonpositive, double *asym)
{
    double *r = malloc(sizeof(double) * n), *s = malloc(sizeof(double) * n);
    double *zr = malloc(sizeof(double) * n), *zs = malloc(sizeof(double) * n);
    uint64_t seed = 3;
    *nonpositive = 0;
    *asym = 0;
    for (int k = 0; k < 20; k++) {
        for (int32_t i = 0; i < n; i++) { r[i] = 2 * ildl_test_rand(&seed) - 1; s[i] = 2 * ildl_test_rand(&seed) - 1; }
        assert_int_equal(ildl_apply(h, r, zr, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
        assert_int_equal(ildl_apply(h, s, zs, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
        if (!(dot(n, r, zr) > 0)) (*nonpositive)++;
        double a = dot(n, s, zr), b = dot(n, r, zs);
        double rel = fabs(a - b) / sqrt(dot(n, zr, zr) * dot(n, s, s) + dot(n, zs, zs) * dot(n, r, r));
        if (rel > *asym) *asym = rel;
    }
    free(r); free(s); free(zr); free(zs);
}

static void run_minres(const char *what, const ildl_csr *A, int maxit, int indefinite)
{
    int32_t n = A->n;
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    double *xs[2] = {malloc(sizeof(double) * n), malloc(sizeof(double) * n)};
    int sst[2];
    /* b = A (1, 2, ..., 7, 1, ...): consistent, also where A is singular (stokes64's pressure) */
    for (int32_t i = 0; i < n; i++) x[i] = 1.0 + (i % 7);
    ildl_csr_matvec(A, x, b);
    int npos[2];
    double asym[2];
    int its[2];
    for (int mode = 0; mode < 2; mode++) {
        ildl_options o;
        options(&o, mode);
        o.escalation = ILDL_ESCALATE_NONE;
        o.max_iter = 100;
        ildl_handle *h = NULL;
        assert_int_equal(ildl_setup(n, A->rowptr, A->col, A->val, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        probe(h, n, &npos[mode], &asym[mode]);
        its[mode] = minres(A, h, b, x, 1e-6, maxit);
        if (its[mode] > 0) assert_true(ildl_test_residual_ld(A, x, b) <= 1e-6);
        sst[mode] = ildl_solve(h, b, xs[mode]);
        ildl_info info;
        ildl_get_info(h, &info);
        if (mode == 1) printf("%s backend: ", info.backend == ILDL_BACKEND_CUDA ? "CUDA" : "CPU");
        ildl_destroy(h);
    }
    /* ildl_solve's SQMR is not affected by apply_mode */
    assert_int_equal(sst[0], sst[1]);
    assert_memory_equal(xs[0], xs[1], sizeof(double) * n);
    free(xs[0]); free(xs[1]);
    printf("%s: LDLT: %d of 20 r'M^-1 r <= 0, MINRES %d; SPD: %d of 20, asymmetry %.1e, MINRES %d iterations\n",
           what, npos[0], its[0], npos[1], asym[1], its[1]);
    if (indefinite) assert_true(npos[0] > 0); /* the premise: LDL^T's M is indefinite */
    assert_int_equal(npos[1], 0);
    assert_true(asym[1] < 1e-10);
    assert_true(its[1] > 0);
    free(b); free(x);
}

static void test_generated(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_kkt_zero_first(300, 700, 5, &A);
    run_minres("KKT [[0, B], [B^T, H]], n = 1000", &A, 500, 1);
    ildl_csr_free(&A);
    ildl_options o;
    ildl_handle *h = NULL;
    options(&o, 2);
    int64_t rp[2] = {0, 1};
    int32_t c[1] = {0};
    double v[1] = {1};
    assert_int_equal(ildl_setup(1, rp, c, v, &o, &h), ILDL_ERR_INVALID_OPTION);
    assert_non_null(strstr(ildl_last_error(NULL), "apply_mode"));
}

static void test_shared(void **state)
{
    (void)state;
    const char *names[] = {"tuma1.mtx.gz", "stokes64.mtx.gz"};
    for (int k = 0; k < 2; k++) {
        const char *p = ildl_test_shared_matrix(names[k]);
        if (!p) continue;
        ildl_csr A;
        char msg[256];
        assert_int_equal(ildl_mm_read(p, &A, msg, sizeof msg), ILDL_SUCCESS);
        run_minres(names[k], &A, 2000, k == 1);
        ildl_csr_free(&A);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
