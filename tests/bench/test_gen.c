/* test_gen.c -- the benchmark matrix generators (bench/gen): structure (sorted, symmetric in
 * pattern and values bit for bit), sizes by formula, inertia against a dense Bunch-Kaufman
 * factorisation written here (Sylvester), seed reproducibility, the MPS reader on handwritten
 * files (fixed, free, blanks in names, malformed) and on the shared LP files. */
#define _DEFAULT_SOURCE /* mkstemps */
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
#include <unistd.h>
#include <zlib.h>
#include "blockildl.h"
#include "core/csr.h"
#include "gen.h"

#define PI 3.14159265358979323846

/* |a - b| <= tol, with the values in the failure message (this cmocka has no double assert) */
#define assert_near(a, b, tol)                                                                \
    do {                                                                                      \
        double a_ = (a), b_ = (b);                                                            \
        if (!(fabs(a_ - b_) <= (tol))) fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);    \
    } while (0)

/* ------------------------------------------------------------------ helpers */

/* Write text (gzip-compressed if gz) to a new temp file; returns its malloc'ed path. */
static char *write_tmp(const char *text, size_t len, int gz)
{
    const char *suffix = gz ? ".mps.gz" : ".mps";
    char *p = malloc(64);
    assert_non_null(p);
    snprintf(p, 64, "/tmp/ildl_gen_XXXXXX%s", suffix);
    int fd = mkstemps(p, (int)strlen(suffix));
    assert_true(fd >= 0);
    close(fd);
    if (gz) {
        gzFile f = gzopen(p, "wb");
        assert_non_null(f);
        if (len) assert_int_equal(gzwrite(f, text, (unsigned)len), (int)len);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(p, "wb");
        assert_non_null(f);
        if (len) assert_int_equal(fwrite(text, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
    }
    return p;
}

/* Read an MPS given as text. */
static int read_mps_text(const char *text, size_t len, int gz, int dialect, ildl_gen_lp *lp,
                         char *msg, size_t msglen)
{
    char *p = write_tmp(text, len, gz);
    int st = ildl_gen_mps_read(p, dialect, lp, msg, msglen);
    unlink(p);
    free(p);
    return st;
}

/* a(i,j) of an m x n CSR matrix, 0 if absent. */
static double csr_get(const int64_t *rowptr, const int32_t *col, const double *val, int32_t i,
                      int32_t j)
{
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++)
        if (col[p] == j) return val[p];
    return 0.0;
}

static double kget(const ildl_csr *K, int32_t i, int32_t j)
{
    return csr_get(K->rowptr, K->col, K->val, i, j);
}

/* Structure of a generated matrix: rowptr from 0 and monotone, columns strictly increasing
 * and in range, and every (i,j,v) mirrored by (j,i,v) with the identical bits. */
static void check_structure(const ildl_csr *K)
{
    assert_true(K->n > 0);
    assert_int_equal(K->rowptr[0], 0);
    for (int32_t i = 0; i < K->n; i++) {
        assert_true(K->rowptr[i + 1] > K->rowptr[i]); /* no empty row */
        for (int64_t p = K->rowptr[i]; p < K->rowptr[i + 1]; p++) {
            int32_t j = K->col[p];
            assert_true(j >= 0 && j < K->n);
            if (p > K->rowptr[i]) assert_true(K->col[p - 1] < j);
            assert_true(isfinite(K->val[p]));
            /* binary search for (j, i) */
            int64_t lo = K->rowptr[j], hi = K->rowptr[j + 1];
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (K->col[mid] < i) lo = mid + 1;
                else hi = mid;
            }
            assert_true(lo < K->rowptr[j + 1] && K->col[lo] == i);
            assert_memory_equal(&K->val[lo], &K->val[p], sizeof(double));
        }
    }
    char msg[256];
    assert_int_equal(ildl_csr_validate(K->n, K->rowptr, K->col, K->val, 0.0, msg, sizeof msg),
                     ILDL_SUCCESS);
}

/* Inertia (+, -, 0) of a dense symmetric matrix by Bunch-Kaufman LDL^T (Sylvester's law):
 * a pivot column below tol counts as a zero eigenvalue. a is destroyed. */
static void bk_inertia(double *a, int n, double tol, int64_t in[3])
{
#define A(i, j) a[(size_t)(i) * n + (j)]
    const double alpha = (1.0 + sqrt(17.0)) / 8.0;
    in[0] = in[1] = in[2] = 0;
    int k = 0;
    while (k < n) {
        double akk = fabs(A(k, k)), colmax = 0.0;
        int r = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A(i, k)) > colmax) colmax = fabs(A(i, k)), r = i;
        if (fmax(akk, colmax) <= tol) {
            in[2]++;
            k++;
            continue;
        }
        int two = 0, p = k;
        if (akk < alpha * colmax) {
            double rowmax = 0.0;
            for (int j = k; j < n; j++)
                if (j != r) rowmax = fmax(rowmax, fabs(A(r, j)));
            if (akk * rowmax >= alpha * colmax * colmax) p = k;
            else if (fabs(A(r, r)) >= alpha * rowmax) p = r;
            else two = 1;
        }
        int dst = two ? k + 1 : k, src = two ? r : p;
        if (src != dst) { /* symmetric swap of rows and columns dst, src */
            for (int j = 0; j < n; j++) {
                double t = A(dst, j);
                A(dst, j) = A(src, j);
                A(src, j) = t;
            }
            for (int i = 0; i < n; i++) {
                double t = A(i, dst);
                A(i, dst) = A(i, src);
                A(i, src) = t;
            }
        }
        if (!two) {
            double d = A(k, k);
            in[d > 0 ? 0 : 1]++;
            for (int i = k + 1; i < n; i++) {
                double l = A(i, k) / d;
                if (l != 0.0)
                    for (int j = k + 1; j < n; j++) A(i, j) -= l * A(k, j);
            }
            k++;
        } else {
            double d11 = A(k, k), d12 = A(k + 1, k), d22 = A(k + 1, k + 1);
            double det = d11 * d22 - d12 * d12;
            if (det < 0) in[0]++, in[1]++;
            else in[d11 > 0 ? 0 : 1] += 2;
            for (int i = k + 2; i < n; i++) {
                double w1 = A(i, k), w2 = A(i, k + 1);
                double l1 = (w1 * d22 - w2 * d12) / det, l2 = (w2 * d11 - w1 * d12) / det;
                if (l1 != 0.0 || l2 != 0.0)
                    for (int j = k + 2; j < n; j++) A(i, j) -= l1 * A(k, j) + l2 * A(k + 1, j);
            }
            k += 2;
        }
    }
#undef A
}

/* Inertia of a (small) CSR matrix, zero pivots below 1e-10 max|K|. */
static void dense_inertia(const ildl_csr *K, int64_t in[3])
{
    double *a = ildl_test_dense(K);
    double amax = 0.0;
    for (size_t k = 0; k < (size_t)K->n * K->n; k++) amax = fmax(amax, fabs(a[k]));
    bk_inertia(a, K->n, 1e-10 * amax, in);
    free(a);
}

static void assert_inertia(const int64_t in[3], int64_t p, int64_t m, int64_t z)
{
    if (in[0] != p || in[1] != m || in[2] != z)
        fail_msg("inertia (%lld, %lld, %lld), expected (%lld, %lld, %lld)", (long long)in[0],
                 (long long)in[1], (long long)in[2], (long long)p, (long long)m, (long long)z);
}

