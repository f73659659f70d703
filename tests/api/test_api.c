/* test_api.c -- the public API: status codes for misuse, caller data left untouched,
 * end-to-end solves with a true residual checked here, refactorisation, ildl_apply. */
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
#include "cuda/cuda_backend.h"
#include "cuda/tuning.h"
#include "support/testutil.h"

static double true_residual(const ildl_csr *A, const double *x, const double *b)
{
    double *r = malloc(sizeof(double) * (size_t)A->n);
    ildl_csr_matvec(A, x, r);
    double nr = 0, nb = 0;
    for (int32_t i = 0; i < A->n; i++) { nr += (b[i] - r[i]) * (b[i] - r[i]); nb += b[i] * b[i]; }
    free(r);
    return sqrt(nr) / sqrt(nb);
}

static void kkt(int32_t n1, int32_t n2, uint64_t seed, ildl_csr *A)
{
    /* [[H, B^T],[B, -delta I]] with H = shifted tridiagonal SPD, B sparse random */
    int32_t n = n1 + n2;
    int64_t cap = 4 * (int64_t)n + 4 * n2;
    int32_t *ti = malloc(sizeof(int32_t) * cap), *tj = malloc(sizeof(int32_t) * cap);
    double *tv = malloc(sizeof(double) * cap);
    uint64_t s = seed;
    int64_t k = 0;
    for (int32_t i = 0; i < n1; i++) {
        ti[k] = i; tj[k] = i; tv[k] = 3.0 + ildl_test_rand(&s); k++;
        if (i + 1 < n1) { ti[k] = i + 1; tj[k] = i; tv[k] = -1.0; k++; }
    }
    for (int32_t r = 0; r < n2; r++) {
        int32_t i = n1 + r;
        ti[k] = i; tj[k] = i; tv[k] = -1e-8; k++;
        for (int c = 0; c < 3; c++) {
            int32_t j = (int32_t)(ildl_test_rand(&s) * n1);
            ti[k] = i; tj[k] = j; tv[k] = 1.0 + ildl_test_rand(&s); k++;
        }
    }
    ildl_test_csr_from_triplets(n, k, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

static void test_null_and_defaults(void **state)
{
    (void)state;
    ildl_options o;
    assert_int_equal(ildl_options_default(NULL), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_options_default(&o), ILDL_SUCCESS);
    assert_int_equal(o.max_block_size, 32);
    assert_true(o.tol > 0 && o.tol < 1);
    ildl_handle *h = (ildl_handle *)0x1;
    int64_t rp[2] = {0, 1};
    int32_t c[1] = {0};
    double v[1] = {1.0};
    assert_int_equal(ildl_setup(1, NULL, c, v, NULL, &h), ILDL_ERR_NULL_ARGUMENT);
    assert_null(h);
    assert_int_equal(ildl_setup(1, rp, c, v, NULL, NULL), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_factor(NULL, NULL), ILDL_ERR_NULL_ARGUMENT);
    double b[1] = {1}, x[1];
    assert_int_equal(ildl_solve(NULL, b, x), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_apply(NULL, b, x, ILDL_MEMORY_HOST, NULL), ILDL_ERR_NULL_ARGUMENT);
    ildl_info info;
    assert_int_equal(ildl_get_info(NULL, &info), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_destroy(NULL), ILDL_SUCCESS);
    for (int s = 0; s <= ILDL_ERR_INTERNAL; s++) assert_true(strlen(ildl_strerror(s)) > 0);
    assert_string_equal(ildl_version(), ILDL_VERSION_STRING);
}

/* The int option at byte `off` of ildl_options takes the values 0 and 1: its default is dflt, and
 * 2 and -1 are refused (ILDL_ERR_INVALID_OPTION, a message naming it, no handle). */
static void two_valued_option(size_t off, int dflt, const char *name)
{
    int64_t rp[3] = {0, 2, 4};
    int32_t c[4] = {0, 1, 0, 1};
    double v[4] = {1, 2, 2, -1};
    ildl_options o;
    ildl_options_default(&o);
    int *field = (int *)((char *)&o + off);
    assert_int_equal(*field, dflt);
    for (int bad = -1; bad <= 2; bad += 3) {
        ildl_handle *h = (ildl_handle *)0x1;
        *field = bad;
        assert_int_equal(ildl_setup(2, rp, c, v, &o, &h), ILDL_ERR_INVALID_OPTION);
        assert_true(strstr(ildl_last_error(NULL), name) != NULL);
        assert_null(h);
    }
}

static void test_bad_matrices(void **state)
{
    (void)state;
    ildl_handle *h = NULL;
    int64_t rp[3] = {0, 2, 4};
    int32_t c[4] = {0, 1, 0, 1};
    double v[4] = {1, 2, 2, -1};
    assert_int_equal(ildl_setup(0, rp, c, v, NULL, &h), ILDL_ERR_EMPTY);
    assert_int_equal(ildl_setup(-3, rp, c, v, NULL, &h), ILDL_ERR_EMPTY);
    int32_t cbad[4] = {0, 2, 0, 1};
    assert_int_equal(ildl_setup(2, rp, cbad, v, NULL, &h), ILDL_ERR_INDEX_RANGE);
    assert_true(strlen(ildl_last_error(NULL)) > 0);
    double vun[4] = {1, 2, 3, -1};
    assert_int_equal(ildl_setup(2, rp, c, vun, NULL, &h), ILDL_ERR_NOT_SYMMETRIC);
    double vnan[4] = {1, NAN, NAN, -1};
    assert_int_equal(ildl_setup(2, rp, c, vnan, NULL, &h), ILDL_ERR_NAN_INF);
    int32_t cdup[4] = {0, 0, 0, 1};
    assert_int_not_equal(ildl_setup(2, rp, cdup, v, NULL, &h), ILDL_SUCCESS);
    int64_t rpempty[3] = {0, 0, 0};
    assert_int_equal(ildl_setup(2, rpempty, c, v, NULL, &h), ILDL_ERR_SINGULAR);
    int64_t rpdec[3] = {0, 3, 2};
    assert_int_equal(ildl_setup(2, rpdec, c, v, NULL, &h), ILDL_ERR_INDEX_RANGE);
    ildl_options o;
    ildl_options_default(&o);
    o.max_block_size = 33;
    assert_int_equal(ildl_setup(2, rp, c, v, &o, &h), ILDL_ERR_INVALID_OPTION);
    ildl_options_default(&o);
    o.tol = 0;
    assert_int_equal(ildl_setup(2, rp, c, v, &o, &h), ILDL_ERR_INVALID_OPTION);
    assert_null(h);
    two_valued_option(offsetof(ildl_options, solve_kernels), ILDL_SOLVE_KERNELS_AUTO, "solve_kernels");
    two_valued_option(offsetof(ildl_options, l2_persist), ILDL_L2_PERSIST_AUTO, "l2_persist");
    two_valued_option(offsetof(ildl_options, factor_schedule), ILDL_SCHEDULE_LEVELS, "factor_schedule");
}

/* setup with option field set by `set` is refused: ILDL_ERR_INVALID_OPTION, a message naming
 * `name`, no handle. */
static void refused(const ildl_options *o, const char *name)
{
    int64_t rp[3] = {0, 2, 4};
    int32_t c[4] = {0, 1, 0, 1};
    double v[4] = {1, 2, 2, -1};
    ildl_handle *h = (ildl_handle *)0x1;
    assert_int_equal(ildl_setup(2, rp, c, v, o, &h), ILDL_ERR_INVALID_OPTION);
    assert_non_null(strstr(ildl_last_error(NULL), name));
    assert_null(h);
}

/* Every option outside its documented range is refused before it can reach the OpenMP
 * runtime or an arithmetic overflow: num_threads = 100000 once crashed inside libgomp (50000
 * made it exit), fill_level = INT_MAX overflowed fill_level + 1 (GMC-FILL: "blocking failed"). */
static void test_option_ranges(void **state)
{
    (void)state;
    ildl_options o;
    int bad_threads[] = {-1, ILDL_MAX_THREADS + 1, 50000, 100000, INT32_MAX};
    for (int k = 0; k < 5; k++) {
        ildl_options_default(&o);
        o.num_threads = bad_threads[k];
        refused(&o, "num_threads");
    }
    int bad_levels[] = {-1, ILDL_MAX_FILL_LEVEL + 1, INT32_MAX};
    for (int k = 0; k < 3; k++)
        for (int ord = ILDL_ORDER_AMD; ord <= ILDL_ORDER_GMC_FILL; ord++) {
            ildl_options_default(&o);
            o.fill_level = bad_levels[k];
            o.ordering = ord;
            refused(&o, "fill_level");
        }
    ildl_options_default(&o);
    o.pivot_perturb = INFINITY;
    refused(&o, "pivot_perturb");
    ildl_options_default(&o);
    o.pivot_tol = NAN;
    refused(&o, "pivot_tol");
    ildl_options_default(&o);
    o.device_id = -1;
    refused(&o, "device_id");
    int bad_rounds[] = {-1, ILDL_MAX_PUSHBACK_ROUNDS + 1, INT32_MAX};
    for (int k = 0; k < 3; k++) {
        ildl_options_default(&o);
        o.pushback_rounds = bad_rounds[k];
        refused(&o, "pushback_rounds");
    }
    /* the largest accepted values work: a few threads more than this machine has, and the
     * largest level of fill with the colouring at distance fill_level + 1 */
    ildl_csr A;
    kkt(60, 20, 5, &A);
    double *b = malloc(sizeof(double) * A.n), *x = malloc(sizeof(double) * A.n);
    for (int32_t i = 0; i < A.n; i++) b[i] = 1.0 + (i % 5);
    int cases[2][2] = {{3, 1}, {2, ILDL_MAX_FILL_LEVEL}};
    for (int k = 0; k < 2; k++) {
        ildl_options_default(&o);
        o.backend = ILDL_BACKEND_CPU;
        o.num_threads = cases[k][0];
        o.fill_level = cases[k][1];
        o.ordering = k ? ILDL_ORDER_GMC_FILL : ILDL_ORDER_AUTO;
        o.factor_schedule = k ? ILDL_SCHEDULE_SYNCFREE : ILDL_SCHEDULE_LEVELS; /* a GPU schedule: the CPU ignores it */
        ildl_handle *h = NULL;
        assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
        assert_true(true_residual(&A, x, b) <= o.tol);
        ildl_info info;
        assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
        assert_int_equal(info.factor_schedule, ILDL_SCHEDULE_LEVELS); /* what ran: the CPU's levels */
        ildl_destroy(h);
    }
    free(b);
    free(x);
    ildl_csr_free(&A);
}


/* Any finite b is solved, whatever its scale: b = 2^k b0 gives the solution of b0 times 2^k bit
 * for bit (the same iterations) while 2^k b0 stays normal, and a converged solve with a true
 * residual checked here otherwise. The tridiagonal(-1, 4, -1) of order 4 with b = 1e-300
 * (1,2,3,4) once returned x = 0 as "converged" (||b||^2 underflowed); b near 1e200 was refused
 * as "NaN or infinite" (||b||^2 overflowed). A subnormal b has a subnormal solution, whose few
 * bits cannot meet tol: reported as it is. */
static void test_extreme_rhs(void **state)
{
    (void)state;
    int32_t ti[7] = {0, 1, 1, 2, 2, 3, 3}, tj[7] = {0, 0, 1, 1, 2, 2, 3};
    double tv[7] = {4, -1, 4, -1, 4, -1, 4};
    ildl_csr T, K;
    ildl_test_csr_from_triplets(4, 7, ti, tj, tv, &T);
    kkt(60, 20, 9, &K);
    const ildl_csr *mats[2] = {&T, &K};
    for (int m = 0; m < 2; m++)
        for (int use_x0 = 0; use_x0 <= 1; use_x0++) {
            const ildl_csr *A = mats[m];
            int32_t n = A->n;
            double *b0 = malloc(sizeof(double) * n), *x0 = malloc(sizeof(double) * n);
            double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
            double *bc = malloc(sizeof(double) * n);
            for (int32_t i = 0; i < n; i++) b0[i] = (double)(i + 1) * (i % 3 == 1 ? -1.0 : 1.0);
            ildl_options o;
            ildl_options_default(&o);
            o.backend = ILDL_BACKEND_CPU;
            o.use_initial_guess = use_x0;
            ildl_handle *h = NULL;
            assert_int_equal(ildl_setup(n, A->rowptr, A->col, A->val, &o, &h), ILDL_SUCCESS);
            assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
            for (int32_t i = 0; i < n; i++) x0[i] = use_x0 ? 0.25 * (i % 2) : 0.0;
            assert_int_equal(ildl_solve(h, b0, x0), ILDL_SUCCESS);
            ildl_info ref;
            ildl_get_info(h, &ref);
            int ks[] = {-1000, -900, 700, 1010, -1070};
            for (int k = 0; k < 5; k++) {
                for (int32_t i = 0; i < n; i++) {
                    b[i] = ldexp(b0[i], ks[k]);
                    x[i] = use_x0 ? ldexp(0.25 * (i % 2), ks[k]) : 0.0;
                }
                memcpy(bc, b, sizeof(double) * n);
                int st = ildl_solve(h, b, x);
                ildl_info info;
                ildl_get_info(h, &info);
                assert_memory_equal(b, bc, sizeof(double) * n); /* b untouched */
                double r = ildl_test_residual_ld(A, x, b);
                if (!(fabs(r - info.true_residual) <= 1e-6 * r + 1e-15))
                    print_message("matrix %d x0 %d k %d: status %d, residual %.17g, here %.17g\n", m, use_x0, ks[k], st,
                                  info.true_residual, r);
                assert_true(fabs(r - info.true_residual) <= 1e-6 * r + 1e-15);
                assert_int_equal(st == ILDL_SUCCESS, info.converged);
                assert_int_equal(info.converged, r <= o.tol);
                if (ks[k] == -1070) { /* subnormal b: x is subnormal too, with too few bits to meet tol */
                    assert_true(st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED);
                    continue;
                }
                assert_int_equal(st, ILDL_SUCCESS);
                if (ks[k] > -1000) { /* b normal: the reference solution, scaled */
                    assert_int_equal(info.iterations, ref.iterations);
                    for (int32_t i = 0; i < n; i++) assert_true(x[i] == ldexp(x0[i], ks[k]));
                }
            }
            /* finite, but b^T b is not (the KKT's solution is larger than b: 1e300 there) */
            double big = m == 0 ? 1.7e308 : 1e300;
            b[0] = big;
            for (int32_t i = 1; i < n; i++) b[i] = -big * (i % 2);
            memset(x, 0, sizeof(double) * n);
            assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
            assert_true(ildl_test_residual_ld(A, x, b) <= o.tol);
            ildl_destroy(h);
            free(b0); free(x0); free(b); free(x); free(bc);
        }
    ildl_csr_free(&T);
    ildl_csr_free(&K);
}

/* ildl_test_residual_ld on raw CSR arrays */
static double true_residual_ld_raw(int32_t n, int64_t *rp, int32_t *c, double *v, const double *x, const double *b)
{
    ildl_csr A = {n, rp, c, v};
    return ildl_test_residual_ld(&A, x, b);
}

/* Finite inputs never give a NaN/Inf status or residual: an initial guess whose A x0 overflows
 * is not used (the solve starts from 0; it once returned ILDL_ERR_NAN_INF), and where a singular
 * A's iterate exceeds the doubles at b's scale, x is the initial guess (or 0) with its finite
 * residual and NOT_CONVERGED (a NaN residual was once reported). */
static void test_overflowing_solutions(void **state)
{
    (void)state;
    /* diag(1e300, 1e300, 1, 1): A x0 overflows for x0 = 1e10 */
    int64_t rp[5] = {0, 1, 2, 3, 4};
    int32_t c[4] = {0, 1, 2, 3};
    double v[4] = {1e300, 1e300, 1.0, 1.0}, b[4] = {1e300, -1e300, 2.0, 3.0}, x[4];
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.use_initial_guess = 1;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(4, rp, c, v, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    for (int k = 0; k < 4; k++) x[k] = 1e10;
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    assert_true(x[0] == 1.0 && x[1] == -1.0 && fabs(x[2] - 2.0) <= 1e-12 && fabs(x[3] - 3.0) <= 1e-12);
    /* a subnormal b with an initial guess of 1e185, which overflows at b's scale (2^1037): not
     * used either (it once gave ILDL_ERR_NAN_INF) */
    double tiny[4] = {6.5781869422098444e-313, 6.5781869422098444e-313, 6.5781869422098444e-313, 0.0};
    x[0] = 1.0;
    x[1] = x[2] = x[3] = 1.8e185;
    int st = ildl_solve(h, tiny, x);
    ildl_info info;
    ildl_get_info(h, &info);
    assert_true(st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED); /* subnormal b: too few bits */
    assert_true(isfinite(info.true_residual) && info.true_residual < 1.0);
    assert_true(fabs(true_residual_ld_raw(4, rp, c, v, x, tiny) - info.true_residual) <= 1e-6 * info.true_residual);
    ildl_destroy(h);
    /* the singular tridiagonal(-1, -1, -1) of order 5 (its rows 1 - 2 + 4 - 5 sum to 0) with a b
     * near 1e299 outside the range of A: the iterate grows past the doubles once scaled back */
    int32_t ti[9] = {0, 1, 1, 2, 2, 3, 3, 4, 4}, tj[9] = {0, 0, 1, 1, 2, 2, 3, 3, 4};
    double tv[9] = {-1, -1, -1, -1, -1, -1, -1, -1, -1};
    ildl_csr S;
    ildl_test_csr_from_triplets(5, 9, ti, tj, tv, &S);
    double bs[5] = {0, -115.453125, 0.0019683837890625, 0, -8.3701391556246752e+298}, xs[5];
    for (int x0 = 0; x0 <= 1; x0++) {
        o.use_initial_guess = x0;
        assert_int_equal(ildl_setup(5, S.rowptr, S.col, S.val, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        for (int k = 0; k < 5; k++) xs[k] = x0 ? 1.0 : 0.0;
        int st = ildl_solve(h, bs, xs);
        ildl_info info;
        ildl_get_info(h, &info);
        assert_true(st == ILDL_ERR_NOT_CONVERGED || st == ILDL_ERR_BREAKDOWN);
        assert_true(isfinite(info.true_residual) && !info.converged);
        for (int k = 0; k < 5; k++) assert_true(isfinite(xs[k]));
        assert_true(fabs(ildl_test_residual_ld(&S, xs, bs) - info.true_residual) <= 1e-6 * info.true_residual);
        ildl_destroy(h);
    }
    ildl_csr_free(&S);
    /* diag(1.7e308, 1e-150, 1.7e308, 1.7e308), b near the largest double (scaled) and an initial
     * guess of 1.7e308: the iterate overflows once scaled back, and so does A x0, so x is 0 with
     * residual 1 (fuzz finding F5: x0 was returned with a residual of inf) */
    double dv[4] = {1.7e308, 1e-150, 1.7e308, 1.7e308}, db[4] = {0, 1.7e308, 0, -4.7e-224}, dx[4];
    o.use_initial_guess = 1;
    assert_int_equal(ildl_setup(4, rp, c, dv, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    for (int k = 0; k < 4; k++) dx[k] = 1.7e308;
    st = ildl_solve(h, db, dx);
    ildl_get_info(h, &info);
    assert_int_equal(st, ILDL_ERR_NOT_CONVERGED);
    assert_true(isfinite(info.true_residual) && !info.converged);
    for (int k = 0; k < 4; k++) assert_true(dx[k] == 0.0);
    assert_true(info.true_residual == 1.0);
    assert_non_null(strstr(ildl_last_error(h), "zero vector"));
    ildl_destroy(h);
}

/* The ladder (docs/robustness.md) on the shifted 3D Laplacian T - 4 I of 8^3 rows (about a
 * third of its eigenvalues negative): rung 0 (the defaults) and rung 1 stagnate, the complete
 * factor (rung 2) solves it. What each rung did is reported, the residual is the true one, the
 * rung stays for the next factorization, and the budgets and escalation = NONE / FILL hold. */
static void ladder_problem(ildl_csr *A, double **b)
{
    ildl_test_laplace3d(8, 4.0, A);
    *b = malloc(sizeof(double) * (size_t)A->n);
    assert_non_null(*b);
    for (int32_t i = 0; i < A->n; i++) (*b)[i] = 1.0 + (double)(i % 7);
}

static void test_ladder(void **state)
{
    (void)state;
    ildl_csr A;
    double *b, *x;
    ladder_problem(&A, &b);
    int32_t n = A.n;
    x = calloc((size_t)n, sizeof(double));
    ildl_options o;
    ildl_options_default(&o);
    assert_int_equal(o.escalation, ILDL_ESCALATE_COMPLETE);
    o.backend = ILDL_BACKEND_CPU;
    ildl_handle *h = NULL;
    ildl_info info;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    ildl_get_info(h, &info);
    assert_int_equal(info.rung, 0);
    int64_t nnz0 = info.factor_nnz;
    double tf = info.factor_seconds;
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    ildl_get_info(h, &info);
    assert_int_equal(info.rung, 2);
    assert_true(info.converged && info.true_residual <= o.tol);
    assert_true(ildl_test_residual_ld(&A, x, b) <= o.tol);
    assert_true(fabs(ildl_test_residual_ld(&A, x, b) - info.true_residual) <= 1e-3 * info.true_residual + 1e-16);
    /* rungs 0 and 1 stopped by the stall window, rung 2 exact up to rounding */
    assert_int_equal(info.rung_iterations[0], 200);
    assert_int_equal(info.rung_iterations[1], 200);
    assert_true(info.rung_iterations[2] >= 1 && info.rung_iterations[2] <= 3);
    assert_int_equal(info.iterations, 400 + info.rung_iterations[2]);
    assert_true(info.rung_factor_nnz[0] == nnz0 && info.rung_factor_nnz[1] > nnz0 &&
                info.rung_factor_nnz[2] > info.rung_factor_nnz[1] && info.factor_nnz == info.rung_factor_nnz[2]);
    int64_t cap2 = info.factor_capacity, cap1 = 0;
    /* each rung's time since its analysis began: together the solve's; factor_seconds stays the
     * caller's ildl_factor */
    double sum = 0.0;
    for (int r = 0; r < ILDL_MAX_RUNGS; r++) {
        assert_true(info.rung_seconds[r] > 0.0);
        sum += info.rung_seconds[r];
    }
    assert_true(sum <= info.solve_seconds * (1 + 1e-12) && sum >= 0.5 * info.solve_seconds);
    assert_true(info.factor_seconds == tf);
    assert_true(info.num_levels > 0 && info.factor_capacity >= info.factor_nnz - n);
    /* rung 2 took the smallest of three complete analyses: SN + METIS, SN + AMD and the options'
     * BR + AUTO (the first on ties) */
    {
        int64_t best = -1;
        const int blk[3] = {ILDL_BLOCKING_SN, ILDL_BLOCKING_SN, ILDL_BLOCKING_BR};
        const int ord[3] = {ILDL_ORDER_METIS, ILDL_ORDER_AMD, ILDL_ORDER_AUTO};
        for (int c = 0; c < 3; c++) {
            ildl_options oc = o;
            oc.fill_level = ILDL_MAX_FILL_LEVEL;
            oc.fill_factor = 0.0;
            oc.drop_tol = 0.0;
            oc.blocking = blk[c];
            oc.ordering = ord[c];
            ildl_handle *hc = NULL;
            ildl_info ic;
            assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &oc, &hc), ILDL_SUCCESS);
            ildl_get_info(hc, &ic);
            if (best < 0 || ic.factor_capacity < best) best = ic.factor_capacity;
            ildl_destroy(hc);
        }
        assert_int_equal(info.factor_capacity, best);
    }
    /* the rung stays: a refactorization and solve start there */
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    ildl_get_info(h, &info);
    assert_true(info.rung == 2 && info.rung_iterations[0] == -1 && info.rung_iterations[1] == -1);
    assert_true(ildl_test_residual_ld(&A, x, b) <= o.tol);
    ildl_destroy(h);

    /* no ladder: rung 0's result, today's behaviour */
    o.escalation = ILDL_ESCALATE_NONE;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    int st = ildl_solve(h, b, x);
    ildl_get_info(h, &info);
    assert_true(info.rung == 0 && info.rung_iterations[1] == -1 && info.rung_iterations[0] > 200);
    assert_true(st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED);
    ildl_destroy(h);
    /* up to rung 1 only: it does not solve, rung 2 is not taken */
    o.escalation = ILDL_ESCALATE_FILL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    st = ildl_solve(h, b, x);
    ildl_get_info(h, &info);
    assert_true(info.rung == 1 && info.rung_iterations[2] == -1 && info.rung_iterations[0] == 200);
    assert_true(st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED);
    if (st == ILDL_SUCCESS) assert_true(ildl_test_residual_ld(&A, x, b) <= o.tol);
    cap1 = info.factor_capacity;
    ildl_destroy(h);

    /* a memory budget between rung 1's factor capacity and rung 2's (10 bytes an entry): rung 2 refused
     * with the entries it needs, before it allocates; the handle keeps rung 1's factor and stays
     * usable */
    o.escalation = ILDL_ESCALATE_COMPLETE;
    assert_true(cap2 > cap1 && cap1 > 0);
    o.escalation_max_bytes = 10.0 * (double)(cap1 + cap2) / 2;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    st = ildl_solve(h, b, x);
    ildl_get_info(h, &info);
    assert_int_equal(st, ILDL_ERR_NOT_CONVERGED);
    assert_true(info.rung == 1 && info.rung_iterations[2] == -1);
    assert_true(info.rung_factor_nnz[2] * 10 > o.escalation_max_bytes && info.rung_factor_nnz[2] > info.rung_factor_nnz[1]);
    assert_non_null(strstr(ildl_last_error(h), "rung 2 refused"));
    assert_non_null(strstr(ildl_last_error(h), "GiB"));
    assert_true(isfinite(info.true_residual) &&
                fabs(ildl_test_residual_ld(&A, x, b) - info.true_residual) <= 1e-6 * info.true_residual);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, x), ILDL_ERR_NOT_CONVERGED);
    ildl_destroy(h);
    /* a time budget already spent: no rung after 0 */
    o.escalation_max_bytes = 0.0;
    o.escalation_max_seconds = 1e-9;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    st = ildl_solve(h, b, x);
    ildl_get_info(h, &info);
    assert_int_equal(st, ILDL_ERR_NOT_CONVERGED);
    assert_true(info.rung == 0 && info.rung_iterations[0] == 200 && info.rung_iterations[1] == -1);
    assert_non_null(strstr(ildl_last_error(h), "not tried"));
    ildl_destroy(h);
    /* budgets out of range */
    o.escalation_max_seconds = -1.0;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_ERR_INVALID_OPTION);
    o.escalation_max_seconds = 0.0;
    o.escalation_max_bytes = NAN;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_ERR_INVALID_OPTION);
    o.escalation_max_bytes = 0.0;
    o.escalation = 3;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_ERR_INVALID_OPTION);
    free(b);
    free(x);
    ildl_csr_free(&A);
}

