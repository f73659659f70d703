/* test_sqmr.c -- SQMR: convergence on SPD and indefinite systems, honest stopping (the
 * reported residual is the true residual of the returned x), breakdown and error paths. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"
#include "krylov/reduce.h"
#include "krylov/sqmr.h"

/* ------------------------------------------------------------------ helpers */

static const double PI = 3.14159265358979323846;

static void csr_mv(void *ctx, const double *x, double *y) { ildl_csr_matvec(ctx, x, y); }

/* ||b - A x|| / ||b|| on the dense copy D (computed independently of the solver) */
static double dense_relres(int32_t n, const double *D, const double *b, const double *x)
{
    double rr = 0.0, bb = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double s = b[i];
        for (int32_t j = 0; j < n; j++) s -= D[(size_t)i * n + j] * x[j];
        rr += s * s;
        bb += b[i] * b[i];
    }
    return bb == 0.0 ? sqrt(rr) : sqrt(rr / bb);
}

static int all_finite(int32_t n, const double *x)
{
    for (int32_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static void rand_vec(int32_t n, uint64_t seed, double *v)
{
    uint64_t s = seed;
    for (int32_t i = 0; i < n; i++) v[i] = 2.0 * ildl_test_rand(&s) - 1.0;
}

static double diag_entry(const ildl_csr *A, int32_t i)
{
    for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (A->col[p] == i) return A->val[p];
    return 0.0;
}

/* Random symmetric indefinite matrix with a strong diagonal of random signs: the diagonal of
 * ildl_test_random_sym pushed 10 away from zero, keeping its sign. */
static void strong_indefinite(int32_t n, uint64_t seed, ildl_csr *A)
{
    ildl_test_random_sym(n, 4, 20.0, 0.0, seed, A);
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->col[p] == i) A->val[p] += A->val[p] < 0.0 ? -10.0 : 10.0;
}

static ildl_sqmr_params default_params(double tol, int max_iter)
{
    ildl_sqmr_params p;
    memset(&p, 0, sizeof p);
    p.tol = tol;
    p.max_iter = max_iter;
    p.check_every = 1;
    return p;
}

/* Jacobi: z = r ./ diag(A) (diag may have mixed signs: symmetric indefinite M) */
typedef struct { int32_t n; double *dinv; } jacobi;

static void jacobi_init(const ildl_csr *A, jacobi *J)
{
    J->n = A->n;
    J->dinv = malloc(sizeof(double) * (size_t)A->n);
    assert_non_null(J->dinv);
    for (int32_t i = 0; i < A->n; i++) {
        double d = diag_entry(A, i);
        assert_true(d != 0.0);
        J->dinv[i] = 1.0 / d;
    }
}

static int jacobi_apply(void *ctx, const double *r, double *z)
{
    jacobi *J = ctx;
    for (int32_t i = 0; i < J->n; i++) z[i] = J->dinv[i] * r[i];
    return ILDL_SUCCESS;
}

/* Dense LU with partial pivoting, for an exact preconditioner M^{-1} = A^{-1}. */
typedef struct { int32_t n; double *LU; int32_t *piv; } dense_lu;

static void lu_factor(int32_t n, const double *D, dense_lu *F)
{
    F->n = n;
    F->LU = malloc(sizeof(double) * (size_t)n * n);
    F->piv = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(F->LU);
    assert_non_null(F->piv);
    memcpy(F->LU, D, sizeof(double) * (size_t)n * n);
    double *a = F->LU;
    for (int32_t k = 0; k < n; k++) {
        int32_t p = k;
        for (int32_t i = k + 1; i < n; i++)
            if (fabs(a[(size_t)i * n + k]) > fabs(a[(size_t)p * n + k])) p = i;
        assert_true(a[(size_t)p * n + k] != 0.0);
        F->piv[k] = p;
        if (p != k)
            for (int32_t j = 0; j < n; j++) {
                double t = a[(size_t)k * n + j];
                a[(size_t)k * n + j] = a[(size_t)p * n + j];
                a[(size_t)p * n + j] = t;
            }
        for (int32_t i = k + 1; i < n; i++) {
            double l = a[(size_t)i * n + k] /= a[(size_t)k * n + k];
            for (int32_t j = k + 1; j < n; j++) a[(size_t)i * n + j] -= l * a[(size_t)k * n + j];
        }
    }
}

static int lu_apply(void *ctx, const double *r, double *z)
{
    dense_lu *F = ctx;
    int32_t n = F->n;
    const double *a = F->LU;
    memcpy(z, r, sizeof(double) * (size_t)n);
    for (int32_t k = 0; k < n; k++) {
        double t = z[k];
        z[k] = z[F->piv[k]];
        z[F->piv[k]] = t;
    }
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < i; j++) z[i] -= a[(size_t)i * n + j] * z[j];
    for (int32_t i = n - 1; i >= 0; i--) {
        for (int32_t j = i + 1; j < n; j++) z[i] -= a[(size_t)i * n + j] * z[j];
        z[i] /= a[(size_t)i * n + i];
    }
    return ILDL_SUCCESS;
}