/* Rank of a dense m x n matrix (row-major, destroyed) by complete pivoting. */
static int dense_rank(double *a, int m, int n)
{
    double amax = 0.0;
    for (int k = 0; k < m * n; k++) amax = fmax(amax, fabs(a[k]));
    int rank = 0;
    for (int k = 0; k < m && k < n; k++) {
        int pi = k, pj = k;
        double best = 0.0;
        for (int i = k; i < m; i++)
            for (int j = k; j < n; j++)
                if (fabs(a[i * n + j]) > best) best = fabs(a[i * n + j]), pi = i, pj = j;
        if (best <= 1e-10 * amax) break;
        for (int j = 0; j < n; j++) {
            double t = a[k * n + j];
            a[k * n + j] = a[pi * n + j];
            a[pi * n + j] = t;
        }
        for (int i = 0; i < m; i++) {
            double t = a[i * n + k];
            a[i * n + k] = a[i * n + pj];
            a[i * n + pj] = t;
        }
        for (int i = k + 1; i < m; i++) {
            double l = a[i * n + k] / a[k * n + k];
            for (int j = k; j < n; j++) a[i * n + j] -= l * a[k * n + j];
        }
        rank++;
    }
    return rank;
}

/* An LP with the given dense m x n matrix (row-major), bounds defaulted, arrays malloc'ed so
 * that ildl_gen_lp_free releases them. */
static void make_lp(int32_t m, int32_t n, const double *dense, ildl_gen_lp *lp)
{
    memset(lp, 0, sizeof *lp);
    lp->m = m;
    lp->n = n;
    lp->rowptr = calloc((size_t)m + 1, sizeof(int64_t));
    lp->col = malloc(sizeof(int32_t) * (size_t)(m * n + 1));
    lp->val = malloc(sizeof(double) * (size_t)(m * n + 1));
    lp->rowtype = malloc((size_t)m);
    lp->rowlo = malloc(sizeof(double) * (size_t)m);
    lp->rowhi = malloc(sizeof(double) * (size_t)m);
    lp->rowid = malloc(sizeof(int32_t) * (size_t)m);
    lp->obj = calloc((size_t)n, sizeof(double));
    lp->collo = calloc((size_t)n, sizeof(double));
    lp->colhi = malloc(sizeof(double) * (size_t)n);
    lp->is_int = calloc((size_t)n, 1);
    assert_true(lp->rowptr && lp->col && lp->val && lp->rowtype && lp->rowlo && lp->rowhi &&
                lp->rowid && lp->obj && lp->collo && lp->colhi && lp->is_int);
    int64_t q = 0;
    for (int32_t i = 0; i < m; i++) {
        for (int32_t j = 0; j < n; j++)
            if (dense[i * n + j] != 0.0) lp->col[q] = j, lp->val[q++] = dense[i * n + j];
        lp->rowptr[i + 1] = q;
        lp->rowtype[i] = 'E';
        lp->rowlo[i] = lp->rowhi[i] = 1.0;
        lp->rowid[i] = i;
    }
    for (int32_t j = 0; j < n; j++) lp->colhi[j] = INFINITY;
}

/* ------------------------------------------------------------------ a handwritten LP */

/* Fixed-format line: fields at columns 2-3, 5-12, 15-22, 25-36, 40-47, 50-61. */
static void fx(char *buf, size_t cap, const char *f1, const char *f2, const char *f3,
               const char *f4, const char *f5, const char *f6)
{
    size_t len = strlen(buf);
    snprintf(buf + len, cap - len, " %-2s %-8s  %-8s  %12s   %-8s  %12s\n", f1, f2, f3, f4, f5,
             f6);
}

/* The test LP in fixed format. space != 0 renames row MYEQN to "MY EQN" and column X3 to
 * "X 3" (legal only in fixed MPS). */
static char *tiny_fixed(int space)
{
    size_t cap = 8192;
    char *b = calloc(cap, 1);
    const char *eq = space ? "MY EQN" : "MYEQN", *x3 = space ? "X 3" : "X3";
    assert_non_null(b);
    strcat(b, "* a comment line\nNAME          TINY LP\nROWS\n");
    fx(b, cap, "N", "COST", "", "", "", "");
    fx(b, cap, "L", "LIM1", "", "", "", "");
    fx(b, cap, "G", "LIM2", "", "", "", "");
    fx(b, cap, "E", eq, "", "", "", "");
    fx(b, cap, "E", "DUPEQ", "", "", "", "");
    fx(b, cap, "L", "EMPTY", "", "", "", "");
    fx(b, cap, "N", "FREEROW", "", "", "", "");
    fx(b, cap, "E", "RNG1", "", "", "", "");
    fx(b, cap, "G", "RNG2", "", "", "", "");
    strcat(b, "COLUMNS\n");
    fx(b, cap, "", "X1", "COST", "1.0", "LIM1", "1.0");
    fx(b, cap, "", "X1", "LIM2", "1.", "", "");
    fx(b, cap, "", "MARKER", "'MARKER'", "", "'INTORG'", "");
    fx(b, cap, "", "X2", "COST", "2.0", "LIM1", "1");
    fx(b, cap, "", "X2", eq, "-1.0", "DUPEQ", "-2.0");
    fx(b, cap, "", "X2", "FREEROW", "5", "", "");
    fx(b, cap, "", x3, eq, "1.0", "DUPEQ", "2.0");
    fx(b, cap, "", x3, "RNG1", "3", "", "");
    fx(b, cap, "", "MARKER", "'MARKER'", "", "'INTEND'", "");
    fx(b, cap, "", "X4", "LIM2", "-1", "RNG2", "1");
    fx(b, cap, "", "X4", "RNG1", "0.0", "", "");
    fx(b, cap, "", "X5", "RNG2", "2", "LIM1", "4e0");
    fx(b, cap, "", "X6", "LIM2", "1.5", "", "");
    strcat(b, "RHS\n");
    fx(b, cap, "", "RHS", "COST", "-10", "", "");
    fx(b, cap, "", "RHS", "LIM1", "4", "LIM2", "1");
    fx(b, cap, "", "RHS", eq, "7", "DUPEQ", "14");
    fx(b, cap, "", "RHS", "RNG1", "2", "RNG2", "3");
    fx(b, cap, "", "OTHER", "RNG1", "99", "", ""); /* a second RHS set: ignored */
    strcat(b, "RANGES\n");
    fx(b, cap, "", "RNG", "RNG1", "-1.5", "RNG2", "2.5");
    fx(b, cap, "", "RNG", "LIM1", "3", "", "");
    strcat(b, "BOUNDS\n");
    fx(b, cap, "UP", "BND", "X1", "4", "", "");
    fx(b, cap, "MI", "BND", "X2", "", "", "");
    fx(b, cap, "UP", "BND", x3, "-2", "", "");
    fx(b, cap, "BV", "BND", "X4", "", "", "");
    fx(b, cap, "FX", "BND", "X6", "3", "", "");
    strcat(b, "ENDATA\n");
    return b;
}

/* The same LP in free format: no fixed columns, tabs, RHS/RANGES without set names, a data
 * line starting in column 1, bounds with and without set names. */