/* ildl_factor(h, NULL) factors the most recently accepted values again: setup's at first, then
 * those of the last ildl_factor whose values passed its checks; refused values change nothing. */
static void test_factor_null_values(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(60, 20, 13, &A);
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    double *v2 = malloc(sizeof(double) * nnz), *vbad = malloc(sizeof(double) * nnz);
    for (int32_t i = 0; i < n; i++) /* H times 3: still symmetric */
        for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
            v2[p] = (i < 60 && A.col[p] < 60) ? 3.0 * A.val[p] : A.val[p];
    memcpy(vbad, v2, sizeof(double) * nnz);
    vbad[0] = NAN;
    double *b = malloc(sizeof(double) * n), *x1 = malloc(sizeof(double) * n), *x2 = malloc(sizeof(double) * n);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 - 0.1 * (i % 7);
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    ildl_csr A2 = A;
    A2.val = v2;
    assert_int_equal(ildl_factor(h, v2), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, x2), ILDL_SUCCESS);
    assert_true(true_residual(&A2, x2, b) <= o.tol);
    assert_int_equal(ildl_factor(h, vbad), ILDL_ERR_NAN_INF);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS); /* v2 again, not setup's values */
    assert_int_equal(ildl_solve(h, b, x1), ILDL_SUCCESS);
    assert_memory_equal(x1, x2, sizeof(double) * n);
    /* refused for symmetry, past the rows already taken: v2 again as well */
    memcpy(vbad, v2, sizeof(double) * nnz);
    vbad[nnz - 2] *= 1.5;
    assert_int_equal(ildl_factor(h, vbad), ILDL_ERR_NOT_SYMMETRIC);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, x1), ILDL_SUCCESS);
    assert_memory_equal(x1, x2, sizeof(double) * n);
    /* v2 itself again: as NULL, the same x */
    assert_int_equal(ildl_factor(h, v2), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, x1), ILDL_SUCCESS);
    assert_memory_equal(x1, x2, sizeof(double) * n);
    ildl_destroy(h);
    free(v2); free(vbad); free(b); free(x1); free(x2);
    ildl_csr_free(&A);
}