/* Solve A x = b and check the contract common to every outcome: the reported true residual
 * is the true residual of the returned x, and success <=> that residual meets tol. */
static int solve_checked(const ildl_csr *A, const double *D, ildl_precond_fn pf, void *pctx,
                         const double *b, double *x, const ildl_sqmr_params *prm,
                         ildl_sqmr_result *res)
{
    int st = ildl_sqmr(A->n, csr_mv, (void *)A, pf, pctx, b, x, prm, res);
    assert_true(all_finite(A->n, x));
    double rr = dense_relres(A->n, D, b, x);
    assert_true(fabs(rr - res->true_residual) <= 1e-10 * rr + 1e-15);
    assert_int_equal(res->converged, rr <= prm->tol);
    if (st == ILDL_SUCCESS) assert_true(rr <= prm->tol);
    return st;
}

/* ------------------------------------------------------------------ tests */

/* progress callback keeping the smallest estimate seen */
static void min_est_cb(void *ctx, int iter, double est)
{
    (void)iter;
    double *m = ctx;
    if (est < *m) *m = est;
}

/* (a) SPD Laplacian, identity and Jacobi preconditioners */
/* ||x|| in long double (15-bit exponent: no square of a double over- or underflows there) */
static double nrm2_ld(int32_t n, const double *x)
{
    long double s = 0.0L;
    for (int32_t i = 0; i < n; i++) s += (long double)x[i] * (long double)x[i];
    return (double)sqrtl(s);
}

/* ildl_nrm2_fixed: sqrt of the fixed-order dot where that is safe (bit for bit), exactly
 * scaled with x by powers of two far beyond where x^T x over- or underflows, the long-double
 * norm to rounding on subnormal and near-overflow vectors, NaN/Inf/0 propagated. */