static const char *tiny_free =
    "NAME TINY\n"
    "ROWS\n"
    " N COST\n L LIM1\n G LIM2\n E MYEQN\n E DUPEQ\n L EMPTY\n N FREEROW\n E RNG1\n G RNG2\n"
    "COLUMNS\n"
    " X1 COST 1.0 LIM1 1.0\n"
    "\tX1\tLIM2\t1.\n"
    " M1 'MARKER' 'INTORG'\n"
    " X2 COST 2.0 LIM1 1\n"
    " X2 MYEQN -1.0 DUPEQ -2.0\n"
    " X2 FREEROW 5\n"
    " X3 MYEQN 1.0 DUPEQ 2.0\n"
    " X3 RNG1 3\n"
    " M2 'MARKER' 'INTEND'\n"
    " X4 LIM2 -1 RNG2 1\n"
    " X4 RNG1 0.0\n"
    "X5 RNG2 2 LIM1 4e0\n"
    "   X6    LIM2    1.5   \r\n"
    "RHS\n"
    " COST -10\n LIM1 4 LIM2 1\n MYEQN 7 DUPEQ 14\n RNG1 2 RNG2 3\n"
    "RANGES\n"
    " RNG1 -1.5 RNG2 2.5\n LIM1 3\n"
    "BOUNDS\n"
    " UP X1 4\n MI BND X2\n UP BND X3 -2\n BV X4\n FX BND X6 3\n"
    "ENDATA\n";

/* Every field of the parsed test LP, against the file's meaning. */
static void check_tiny(const ildl_gen_lp *lp)
{
    static const double A[7][6] = {
        {1, 1, 0, 0, 4, 0},    /* LIM1 */
        {1, 0, 0, -1, 0, 1.5}, /* LIM2 */
        {0, -1, 1, 0, 0, 0},   /* MYEQN */
        {0, -2, 2, 0, 0, 0},   /* DUPEQ */
        {0, 0, 0, 0, 0, 0},    /* EMPTY */
        {0, 0, 3, 0, 0, 0},    /* RNG1 (its explicit 0.0 for X4 dropped) */
        {0, 0, 0, 1, 2, 0},    /* RNG2 */
    };
    static const char type[] = "LGEELEG";
    const double inf = INFINITY;
    const double lo[7] = {1, 1, 7, 14, -inf, 0.5, 3}, hi[7] = {4, inf, 7, 14, 0, 2, 5.5};
    const double clo[6] = {0, -inf, -inf, 0, 0, 3}, chi[6] = {4, inf, -2, 1, inf, 3};
    const double obj[6] = {1, 2, 0, 0, 0, 0};
    const unsigned char isint[6] = {0, 1, 1, 1, 0, 0};
    assert_int_equal(lp->m, 7);
    assert_int_equal(lp->n, 6);
    assert_int_equal(lp->rowptr[7], 13);
    for (int i = 0; i < 7; i++) {
        for (int64_t p = lp->rowptr[i] + 1; p < lp->rowptr[i + 1]; p++)
            assert_true(lp->col[p - 1] < lp->col[p]);
        for (int j = 0; j < 6; j++)
            assert_true(csr_get(lp->rowptr, lp->col, lp->val, i, j) == A[i][j]);
        assert_int_equal(lp->rowtype[i], type[i]);
        assert_true(lp->rowlo[i] == lo[i]);
        assert_true(lp->rowhi[i] == hi[i]);
        assert_int_equal(lp->rowid[i], i);
    }
    for (int j = 0; j < 6; j++) {
        assert_true(lp->collo[j] == clo[j]);
        assert_true(lp->colhi[j] == chi[j]);
        assert_true(lp->obj[j] == obj[j]);
        assert_int_equal(lp->is_int[j], isint[j]);
    }
}

static void test_mps_tiny_fixed(void **state)
{
    (void)state;
    char msg[256];
    ildl_gen_lp lp;
    char *text = tiny_fixed(0);
    for (int gz = 0; gz <= 1; gz++)
        for (int dialect = ILDL_GEN_MPS_AUTO; dialect <= ILDL_GEN_MPS_FIXED; dialect++) {
            int st = read_mps_text(text, strlen(text), gz, dialect, &lp, msg, sizeof msg);
            if (st) fail_msg("dialect %d gz %d: %s", dialect, gz, msg);
            assert_string_equal(lp.name, "TINY LP");
            check_tiny(&lp);
            ildl_gen_lp_free(&lp);
        }
    free(text);
    /* blanks inside names need the fixed columns */
    text = tiny_fixed(1);
    assert_int_equal(read_mps_text(text, strlen(text), 0, ILDL_GEN_MPS_FIXED, &lp, msg, sizeof msg),
                     ILDL_SUCCESS);
    check_tiny(&lp);
    ildl_gen_lp_free(&lp);
    /* and the free reader refuses them instead of misreading */
    assert_int_not_equal(read_mps_text(text, strlen(text), 0, ILDL_GEN_MPS_FREE, &lp, msg, sizeof msg),
                         ILDL_SUCCESS);
    assert_true(strlen(msg) > 0);
    free(text);
}

static void test_mps_tiny_free(void **state)
{
    (void)state;
    char msg[256];
    ildl_gen_lp lp;
    for (int gz = 0; gz <= 1; gz++)
        for (int dialect = ILDL_GEN_MPS_AUTO; dialect <= ILDL_GEN_MPS_FREE; dialect++) {
            int st = read_mps_text(tiny_free, strlen(tiny_free), gz, dialect, &lp, msg, sizeof msg);
            if (st) fail_msg("dialect %d gz %d: %s", dialect, gz, msg);
            assert_string_equal(lp.name, "TINY");
            check_tiny(&lp);
            ildl_gen_lp_free(&lp);
        }
}

/* Columns listed again later (non-contiguously) and a repeated entry: a long row arriving in
 * reverse column order is sorted, the repeated entry summed. */
static void test_mps_noncontiguous(void **state)
{
    (void)state;
    enum { C = 40 };
    size_t cap = 16384, len;
    char *t = calloc(cap, 1);
    assert_non_null(t);
    len = (size_t)snprintf(t, cap, "NAME NC\nROWS\n N OBJ\n E S\n L R\nCOLUMNS\n");
    for (int j = 0; j < C; j++) len += (size_t)snprintf(t + len, cap - len, " C%d S 1\n", j);
    for (int j = C - 1; j >= 0; j--)
        len += (size_t)snprintf(t + len, cap - len, " C%d R %d\n", j, j + 1);
    len += (size_t)snprintf(t + len, cap - len, " C5 R 0.5\nRHS\n R 1\nENDATA\n");
    ildl_gen_lp lp;
    char msg[256];
    int st = read_mps_text(t, len, 0, ILDL_GEN_MPS_AUTO, &lp, msg, sizeof msg);
    if (st) fail_msg("%s", msg);
    assert_int_equal(lp.m, 2);
    assert_int_equal(lp.n, C);
    assert_int_equal(lp.rowptr[2], 2 * C);
    for (int j = 0; j < C; j++) {
        assert_int_equal(lp.col[C + j], j);
        assert_true(lp.val[C + j] == j + 1 + (j == 5 ? 0.5 : 0.0));
    }
    ildl_gen_lp_free(&lp);
    free(t);
}