/* New values of a matrix large enough for the check's parallel pass (2^15 entries and more):
 * the first bad entry in row order is named, whichever thread meets it and at which end of a
 * pair the change was made, with the exact values; the accepted values stay. */
static void test_refactor_check_large(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(9000, 3000, 11, &A);
    int64_t nnz = A.rowptr[A.n];
    assert_true(nnz >= ((int64_t)1 << 15));
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    double *v = malloc(sizeof(double) * nnz);
    /* a lower entry (i, j), j < i, of a late row changed: the pair is first met in row j */
    int32_t i = A.n - 5;
    int64_t p = A.rowptr[i];
    assert_true(A.col[p] < i);
    int32_t j = A.col[p];
    int64_t q = A.rowptr[j]; /* (j, i) */
    while (A.col[q] != i) q++;
    memcpy(v, A.val, sizeof(double) * nnz);
    v[p] = 2.0 * A.val[p] + 1.0;
    assert_int_equal(ildl_factor(h, v), ILDL_ERR_NOT_SYMMETRIC);
    char want[256];
    snprintf(want, sizeof want, "a(%d,%d) = %.17g but a(%d,%d) = %.17g", (int)j, (int)i, v[q], (int)i, (int)j, v[p]);
    assert_non_null(strstr(ildl_last_error(h), want));
    /* a NaN late and an asymmetric pair early: the NaN is reported first (as before) */
    v[p] = A.val[p];
    v[1] += 1.0;
    v[nnz - 3] = NAN;
    assert_int_equal(ildl_factor(h, v), ILDL_ERR_NAN_INF);
    snprintf(want, sizeof want, "value %lld ", (long long)(nnz - 3));
    assert_non_null(strstr(ildl_last_error(h), want));
    /* the accepted values are setup's: a solve after NULL has a small residual on A */
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    double *b = malloc(sizeof(double) * A.n), *x = calloc(A.n, sizeof(double));
    for (int32_t r = 0; r < A.n; r++) b[r] = 1.0 + r % 5;
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    assert_true(true_residual(&A, x, b) <= o.tol);
    ildl_destroy(h);
    free(v); free(b); free(x);
    ildl_csr_free(&A);
}

