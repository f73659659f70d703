/* test_csr.c -- the CSR helpers: validation of caller input (every error), sorting copy with
 * its permutation, matvec and symmetric permutation against dense references, max_abs. */
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
#include "blockildl.h"
#include "core/csr.h"

/* Base 3x3 input with row 1 unsorted and an explicit zero on the diagonal:
 *   [ 2  1  0 ]
 *   [ 1  0  3 ]
 *   [ 0  3 -1 ] */
typedef struct {
    int32_t n;
    int64_t rowptr[4];
    int32_t col[8];
    double val[8];
} small_csr;

static const small_csr BASE = {3, {0, 2, 5, 7}, {1, 0, 2, 0, 1, 2, 1}, {1, 2, 3, 1, 0, -1, 3}};

static int validate_small(const small_csr *m, double tol, char *msg, size_t ml)
{
    return ildl_csr_validate(m->n, m->rowptr, m->col, m->val, tol, msg, ml);
}

static void test_validate_good(void **state)
{
    (void)state;
    char msg[256] = "";
    assert_int_equal(validate_small(&BASE, 0.0, msg, sizeof msg), ILDL_SUCCESS);
    ildl_csr A;
    ildl_test_random_sym(200, 5, 1.0, 0.3, 7, &A);
    assert_int_equal(ildl_csr_validate(A.n, A.rowptr, A.col, A.val, 0.0, msg, sizeof msg),
                     ILDL_SUCCESS);
    ildl_csr_free(&A);
}

static void test_validate_null_and_empty(void **state)
{
    (void)state;
    char msg[256];
    msg[0] = '\0';
    assert_int_equal(ildl_csr_validate(3, NULL, BASE.col, BASE.val, 0.0, msg, sizeof msg),
                     ILDL_ERR_NULL_ARGUMENT);
    assert_true(strlen(msg) > 0);
    msg[0] = '\0';
    assert_int_equal(ildl_csr_validate(3, BASE.rowptr, NULL, BASE.val, 0.0, msg, sizeof msg),
                     ILDL_ERR_NULL_ARGUMENT);
    assert_true(strlen(msg) > 0);
    msg[0] = '\0';
    assert_int_equal(ildl_csr_validate(3, BASE.rowptr, BASE.col, NULL, 0.0, msg, sizeof msg),
                     ILDL_ERR_NULL_ARGUMENT);
    assert_true(strlen(msg) > 0);
    msg[0] = '\0';
    assert_int_equal(ildl_csr_validate(0, BASE.rowptr, BASE.col, BASE.val, 0.0, msg, sizeof msg),
                     ILDL_ERR_EMPTY);
    assert_true(strlen(msg) > 0);
    /* msg may be NULL: the status alone still comes back */
    assert_int_equal(ildl_csr_validate(-2, BASE.rowptr, BASE.col, BASE.val, 0.0, NULL, 0),
                     ILDL_ERR_EMPTY);
}

typedef struct {
    const char *what;
    small_csr m;
    int status;
} bad_csr;

static void test_validate_errors(void **state)
{
    (void)state;
    const double nan = NAN, inf = INFINITY;
    const bad_csr cases[] = {
        {"rowptr[0] != 0", {3, {1, 2, 5, 7}, {1, 0, 2, 0, 1, 2, 1}, {1, 2, 3, 1, 0, -1, 3}},
         ILDL_ERR_INDEX_RANGE},
        {"decreasing rowptr", {3, {0, 5, 2, 7}, {1, 0, 2, 0, 1, 2, 1}, {1, 2, 3, 1, 0, -1, 3}},
         ILDL_ERR_INDEX_RANGE},
        {"column n", {3, {0, 2, 5, 7}, {1, 0, 2, 0, 1, 3, 1}, {1, 2, 3, 1, 0, -1, 3}},
         ILDL_ERR_INDEX_RANGE},
        {"column -1", {3, {0, 2, 5, 7}, {1, -1, 2, 0, 1, 2, 1}, {1, 2, 3, 1, 0, -1, 3}},
         ILDL_ERR_INDEX_RANGE},
        {"NaN", {3, {0, 2, 5, 7}, {1, 0, 2, 0, 1, 2, 1}, {1, 2, 3, 1, 0, nan, 3}},
         ILDL_ERR_NAN_INF},
        {"Inf", {3, {0, 2, 5, 7}, {1, 0, 2, 0, 1, 2, 1}, {1, 2, 3, 1, -inf, -1, 3}},
         ILDL_ERR_NAN_INF},
        {"duplicate", {3, {0, 3, 6, 8}, {1, 0, 0, 2, 0, 1, 2, 1}, {1, 2, 3, 3, 1, 0, -1, 3}},
         ILDL_ERR_DUPLICATE},
        {"pattern not symmetric", {3, {0, 2, 5, 7}, {1, 0, 2, 0, 1, 2, 0}, {1, 2, 3, 1, 0, -1, 3}},
         ILDL_ERR_NOT_SYMMETRIC},
        {"values not symmetric", {3, {0, 2, 5, 7}, {1, 0, 2, 0, 1, 2, 1}, {1, 2, 3, 1, 0, -1, 3.5}},
         ILDL_ERR_NOT_SYMMETRIC},
        {"empty row", {3, {0, 1, 1, 2}, {0, 2}, {1, 1}}, ILDL_ERR_SINGULAR},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char msg[256];
        msg[0] = '\0';
        int st = validate_small(&cases[k].m, 1e-12, msg, sizeof msg);
        if (st != cases[k].status || strlen(msg) == 0) {
            print_error("case '%s': status %d (want %d), message '%s'\n", cases[k].what, st,
                        cases[k].status, msg);
            fail();
        }
    }
}