/* Replace the first occurrence of from by to in text (malloc'ed result). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t a = (size_t)(at - text), lf = strlen(from), lt = strlen(to);
    char *r = malloc(strlen(text) - lf + lt + 1);
    assert_non_null(r);
    memcpy(r, text, a);
    memcpy(r + a, to, lt);
    strcpy(r + a + lt, at + lf);
    return r;
}

static void test_mps_malformed(void **state)
{
    (void)state;
    static const char *const edits[][3] = {
        /* from, to, what the message should mention */
        {"ROWS\n N COST\n L LIM1\n G LIM2\n E MYEQN\n E DUPEQ\n L EMPTY\n N FREEROW\n E RNG1\n"
         " G RNG2\n", "", "before ROWS"},
        {" X3 RNG1 3\n", " X3 NOSUCH 3\n", "NOSUCH"},
        {" X2 COST 2.0", " X2 COST 2.0x", "2.0x"},
        {"ENDATA\n", "", "ENDATA"},
        {"RANGES\n", "FOO\n", "FOO"},
        {" E RNG1\n", " Q RNG1\n", "row type"},
        {" E DUPEQ\n", " E MYEQN\n", "duplicate"},
        {" UP X1 4\n", " UP X9 4\n", "X9"},
        {" BV X4\n", " ZZ BND X4\n", "ZZ"},
        {"NAME TINY\n", "NAME TINY\n X1 COST 1\n", "before any section"},
        {" X4 LIM2 -1", " X4 LIM2 1e400", "1e400"},
        {" LIM1 4 LIM2 1\n", " LIM1 4 LIM2 1 RNG1\n", "unknown row"},
        {" M2 'MARKER' 'INTEND'", " M2 'MARKER' 'INTWHAT'", "marker"},
        {" FX BND X6 3\n", " FX BND X6\n", ""},
    };
    char msg[256];
    ildl_gen_lp lp;
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        char *bad = replace(tiny_free, edits[e][0], edits[e][1]);
        msg[0] = 0;
        int st = read_mps_text(bad, strlen(bad), 0, ILDL_GEN_MPS_FREE, &lp, msg, sizeof msg);
        if (st == ILDL_SUCCESS) fail_msg("edit %zu accepted", e);
        assert_true(st == ILDL_ERR_FORMAT || st == ILDL_ERR_NAN_INF);
        assert_null(lp.rowptr);
        if (!strstr(msg, edits[e][1 + 1])) fail_msg("edit %zu: message '%s'", e, msg);
        assert_non_null(strstr(msg, ".mps:")); /* names file and line */
        free(bad);
    }
    /* every truncation lacks ENDATA; none may crash or succeed */
    size_t len = strlen(tiny_free);
    for (size_t cut = 0; cut + 7 < len; cut += 3) {
        int st = read_mps_text(tiny_free, cut, cut % 2, ILDL_GEN_MPS_AUTO, &lp, msg, sizeof msg);
        assert_int_not_equal(st, ILDL_SUCCESS);
        assert_true(strlen(msg) > 0);
    }
    /* random byte damage: any status, no crash, no leak of a half-built lp */
    uint64_t seed = 42;
    for (int trial = 0; trial < 300; trial++) {
        char *t = strdup(tiny_free);
        for (int k = 0; k < 4; k++) {
            size_t at = (size_t)(ildl_test_rand(&seed) * (double)len) % len;
            t[at] = (char)(ildl_test_rand(&seed) * 256.0);
        }
        int st = read_mps_text(t, len, 0, ILDL_GEN_MPS_AUTO, &lp, msg, sizeof msg);
        if (st == ILDL_SUCCESS) ildl_gen_lp_free(&lp);
        else assert_null(lp.rowptr);
        free(t);
    }
    /* a gzip header followed by garbage, and a missing file */
    static const char junk[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage garbage garbage";
    int st = read_mps_text(junk, sizeof junk - 1, 0, ILDL_GEN_MPS_AUTO, &lp, msg, sizeof msg);
    assert_true(st == ILDL_ERR_IO || st == ILDL_ERR_FORMAT);
    assert_int_equal(ildl_gen_mps_read("/nonexistent/x.mps", 0, &lp, msg, sizeof msg), ILDL_ERR_IO);
    assert_non_null(strstr(msg, "/nonexistent/x.mps"));
}

/* Reduction removes the empty row and the doubled equation; the reduced A has full row rank,
 * so K = [D A^T; A 0] has inertia (n, m, 0); with delta > 0 too. */
static void test_kkt_tiny(void **state)
{
    (void)state;
    char msg[256];
    ildl_gen_lp lp;
    assert_int_equal(read_mps_text(tiny_free, strlen(tiny_free), 0, 0, &lp, msg, sizeof msg), 0);
    int32_t ne = -1, nd = -1;
    assert_int_equal(ildl_gen_lp_reduce(&lp, &ne, &nd), ILDL_SUCCESS);
    assert_int_equal(ne, 1);
    assert_int_equal(nd, 1);
    assert_int_equal(lp.m, 5);
    static const int32_t kept[5] = {0, 1, 2, 5, 6}; /* LIM1 LIM2 MYEQN RNG1 RNG2 */
    for (int i = 0; i < 5; i++) assert_int_equal(lp.rowid[i], kept[i]);
    assert_int_equal(lp.rowptr[5], 11);
    assert_int_equal(ildl_gen_lp_scale(&lp, 4, NULL, NULL), ILDL_SUCCESS);
    for (int reg = 0; reg <= 1; reg++) {
        double delta = reg ? 1e-4 : 0.0;
        ildl_csr K;
        ildl_gen_info info;
        assert_int_equal(ildl_gen_kkt_lp(&lp, 3, delta, &K, &info, msg, sizeof msg), 0);
        check_structure(&K);
        assert_int_equal(K.n, 11);
        assert_int_equal(info.nnz, 6 + 2 * 11 + (delta > 0 ? 5 : 0));
        assert_int_equal(K.rowptr[11], info.nnz);
        assert_int_equal(info.inertia_status, delta > 0 ? ILDL_GEN_INERTIA_EXACT
                                                        : ILDL_GEN_INERTIA_IF_FULL_RANK);
        for (int j = 0; j < 6; j++) { /* D: log-uniform in (1e-6, 1] */
            double d = kget(&K, j, j);
            assert_true(d > 1e-6 && d <= 1.0);
        }
        for (int i = 0; i < 5; i++) /* the (2,1) block is the scaled A, the (2,2) block -delta */
            for (int j = 0; j < 6; j++) {
                double a = csr_get(lp.rowptr, lp.col, lp.val, i, j);
                assert_true(kget(&K, 6 + i, j) == a);
            }
        for (int i = 0; i < 5; i++) assert_true(kget(&K, 6 + i, 6 + i) == -delta);
        int64_t in[3];
        dense_inertia(&K, in);
        assert_inertia(in, 6, 5, 0);
        assert_inertia(info.inertia, 6, 5, 0);
        ildl_csr_free(&K);
    }
    /* standard form: a slack per inequality or ranged row (LIM1 LIM2 RNG1 RNG2) */
    assert_int_equal(ildl_gen_lp_add_slacks(&lp), ILDL_SUCCESS);
    assert_int_equal(lp.n, 10);
    assert_int_equal(lp.rowptr[5], 15);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(lp.rowtype[i], 'E');
        assert_true(lp.rowlo[i] == lp.rowhi[i]);
    }
    assert_true(csr_get(lp.rowptr, lp.col, lp.val, 0, 6) == 1.0);  /* L: + slack */
    assert_true(csr_get(lp.rowptr, lp.col, lp.val, 1, 7) == -1.0); /* G: - surplus */
    assert_true(csr_get(lp.rowptr, lp.col, lp.val, 2, 8) == 0.0);  /* E without range: none */
    ildl_gen_lp_free(&lp);
}