static void test_call_order_and_untouched(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(60, 20, 7, &A);
    int64_t nnz = A.rowptr[A.n];
    ildl_csr C;
    assert_int_equal(ildl_csr_copy(&A, &C), 0);
    ildl_handle *h = NULL;
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU; /* device pointers are refused by the CPU backend */
    assert_int_equal(ildl_setup(A.n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    double *b = calloc(A.n, sizeof(double)), *x = calloc(A.n, sizeof(double));
    for (int32_t i = 0; i < A.n; i++) b[i] = 1.0 + i % 3;
    assert_int_equal(ildl_solve(h, b, x), ILDL_ERR_CALL_ORDER);
    assert_int_equal(ildl_apply(h, b, x, ILDL_MEMORY_HOST, NULL), ILDL_ERR_CALL_ORDER);
    assert_true(strlen(ildl_last_error(h)) > 0);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, b), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_solve(h, NULL, x), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_apply(h, b, x, ILDL_MEMORY_DEVICE, NULL), ILDL_ERR_NOT_SUPPORTED);
    b[3] = INFINITY;
    assert_int_equal(ildl_solve(h, b, x), ILDL_ERR_NAN_INF);
    b[3] = 1.0;
    /* refactor with values that are no longer symmetric or finite is refused */
    double *v2 = malloc(sizeof(double) * nnz);
    memcpy(v2, A.val, sizeof(double) * nnz);
    /* two bad entries: the message names the first in row order, whichever thread finds it */
    v2[nnz - 2] += 1.0;
    v2[1] += 1.0;
    assert_true(A.col[1] != 0); /* an off-diagonal entry of row 0 */
    assert_int_equal(ildl_factor(h, v2), ILDL_ERR_NOT_SYMMETRIC);
    assert_non_null(strstr(ildl_last_error(h), "a(0,"));
    assert_int_equal(ildl_solve(h, b, x), ILDL_ERR_CALL_ORDER);
    memcpy(v2, A.val, sizeof(double) * nnz);
    v2[nnz - 1] = NAN;
    v2[0] = NAN;
    assert_int_equal(ildl_factor(h, v2), ILDL_ERR_NAN_INF);
    assert_non_null(strstr(ildl_last_error(h), "value 0 "));
    free(v2);
    /* caller's arrays untouched by everything above */
    assert_memory_equal(A.rowptr, C.rowptr, sizeof(int64_t) * (A.n + 1));
    assert_memory_equal(A.col, C.col, sizeof(int32_t) * nnz);
    assert_memory_equal(A.val, C.val, sizeof(double) * nnz);
    ildl_destroy(h);
    free(b); free(x);
    ildl_csr_free(&A); ildl_csr_free(&C);
}