static void test_validate_tolerance(void **state)
{
    (void)state;
    small_csr m = BASE;
    char msg[256];
    m.val[6] = 3.5; /* a(2,1) = 3.5 against a(1,2) = 3 */
    assert_int_equal(validate_small(&m, 0.2, msg, sizeof msg), ILDL_SUCCESS);   /* 0.5 <= 0.7 */
    assert_int_equal(validate_small(&m, 0.1, msg, sizeof msg), ILDL_ERR_NOT_SYMMETRIC);
    m.val[6] = 3.0 * (1.0 + 1e-14);
    assert_int_equal(validate_small(&m, 1e-12, msg, sizeof msg), ILDL_SUCCESS);
    assert_int_equal(validate_small(&m, 0.0, msg, sizeof msg), ILDL_ERR_NOT_SYMMETRIC);
}

/* Shuffle each row of A (deterministically) into caller-style arrays. */
static void shuffle_rows(const ildl_csr *A, uint64_t seed, int32_t *col, double *val)
{
    uint64_t s = seed;
    memcpy(col, A->col, sizeof(int32_t) * (size_t)A->rowptr[A->n]);
    memcpy(val, A->val, sizeof(double) * (size_t)A->rowptr[A->n]);
    for (int32_t i = 0; i < A->n; i++) {
        int64_t lo = A->rowptr[i], len = A->rowptr[i + 1] - lo;
        for (int64_t k = len - 1; k > 0; k--) {
            int64_t r = (int64_t)(ildl_test_rand(&s) * (double)(k + 1));
            if (r > k) r = k;
            int32_t tc = col[lo + k]; col[lo + k] = col[lo + r]; col[lo + r] = tc;
            double tv = val[lo + k]; val[lo + k] = val[lo + r]; val[lo + r] = tv;
        }
    }
}

/* Short rows (insertion sort), long rows (qsort) and rows that arrive sorted (kept as they are);
 * the threads sort rows independently, the result must not depend on that. */
static void check_from_user(int per_row)
{
    ildl_csr A, S;
    ildl_test_random_sym(150, per_row, 1.0, 0.1, 3, &A);
    int64_t nnz = A.rowptr[A.n];
    int32_t *col = malloc(sizeof(int32_t) * (size_t)nnz);
    double *val = malloc(sizeof(double) * (size_t)nnz);
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)nnz);
    assert_true(col && val && perm);
    shuffle_rows(&A, 11, col, val);
    assert_int_equal(ildl_csr_from_user(A.n, A.rowptr, col, val, &S, perm), ILDL_SUCCESS);
    /* sorting recovers the original (sorted, duplicate-free) matrix exactly */
    assert_int_equal(S.n, A.n);
    assert_memory_equal(S.rowptr, A.rowptr, sizeof(int64_t) * ((size_t)A.n + 1));
    assert_memory_equal(S.col, A.col, sizeof(int32_t) * (size_t)nnz);
    assert_memory_equal(S.val, A.val, sizeof(double) * (size_t)nnz);
    /* perm_out names the caller's slot of every sorted entry, within the same row */
    char *seen = calloc((size_t)nnz, 1);
    assert_non_null(seen);
    for (int32_t i = 0; i < S.n; i++)
        for (int64_t q = S.rowptr[i]; q < S.rowptr[i + 1]; q++) {
            int64_t p = perm[q];
            assert_true(p >= A.rowptr[i] && p < A.rowptr[i + 1]);
            assert_int_equal(col[p], S.col[q]);
            assert_true(val[p] == S.val[q]);
            assert_false(seen[p]);
            seen[p] = 1;
        }
    ildl_csr_free(&S);
    /* NULL values give a pattern-only copy of ones */
    assert_int_equal(ildl_csr_from_user(A.n, A.rowptr, col, NULL, &S, NULL), ILDL_SUCCESS);
    for (int64_t q = 0; q < nnz; q++) assert_true(S.val[q] == 1.0);
    ildl_csr_free(&S);
    /* already sorted input: the identity, entry for entry */
    assert_int_equal(ildl_csr_from_user(A.n, A.rowptr, A.col, A.val, &S, perm), ILDL_SUCCESS);
    assert_memory_equal(S.col, A.col, sizeof(int32_t) * (size_t)nnz);
    assert_memory_equal(S.val, A.val, sizeof(double) * (size_t)nnz);
    for (int64_t q = 0; q < nnz; q++) assert_int_equal(perm[q], q);
    ildl_csr_free(&S);
    free(seen);
    free(col);
    free(val);
    free(perm);
    ildl_csr_free(&A);
}