/* A rank-deficient A (row 3 = row 1 + row 2, not parallel to either): reduction keeps it,
 * the inertia becomes (n, m-1, 1), so the analytic claim is only "if full row rank". */
static void test_kkt_rank_deficient(void **state)
{
    (void)state;
    const double A[3 * 4] = {1, 2, 0, 0, 0, 1, 3, 0, 1, 3, 3, 0};
    ildl_gen_lp lp;
    make_lp(3, 4, A, &lp);
    int32_t ne, nd;
    assert_int_equal(ildl_gen_lp_reduce(&lp, &ne, &nd), 0);
    assert_int_equal(ne + nd, 0);
    ildl_csr K;
    ildl_gen_info info;
    char msg[128];
    assert_int_equal(ildl_gen_kkt_lp(&lp, 1, 0.0, &K, &info, msg, sizeof msg), 0);
    assert_int_equal(info.inertia_status, ILDL_GEN_INERTIA_IF_FULL_RANK);
    int64_t in[3];
    dense_inertia(&K, in);
    assert_inertia(in, 4, 2, 1);
    ildl_csr_free(&K);
    /* with a regularisation the inertia is (n, m, 0) regardless */
    assert_int_equal(ildl_gen_kkt_lp(&lp, 1, 1e-3, &K, &info, msg, sizeof msg), 0);
    dense_inertia(&K, in);
    assert_inertia(in, 4, 3, 0);
    assert_inertia(info.inertia, 4, 3, 0);
    ildl_csr_free(&K);
    ildl_gen_lp_free(&lp);
    /* more rows than columns: no claim */
    const double B[3 * 2] = {1, 0, 0, 1, 1, 2};
    make_lp(3, 2, B, &lp);
    assert_int_equal(ildl_gen_kkt_lp(&lp, 1, 0.0, &K, &info, msg, sizeof msg), 0);
    assert_int_equal(info.inertia_status, ILDL_GEN_INERTIA_UNKNOWN);
    ildl_csr_free(&K);
    ildl_gen_lp_free(&lp);
}

/* Parallel and exact duplicate rows go, the first of each kind stays; empty rows go. */
static void test_reduce(void **state)
{
    (void)state;
    const double A[6 * 3] = {
        1, 0, 2,        /* kept */
        0, 0, 0,        /* empty */
        -0.5, 0, -1,    /* -1/2 row 0 */
        1, 0, 2,        /* exact duplicate of row 0 */
        1, 0, 2.000001, /* not parallel */
        0, 3, 0,        /* kept */
    };
    ildl_gen_lp lp;
    make_lp(6, 3, A, &lp);
    int32_t ne, nd;
    assert_int_equal(ildl_gen_lp_reduce(&lp, &ne, &nd), 0);
    assert_int_equal(ne, 1);
    assert_int_equal(nd, 2);
    assert_int_equal(lp.m, 3);
    assert_int_equal(lp.rowid[0], 0);
    assert_int_equal(lp.rowid[1], 4);
    assert_int_equal(lp.rowid[2], 5);
    assert_true(csr_get(lp.rowptr, lp.col, lp.val, 1, 2) == 2.000001);
    assert_true(csr_get(lp.rowptr, lp.col, lp.val, 2, 1) == 3.0);
    ildl_gen_lp_free(&lp);
}

/* A = diag(r) S diag(c) with S of +-1 entries: one round of geometric scaling already makes
 * every |a_ij| = 1, and the returned factors reproduce the scaled matrix. */
static void test_scale(void **state)
{
    (void)state;
    enum { M = 5, N = 7 };
    double A[M * N], r[M], c[N];
    uint64_t s = 9;
    for (int i = 0; i < M; i++) r[i] = pow(10.0, 8.0 * ildl_test_rand(&s) - 4.0);
    for (int j = 0; j < N; j++) c[j] = pow(10.0, 3.0 * j - 9.0);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) A[i * N + j] = (((i * j) % 2) ? -1.0 : 1.0) * r[i] * c[j];
    ildl_gen_lp lp;
    make_lp(M, N, A, &lp);
    double rs[M], cs[N];
    assert_int_equal(ildl_gen_lp_scale(&lp, 4, rs, cs), 0);
    assert_int_equal(lp.rowptr[M], M * N);
    for (int i = 0; i < M; i++)
        for (int64_t p = lp.rowptr[i]; p < lp.rowptr[i + 1]; p++) {
            int j = lp.col[p];
            assert_near(fabs(lp.val[p]), 1.0, 1e-12);
            assert_near(lp.val[p], rs[i] * A[i * N + j] * cs[j], 1e-12);
        }
    /* the LP stays equivalent: row bounds scale with r, column bounds with 1/c */
    for (int i = 0; i < M; i++) assert_near(lp.rowlo[i], rs[i], 1e-12 * rs[i]);
    ildl_gen_lp_free(&lp);
}

/* The LP of test_kkt_seed and test_kkt_decades: 2 rows over n columns, row 0 all ones, row 1
 * ones in the odd columns. */
static void two_row_lp(int n, ildl_gen_lp *lp)
{
    double *A = calloc(2 * (size_t)n, sizeof(double));
    assert_non_null(A);
    for (int j = 0; j < n; j++) A[j] = 1.0, A[n + j] = (j % 2) ? 1.0 : 0.0;
    make_lp(2, n, A, lp);
    free(A);
}

/* Same seed: bitwise equal K; another seed: same pattern, different D; D spans six decades
 * log-uniformly. */
static void test_kkt_seed(void **state)
{
    (void)state;
    enum { N = 4000 };
    ildl_gen_lp lp;
    two_row_lp(N, &lp);
    ildl_csr K1, K2, K3;
    char msg[128];
    assert_int_equal(ildl_gen_kkt_lp(&lp, 12345, 0.0, &K1, NULL, msg, sizeof msg), 0);
    assert_int_equal(ildl_gen_kkt_lp(&lp, 12345, 0.0, &K2, NULL, msg, sizeof msg), 0);
    assert_int_equal(ildl_gen_kkt_lp(&lp, 12346, 0.0, &K3, NULL, msg, sizeof msg), 0);
    int64_t nnz = K1.rowptr[K1.n];
    assert_int_equal(K2.rowptr[K2.n], nnz);
    assert_memory_equal(K1.rowptr, K2.rowptr, sizeof(int64_t) * (size_t)(K1.n + 1));
    assert_memory_equal(K1.col, K2.col, sizeof(int32_t) * (size_t)nnz);
    assert_memory_equal(K1.val, K2.val, sizeof(double) * (size_t)nnz);
    assert_memory_equal(K1.col, K3.col, sizeof(int32_t) * (size_t)nnz);
    int differ = 0;
    double dmin = 1.0, dmax = 0.0, mean = 0.0;
    for (int j = 0; j < N; j++) {
        double d = kget(&K1, j, j);
        differ += d != kget(&K3, j, j);
        dmin = fmin(dmin, d);
        dmax = fmax(dmax, d);
        mean += -log10(d) / N;
    }
    assert_true(differ > N - 10);
    assert_true(dmin > 1e-6 && dmin < 2e-6);
    assert_true(dmax <= 1.0 && dmax > 0.99);
    assert_true(fabs(mean - 3.0) < 0.15); /* -log10 d uniform on [0, 6) */
    ildl_csr_free(&K1);
    ildl_csr_free(&K2);
    ildl_csr_free(&K3);
    ildl_gen_lp_free(&lp);
}