/* Solve, check the reported residual against one computed here, refactor with new values. */
static void test_solve_and_refactor(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(300, 100, 11, &A);
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    double *b = malloc(sizeof(double) * n), *x = calloc(n, sizeof(double)), *ones = malloc(sizeof(double) * n);
    for (int32_t i = 0; i < n; i++) ones[i] = 1.0;
    ildl_csr_matvec(&A, ones, b);
    for (int piv = ILDL_PIVOT_NONE; piv <= ILDL_PIVOT_ROOK; piv++) {
        ildl_options o;
        ildl_options_default(&o);
        o.backend = ILDL_BACKEND_CPU;
        o.pivoting = piv;
        ildl_handle *h = NULL;
        assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
        int st = ildl_solve(h, b, x);
        ildl_info info;
        ildl_get_info(h, &info);
        double r = true_residual(&A, x, b);
        assert_true(fabs(r - info.true_residual) <= 1e-12 + 1e-6 * r);
        assert_int_equal(st, ILDL_SUCCESS);
        assert_true(info.converged);
        assert_true(r <= o.tol);
        assert_true(info.iterations > 0 && info.iterate_seconds > 0.0 && info.iterate_seconds <= info.solve_seconds);
        assert_int_equal(info.backend, ILDL_BACKEND_CPU);
        assert_int_equal(info.inertia_pos + info.inertia_neg + info.inertia_zero, n);
        /* refactor: scale H by 2 (still symmetric) and solve again */
        double *v2 = malloc(sizeof(double) * nnz);
        for (int32_t i = 0; i < n; i++)
            for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
                v2[p] = (i < 300 && A.col[p] < 300) ? 2.0 * A.val[p] : A.val[p];
        ildl_csr A2 = A;
        A2.val = v2;
        double *b2 = malloc(sizeof(double) * n);
        ildl_csr_matvec(&A2, ones, b2);
        assert_int_equal(ildl_factor(h, v2), ILDL_SUCCESS);
        assert_int_equal(ildl_solve(h, b2, x), ILDL_SUCCESS);
        assert_true(true_residual(&A2, x, b2) <= o.tol);
        /* apply is the preconditioner: with a full factor and no dropping it is A^{-1} */
        double *z = malloc(sizeof(double) * n);
        assert_int_equal(ildl_apply(h, b2, z, ILDL_MEMORY_HOST, NULL), ILDL_SUCCESS);
        for (int32_t i = 0; i < n; i++) assert_true(isfinite(z[i]));
        free(z); free(v2); free(b2);
        ildl_destroy(h);
    }
    free(b); free(x); free(ones);
    ildl_csr_free(&A);
}