static void test_from_user(void **state)
{
    (void)state;
    check_from_user(8);  /* rows of about 8 entries */
    check_from_user(60); /* rows longer than 32 */
}

static void test_matvec(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(120, 7, 3.0, 0.2, 5, &A);
    int32_t n = A.n;
    double *D = ildl_test_dense(&A);
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    assert_true(x && y);
    uint64_t s = 1;
    for (int32_t i = 0; i < n; i++) x[i] = 2.0 * ildl_test_rand(&s) - 1.0;
    ildl_csr_matvec(&A, x, y);
    for (int32_t i = 0; i < n; i++) {
        double r = 0.0, mag = 0.0;
        for (int32_t j = 0; j < n; j++) {
            r += D[(size_t)i * n + j] * x[j];
            mag += fabs(D[(size_t)i * n + j] * x[j]);
        }
        assert_true(fabs(y[i] - r) <= 1e-14 * mag + 1e-300);
    }
    free(D);
    free(x);
    free(y);
    ildl_csr_free(&A);
}

/* The order of A x's sums (csr.h): a row of at most ILDL_SPMV_LONG_ROW entries in order, a
 * longer one in ILDL_SPMV_LANES strided sums combined by halving, bit for bit (the CUDA SpMV's
 * order); matvec_multi gives each column the same bits; all close to the dense product. An
 * arrow matrix: rows of 128 (the limit, in order), 129, 1000 and 2998 entries beside short ones. */
static void test_matvec_long_rows(void **state)
{
    (void)state;
    const int32_t n = 3001;
    const int32_t len[4] = {ILDL_SPMV_LONG_ROW, ILDL_SPMV_LONG_ROW + 1, 1000, n}; /* rows 0..3 */
    int64_t cap = 2 * (int64_t)n;
    for (int r = 0; r < 4; r++) cap += len[r];
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap), *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap);
    assert_true(ti && tj && tv);
    int64_t nt = 0;
    uint64_t seed = 11;
    for (int32_t i = 4; i < n; i++) { /* a tridiagonal part */
        ti[nt] = i, tj[nt] = i, tv[nt++] = 3.0 + ildl_test_rand(&seed);
        if (i + 1 < n) ti[nt] = i, tj[nt] = i + 1, tv[nt++] = ildl_test_rand(&seed) - 0.5;
    }
    for (int r = 0; r < 4; r++) /* row r: the columns n - len + 1 .. n - 1 beyond 3, and itself */
        for (int32_t j = n - len[r] + 1; j < n; j++)
            if (j > 3) ti[nt] = r, tj[nt] = j, tv[nt++] = 2.0 * ildl_test_rand(&seed) - 1.0;
    for (int r = 0; r < 4; r++) ti[nt] = r, tj[nt] = r, tv[nt++] = 1.0;
    ildl_csr A;
    ildl_test_csr_from_triplets(n, nt, ti, tj, tv, &A);
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    double *x2 = malloc(sizeof(double) * (size_t)n), *y1 = malloc(sizeof(double) * (size_t)n);
    double *y2 = malloc(sizeof(double) * (size_t)n);
    assert_true(x && y && x2 && y1 && y2);
    for (int32_t i = 0; i < n; i++) x[i] = 2.0 * ildl_test_rand(&seed) - 1.0, x2[i] = ldexp(x[i], 3) + 0.25;
    ildl_csr_matvec(&A, x, y);
    int longs = 0, at_limit = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t p0 = A.rowptr[i], p1 = A.rowptr[i + 1];
        double ref, mag = 0.0;
        long double exact = 0.0L;
        for (int64_t p = p0; p < p1; p++) {
            exact += (long double)A.val[p] * x[A.col[p]];
            mag += fabs(A.val[p] * x[A.col[p]]);
        }
        if (p1 - p0 <= ILDL_SPMV_LONG_ROW) {
            ref = 0.0;
            for (int64_t p = p0; p < p1; p++) ref += A.val[p] * x[A.col[p]];
            at_limit += p1 - p0 == ILDL_SPMV_LONG_ROW;
        } else {
            double s[ILDL_SPMV_LANES];
            for (int l = 0; l < ILDL_SPMV_LANES; l++) {
                s[l] = 0.0;
                for (int64_t p = p0 + l; p < p1; p += ILDL_SPMV_LANES) s[l] += A.val[p] * x[A.col[p]];
            }
            for (int h = ILDL_SPMV_LANES / 2; h >= 1; h /= 2)
                for (int l = 0; l < h; l++) s[l] += s[l + h];
            ref = s[0];
            longs++;
        }
        assert_memory_equal(&y[i], &ref, sizeof(double));
        assert_true(fabsl((long double)y[i] - exact) <= 1e-14L * mag + 1e-300L);
    }
    assert_int_equal(longs, 3); /* rows 1, 2 and 3 (129, 1000 and 2998 entries) */
    assert_true(at_limit >= 1);
    const double *xs[2] = {x, x2};
    double *ys[2] = {y1, y2};
    ildl_csr_matvec_multi(&A, 2, xs, ys);
    assert_memory_equal(y1, y, sizeof(double) * (size_t)n);
    ildl_csr_matvec(&A, x2, y);
    assert_memory_equal(y2, y, sizeof(double) * (size_t)n);
    free(ti);
    free(tj);
    free(tv);
    free(x);
    free(y);
    free(x2);
    free(y1);
    free(y2);
    ildl_csr_free(&A);
}