/* --decades K: d_j = 10^(-K u_j) spans K decades (12 > 10, 6 <= 6, 0: D = I); K = 6 gives
 * the bits of ildl_gen_kkt_lp (the spread before the option existed); the whole pipeline
 * honours ildl_gen_kkt_opts.decades; K outside [0, 300] or NaN is refused. */
static void test_kkt_decades(void **state)
{
    (void)state;
    enum { N = 4000 };
    ildl_gen_lp lp;
    two_row_lp(N, &lp);
    char msg[128];
    ildl_csr K0, K6, K12, Kz;
    assert_int_equal(ildl_gen_kkt_lp(&lp, 7, 0.0, &K0, NULL, msg, sizeof msg), 0);
    assert_int_equal(ildl_gen_kkt_lp_decades(&lp, 7, 0.0, 6.0, &K6, NULL, msg, sizeof msg), 0);
    assert_int_equal(ildl_gen_kkt_lp_decades(&lp, 7, 0.0, 12.0, &K12, NULL, msg, sizeof msg), 0);
    assert_int_equal(ildl_gen_kkt_lp_decades(&lp, 7, 0.0, 0.0, &Kz, NULL, msg, sizeof msg), 0);
    int64_t nnz = K0.rowptr[K0.n];
    assert_int_equal(K6.rowptr[K6.n], nnz);
    assert_memory_equal(K0.rowptr, K6.rowptr, sizeof(int64_t) * (size_t)(K0.n + 1));
    assert_memory_equal(K0.col, K6.col, sizeof(int32_t) * (size_t)nnz);
    assert_memory_equal(K0.val, K6.val, sizeof(double) * (size_t)nnz);
    assert_memory_equal(K0.col, K12.col, sizeof(int32_t) * (size_t)nnz);
    double lo6 = 1.0, hi6 = 0.0, lo12 = 1.0, hi12 = 0.0, mean12 = 0.0;
    for (int j = 0; j < N; j++) {
        double d6 = kget(&K6, j, j), d12 = kget(&K12, j, j);
        lo6 = fmin(lo6, d6), hi6 = fmax(hi6, d6);
        lo12 = fmin(lo12, d12), hi12 = fmax(hi12, d12);
        mean12 += -log10(d12) / N;
        /* the same u_j: log10 d12 = 2 log10 d6 up to the rounding of pow */
        assert_near(log10(d12), 2.0 * log10(d6), 1e-12);
        assert_true(kget(&Kz, j, j) == 1.0);
    }
    assert_true(log10(hi6 / lo6) <= 6.0 && log10(hi6 / lo6) > 5.9);
    assert_true(log10(hi12 / lo12) > 10.0 && log10(hi12 / lo12) <= 12.0);
    assert_true(lo12 > 1e-12 && hi12 <= 1.0);
    assert_true(fabs(mean12 - 6.0) < 0.3); /* -log10 d uniform on [0, 12) */
    ildl_csr_free(&K0);
    ildl_csr_free(&K6);
    ildl_csr_free(&K12);
    ildl_csr_free(&Kz);
    const double bad[] = {-1.0, -1e-300, 300.5, 1e308, INFINITY, -INFINITY, NAN};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ildl_csr K;
        msg[0] = 0;
        assert_int_equal(ildl_gen_kkt_lp_decades(&lp, 1, 0.0, bad[k], &K, NULL, msg, sizeof msg),
                         ILDL_ERR_INVALID_OPTION);
        assert_non_null(strstr(msg, "decades"));
        assert_null(K.rowptr);
    }
    ildl_csr K300;
    assert_int_equal(ildl_gen_kkt_lp_decades(&lp, 1, 0.0, 300.0, &K300, NULL, msg, sizeof msg), 0);
    for (int j = 0; j < N; j++) {
        double d = kget(&K300, j, j);
        assert_true(d > 1e-300 && d <= 1.0 && isnormal(d));
    }
    ildl_csr_free(&K300);
    ildl_gen_lp_free(&lp);
}

/* ------------------------------------------------------------------ grid generators */

static void test_control(void **state)
{
    (void)state;
    char msg[128];
    for (int32_t N = 1; N <= 5; N++) {
        ildl_csr K;
        ildl_gen_info info;
        assert_int_equal(ildl_gen_control(N, 1e-2, &K, &info, msg, sizeof msg), 0);
        int64_t n3 = (int64_t)N * N * N;
        check_structure(&K);
        assert_int_equal(K.n, 3 * n3);
        /* M, beta M, 2 x (-M), 2 x L with 7 N^3 - 6 N^2 entries */
        assert_int_equal(K.rowptr[K.n], 18 * n3 - 12 * (int64_t)N * N);
        assert_int_equal(info.nnz, K.rowptr[K.n]);
        double h = 1.0 / (N + 1), h3 = h * h * h;
        assert_near(kget(&K, 0, 0), h3, 1e-15);
        assert_near(kget(&K, (int32_t)n3, (int32_t)n3), 1e-2 * h3, 1e-17);
        assert_near(kget(&K, (int32_t)n3, (int32_t)(2 * n3)), -h3, 1e-15);
        assert_true(kget(&K, 0, (int32_t)n3) == 0.0);
        /* L y for y = f(x) f(y) f(z), f(t) = t(1-t): zero on the walls, and the second
         * difference is exact on each quadratic factor, so -lap_h y = 2 (f f + f f + f f)
         * exactly; L carries the cell volume: (L y)_g = h^3 (-lap_h y)_g */
        for (int32_t g = 0; g < n3; g++) {
            double s = 0.0;
            for (int64_t p = K.rowptr[2 * n3 + g]; p < K.rowptr[2 * n3 + g + 1]; p++) {
                int32_t c = K.col[p];
                if (c >= n3) continue;
                double x = (c % N + 1) * h, y = (c / N % N + 1) * h, z = (c / N / N + 1) * h;
                s += K.val[p] * x * (1.0 - x) * y * (1.0 - y) * z * (1.0 - z);
            }
            double x = (g % N + 1) * h, y = (g / N % N + 1) * h, z = (g / N / N + 1) * h;
            double fx = x * (1 - x), fy = y * (1 - y), fz = z * (1 - z);
            assert_near(s, 2.0 * h3 * (fy * fz + fx * fz + fx * fy), 1e-15);
        }
        if (N <= 4) {
            int64_t in[3];
            dense_inertia(&K, in);
            assert_inertia(in, 2 * n3, n3, 0);
        }
        assert_inertia(info.inertia, 2 * n3, n3, 0);
        assert_int_equal(info.inertia_status, ILDL_GEN_INERTIA_EXACT);
        ildl_csr_free(&K);
    }
}