/* One setup, factor and solve on the CPU backend with ordering `ordering` on `threads` threads
 * (0: OpenMP's default); returns the info, after asserting the true residual (computed here)
 * meets tol; x (malloc'ed) into *xo if xo, else freed. */
static ildl_info solve_threads(const ildl_csr *A, int ordering, int threads, double **xo)
{
    int32_t n = A->n;
    double *b = malloc(sizeof(double) * n), *x = calloc(n, sizeof(double)), *ones = malloc(sizeof(double) * n);
    assert_true(b && x && ones);
    for (int32_t i = 0; i < n; i++) ones[i] = 1.0;
    ildl_csr_matvec(A, ones, b);
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.ordering = ordering;
    o.num_threads = threads;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A->rowptr, A->col, A->val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    ildl_info info;
    ildl_get_info(h, &info);
    assert_true(true_residual(A, x, b) <= o.tol);
    ildl_destroy(h);
    free(b); free(ones);
    if (xo) *xo = x;
    else free(x);
    return info;
}

static ildl_info solve_ordered(const ildl_csr *A, int ordering)
{
    return solve_threads(A, ordering, 0, NULL);
}

/* Ordering GMC_FILL through the API: asked for, it is used and solves; AUTO takes it on a 3D
 * grid large enough (>= 1000 blocks) with at most a quarter of AMD's levels, and keeps AMD on
 * a small one; an ordering past the enum is refused. */
static void test_gmc_fill_ordering(void **state)
{
    (void)state;
    ildl_csr S, L;
    ildl_test_laplace3d(12, 0.1, &S);  /* 1728 rows: a few dozen blocks */
    ildl_test_laplace3d(36, 0.1, &L);  /* 46656 rows: over a thousand blocks */
    ildl_info fs = solve_ordered(&S, ILDL_ORDER_GMC_FILL);
    assert_int_equal(fs.ordering_used, ILDL_ORDER_GMC_FILL);
    ildl_info as = solve_ordered(&S, ILDL_ORDER_AUTO);
    assert_int_equal(as.ordering_used, ILDL_ORDER_AMD);
    ildl_info al = solve_ordered(&L, ILDL_ORDER_AMD), ul = solve_ordered(&L, ILDL_ORDER_AUTO);
    print_message("3D grid n %d: %d blocks; AMD %d levels, %d iterations; AUTO (%s) %d levels, %d iterations\n",
                  (int)L.n, (int)ul.num_blocks, (int)al.num_levels, al.iterations,
                  ul.ordering_used == ILDL_ORDER_GMC_FILL ? "GMC_FILL" : "other", (int)ul.num_levels, ul.iterations);
    assert_true(ul.num_blocks >= 1000);
    assert_int_equal(ul.ordering_used, ILDL_ORDER_GMC_FILL);
    assert_true((int64_t)ul.num_levels * 4 <= al.num_levels);
    /* an ordering past the enum: refused, with a message */
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.ordering = ILDL_ORDER_GMC_FILL + 1;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(S.n, S.rowptr, S.col, S.val, &o, &h), ILDL_ERR_INVALID_OPTION);
    assert_null(h);
    assert_true(strlen(ildl_last_error(NULL)) > 0);
    ildl_csr_free(&S);
    ildl_csr_free(&L);
}

/* copies of B along the diagonal: a graph of copies components */
static void block_diagonal(const ildl_csr *B, int32_t copies, ildl_csr *A)
{
    int32_t n = B->n * copies;
    int64_t nnz = B->rowptr[B->n] * copies;
    assert_int_equal(ildl_csr_alloc(n, nnz, A), ILDL_SUCCESS);
    A->rowptr[0] = 0;
    for (int32_t c = 0; c < copies; c++)
        for (int32_t r = 0; r < B->n; r++) {
            int32_t i = c * B->n + r;
            int64_t q = A->rowptr[i];
            for (int64_t p = B->rowptr[r]; p < B->rowptr[r + 1]; p++, q++) {
                A->col[q] = B->col[p] + c * B->n;
                A->val[q] = B->val[p];
            }
            A->rowptr[i + 1] = q;
        }
}

/* AUTO on large block graphs with 8 threads runs AMD on a thread of its own and analyses the
 * colouring's order meanwhile (analyse.c); with one thread it goes the ordinary way. Both
 * must give the same result bitwise, whichever order the rule keeps: the colouring (3D grid)
 * or AMD (a thousand components, where AMD's levels are as few as the colours). */
static void test_auto_beside_amd(void **state)
{
    (void)state;
    ildl_csr G, B, D;
    ildl_test_laplace3d(36, 0.1, &G);
    ildl_test_laplace2d(5, 0.1, &B);
    block_diagonal(&B, 1200, &D);
    const ildl_csr *As[2] = {&G, &D};
    const int kept[2] = {ILDL_ORDER_GMC_FILL, ILDL_ORDER_AMD};
    for (int m = 0; m < 2; m++) {
        double *x1, *x8;
        ildl_info i1 = solve_threads(As[m], ILDL_ORDER_AUTO, 1, &x1);
        ildl_info i8 = solve_threads(As[m], ILDL_ORDER_AUTO, 8, &x8);
        print_message("n %d: %d blocks, %d levels, kept %d; 8 threads: %d blocks, %d levels, kept %d\n",
                      (int)As[m]->n, (int)i1.num_blocks, (int)i1.num_levels, i1.ordering_used,
                      (int)i8.num_blocks, (int)i8.num_levels, i8.ordering_used);
        assert_true(i1.num_blocks >= 1000);
        assert_int_equal(i1.ordering_used, kept[m]);
        assert_int_equal(i8.ordering_used, kept[m]);
        assert_int_equal(i1.num_blocks, i8.num_blocks);
        assert_int_equal(i1.num_levels, i8.num_levels);
        assert_int_equal(i1.factor_nnz, i8.factor_nnz);
        assert_int_equal(i1.iterations, i8.iterations);
        assert_memory_equal(x1, x8, sizeof(double) * (size_t)As[m]->n);
        free(x1); free(x8);
    }
    ildl_csr_free(&G); ildl_csr_free(&B); ildl_csr_free(&D);
}