static void test_nrm2_fixed(void **state)
{
    (void)state;
    double *lanes = malloc(sizeof(double) * ILDL_DOT_LANES);
    int32_t sizes[] = {1, 7, 300, ILDL_DOT_LANES + 1000};
    for (int si = 0; si < 4; si++) {
        int32_t n = sizes[si];
        double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
        uint64_t seed = 99 + (uint64_t)si;
        for (int32_t i = 0; i < n; i++) x[i] = (1e-3 + ildl_test_rand(&seed)) * (i % 2 ? -1.0 : 1.0);
        double plain = sqrt(ildl_dot_fixed(n, x, x, lanes));
        double nx = ildl_nrm2_fixed(n, x, lanes);
        assert_memory_equal(&nx, &plain, sizeof nx);
        int ks[] = {-1000, -600, -480, 480, 600, 1000};
        for (int k = 0; k < 6; k++) {
            for (int32_t i = 0; i < n; i++) y[i] = ldexp(x[i], ks[k]);
            double ny = ildl_nrm2_fixed(n, y, lanes), want = ldexp(nx, ks[k]);
            assert_memory_equal(&ny, &want, sizeof ny); /* 2^k x: the same bits, scaled */
            assert_true(fabs(ny - nrm2_ld(n, y)) <= 1e-13 * ny);
        }
        /* subnormal entries: squares that would all underflow to 0 */
        for (int32_t i = 0; i < n; i++) y[i] = ldexp(x[i], -1060);
        double ny = ildl_nrm2_fixed(n, y, lanes);
        assert_true(ny > 0.0 && fabs(ny - nrm2_ld(n, y)) <= 1e-2 * ny); /* subnormals keep few bits */
        /* entries near DBL_MAX: the norm itself may overflow only when it exceeds DBL_MAX */
        for (int32_t i = 0; i < n; i++) y[i] = x[i] * 1e308 / (double)n;
        ny = ildl_nrm2_fixed(n, y, lanes);
        assert_true(isfinite(ny) && fabs(ny - nrm2_ld(n, y)) <= 1e-13 * ny);
        y[n / 2] = INFINITY;
        assert_true(isinf(ildl_nrm2_fixed(n, y, lanes)));
        y[n / 2] = NAN;
        assert_true(isnan(ildl_nrm2_fixed(n, y, lanes)));
        memset(y, 0, sizeof(double) * n);
        assert_true(ildl_nrm2_fixed(n, y, lanes) == 0.0);
        y[n - 1] = 0x1p-1074; /* the smallest subnormal alone */
        assert_true(ildl_nrm2_fixed(n, y, lanes) == 0x1p-1074);
        free(x);
        free(y);
    }
    free(lanes);
}

/* Right-hand sides whose squares under- or overflow: whatever ildl_sqmr returns, it is honest
 * (the reported residual is the returned x's, recomputed here without under- or overflow;
 * converged only if that meets tol), and it never reports b's norm as zero or infinite. The
 * tridiagonal(-1, 4, -1) of order 4 with b = 1e-300 (1,2,3,4) once gave x = 0 "converged". */
static void test_extreme_rhs_honest(void **state)
{
    (void)state;
    int32_t n = 4;
    int32_t ti[7] = {0, 1, 1, 2, 2, 3, 3}, tj[7] = {0, 0, 1, 1, 2, 2, 3};
    double tv[7] = {4, -1, 4, -1, 4, -1, 4};
    ildl_csr A;
    ildl_test_csr_from_triplets(n, 7, ti, tj, tv, &A);
    double *D = ildl_test_dense(&A);
    double scales[] = {1e-300, 1e-310, 1e200, 1e300};
    for (int k = 0; k < 4; k++) {
        double b[4], x[4], r[4];
        for (int32_t i = 0; i < n; i++) b[i] = scales[k] * (i + 1);
        ildl_sqmr_params prm = {1e-10, 50, 1, 0, NULL, NULL};
        ildl_sqmr_result res;
        int st = ildl_sqmr(n, csr_mv, &A, NULL, NULL, b, x, &prm, &res);
        assert_true(st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED || st == ILDL_ERR_BREAKDOWN);
        for (int32_t i = 0; i < n; i++) {
            long double s = b[i];
            for (int32_t j = 0; j < n; j++) s -= (long double)D[i * n + j] * x[j];
            r[i] = (double)(s / scales[k]); /* relative to the scale: no underflow here either */
        }
        double bn[4];
        for (int32_t i = 0; i < n; i++) bn[i] = b[i] / scales[k];
        double rel = nrm2_ld(n, r) / nrm2_ld(n, bn);
        assert_true(fabs(rel - res.true_residual) <= 1e-6 * rel + 1e-12);
        assert_int_equal(res.converged, res.true_residual <= prm.tol);
        assert_int_equal(st == ILDL_SUCCESS, res.converged);
        if (res.converged) assert_true(rel <= 1e-9);
    }
    free(D);
    ildl_csr_free(&A);
}