static void test_permute(void **state)
{
    (void)state;
    ildl_csr A, B;
    ildl_test_random_sym(90, 6, 2.0, 0.1, 21, &A);
    int32_t n = A.n;
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(perm);
    for (int32_t i = 0; i < n; i++) perm[i] = i;
    uint64_t s = 77;
    for (int32_t k = n - 1; k > 0; k--) {
        int32_t r = (int32_t)(ildl_test_rand(&s) * (double)(k + 1));
        if (r > k) r = k;
        int32_t t = perm[k]; perm[k] = perm[r]; perm[r] = t;
    }
    assert_int_equal(ildl_csr_permute(&A, perm, &B), ILDL_SUCCESS);
    assert_int_equal(B.rowptr[n], A.rowptr[n]);
    double *DA = ildl_test_dense(&A), *DB = ildl_test_dense(&B);
    /* B = P A P^T with perm[new] = old: B(k,l) = A(perm[k], perm[l]) */
    for (int32_t k = 0; k < n; k++)
        for (int32_t l = 0; l < n; l++)
            assert_true(DB[(size_t)k * n + l] == DA[(size_t)perm[k] * n + perm[l]]);
    /* and the pattern (explicit zeros included) moves with it, sorted */
    for (int32_t k = 0; k < n; k++) {
        assert_int_equal(B.rowptr[k + 1] - B.rowptr[k], A.rowptr[perm[k] + 1] - A.rowptr[perm[k]]);
        for (int64_t p = B.rowptr[k] + 1; p < B.rowptr[k + 1]; p++) assert_true(B.col[p - 1] < B.col[p]);
    }
    char msg[256];
    assert_int_equal(ildl_csr_validate(n, B.rowptr, B.col, B.val, 0.0, msg, sizeof msg), ILDL_SUCCESS);
    free(DA);
    free(DB);
    free(perm);
    ildl_csr_free(&A);
    ildl_csr_free(&B);
}

/* The transpose map found by the symmetry check: slot tmap[q] holds the mirror entry of slot
 * q, for every entry; and a nonsymmetric pattern is still refused. */