/* Full fill, no dropping: the preconditioner is exact and SQMR converges in <= 2 iterations. */
static void test_exact_preconditioner(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(80, 30, 5, &A);
    int32_t n = A.n;
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.fill_level = 1000;
    o.fill_factor = 0;
    o.drop_tol = 0;
    o.pivoting = ILDL_PIVOT_BK;
    o.tol = 1e-10;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    double *b = malloc(sizeof(double) * n), *x = calloc(n, sizeof(double));
    for (int32_t i = 0; i < n; i++) b[i] = sin(i + 1.0);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    ildl_info info;
    ildl_get_info(h, &info);
    assert_true(info.iterations <= 2);
    assert_true(true_residual(&A, x, b) <= 1e-10);
    assert_int_equal(info.inertia_pos, 80);
    assert_int_equal(info.inertia_neg, 30);
    ildl_destroy(h);
    free(b); free(x);
    ildl_csr_free(&A);
}

/* Every precision solves to tol on the original system (checked here) and refactors. With a
 * complete factor, single precision is a preconditioner accurate to float rounding: SQMR (in
 * double) still reaches 1e-10 within a few iterations. A perturbation that is 0 in float is
 * refused for single (it would divide by zero there) and accepted for double. */
static void test_precisions(void **state)
{
    (void)state;
    ildl_csr A;
    kkt(300, 100, 13, &A);
    int32_t n = A.n;
    double *b = malloc(sizeof(double) * n), *x = calloc(n, sizeof(double));
    for (int32_t i = 0; i < n; i++) b[i] = cos(0.1 * i);
    for (int exact = 0; exact < 2; exact++)
        for (int prec = ILDL_PREC_DOUBLE; prec <= ILDL_PREC_MIXED; prec++) {
            ildl_options o;
            ildl_options_default(&o);
            o.backend = ILDL_BACKEND_CPU;
            o.precision = prec;
            if (exact) {
                o.fill_level = 1000;
                o.fill_factor = 0;
                o.drop_tol = 0;
                o.tol = 1e-10;
            }
            ildl_handle *h = NULL;
            assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
            for (int round = 0; round < 2; round++) { /* factor, then refactor the same values */
                assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
                assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
                assert_true(true_residual(&A, x, b) <= o.tol);
            }
            ildl_info info;
            ildl_get_info(h, &info);
            if (exact) assert_true(info.iterations <= (prec == ILDL_PREC_DOUBLE ? 2 : 6));
            ildl_destroy(h);
        }
    for (int prec = ILDL_PREC_DOUBLE; prec <= ILDL_PREC_SINGLE; prec++) {
        ildl_options o;
        ildl_options_default(&o);
        o.backend = ILDL_BACKEND_CPU;
        o.precision = prec;
        o.pivot_perturb = 1e-50;
        ildl_handle *h = NULL;
        int st = ildl_setup(n, A.rowptr, A.col, A.val, &o, &h);
        assert_int_equal(st, prec == ILDL_PREC_SINGLE ? ILDL_ERR_INVALID_OPTION : ILDL_SUCCESS);
        assert_true(st != ILDL_SUCCESS || h != NULL);
        if (st) assert_true(strlen(ildl_last_error(NULL)) > 0);
        ildl_destroy(h);
    }
    free(b); free(x);
    ildl_csr_free(&A);
}

static void test_cuda_request_without_gpu(void **state)
{
    (void)state;
    int64_t rp[3] = {0, 2, 4};
    int32_t c[4] = {0, 1, 0, 1};
    double v[4] = {1, 2, 2, -1};
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CUDA;
    ildl_handle *h = NULL;
    int st = ildl_setup(2, rp, c, v, &o, &h);
    /* ildl_device_count agrees: no device exactly when the CUDA backend is refused for it */
    int ndev = ildl_device_count();
    assert_true(ndev >= 0);
    assert_int_equal(ndev == 0, st == ILDL_ERR_NO_DEVICE);
    if (st == ILDL_ERR_NO_DEVICE) {
        assert_null(h);
        assert_true(strlen(ildl_last_error(NULL)) > 0);
    } else {
        /* a GPU is present: the CUDA backend must then work, and say which GPU it is */
        assert_int_equal(st, ILDL_SUCCESS);
        ildl_info info;
        assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
        assert_int_equal(info.backend, ILDL_BACKEND_CUDA);
        assert_true(strlen(info.device_name) > 0 && strlen(info.device_name) < sizeof info.device_name);
        ildl_destroy(h);
    }
    /* the CPU backend names no device */
    o.backend = ILDL_BACKEND_CPU;
    assert_int_equal(ildl_setup(2, rp, c, v, &o, &h), ILDL_SUCCESS);
    ildl_info info;
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    assert_string_equal(info.device_name, "");
    ildl_destroy(h);
}

/* ILDL_SOLVE_KERNELS_STAGED on the CUDA backend: where AUTO takes the kernels that sum sparse
 * tiles by lanes (forced here by the tuning's sf_nostage, as on wide levels), STAGED keeps their
 * copy of the factor out of device memory and returns the same x, bit for bit, in the same
 * iterations. Skips without a GPU. */
static void test_solve_kernels_staged(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(90, 0.05, &A); /* a shifted Laplacian (slightly indefinite), n = 8100 */
    int32_t n = A.n;
    double *b = malloc(sizeof(double) * (size_t)n), *x[2];
    size_t bytes[2];
    int its[2], solved[2];
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 + (double)(i % 7);
    ildl_cuda_tuning tune;
    ildl_cuda_tuning_get(&tune);
    tune.sf_nostage = 1;
    ildl_cuda_tuning_set(&tune);
    for (int k = 0; k < 2; k++) {
        ildl_options o;
        ildl_options_default(&o);
        o.backend = ILDL_BACKEND_CUDA;
        o.solve_kernels = k ? ILDL_SOLVE_KERNELS_STAGED : ILDL_SOLVE_KERNELS_AUTO;
        ildl_handle *h = NULL;
        int st = ildl_setup(n, A.rowptr, A.col, A.val, &o, &h);
        if (st == ILDL_ERR_NO_DEVICE) {
            printf("SKIP: no CUDA device: solve_kernels not tested on the GPU\n");
            ildl_cuda_tuning_set(NULL);
            if (k) free(x[0]);
            free(b);
            ildl_csr_free(&A);
            return;
        }
        assert_int_equal(st, ILDL_SUCCESS);
        assert_int_equal(ildl_factor(h, A.val), ILDL_SUCCESS);
        x[k] = calloc((size_t)n, sizeof(double));
        solved[k] = ildl_solve(h, b, x[k]); /* converged or not: both choices alike */
        assert_true(solved[k] == ILDL_SUCCESS || solved[k] == ILDL_ERR_NOT_CONVERGED);
        ildl_info info;
        assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
        assert_int_equal(info.backend, ILDL_BACKEND_CUDA);
        assert_int_equal(info.converged, solved[k] == ILDL_SUCCESS);
        bytes[k] = info.device_bytes;
        its[k] = info.iterations;
        ildl_destroy(h);
    }
    ildl_cuda_tuning_set(NULL);
    printf("solve_kernels: auto %zu device bytes, %d iterations; staged %zu bytes, %d iterations\n", bytes[0], its[0],
           bytes[1], its[1]);
    assert_true(bytes[1] < bytes[0]);
    assert_int_equal(solved[1], solved[0]);
    assert_int_equal(its[1], its[0]);
    assert_memory_equal(x[1], x[0], sizeof(double) * (size_t)n);
    free(x[0]); free(x[1]); free(b);
    ildl_csr_free(&A);
}