static void test_spd_laplacian(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(20, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 11, b);
    jacobi J;
    jacobi_init(&A, &J);
    ildl_sqmr_params prm = default_params(1e-10, 1000);
    ildl_sqmr_result res;

    int st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_int_equal(res.converged, 1);
    assert_true(dense_relres(n, D, b, x) <= 1e-10);
    assert_true(res.iterations > 0 && res.iterations < 1000);
    assert_true(res.iterate_seconds > 0.0);

    prm.check_every = 3;
    st = solve_checked(&A, D, jacobi_apply, &J, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_true(dense_relres(n, D, b, x) <= 1e-10);

    free(J.dinv); free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* The stall window (the ladder's stagnation rule, sqmr.h): with stall_window W, SQMR stops at
 * the first iteration k = mark + W whose estimate is above ILDL_SQMR_STALL_DROP times the
 * estimate at mark (mark starts at 0 with estimate 1 and moves to k where it is not), with
 * NOT_CONVERGED and stagnated set; the iterations before are those of a run without it. */
typedef struct { int n; double est[2001]; } est_log;
static void log_est(void *ctx, int it, double est)
{
    est_log *L = ctx;
    if (it >= 1 && it <= 2000) L->est[it] = est;
    if (it > L->n) L->n = it;
}

static void test_stall_window(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(30, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 12, b);
    ildl_sqmr_params prm = default_params(1e-12, 2000);
    ildl_sqmr_result res;
    est_log *L = calloc(1, sizeof *L);
    prm.progress = log_est;
    prm.progress_ctx = L;
    int st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_int_equal(res.stagnated, 0);
    int full = res.iterations;
    for (int W = 3; W <= 12; W += 3) {
        /* where the rule stops, from the estimates of the run without it */
        int mark = 0, expect = -1;
        double mark_est = 1.0;
        for (int k = 1; k <= L->n; k++) {
            if (L->est[k] <= prm.tol) break; /* a check would be due: never reached here */
            if (k - mark >= W) {
                if (!(L->est[k] <= ILDL_SQMR_STALL_DROP * mark_est)) { expect = k; break; }
                mark = k;
                mark_est = L->est[k];
            }
        }
        assert_true(expect > 0 && expect < full); /* unpreconditioned: slow at first */
        est_log *L2 = calloc(1, sizeof *L2);
        prm.progress_ctx = L2;
        prm.stall_window = W;
        st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
        assert_int_equal(st, ILDL_ERR_NOT_CONVERGED);
        assert_int_equal(res.stagnated, 1);
        assert_int_equal(res.iterations, expect);
        for (int k = 1; k <= expect; k++) assert_true(L2->est[k] == L->est[k]);
        assert_true(fabs(dense_relres(n, D, b, x) - res.true_residual) <= 1e-12);
        free(L2);
        prm.progress_ctx = L;
    }
    free(L); free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* (b) indefinite shifted Laplacian with the exact inverse as preconditioner */
static void test_indefinite_exact_prec(void **state)
{
    (void)state;
    const int32_t m = 8;
    ildl_csr A;
    ildl_test_laplace2d(m, 0.5, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    /* indefinite: the smooth mode has a negative Rayleigh quotient, a unit vector a positive one */
    double *v = malloc(sizeof(double) * n), *Av = malloc(sizeof(double) * n);
    for (int32_t y = 0; y < m; y++)
        for (int32_t xg = 0; xg < m; xg++)
            v[y * m + xg] = sin(PI * (xg + 1) / (m + 1)) * sin(PI * (y + 1) / (m + 1));
    ildl_csr_matvec(&A, v, Av);
    double vav = 0.0;
    for (int32_t i = 0; i < n; i++) vav += v[i] * Av[i];
    assert_true(vav < 0.0);
    assert_true(diag_entry(&A, 0) > 0.0);

    dense_lu F;
    lu_factor(n, D, &F);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 5, b);
    ildl_sqmr_params prm = default_params(1e-10, 50);
    ildl_sqmr_result res;
    int st = solve_checked(&A, D, lu_apply, &F, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_true(res.iterations >= 1 && res.iterations <= 2);

    /* and without a preconditioner it still converges (indefinite A, SQMR not CG) */
    prm.max_iter = 2000;
    st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);

    free(F.LU); free(F.piv); free(v); free(Av); free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* (c) symmetric indefinite M = diag(A) with mixed signs on a random indefinite matrix */
static void test_indefinite_jacobi(void **state)
{
    (void)state;
    ildl_csr A;
    strong_indefinite(300, 42, &A);
    int32_t n = A.n, npos = 0, nneg = 0;
    for (int32_t i = 0; i < n; i++) {
        if (diag_entry(&A, i) > 0.0) npos++;
        else nneg++;
    }
    assert_true(npos > 10 && nneg > 10);
    double *D = ildl_test_dense(&A);
    jacobi J;
    jacobi_init(&A, &J);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 9, b);
    ildl_sqmr_params prm = default_params(1e-10, 500);
    ildl_sqmr_result res;
    int st = solve_checked(&A, D, jacobi_apply, &J, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_true(res.true_residual <= 1e-10);
    free(J.dinv); free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* (d) known solution x* = ones */
static void test_known_solution(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(20, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *xs = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
    double *x = malloc(sizeof(double) * n);
    for (int32_t i = 0; i < n; i++) xs[i] = 1.0;
    for (int32_t i = 0; i < n; i++) {
        b[i] = 0.0;
        for (int32_t j = 0; j < n; j++) b[i] += D[(size_t)i * n + j] * xs[j];
    }
    jacobi J;
    jacobi_init(&A, &J);
    ildl_sqmr_params prm = default_params(1e-12, 1000);
    ildl_sqmr_result res;
    int st = solve_checked(&A, D, jacobi_apply, &J, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    double err = 0.0;
    for (int32_t i = 0; i < n; i++) err = fmax(err, fabs(x[i] - 1.0));
    assert_true(err < 1e-8); /* cond(A) ~ 2e2 */
    free(J.dinv); free(xs); free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* (e) too few iterations: not converged, and the reported residual is the true one. An
 * indefinite M is used because with M = c I the estimate tau equals the true residual. */
static void test_max_iter_honest(void **state)
{
    (void)state;
    ildl_csr A;
    strong_indefinite(300, 43, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 3, b);
    jacobi J;
    jacobi_init(&A, &J);
    ildl_sqmr_params prm = default_params(1e-10, 3);
    ildl_sqmr_result res;
    int st = solve_checked(&A, D, jacobi_apply, &J, b, x, &prm, &res);
    assert_int_equal(st, ILDL_ERR_NOT_CONVERGED);
    assert_int_equal(res.converged, 0);
    assert_int_equal(res.iterations, 3);
    double rr = dense_relres(n, D, b, x);
    assert_true(rr > 1e-10 && rr < 1.0); /* some progress, not converged */
    assert_true(fabs(rr - res.true_residual) <= 1e-12 * rr);

    /* max_iter = 0 returns x0 = 0 with residual exactly 1 */
    prm.max_iter = 0;
    st = solve_checked(&A, D, jacobi_apply, &J, b, x, &prm, &res);
    assert_int_equal(st, ILDL_ERR_NOT_CONVERGED);
    assert_int_equal(res.iterations, 0);
    for (int32_t i = 0; i < n; i++) assert_true(x[i] == 0.0);
    free(J.dinv); free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* unattainable tol: the solver must neither claim success nor lose its best iterate */
static void test_unattainable_tol(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(20, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 21, b);
    ildl_sqmr_params prm = default_params(1e-30, 3000);
    ildl_sqmr_result res;
    int st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_ERR_NOT_CONVERGED);
    assert_int_equal(res.converged, 0);
    assert_true(res.true_residual < 1e-12); /* the best iterate is near machine accuracy */
    free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* An inexact matvec (relative noise 1e-7, like a faulty low-precision kernel) decouples the
 * recurrence from the iterate: the estimate keeps falling far below tol while no iterate can
 * reach it. The solver must not claim convergence, and must stop before max_iter. */
typedef struct { const ildl_csr *A; double eps; uint64_t seed; } noisy_op;

static void noisy_mv(void *ctx, const double *x, double *y)
{
    noisy_op *op = ctx;
    ildl_csr_matvec(op->A, x, y);
    double nx = 0.0;
    for (int32_t i = 0; i < op->A->n; i++) nx += x[i] * x[i];
    nx = sqrt(nx);
    for (int32_t i = 0; i < op->A->n; i++)
        y[i] += op->eps * nx * (2.0 * ildl_test_rand(&op->seed) - 1.0);
}

static void test_inexact_matvec_honest(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(20, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 13, b);
    noisy_op op = {&A, 1e-7, 99};
    double min_est = 1.0;
    ildl_sqmr_params prm = default_params(1e-10, 3000);
    prm.progress = min_est_cb;
    prm.progress_ctx = &min_est;
    ildl_sqmr_result res;
    int st = ildl_sqmr(n, noisy_mv, &op, NULL, NULL, b, x, &prm, &res);
    double rr = dense_relres(n, D, b, x);
    assert_true(min_est < 1e-10); /* the recurrence did believe it had converged */
    assert_true(rr > 1e-10);
    assert_int_not_equal(st, ILDL_SUCCESS);
    assert_int_equal(res.converged, 0);
    assert_true(res.true_residual > 1e-10);
    assert_true(rr < 1e-4);                 /* a good iterate is returned nevertheless */
    assert_true(res.iterations < 3000);     /* stagnation is detected */
    assert_true(all_finite(n, x));
    free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* a non-symmetric "preconditioner" breaks SQMR's assumptions; whatever it reports must be true */
static int skew_prec(void *ctx, const double *r, double *z)
{
    int32_t n = *(int32_t *)ctx;
    for (int32_t i = 0; i < n; i++) z[i] = r[i] + (i + 1 < n ? 0.9 * r[i + 1] : 0.0);
    return ILDL_SUCCESS;
}

static void test_nonsymmetric_prec_honest(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(200, 4, 3.0, 0.0, 7, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 2, b);
    for (int check = 1; check <= 4; check += 3) {
        ildl_sqmr_params prm = default_params(1e-8, 300);
        prm.check_every = check;
        ildl_sqmr_result res;
        int st = solve_checked(&A, D, skew_prec, &n, b, x, &prm, &res);
        assert_true(st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED ||
                    st == ILDL_ERR_BREAKDOWN);
    }
    free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* (f) b = 0 gives x = 0 without iterating, even from a nonzero guess */
static void test_zero_rhs(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(5, 0.0, &A);
    int32_t n = A.n;
    double *b = calloc(n, sizeof(double)), *x = malloc(sizeof(double) * n);
    for (int32_t i = 0; i < n; i++) x[i] = 3.0;
    ildl_sqmr_params prm = default_params(1e-10, 100);
    prm.use_x0 = 1;
    ildl_sqmr_result res;
    int st = ildl_sqmr(n, csr_mv, &A, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_int_equal(res.converged, 1);
    assert_int_equal(res.iterations, 0);
    assert_true(res.iterate_seconds == 0.0); /* no iteration ran */
    assert_true(res.true_residual == 0.0);
    for (int32_t i = 0; i < n; i++) assert_true(x[i] == 0.0);
    free(b); free(x);
    ildl_csr_free(&A);
}

/* (g) an exact initial guess needs at most one iteration; a rough one is improved */
static void test_use_x0(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(12, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *xs = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
    double *x = malloc(sizeof(double) * n);
    rand_vec(n, 17, xs);
    for (int32_t i = 0; i < n; i++) {
        b[i] = 0.0;
        for (int32_t j = 0; j < n; j++) b[i] += D[(size_t)i * n + j] * xs[j];
    }
    memcpy(x, xs, sizeof(double) * n);
    ildl_sqmr_params prm = default_params(1e-10, 100);
    prm.use_x0 = 1;
    ildl_sqmr_result res;
    int st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_true(res.iterations <= 1);

    /* a perturbed guess converges, and takes fewer iterations than starting from zero */
    for (int32_t i = 0; i < n; i++) x[i] = xs[i] * (1.0 + 1e-6 * (i % 3 - 1));
    st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    int it_warm = res.iterations;
    prm.use_x0 = 0;
    st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_true(it_warm < res.iterations);
    free(xs); free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* (h) a preconditioner error aborts the solve and is returned */
typedef struct { int calls, fail_at; int32_t n; } failing;

static int failing_prec(void *ctx, const double *r, double *z)
{
    failing *f = ctx;
    if (++f->calls >= f->fail_at) return ILDL_ERR_DEVICE;
    memcpy(z, r, sizeof(double) * (size_t)f->n);
    return ILDL_SUCCESS;
}

static void test_prec_error(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(10, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 8, b);
    ildl_sqmr_params prm = default_params(1e-10, 100);
    ildl_sqmr_result res;
    for (int fail_at = 1; fail_at <= 4; fail_at += 3) {
        failing f = {0, fail_at, n};
        int st = solve_checked(&A, D, failing_prec, &f, b, x, &prm, &res);
        assert_int_equal(st, ILDL_ERR_DEVICE);
        assert_int_equal(f.calls, fail_at); /* no call after the failure */
        assert_int_equal(res.converged, 0);
    }
    free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* a preconditioner that starts returning NaN: breakdown, with a finite best iterate */
static int nan_prec(void *ctx, const double *r, double *z)
{
    failing *f = ctx;
    memcpy(z, r, sizeof(double) * (size_t)f->n);
    if (++f->calls >= f->fail_at) z[f->n / 2] = NAN;
    return ILDL_SUCCESS;
}

static void test_nan_breakdown(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(10, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 4, b);
    ildl_sqmr_params prm = default_params(1e-10, 100);
    ildl_sqmr_result res;
    failing f = {0, 5, n};
    int st = solve_checked(&A, D, nan_prec, &f, b, x, &prm, &res);
    assert_int_equal(st, ILDL_ERR_BREAKDOWN);
    assert_true(res.true_residual < 1.0); /* four good steps were kept */
    free(b); free(x); free(D);
    ildl_csr_free(&A);
}

/* (i) A = [[0,1],[1,0]], b = e1: q^T A q = 0 at the first step */
static void test_breakdown(void **state)
{
    (void)state;
    int32_t ti[] = {0}, tj[] = {1};
    double tv[] = {1.0};
    ildl_csr A;
    ildl_test_csr_from_triplets(2, 1, ti, tj, tv, &A);
    double *D = ildl_test_dense(&A);
    double b[2] = {1.0, 0.0}, x[2] = {7.0, 7.0};
    ildl_sqmr_params prm = default_params(1e-10, 10);
    ildl_sqmr_result res;
    int st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_ERR_BREAKDOWN);
    assert_int_equal(res.converged, 0);
    assert_true(x[0] == 0.0 && x[1] == 0.0);
    assert_true(fabs(res.true_residual - 1.0) < 1e-15);
    free(D);
    ildl_csr_free(&A);
}

/* progress is reported once per iteration with a finite estimate */
typedef struct { int calls, last_iter, ok; } progress_log;

static void progress_cb(void *ctx, int iter, double est)
{
    progress_log *p = ctx;
    p->calls++;
    if (iter != p->last_iter + 1 || !isfinite(est) || est < 0.0) p->ok = 0;
    p->last_iter = iter;
}

/* Jacobi whose first application (sqmr_start's, before the iterations) busy-waits 30 ms. */
typedef struct { jacobi J; int calls; } slow_first;
static int slow_first_apply(void *ctx, const double *r, double *z)
{
    slow_first *S = ctx;
    if (S->calls++ == 0) {
        double t0 = ildl_wtime();
        while (ildl_wtime() - t0 < 0.030) {}
    }
    return jacobi_apply(&S->J, r, z);
}

/* iterate_seconds counts the iterations only: the initial residual and preconditioner
 * application, and the final true residual, are the solve's fixed cost */
static void test_iterate_seconds(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(20, 0.0, &A);
    int32_t n = A.n;
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 5, b);
    slow_first S;
    jacobi_init(&A, &S.J);
    S.calls = 0;
    ildl_sqmr_params prm = default_params(1e-10, 1000);
    ildl_sqmr_result res;
    double t0 = ildl_wtime();
    int st = ildl_sqmr(n, csr_mv, &A, slow_first_apply, &S, b, x, &prm, &res);
    double wall = ildl_wtime() - t0;
    assert_int_equal(st, ILDL_SUCCESS);
    assert_true(res.iterations > 1 && S.calls >= res.iterations); /* the start's, then one per iteration but the last */
    assert_true(res.iterate_seconds > 0.0);
    assert_true(wall - res.iterate_seconds >= 0.029); /* the slow first application is not in it */
    free(S.J.dinv); free(b); free(x);
    ildl_csr_free(&A);
}

static void test_progress_and_args(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(10, 0.0, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    rand_vec(n, 6, b);
    progress_log log = {0, 0, 1};
    ildl_sqmr_params prm = default_params(1e-10, 200);
    prm.progress = progress_cb;
    prm.progress_ctx = &log;
    ildl_sqmr_result res;
    int st = solve_checked(&A, D, NULL, NULL, b, x, &prm, &res);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_int_equal(log.calls, res.iterations);
    assert_int_equal(log.ok, 1);

    /* invalid arguments leave x untouched */
    for (int32_t i = 0; i < n; i++) x[i] = 5.0;
    prm.check_every = 0;
    assert_int_equal(ildl_sqmr(n, csr_mv, &A, NULL, NULL, b, x, &prm, &res),
                     ILDL_ERR_INVALID_OPTION);
    prm.check_every = 1;
    assert_int_equal(ildl_sqmr(n, NULL, &A, NULL, NULL, b, x, &prm, &res),
                     ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_sqmr(n, csr_mv, &A, NULL, NULL, b, x, NULL, &res),
                     ILDL_ERR_NULL_ARGUMENT);
    for (int32_t i = 0; i < n; i++) assert_true(x[i] == 5.0);
    free(b); free(x); free(D);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nrm2_fixed),
        cmocka_unit_test(test_extreme_rhs_honest),
        cmocka_unit_test(test_spd_laplacian),
        cmocka_unit_test(test_indefinite_exact_prec),
        cmocka_unit_test(test_indefinite_jacobi),
        cmocka_unit_test(test_known_solution),
        cmocka_unit_test(test_max_iter_honest),
        cmocka_unit_test(test_unattainable_tol),
        cmocka_unit_test(test_inexact_matvec_honest),
        cmocka_unit_test(test_nonsymmetric_prec_honest),
        cmocka_unit_test(test_zero_rhs),
        cmocka_unit_test(test_use_x0),
        cmocka_unit_test(test_prec_error),
        cmocka_unit_test(test_nan_breakdown),
        cmocka_unit_test(test_breakdown),
        cmocka_unit_test(test_progress_and_args),
        cmocka_unit_test(test_stall_window),
        cmocka_unit_test(test_iterate_seconds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
