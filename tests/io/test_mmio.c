/* test_mmio.c -- Matrix Market reader/writer: accepted variants, every rejected input (status
 * and a message naming the line), garbage fuzzing, real shared matrices, round trips. */
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
#include "core/util.h"
#include "io/mmio.h"

/* ------------------------------------------------------------------ helpers */

/* Create an empty temp file ending in suffix (".mtx" or ".mtx.gz"); returns its path. */
static char *tmp_path(const char *suffix)
{
    char *p = malloc(64);
    assert_non_null(p);
    snprintf(p, 64, "/tmp/ildl_mmio_XXXXXX%s", suffix);
    int fd = mkstemps(p, (int)strlen(suffix));
    assert_true(fd >= 0);
    close(fd);
    return p;
}

/* Write len bytes (plain, or gzip-compressed if gz) to a new temp file. */
static char *write_bytes(const char *data, size_t len, int gz)
{
    char *p = tmp_path(gz ? ".mtx.gz" : ".mtx");
    if (gz) {
        gzFile f = gzopen(p, "wb");
        assert_non_null(f);
        if (len) assert_int_equal(gzwrite(f, data, (unsigned)len), (int)len);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(p, "wb");
        assert_non_null(f);
        if (len) assert_int_equal(fwrite(data, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
    }
    return p;
}

/* Read a matrix given as file text; the temp file is removed again. */
static int read_text(const char *text, int gz, ildl_csr *A, char *msg, size_t msglen)
{
    char *p = write_bytes(text, strlen(text), gz);
    int st = ildl_mm_read(p, A, msg, msglen);
    unlink(p);
    free(p);
    return st;
}

/* Structural invariants every successful read must give: rowptr from 0 and monotone,
 * columns in range and strictly increasing, pattern and values exactly symmetric. */
static void check_structure(const ildl_csr *A)
{
    assert_true(A->n > 0);
    assert_int_equal(A->rowptr[0], 0);
    for (int32_t i = 0; i < A->n; i++) {
        assert_true(A->rowptr[i + 1] >= A->rowptr[i]);
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = A->col[p];
            assert_true(j >= 0 && j < A->n);
            if (p > A->rowptr[i]) assert_true(A->col[p - 1] < j);
            assert_true(isfinite(A->val[p]));
            int found = 0;
            for (int64_t q = A->rowptr[j]; q < A->rowptr[j + 1]; q++)
                if (A->col[q] == i) {
                    found = 1;
                    assert_true(A->val[q] == A->val[p]);
                }
            assert_true(found);
        }
    }
}

/* Compare A with a dense row-major n x n matrix and a pattern mask (1 = stored). */
static void check_dense(const ildl_csr *A, int32_t n, const double *D, const int *mask)
{
    assert_int_equal(A->n, n);
    check_structure(A);
    int64_t cnt = 0;
    for (int k = 0; k < n * n; k++) cnt += mask[k];
    assert_int_equal(A->rowptr[n], cnt);
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            assert_true(mask[i * n + A->col[p]]);
            assert_true(A->val[p] == D[i * n + A->col[p]]);
        }
}

static void assert_same_csr(const ildl_csr *A, const ildl_csr *B)
{
    assert_int_equal(A->n, B->n);
    assert_memory_equal(A->rowptr, B->rowptr, sizeof(int64_t) * ((size_t)A->n + 1));
    int64_t nnz = A->rowptr[A->n];
    if (nnz) {
        assert_memory_equal(A->col, B->col, sizeof(int32_t) * (size_t)nnz);
        assert_memory_equal(A->val, B->val, sizeof(double) * (size_t)nnz);
    }
}

/* The 4x4 reference matrix of the variant tests (its lower triangle, 1-based in files):
 *   [ 4  1  0 -2 ]
 *   [ 1  0  3  0 ]     a22 is an explicit zero: it must be kept as an entry
 *   [ 0  3 -5  0 ]
 *   [-2  0  0  7 ] */
static const double REF_D[16] = {4, 1, 0, -2, 1, 0, 3, 0, 0, 3, -5, 0, -2, 0, 0, 7};
static const int REF_M[16] = {1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1};

static const char *REF_LOWER =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "4 4 7\n"
    "1 1 4.0\n2 1 1\n2 2 0\n3 2 3e0\n3 3 -5\n4 1 -2\n4 4 7\n";