static void test_stokes(void **state)
{
    (void)state;
    char msg[128];
    for (int32_t N = 2; N <= 4; N++) {
        int64_t nv = 3 * (int64_t)N * N * (N - 1), np = (int64_t)N * N * N;
        /* neighbour pairs of one component: (N-2) N^2 along its own axis, (N-1)^2 N across */
        int64_t pairs = 3 * ((int64_t)(N - 2) * N * N + 2 * (int64_t)N * (N - 1) * (N - 1));
        int64_t nnz_a = nv + 2 * pairs, nnz_b = 2 * nv; /* every interior face: two cells */
        for (int c = 0; c < 3; c++) {
            double eps = c == 1 ? 1e-2 : 0.0;
            int pin = c == 2;
            ildl_csr K;
            ildl_gen_info info;
            assert_int_equal(ildl_gen_stokes(N, eps, pin, &K, &info, msg, sizeof msg), 0);
            check_structure(&K);
            assert_int_equal(K.n, nv + np);
            assert_int_equal(K.rowptr[K.n], nnz_a + 2 * nnz_b + (eps > 0 ? np : 0) + pin);
            int64_t zero = (eps > 0 || pin) ? 0 : 1;
            if (nv + np <= 300) {
                int64_t in[3];
                dense_inertia(&K, in);
                assert_inertia(in, nv, np - zero, zero);
            }
            assert_inertia(info.inertia, nv, np - zero, zero);
            /* B^T 1 = 0 (constant pressure is invisible to the velocities), and B applied to
             * ux = 1 on all x-faces is -div: -N in the first cell layer, +N in the last */
            for (int32_t i = 0; i < nv; i++) {
                double s = 0.0;
                for (int64_t p = K.rowptr[i]; p < K.rowptr[i + 1]; p++)
                    if (K.col[p] >= nv) s += K.val[p];
                assert_true(s == 0.0);
            }
            int64_t nf = (int64_t)(N - 1) * N * N;
            for (int32_t c2 = 0; c2 < np; c2++) {
                double s = 0.0;
                for (int64_t p = K.rowptr[nv + c2]; p < K.rowptr[nv + c2 + 1]; p++)
                    if (K.col[p] < nf) s += K.val[p];
                int32_t x = c2 % N;
                double want = x == 0 ? -N : x == N - 1 ? N : 0.0;
                assert_near(s, want, 1e-12);
            }
            ildl_csr_free(&K);
        }
    }
}

/* Eigenvalues of the 7-point stencil: lambda = mu_i + mu_j + mu_k, mu_i = 4 sin^2(i pi/2(N+1)). */
static void count_eigs(int32_t N, double sigma, int64_t in[3])
{
    in[0] = in[1] = in[2] = 0;
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++)
            for (int k = 1; k <= N; k++) {
                double s1 = sin(i * PI / (2.0 * (N + 1))), s2 = sin(j * PI / (2.0 * (N + 1)));
                double s3 = sin(k * PI / (2.0 * (N + 1)));
                double lam = 4.0 * (s1 * s1 + s2 * s2 + s3 * s3) - sigma;
                in[fabs(lam) < 1e-8 ? 2 : lam > 0 ? 0 : 1]++;
            }
}

static void test_helmholtz(void **state)
{
    (void)state;
    char msg[128];
    for (int32_t N = 1; N <= 6; N++) {
        double sig[4] = {ildl_gen_helmholtz_default_sigma(N), 0.5, 2.0, 6.0};
        for (int s = 0; s < 4; s++) {
            ildl_csr K;
            ildl_gen_info info;
            assert_int_equal(ildl_gen_helmholtz(N, sig[s], &K, &info, msg, sizeof msg), 0);
            int64_t n = (int64_t)N * N * N;
            check_structure(&K);
            assert_int_equal(K.n, n);
            assert_int_equal(K.rowptr[n], 7 * n - 6 * (int64_t)N * N);
            assert_true(kget(&K, 0, 0) == 6.0 - sig[s]);
            if (N > 1) assert_true(kget(&K, 0, 1) == -1.0);
            int64_t want[3], in[3];
            count_eigs(N, sig[s], want);
            assert_inertia(info.inertia, want[0], want[1], want[2]);
            dense_inertia(&K, in);
            assert_inertia(in, want[0], want[1], want[2]);
            if (s == 0) /* default: nonsingular */
                assert_int_equal(want[2], 0);
            if (s == 0 && N >= 3) { /* about half negative */
                assert_true(want[1] >= n / 2 - n / 5 && want[1] <= n / 2 + n / 5 + 1);
            }
            ildl_csr_free(&K);
        }
    }
    /* sigma = 6 hits the eigenvalue 6 = mu_2 * 3 = mu_1 + mu_2 + mu_3 seven times for N = 3 */
    int64_t in[3];
    ildl_gen_helmholtz_inertia(3, 6.0, in);
    assert_inertia(in, 10, 10, 7);
    /* the default shift stays clear of the spectrum for larger N too */
    for (int32_t N = 7; N <= 21; N += 7) {
        double sg = ildl_gen_helmholtz_default_sigma(N);
        int64_t want[3];
        count_eigs(N, sg, want);
        assert_int_equal(want[2], 0);
        ildl_gen_helmholtz_inertia(N, sg, in);
        assert_inertia(in, want[0], want[1], want[2]);
    }
}

/* Grid generators are deterministic (bitwise) and the "large" path works at N = 20. */
static void test_grid_smoke(void **state)
{
    (void)state;
    char msg[128];
    const int32_t N = 20;
    ildl_csr K, K2;
    ildl_gen_info info;
    assert_int_equal(ildl_gen_control(N, 1e-2, &K, &info, msg, sizeof msg), 0);
    assert_int_equal(K.n, 3 * N * N * N);
    assert_int_equal(K.rowptr[K.n], 18 * N * N * N - 12 * N * N);
    check_structure(&K);
    assert_int_equal(ildl_gen_control(N, 1e-2, &K2, NULL, msg, sizeof msg), 0);
    assert_memory_equal(K.val, K2.val, sizeof(double) * (size_t)K.rowptr[K.n]);
    ildl_csr_free(&K);
    ildl_csr_free(&K2);
    assert_int_equal(ildl_gen_stokes(N, 1e-3, 0, &K, &info, msg, sizeof msg), 0);
    assert_int_equal(K.n, 3 * N * N * (N - 1) + N * N * N);
    check_structure(&K);
    ildl_csr_free(&K);
    assert_int_equal(ildl_gen_helmholtz(N, ildl_gen_helmholtz_default_sigma(N), &K, &info, msg,
                                        sizeof msg), 0);
    check_structure(&K);
    assert_int_equal(info.inertia[2], 0);
    assert_int_equal(info.inertia[0] + info.inertia[1], N * N * N);
    ildl_csr_free(&K);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    char msg[128];
    ildl_csr K;
    assert_int_equal(ildl_gen_control(0, 1e-2, &K, NULL, msg, sizeof msg), ILDL_ERR_INVALID_OPTION);
    assert_true(strlen(msg) > 0);
    assert_int_equal(ildl_gen_control(1000, 1e-2, &K, NULL, msg, sizeof msg), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_gen_control(3, 0.0, &K, NULL, msg, sizeof msg), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_gen_control(3, NAN, &K, NULL, msg, sizeof msg), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_gen_stokes(1, 0.0, 0, &K, NULL, msg, sizeof msg), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_gen_stokes(3, -1.0, 0, &K, NULL, msg, sizeof msg), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_gen_helmholtz(0, 1.0, &K, NULL, msg, sizeof msg), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_gen_helmholtz(3, INFINITY, &K, NULL, msg, sizeof msg),
                     ILDL_ERR_INVALID_OPTION);
    assert_null(K.rowptr);
    ildl_gen_lp lp;
    const double A[2] = {1, 2};
    make_lp(1, 2, A, &lp);
    assert_int_equal(ildl_gen_kkt_lp(&lp, 1, -1.0, &K, NULL, msg, sizeof msg), ILDL_ERR_INVALID_OPTION);
    lp.m = 0;
    assert_int_equal(ildl_gen_kkt_lp(&lp, 1, 0.0, &K, NULL, msg, sizeof msg), ILDL_ERR_EMPTY);
    ildl_gen_lp_free(&lp);
    const double Z[4] = {1, 2, 0, 0};
    make_lp(2, 2, Z, &lp); /* an empty row, not reduced */
    assert_int_equal(ildl_gen_kkt_lp(&lp, 1, 0.0, &K, NULL, msg, sizeof msg), ILDL_ERR_SINGULAR);
    ildl_gen_lp_free(&lp);
}