/* The CUDA start-up helper that ildl_setup runs beside the analysis: on any machine (GPU or
 * not, CUDA build or not) finishing it reports the count of a direct query, for a valid, an
 * out-of-range and a negative device_id; once it has started a device, a later warm-up of that
 * device needs no thread. */
static void test_cuda_warmup(void **state)
{
    (void)state;
    int ndev = ildl_cuda_device_count();
    int ids[] = {0, ndev, -1, 0};
    for (int k = 0; k < 4; k++) {
        ildl_cuda_warmup *w = ildl_cuda_warmup_start(ids[k]);
        assert_int_equal(ildl_cuda_warmup_finish(w), ndev);
    }
    assert_int_equal(ildl_cuda_warmup_finish(NULL), ndev);
    ildl_cuda_warmup *again = ildl_cuda_warmup_start(0);
    if (ndev > 0) assert_null(again);
    assert_int_equal(ildl_cuda_warmup_finish(again), ndev);
}

/* Outer pivoting by push-back on [[0, B], [B^T, H]] in its natural order, blocks of 8 rows, the
 * complete fill: the zero block's rows can only be perturbed where they stand; pushed behind H's
 * they meet the Schur complement -B H^-1 B^T (negative definite), so one round leaves no pivot
 * perturbed, the factor is A's exact LDL^T (inertia (k, m, 0)) and SQMR stops after one
 * iteration. A refactorization keeps the pushed order; a push-back that cannot move anything
 * (the perturbed blocks already last) stops after no round. */
static void pushback_options(ildl_options *o, int rounds)
{
    ildl_options_default(o);
    o->backend = ILDL_BACKEND_CPU;
    o->ordering = ILDL_ORDER_NATURAL;
    o->blocking = ILDL_BLOCKING_RB;
    o->scaling = ILDL_SCALING_NONE;
    o->max_block_size = 8;
    o->fill_level = ILDL_MAX_FILL_LEVEL;
    o->fill_factor = 0.0;
    o->drop_tol = 0.0;
    o->escalation = ILDL_ESCALATE_NONE;
    o->pushback_rounds = rounds;
    o->num_threads = 2;
}

static void test_pushback(void **state)
{
    (void)state;
    const int32_t m = 24, k = 40;
    ildl_csr A;
    ildl_test_kkt_zero_first(m, k, 11, &A);
    int32_t n = A.n;
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    double *v2 = malloc(sizeof(double) * A.rowptr[n]);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0 + (i % 5);
    for (int64_t p = 0; p < A.rowptr[n]; p++) v2[p] = 2.0 * A.val[p];
    ildl_options o;
    ildl_info info;
    ildl_handle *h = NULL;
    /* without push-back: every row of the zero block is perturbed */
    pushback_options(&o, 0);
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    assert_int_equal(info.num_perturbed, m);
    assert_int_equal(info.pushback_rounds, 0);
    assert_int_equal(info.pushback_blocks, 0);
    ildl_destroy(h);
    /* with it: one round moves the three zero blocks, the factor is exact */
    pushback_options(&o, 4);
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    assert_int_equal(info.pushback_rounds, 1);
    assert_int_equal(info.pushback_blocks, m / 8);
    assert_int_equal(info.num_perturbed, 0);
    assert_int_equal(info.inertia_pos, k);
    assert_int_equal(info.inertia_neg, m);
    assert_int_equal(info.inertia_zero, 0);
    assert_int_equal(info.num_blocks, n / 8);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    assert_true(info.converged);
    assert_int_equal(info.iterations, 1);
    assert_true(true_residual(&A, x, b) <= 1e-12);
    /* new values: the pushed order stays, nothing perturbed, no round needed */
    assert_int_equal(ildl_factor(h, v2), ILDL_SUCCESS);
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    assert_int_equal(info.num_perturbed, 0);
    assert_int_equal(info.pushback_rounds, 0);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    assert_int_equal(info.iterations, 1);
    ildl_destroy(h);
    /* the zero block last already (A reversed): perturbed blocks that cannot move, no round */
    int32_t *ti = malloc(sizeof(int32_t) * A.rowptr[n]), *tj = malloc(sizeof(int32_t) * A.rowptr[n]);
    double *tv = malloc(sizeof(double) * A.rowptr[n]);
    int64_t t = 0;
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
            if (A.col[p] <= i) { ti[t] = n - 1 - i; tj[t] = n - 1 - A.col[p]; tv[t] = A.val[p]; t++; }
    ildl_csr R;
    ildl_test_csr_from_triplets(n, t, ti, tj, tv, &R);
    pushback_options(&o, 4);
    assert_int_equal(ildl_setup(n, R.rowptr, R.col, R.val, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
    assert_int_equal(info.pushback_rounds, 0);
    assert_int_equal(info.num_perturbed, 0); /* behind H's rows already: nothing perturbed */
    ildl_destroy(h);
    free(ti); free(tj); free(tv);
    ildl_csr_free(&R);
    free(b); free(x); free(v2);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_and_defaults),
        cmocka_unit_test(test_bad_matrices),
        cmocka_unit_test(test_call_order_and_untouched),
        cmocka_unit_test(test_refactor_check_large),
        cmocka_unit_test(test_option_ranges),
        cmocka_unit_test(test_extreme_rhs),
        cmocka_unit_test(test_factor_null_values),
        cmocka_unit_test(test_overflowing_solutions),
        cmocka_unit_test(test_ladder),
        cmocka_unit_test(test_pushback),
        cmocka_unit_test(test_solve_and_refactor),
        cmocka_unit_test(test_exact_preconditioner),
        cmocka_unit_test(test_gmc_fill_ordering),
        cmocka_unit_test(test_auto_beside_amd),
        cmocka_unit_test(test_precisions),
        cmocka_unit_test(test_cuda_request_without_gpu),
        cmocka_unit_test(test_solve_kernels_staged),
        cmocka_unit_test(test_cuda_warmup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