static void test_symmetric_lower(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    assert_int_equal(read_text(REF_LOWER, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&A, 4, REF_D, REF_M);
    assert_int_equal(ildl_csr_validate(A.n, A.rowptr, A.col, A.val, 0.0, msg, sizeof msg),
                     ILDL_SUCCESS);
    ildl_csr_free(&A);
}

static void test_symmetric_upper_and_mixed(void **state)
{
    (void)state;
    ildl_csr A, B, C;
    char msg[256];
    const char *upper = "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n"
                        "4 4 7\n1 4 -2\n3 3 -5\n2 3 3\n2 2 0\n1 2 1\n1 1 4\n";
    /* both triangles used, each off-diagonal pair stored once */
    const char *mixed = "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n"
                        "1 2 1\n4 1 -2\n3 2 3\n1 1 4\n2 2 0\n3 3 -5\n4 4 7\n";
    assert_int_equal(read_text(REF_LOWER, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    assert_int_equal(read_text(upper, 0, &B, msg, sizeof msg), ILDL_SUCCESS);
    assert_int_equal(read_text(mixed, 0, &C, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&B, 4, REF_D, REF_M);
    assert_same_csr(&A, &B);
    assert_same_csr(&A, &C);
    ildl_csr_free(&A);
    ildl_csr_free(&B);
    ildl_csr_free(&C);
}

static void test_general_symmetric(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    const char *gen = "%%MatrixMarket matrix coordinate real general\n4 4 10\n"
                      "1 1 4\n1 2 1\n1 4 -2\n2 1 1\n2 2 0\n2 3 3\n3 2 3\n3 3 -5\n4 1 -2\n4 4 7\n";
    assert_int_equal(read_text(gen, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&A, 4, REF_D, REF_M);
    ildl_csr_free(&A);
    /* values equal within the 1e-12 relative tolerance are accepted (and made equal) */
    const char *near = "%%MatrixMarket matrix coordinate real general\n2 2 4\n"
                       "1 1 1\n1 2 1.0000000000001\n2 1 1\n2 2 1\n";
    assert_int_equal(read_text(near, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    check_structure(&A);
    assert_true(fabs(A.val[1] - 1.0) < 1e-12);
    ildl_csr_free(&A);
}

static void test_pattern_and_integer(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    const char *pat = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 4\n"
                      "1 1\n2 1\n3 3\n3 2\n";
    static const double PD[9] = {1, 1, 0, 1, 0, 1, 0, 1, 1};
    static const int PM[9] = {1, 1, 0, 1, 0, 1, 0, 1, 1};
    assert_int_equal(read_text(pat, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&A, 3, PD, PM);
    ildl_csr_free(&A);
    const char *intg = "%%MatrixMarket matrix coordinate integer general\n2 2 4\n"
                       "1 1 -3\n1 2 12\n2 1 12\n2 2 +5\n";
    static const double ID[4] = {-3, 12, 12, 5};
    static const int IM[4] = {1, 1, 1, 1};
    assert_int_equal(read_text(intg, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&A, 2, ID, IM);
    ildl_csr_free(&A);
}

static void test_duplicates_summed(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    /* symmetric: (2,1) and (1,2) are the same entry, so they add up like any duplicate */
    const char *sym = "%%MatrixMarket matrix coordinate real symmetric\n2 2 5\n"
                      "1 1 1\n1 1 0.5\n2 1 1\n1 2 2\n2 2 -1\n";
    static const double SD[4] = {1.5, 3, 3, -1};
    static const int SM[4] = {1, 1, 1, 1};
    assert_int_equal(read_text(sym, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&A, 2, SD, SM);
    ildl_csr_free(&A);
    /* general: duplicates are summed before symmetry is checked */
    const char *gen = "%%MatrixMarket matrix coordinate real general\n2 2 5\n"
                      "1 2 1\n2 1 2\n1 2 1\n2 2 4\n2 2 -4\n";
    static const double GD[4] = {0, 2, 2, 0};
    static const int GM[4] = {0, 1, 1, 1};
    assert_int_equal(read_text(gen, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&A, 2, GD, GM);
    ildl_csr_free(&A);
}

static void test_comments_blank_crlf_case(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    const char *txt = "%%matrixmarket MATRIX Coordinate REAL Symmetric\r\n"
                      "% a comment\r\n"
                      "\r\n"
                      "   %% indented comment\n"
                      "4 4 7   \n"
                      "1 1 4.0\n\n"
                      "% comment between entries\n"
                      "2 1 1\n\t2\t2\t0\n3 2 3e0\n  3 3 -5  \n4 1 -2\n4 4 7";
    assert_int_equal(read_text(txt, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&A, 4, REF_D, REF_M);
    ildl_csr_free(&A);
}

static void test_gzip_file(void **state)
{
    (void)state;
    ildl_csr A, B;
    char msg[256];
    assert_int_equal(read_text(REF_LOWER, 1, &A, msg, sizeof msg), ILDL_SUCCESS);
    assert_int_equal(read_text(REF_LOWER, 0, &B, msg, sizeof msg), ILDL_SUCCESS);
    check_dense(&A, 4, REF_D, REF_M);
    assert_same_csr(&A, &B);
    ildl_csr_free(&A);
    ildl_csr_free(&B);
}

/* A general file's pair near DBL_MAX is finite and symmetric: read as it is (the average of
 * the pair was once computed as 0.5 (a + b), which overflowed: "entry (0,1) is inf"). */
static void test_general_near_overflow(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    const char *txt = "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n1 2 1.7e308\n"
                      "2 1 1.7e308\n2 2 -1.7976931348623157e308\n";
    assert_int_equal(read_text(txt, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    assert_true(A.val[1] == 1.7e308 && A.val[2] == 1.7e308 && A.val[3] == -1.7976931348623157e308);
    ildl_csr_free(&A);
    /* within the tolerance but not equal: the average lies between them */
    txt = "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n1 2 1.7e308\n"
          "2 1 1.7000000000000001e308\n2 2 1\n";
    assert_int_equal(read_text(txt, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    assert_true(isfinite(A.val[1]) && A.val[1] == A.val[2] && A.val[1] >= 1.7e308);
    ildl_csr_free(&A);
}

static void test_empty_rows_allowed(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    /* 3 symmetric entries could cover the 5 rows: read, empty rows and all (setup refuses them) */
    const char *txt = "%%MatrixMarket matrix coordinate real symmetric\n5 5 3\n3 3 2\n5 3 1\n5 5 1\n";
    assert_int_equal(read_text(txt, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    assert_int_equal(A.n, 5);
    static const int64_t rp[6] = {0, 0, 0, 2, 2, 4};
    assert_memory_equal(A.rowptr, rp, sizeof rp);
    ildl_csr_free(&A);
    /* too few entries to cover the rows: refused from the size line, before anything of size n
     * is allocated (a 55-byte file declaring n = 3e8 once cost 7 GB and 70 s) */
    assert_int_equal(read_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 1\n", 0, &A,
                               msg, sizeof msg), ILDL_ERR_SINGULAR);
    assert_non_null(strstr(msg, "line 2"));
    assert_null(A.rowptr);
}

/* ------------------------------------------------------------------ bad inputs */

typedef struct {
    const char *what;
    const char *text;
    int status;
    const char *must_contain; /* e.g. the line number the message has to name */
} bad_case;

#define HS "%%MatrixMarket matrix coordinate real symmetric\n"
#define HG "%%MatrixMarket matrix coordinate real general\n"

static const bad_case BAD[] = {
    {"empty file", "", ILDL_ERR_FORMAT, "line 1"},
    {"no banner", "3 3 1\n1 1 1\n", ILDL_ERR_FORMAT, "line 1"},
    {"short banner", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", ILDL_ERR_FORMAT,
     "line 1"},
    {"long banner", "%%MatrixMarket matrix coordinate real symmetric x\n1 1 1\n1 1 1\n",
     ILDL_ERR_FORMAT, "line 1"},
    {"vector object", "%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n",
     ILDL_ERR_FORMAT, "line 1"},
    {"complex", "%%MatrixMarket matrix coordinate complex symmetric\n1 1 1\n1 1 1 0\n",
     ILDL_ERR_FORMAT, "complex"},
    {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
     ILDL_ERR_FORMAT, "hermitian"},
    {"skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n",
     ILDL_ERR_FORMAT, "skew-symmetric"},
    {"array", "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n", ILDL_ERR_FORMAT,
     "array"},
    {"unknown format", "%%MatrixMarket matrix sparse real symmetric\n1 1 1\n1 1 1\n",
     ILDL_ERR_FORMAT, "line 1"},
    {"header only", HS "% only a comment\n", ILDL_ERR_FORMAT, "line 3"},
    {"size line short", HS "3 3\n1 1 1\n", ILDL_ERR_FORMAT, "line 2"},
    {"size line long", HS "3 3 1 1\n1 1 1\n", ILDL_ERR_FORMAT, "line 2"},
    {"size not numeric", HS "% c\n3 x 1\n1 1 1\n", ILDL_ERR_FORMAT, "line 3"},
    {"size negative", HS "-3 -3 1\n1 1 1\n", ILDL_ERR_FORMAT, "line 2"},
    {"size fractional", HS "3.5 3.5 1\n1 1 1\n", ILDL_ERR_FORMAT, "line 2"},
    {"too few entries", HS "3 3 3\n1 1 1\n2 2 1\n", ILDL_ERR_FORMAT, "line 5"},
    {"too many entries", HS "3 3 2\n1 1 1\n2 2 1\n3 3 1\n", ILDL_ERR_FORMAT, "line 5"},
    {"missing value", HS "3 3 2\n1 1 1\n2 2\n", ILDL_ERR_FORMAT, "line 4"},
    {"extra field", HS "3 3 2\n1 1 1\n2 2 1 0\n", ILDL_ERR_FORMAT, "line 4"},
    {"pattern with value", "%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1 5\n",
     ILDL_ERR_FORMAT, "line 3"},
    {"index not numeric", HS "3 3 2\n1 1 1\n2 b 1\n", ILDL_ERR_FORMAT, "line 4"},
    {"index fractional", HS "3 3 2\n1 1 1\n2.0 2 1\n", ILDL_ERR_FORMAT, "line 4"},
    {"value not numeric", HS "3 3 2\n1 1 1\n2 2 abc\n", ILDL_ERR_FORMAT, "line 4"},
    {"value trailing junk", HS "3 3 2\n1 1 1\n2 2 1.5x\n", ILDL_ERR_FORMAT, "line 4"},
    {"integer field with real value", "%%MatrixMarket matrix coordinate integer general\n"
                                      "1 1 1\n1 1 1.5\n", ILDL_ERR_FORMAT, "line 3"},
    {"row index 0", HS "3 3 2\n1 1 1\n0 1 1\n", ILDL_ERR_INDEX_RANGE, "line 4"},
    {"row index n+1", HS "3 3 2\n1 1 1\n4 1 1\n", ILDL_ERR_INDEX_RANGE, "line 4"},
    {"col index n+1", HS "3 3 2\n1 1 1\n3 4 1\n", ILDL_ERR_INDEX_RANGE, "line 4"},
    {"negative index", HS "3 3 2\n1 1 1\n-1 1 1\n", ILDL_ERR_INDEX_RANGE, "line 4"},
    {"index overflow", HS "3 3 2\n99999999999999999999999 1 1\n", ILDL_ERR_INDEX_RANGE, "line 3"},
    {"entries cannot cover the rows", HS "300000000 300000000 0\n", ILDL_ERR_SINGULAR, "line 2"},
    {"n = 2^31 - 2, five entries", HG "2147483646 2147483646 5\n1 1 1\n", ILDL_ERR_SINGULAR, "line 2"},
    {"half the rows in a symmetric file", HS "% c\n5 5 2\n1 1 1\n", ILDL_ERR_SINGULAR, "line 3"},
    {"duplicates summing to inf", HS "2 2 3\n1 1 1.7e308\n2 2 1\n1 1 1.7e308\n", ILDL_ERR_NAN_INF,
     "line 5"},
    {"not square", HS "3 4 1\n1 1 1\n", ILDL_ERR_NOT_SQUARE, "line 2"},
    {"n zero", HS "0 0 0\n", ILDL_ERR_EMPTY, "line 2"},
    {"nan", HS "2 2 2\n1 1 1\n2 2 nan\n", ILDL_ERR_NAN_INF, "line 4"},
    {"inf", HS "2 2 2\n1 1 -Inf\n2 2 1\n", ILDL_ERR_NAN_INF, "line 3"},
    {"overflow to inf", HS "2 2 2\n1 1 1\n2 2 1e999\n", ILDL_ERR_NAN_INF, "line 4"},
    {"general missing partner", HG "3 3 3\n1 1 1\n3 1 2\n2 2 1\n", ILDL_ERR_NOT_SYMMETRIC,
     "line 4: entry (3,1)"},
    {"general missing lower partner", HG "3 3 3\n1 1 1\n% c\n1 3 2\n2 2 1\n",
     ILDL_ERR_NOT_SYMMETRIC, "line 5: entry (1,3)"},
    {"general unsymmetric values", HG "2 2 4\n1 1 1\n1 2 1\n2 1 1.001\n2 2 1\n",
     ILDL_ERR_NOT_SYMMETRIC, "(2,1)"},
    {"general explicit zero partner missing", HG "2 2 3\n1 1 1\n2 1 0\n2 2 1\n",
     ILDL_ERR_NOT_SYMMETRIC, "line 4"},
};

static void test_bad_inputs(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        for (int gz = 0; gz < 2; gz++) {
            ildl_csr A;
            char msg[512];
            memset(msg, 0, sizeof msg);
            int st = read_text(BAD[k].text, gz, &A, msg, sizeof msg);
            if (st != BAD[k].status || !strstr(msg, "line") || !strstr(msg, BAD[k].must_contain)) {
                print_error("case '%s' (gz=%d): status %d (want %d), message '%s' (want '%s')\n",
                            BAD[k].what, gz, st, BAD[k].status, msg, BAD[k].must_contain);
                fail();
            }
            /* on failure nothing is left allocated in A */
            assert_null(A.rowptr);
            assert_null(A.col);
            assert_null(A.val);
        }
    }
}

static void test_io_errors(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    assert_int_equal(ildl_mm_read("/nonexistent/dir/none.mtx", &A, msg, sizeof msg), ILDL_ERR_IO);
    assert_true(strlen(msg) > 0);
    assert_int_equal(ildl_mm_read(NULL, &A, msg, sizeof msg), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_mm_read("/tmp/x.mtx", NULL, msg, sizeof msg), ILDL_ERR_NULL_ARGUMENT);
    /* a truncated gzip stream is a read error, not silently fewer entries */
    char big[20000];
    size_t len = (size_t)snprintf(big, sizeof big, HS "1000 1000 1000\n");
    for (int i = 1; i <= 1000 && len + 40 < sizeof big; i++)
        len += (size_t)snprintf(big + len, sizeof big - len, "%d %d %d.25\n", i, i, i);
    char *p = write_bytes(big, len, 1);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    char gzb[20000];
    size_t gl = fread(gzb, 1, sizeof gzb, f);
    fclose(f);
    assert_true(gl > 100);
    f = fopen(p, "wb");
    assert_non_null(f);
    fwrite(gzb, 1, gl / 2, f);
    fclose(f);
    int st = ildl_mm_read(p, &A, msg, sizeof msg);
    assert_true(st == ILDL_ERR_IO || st == ILDL_ERR_FORMAT);
    assert_non_null(strstr(msg, "line"));
    unlink(p);
    free(p);
    /* writing where no file can be created */
    ildl_csr B;
    ildl_test_laplace2d(3, 0.0, &B);
    assert_int_equal(ildl_mm_write("/nonexistent/dir/out.mtx", &B, msg, sizeof msg), ILDL_ERR_IO);
    assert_true(strlen(msg) > 0);
    ildl_csr_free(&B);
}

/* A successful result must be structurally sound; a failure must explain itself. */
static void fuzz_one(const char *data, size_t len, int gz)
{
    char *p = write_bytes(data, len, gz);
    ildl_csr A;
    char msg[256];
    msg[0] = '\0';
    int st = ildl_mm_read(p, &A, msg, sizeof msg);
    if (st == ILDL_SUCCESS) {
        check_structure(&A);
        ildl_csr_free(&A);
    } else {
        assert_true(st > 0 && st <= ILDL_ERR_INTERNAL);
        assert_true(strlen(msg) > 0);
        assert_non_null(strstr(msg, "line"));
    }
    unlink(p);
    free(p);
}

static void test_fuzz(void **state)
{
    (void)state;
    uint64_t s = 12345;
    static const char *pieces[] = {"1", "2", "3", " ", "\t", "\n", "%", "-", "e", ".", "nan",
                                   "1e999", "0", "99999999999", "\r", "x", "+", "%%MatrixMarket"};
    const char *base = HG "4 4 6\n1 1 1\n2 2 2\n3 1 5\n1 3 5\n4 4 -1\n3 3 0\n";
    size_t blen = strlen(base);
    char buf[4096];
    for (int it = 0; it < 600; it++) {
        size_t len = 0;
        int mode = it % 3;
        if (mode == 0) { /* random bytes (NULs included) after a valid banner */
            len = (size_t)snprintf(buf, sizeof buf, "%s", HS);
            size_t extra = (size_t)(ildl_test_rand(&s) * 300);
            for (size_t k = 0; k < extra; k++) buf[len++] = (char)(ildl_test_rand(&s) * 256);
        } else if (mode == 1) { /* a valid file with a few bytes overwritten */
            memcpy(buf, base, blen);
            len = blen;
            int nm = 1 + (int)(ildl_test_rand(&s) * 4);
            for (int m = 0; m < nm; m++) {
                size_t at = 16 + (size_t)(ildl_test_rand(&s) * (double)(blen - 16));
                if (at >= len) at = len - 1;
                buf[at] = (char)(ildl_test_rand(&s) * 256);
            }
        } else { /* lines assembled from number-like pieces */
            len = (size_t)snprintf(buf, sizeof buf, "%s", ildl_test_rand(&s) < 0.5 ? HS : HG);
            if (ildl_test_rand(&s) < 0.8) len += (size_t)snprintf(buf + len, sizeof buf - len, "4 4 5\n");
            int np = (int)(ildl_test_rand(&s) * 60);
            for (int k = 0; k < np; k++) {
                const char *pc = pieces[(size_t)(ildl_test_rand(&s) * (sizeof pieces / sizeof *pieces))];
                size_t pl = strlen(pc);
                if (len + pl + 1 >= sizeof buf) break;
                memcpy(buf + len, pc, pl);
                len += pl;
            }
        }
        fuzz_one(buf, len, it % 7 == 0);
    }
    /* a line far beyond the reader's line limit, and a last line without a newline */
    size_t big = (1 << 21) + 100;
    char *huge = malloc(big);
    assert_non_null(huge);
    size_t hl = (size_t)snprintf(huge, big, HS "2 2 1\n1 1 ");
    memset(huge + hl, '1', big - hl - 1);
    fuzz_one(huge, big - 1, 0);
    free(huge);
    fuzz_one(HS "1 1 1\n1 1 3", strlen(HS "1 1 1\n1 1 3"), 0);
}

/* ------------------------------------------------------------------ real matrices */

/* Naive independent reader of a symmetric coordinate file into a dense matrix. */
static double *naive_dense(const char *path, int32_t *n_out)
{
    gzFile f = gzopen(path, "rb");
    assert_non_null(f);
    char line[1024];
    int n = -1, m = 0;
    long long nz = 0, got = 0;
    double *D = NULL;
    int sym = 0;
    while (gzgets(f, line, sizeof line)) {
        if (strncmp(line, "%%MatrixMarket", 14) == 0) {
            sym = strstr(line, "symmetric") != NULL;
            continue;
        }
        if (line[0] == '%' || line[0] == '\n') continue;
        if (n < 0) {
            assert_int_equal(sscanf(line, "%d %d %lld", &n, &m, &nz), 3);
            assert_int_equal(n, m);
            D = calloc((size_t)n * (size_t)n, sizeof(double));
            assert_non_null(D);
            continue;
        }
        int i, j;
        double v;
        assert_int_equal(sscanf(line, "%d %d %lf", &i, &j, &v), 3);
        D[(size_t)(i - 1) * n + (j - 1)] += v;
        if (sym && i != j) D[(size_t)(j - 1) * n + (i - 1)] += v;
        got++;
    }
    gzclose(f);
    assert_int_equal(got, nz);
    *n_out = n;
    return D;
}

typedef struct {
    const char *name;
    int32_t n;
    int64_t full_nnz; /* "full" column of SOURCES.md */
} real_case;

static void check_real(const char *path, const real_case *rc, int dense_check)
{
    ildl_csr A, B;
    char msg[256];
    double t = ildl_wtime();
    int st = ildl_mm_read(path, &A, msg, sizeof msg);
    t = ildl_wtime() - t;
    if (st) print_error("%s: %s\n", path, msg);
    assert_int_equal(st, ILDL_SUCCESS);
    printf("  %s: n=%d nnz=%lld read in %.3f s\n", rc->name, (int)A.n, (long long)A.rowptr[A.n], t);
    assert_int_equal(A.n, rc->n);
    assert_int_equal(A.rowptr[A.n], rc->full_nnz);
    check_structure(&A);
    if (dense_check) {
        int32_t n;
        double *D = naive_dense(path, &n);
        double *E = ildl_test_dense(&A);
        assert_int_equal(n, A.n);
        assert_memory_equal(D, E, sizeof(double) * (size_t)n * (size_t)n);
        free(D);
        free(E);
    }
    /* round trip through a compressed file */
    char *p = tmp_path(".mtx.gz");
    assert_int_equal(ildl_mm_write(p, &A, msg, sizeof msg), ILDL_SUCCESS);
    assert_int_equal(ildl_mm_read(p, &B, msg, sizeof msg), ILDL_SUCCESS);
    assert_same_csr(&A, &B);
    unlink(p);
    free(p);
    ildl_csr_free(&A);
    ildl_csr_free(&B);
}

static void test_shared_matrices(void **state)
{
    (void)state;
    static const real_case cases[] = {
        {"tuma2.mtx.gz", 12992, 49365},
        {"sqd_genhs28_2x2_it0.mtx.gz", 18, 84},
        {"cutest_kkt_HYDCAR20_0000.mtx.gz", 198, 1567},
        {"sqd_powell20_3x3_it10.mtx.gz", 40000, 120000},
    };
    int ran = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *path = ildl_test_shared_matrix(cases[k].name);
        if (!path) continue;
        char copy[4096];
        snprintf(copy, sizeof copy, "%s", path);
        check_real(copy, &cases[k], cases[k].n <= 200);
        ran++;
    }
    if (!ran) skip();
}

/* The matrices shipped in data/ must always be readable (they are part of the repo). */
static void test_data_matrices(void **state)
{
    (void)state;
    static const real_case cases[] = {
        {"cutest_kkt_CRESC100_0000.mtx.gz", 806, 4206},
        {"sqd_genhs28_2x2_it0.mtx.gz", 18, 84},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char copy[4096];
        snprintf(copy, sizeof copy, "%s", ildl_test_data_file(cases[k].name));
        check_real(copy, &cases[k], 1);
    }
}

/* ------------------------------------------------------------------ writer */

static void test_round_trip(void **state)
{
    (void)state;
    ildl_csr A, B;
    char msg[256];
    ildl_test_random_sym(300, 6, 2.0, 0.2, 99, &A); /* includes exact-zero diagonals */
    /* values that only survive with 17 significant digits, plus extremes */
    A.val[0] = 1.0 / 3.0;
    A.val[1] = -0.0;
    A.val[2] = 1e-300;
    A.val[3] = -1.7976931348623157e308;
    A.val[4] = 4.9406564584124654e-324;
    /* keep the pattern symmetric in values too: set the mirrored entries alike */
    for (int k = 0; k < 5; k++) {
        int32_t i = 0;
        while (A.rowptr[i + 1] <= k) i++;
        int32_t j = A.col[k];
        for (int64_t q = A.rowptr[j]; q < A.rowptr[j + 1]; q++)
            if (A.col[q] == i) A.val[q] = A.val[k];
    }
    for (int gz = 0; gz < 2; gz++) {
        char *p = tmp_path(gz ? ".mtx.gz" : ".mtx");
        assert_int_equal(ildl_mm_write(p, &A, msg, sizeof msg), ILDL_SUCCESS);
        /* compressed exactly when the name says so */
        FILE *f = fopen(p, "rb");
        assert_non_null(f);
        unsigned char magic[2] = {0, 0};
        assert_int_equal(fread(magic, 1, 2, f), 2);
        fclose(f);
        assert_int_equal(magic[0] == 0x1f && magic[1] == 0x8b, gz);
        assert_int_equal(ildl_mm_read(p, &B, msg, sizeof msg), ILDL_SUCCESS);
        assert_same_csr(&A, &B);
        ildl_csr_free(&B);
        unlink(p);
        free(p);
    }
    ildl_csr_free(&A);
}

static void test_write_format(void **state)
{
    (void)state;
    ildl_csr A;
    char msg[256];
    assert_int_equal(read_text(REF_LOWER, 0, &A, msg, sizeof msg), ILDL_SUCCESS);
    char *p = tmp_path(".mtx");
    assert_int_equal(ildl_mm_write(p, &A, msg, sizeof msg), ILDL_SUCCESS);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[256];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "%%MatrixMarket matrix coordinate real symmetric\n");
    int nrow = -1, ncol = -1, i, j;
    long long nz = -1, entries = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '%') continue;
        if (nrow < 0) {
            assert_int_equal(sscanf(line, "%d %d %lld", &nrow, &ncol, &nz), 3);
            continue;
        }
        double v;
        assert_int_equal(sscanf(line, "%d %d %lf", &i, &j, &v), 3);
        assert_true(j <= i); /* lower triangle only */
        assert_true(v == REF_D[(i - 1) * 4 + (j - 1)]);
        entries++;
    }
    fclose(f);
    assert_int_equal(nrow, 4);
    assert_int_equal(ncol, 4);
    assert_int_equal(nz, 7);
    assert_int_equal(entries, 7);
    unlink(p);
    free(p);
    ildl_csr_free(&A);
}

/* ------------------------------------------------------------------ vectors */

static int read_vec_want(const char *text, int gz, int32_t want_n, double **x, int32_t *n, char *msg, size_t ml)
{
    char *p = write_bytes(text, strlen(text), gz);
    int st = ildl_mm_read_vector(p, want_n, x, n, msg, ml);
    unlink(p);
    free(p);
    return st;
}

static int read_vec_text(const char *text, int gz, double **x, int32_t *n, char *msg, size_t ml)
{
    char *p = write_bytes(text, strlen(text), gz);
    int st = ildl_mm_read_vector(p, 0, x, n, msg, ml);
    unlink(p);
    free(p);
    return st;
}

static void test_vectors(void **state)
{
    (void)state;
    static const double want[3] = {1.5, -2, 1e-3};
    static const char *good[] = {
        "%%MatrixMarket matrix array real general\n% c\n3 1\n1.5\n-2\n1e-3\n",
        "%%MatrixMarket matrix array real general\n1 3\n1.5\n-2\n0.001\n",
        "%%MatrixMarket matrix coordinate real general\n3 1 3\n3 1 1e-3\n1 1 1.5\n2 1 -2\n",
        "1.5\n-2\n\n1e-3\n",
        "% plain with comment\n1.5\r\n-2\r\n0.001",
    };
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        double *x = NULL;
        int32_t n = 0;
        char msg[256];
        int st = read_vec_text(good[k], (int)(k % 2), &x, &n, msg, sizeof msg);
        if (st) print_error("vector case %zu: %s\n", k, msg);
        assert_int_equal(st, ILDL_SUCCESS);
        assert_int_equal(n, 3);
        assert_memory_equal(x, want, sizeof want);
        free(x);
    }
    static const struct { const char *text; int status; } bad[] = {
        {"%%MatrixMarket matrix array real general\n3 1\n1\n2\n", ILDL_ERR_FORMAT},
        {"%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n", ILDL_ERR_FORMAT},
        {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", ILDL_ERR_FORMAT},
        {"%%MatrixMarket matrix array complex general\n1 1\n1 0\n", ILDL_ERR_FORMAT},
        {"%%MatrixMarket matrix array real general\n0 1\n", ILDL_ERR_EMPTY},
        {"1\nnan\n", ILDL_ERR_NAN_INF},
        {"1\n2x\n", ILDL_ERR_FORMAT},
        {"% nothing\n", ILDL_ERR_EMPTY},
        {"%%MatrixMarket matrix coordinate real general\n2 1 2\n1 1 1.7e308\n1 1 1.7e308\n", ILDL_ERR_NAN_INF},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        double *x = (double *)1;
        int32_t n = -1;
        char msg[256] = "";
        int st = read_vec_text(bad[k].text, 0, &x, &n, msg, sizeof msg);
        if (st != bad[k].status) print_error("bad vector %zu: %d %s\n", k, st, msg);
        assert_int_equal(st, bad[k].status);
        assert_null(x);
        assert_non_null(strstr(msg, "line"));
    }
    /* the caller's length: every good vector with want_n = 3, and refused with 4 -- a header
     * declaring another length before anything of its size is allocated (a coordinate header
     * "2000000000 1 0" once allocated 16 GB) */
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        double *x = NULL;
        int32_t n = 0;
        char msg[256];
        assert_int_equal(read_vec_want(good[k], 0, 3, &x, &n, msg, sizeof msg), ILDL_SUCCESS);
        assert_int_equal(n, 3);
        free(x);
        x = (double *)1;
        assert_int_equal(read_vec_want(good[k], 0, 4, &x, &n, msg, sizeof msg), ILDL_ERR_SIZE_MISMATCH);
        assert_null(x);
        assert_non_null(strstr(msg, "line"));
        x = (double *)1;
        assert_int_equal(read_vec_want(good[k], 0, 2, &x, &n, msg, sizeof msg), ILDL_ERR_SIZE_MISMATCH);
        assert_null(x);
    }
    double *x = (double *)1;
    int32_t n = 0;
    char msg[256];
    assert_int_equal(read_vec_want("%%MatrixMarket matrix coordinate real general\n2000000000 1 0\n", 0, 5, &x, &n,
                                   msg, sizeof msg), ILDL_ERR_SIZE_MISMATCH);
    assert_non_null(strstr(msg, "line 2"));
    assert_null(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symmetric_lower),
        cmocka_unit_test(test_symmetric_upper_and_mixed),
        cmocka_unit_test(test_general_symmetric),
        cmocka_unit_test(test_pattern_and_integer),
        cmocka_unit_test(test_duplicates_summed),
        cmocka_unit_test(test_comments_blank_crlf_case),
        cmocka_unit_test(test_gzip_file),
        cmocka_unit_test(test_empty_rows_allowed),
        cmocka_unit_test(test_general_near_overflow),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_io_errors),
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_shared_matrices),
        cmocka_unit_test(test_data_matrices),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_write_format),
        cmocka_unit_test(test_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