/* ------------------------------------------------------------------ shared LP files */

/* Read a general coordinate Matrix Market file (plain or gzip) into triplets. */
static void read_general_mm(const char *path, int32_t *m, int32_t *n, int64_t *nz, int32_t **ti,
                            int32_t **tj, double **tv)
{
    gzFile f = gzopen(path, "rb");
    assert_non_null(f);
    char line[1024];
    assert_non_null(gzgets(f, line, sizeof line));
    assert_non_null(strstr(line, "coordinate real general"));
    do assert_non_null(gzgets(f, line, sizeof line));
    while (line[0] == '%');
    long long a, b, c;
    assert_int_equal(sscanf(line, "%lld %lld %lld", &a, &b, &c), 3);
    *m = (int32_t)a, *n = (int32_t)b, *nz = c;
    *ti = malloc(sizeof(int32_t) * (size_t)c);
    *tj = malloc(sizeof(int32_t) * (size_t)c);
    *tv = malloc(sizeof(double) * (size_t)c);
    assert_true(*ti && *tj && *tv);
    for (long long k = 0; k < c; k++) {
        assert_non_null(gzgets(f, line, sizeof line));
        char *e1, *e2;
        long i = strtol(line, &e1, 10), j = strtol(e1, &e2, 10);
        (*ti)[k] = (int32_t)i - 1;
        (*tj)[k] = (int32_t)j - 1;
        (*tv)[k] = strtod(e2, NULL);
    }
    gzclose(f);
}

/* The parsed A equals the independently extracted *_A.mtx.gz entry for entry. */
static void compare_with_reference(const char *name)
{
    char mps[256], ref[256];
    snprintf(mps, sizeof mps, "mps/%s.mps.gz", name);
    snprintf(ref, sizeof ref, "mps/%s_A.mtx.gz", name);
    const char *p = ildl_test_shared_matrix(mps);
    if (!p) return;
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s", p);
    const char *r = ildl_test_shared_matrix(ref);
    if (!r) return;
    ildl_gen_lp lp;
    char msg[512];
    int st = ildl_gen_mps_read(mpath, ILDL_GEN_MPS_AUTO, &lp, msg, sizeof msg);
    if (st) fail_msg("%s: %s", name, msg);
    int32_t m, n, *ti, *tj;
    int64_t nz;
    double *tv;
    read_general_mm(r, &m, &n, &nz, &ti, &tj, &tv);
    assert_int_equal(lp.m, m);
    assert_int_equal(lp.n, n);
    int64_t nonzero = 0;
    for (int64_t k = 0; k < nz; k++) {
        if (tv[k] == 0.0) continue;
        nonzero++;
        assert_true(ti[k] >= 0 && ti[k] < m && tj[k] >= 0 && tj[k] < n);
        double a = csr_get(lp.rowptr, lp.col, lp.val, ti[k], tj[k]);
        if (a != tv[k]) fail_msg("%s: A(%d,%d) = %.17g, reference %.17g", name, ti[k] + 1,
                                 tj[k] + 1, a, tv[k]);
    }
    assert_int_equal(lp.rowptr[lp.m], nonzero);
    printf("%s: A %d x %d, nnz %lld matches the reference\n", name, (int)m, (int)n,
           (long long)nonzero);
    free(ti);
    free(tj);
    free(tv);
    ildl_gen_lp_free(&lp);
}

static void test_shared_mps(void **state)
{
    (void)state;
    compare_with_reference("netlib_afiro");
    compare_with_reference("bab5");
    compare_with_reference("netlib_25fv47");
}

/* afiro through the whole pipeline: inertia (n, rank A, m - rank A), rank by complete
 * pivoting on the reduced A. */
static void test_shared_afiro_kkt(void **state)
{
    (void)state;
    const char *p = ildl_test_shared_matrix("mps/netlib_afiro.mps.gz");
    if (!p) return;
    char path[4096], msg[512];
    snprintf(path, sizeof path, "%s", p);
    ildl_gen_kkt_opts o;
    ildl_gen_kkt_defaults(&o);
    ildl_csr K, K2;
    ildl_gen_info info;
    ildl_gen_lp_stats ls;
    int st = ildl_gen_kkt_lp_file(path, &o, &K, &info, &ls, msg, sizeof msg);
    if (st) fail_msg("%s", msg);
    check_structure(&K);
    assert_int_equal(K.n, ls.m + ls.n);
    assert_int_equal(K.rowptr[K.n], ls.n + 2 * ls.nnz_a);
    double *a = calloc((size_t)ls.m * ls.n, sizeof(double));
    assert_non_null(a);
    for (int32_t i = 0; i < ls.m; i++)
        for (int64_t q = K.rowptr[ls.n + i]; q < K.rowptr[ls.n + i + 1]; q++)
            a[(size_t)i * ls.n + K.col[q]] = K.val[q];
    int rank = dense_rank(a, ls.m, ls.n);
    free(a);
    int64_t in[3];
    dense_inertia(&K, in);
    assert_inertia(in, ls.n, rank, ls.m - rank);
    o.seed = 2;
    assert_int_equal(ildl_gen_kkt_lp_file(path, &o, &K2, &info, NULL, msg, sizeof msg), 0);
    assert_memory_equal(K.col, K2.col, sizeof(int32_t) * (size_t)K.rowptr[K.n]);
    assert_true(kget(&K, 0, 0) != kget(&K2, 0, 0));
    ildl_csr_free(&K2);
    /* opts.decades reaches the diagonal: same u_j, twice the exponent */
    o.seed = 1;
    o.decades = 12.0;
    assert_int_equal(ildl_gen_kkt_lp_file(path, &o, &K2, &info, NULL, msg, sizeof msg), 0);
    assert_memory_equal(K.col, K2.col, sizeof(int32_t) * (size_t)K.rowptr[K.n]);
    for (int32_t j = 0; j < ls.n; j++) assert_near(log10(kget(&K2, j, j)), 2.0 * log10(kget(&K, j, j)), 1e-12);
    ildl_csr_free(&K2);
    o.decades = -1.0;
    assert_int_equal(ildl_gen_kkt_lp_file(path, &o, &K2, &info, NULL, msg, sizeof msg),
                     ILDL_ERR_INVALID_OPTION);
    ildl_csr_free(&K);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mps_tiny_fixed),
        cmocka_unit_test(test_mps_tiny_free),
        cmocka_unit_test(test_mps_noncontiguous),
        cmocka_unit_test(test_mps_malformed),
        cmocka_unit_test(test_kkt_tiny),
        cmocka_unit_test(test_kkt_rank_deficient),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_kkt_seed),
        cmocka_unit_test(test_kkt_decades),
        cmocka_unit_test(test_control),
        cmocka_unit_test(test_stokes),
        cmocka_unit_test(test_helmholtz),
        cmocka_unit_test(test_grid_smoke),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_shared_mps),
        cmocka_unit_test(test_shared_afiro_kkt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