static void test_transpose_map(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(120, 7, 2.0, 0.1, 5, &A);
    int64_t nnz = A.rowptr[A.n];
    int64_t *tmap = malloc(sizeof(int64_t) * (size_t)nnz);
    assert_non_null(tmap);
    char msg[256];
    assert_int_equal(ildl_csr_validate_sorted_tmap(&A, 0.0, tmap, msg, sizeof msg), ILDL_SUCCESS);
    for (int32_t i = 0; i < A.n; i++)
        for (int64_t q = A.rowptr[i]; q < A.rowptr[i + 1]; q++) {
            int64_t t = tmap[q];
            assert_true(t >= A.rowptr[A.col[q]] && t < A.rowptr[A.col[q] + 1]);
            assert_int_equal(A.col[t], i);
            assert_true(A.val[t] == A.val[q]);
        }
    int64_t off = 0; /* the first off-diagonal entry: change it, and it no longer matches its mirror */
    while (A.col[off] == 0) off++;
    assert_true(off < A.rowptr[1]);
    A.val[off] += 1.0;
    assert_int_equal(ildl_csr_validate_sorted_tmap(&A, 0.0, tmap, msg, sizeof msg), ILDL_ERR_NOT_SYMMETRIC);
    free(tmap);
    ildl_csr_free(&A);
}

/* permute_src: the entries of B name their origin (through src when given), B = P A P^T. */
static void test_permute_src(void **state)
{
    (void)state;
    ildl_csr A, B;
    ildl_test_random_sym(80, 5, 2.0, 0.1, 9, &A);
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)n);
    int64_t *src = malloc(sizeof(int64_t) * (size_t)nnz), *out = malloc(sizeof(int64_t) * (size_t)nnz);
    assert_true(perm && src && out);
    for (int32_t k = 0; k < n; k++) perm[k] = n - 1 - k;
    for (int64_t p = 0; p < nnz; p++) src[p] = 1000 + 3 * p;
    for (int pass = 0; pass < 2; pass++) {
        const int64_t *s = pass ? src : NULL;
        assert_int_equal(ildl_csr_permute_src(&A, perm, s, &B, out), ILDL_SUCCESS);
        for (int32_t k = 0; k < n; k++)
            for (int64_t q = B.rowptr[k]; q < B.rowptr[k + 1]; q++) {
                int64_t p = pass ? (out[q] - 1000) / 3 : out[q];
                assert_true(p >= A.rowptr[perm[k]] && p < A.rowptr[perm[k] + 1]); /* from row perm[k] */
                assert_int_equal(perm[B.col[q]], A.col[p]);                    /* its column moved */
                assert_true(B.val[q] == A.val[p]);
                if (q > B.rowptr[k]) assert_true(B.col[q - 1] < B.col[q]);
            }
        ildl_csr_free(&B);
    }
    free(perm);
    free(src);
    free(out);
    ildl_csr_free(&A);
}

static void test_max_abs_copy_free(void **state)
{
    (void)state;
    ildl_csr A, C;
    ildl_test_laplace2d(4, 10.0, &A); /* diagonal -6, off-diagonal -1 */
    assert_true(ildl_csr_max_abs(&A) == 6.0);
    A.val[A.rowptr[5] + 1] = 9.5; /* one entry larger in magnitude (symmetry does not matter) */
    assert_true(ildl_csr_max_abs(&A) == 9.5);
    assert_int_equal(ildl_csr_copy(&A, &C), ILDL_SUCCESS);
    assert_int_equal(C.n, A.n);
    assert_memory_equal(C.rowptr, A.rowptr, sizeof(int64_t) * ((size_t)A.n + 1));
    assert_memory_equal(C.col, A.col, sizeof(int32_t) * (size_t)A.rowptr[A.n]);
    assert_memory_equal(C.val, A.val, sizeof(double) * (size_t)A.rowptr[A.n]);
    assert_true(C.val != A.val); /* deep copy */
    for (int64_t p = 0; p < C.rowptr[C.n]; p++) C.val[p] = 0.0;
    assert_true(ildl_csr_max_abs(&C) == 0.0);
    assert_true(ildl_csr_max_abs(&A) == 9.5);
    ildl_csr_free(&C);
    ildl_csr_free(&C); /* freeing twice is harmless: free zeroes the struct */
    assert_null(C.rowptr);
    ildl_csr_free(&A);
    ildl_csr_free(NULL);
    /* an allocation has zeroed row pointers */
    assert_int_equal(ildl_csr_alloc(5, 0, &A), ILDL_SUCCESS);
    for (int i = 0; i <= 5; i++) assert_int_equal(A.rowptr[i], 0);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_good),
        cmocka_unit_test(test_validate_null_and_empty),
        cmocka_unit_test(test_validate_errors),
        cmocka_unit_test(test_validate_tolerance),
        cmocka_unit_test(test_from_user),
        cmocka_unit_test(test_matvec),
        cmocka_unit_test(test_matvec_long_rows),
        cmocka_unit_test(test_permute),
        cmocka_unit_test(test_transpose_map),
        cmocka_unit_test(test_permute_src),
        cmocka_unit_test(test_max_abs_copy_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
