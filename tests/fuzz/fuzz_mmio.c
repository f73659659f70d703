/* fuzz_mmio.c -- libFuzzer harness of the Matrix Market readers (src/io/mmio.c).
 *
 * The input is the file itself, arbitrary bytes: plain text, or gzip when it starts with the
 * gzip magic 1f 8b (the readers open files through zlib's gzopen, which inflates exactly
 * those). Each input is written to a private temporary file and read by ildl_mm_read and by
 * ildl_mm_read_vector. Oracles (docs/reliability.md), each an abort() with a message:
 *   M1 status: one the reader documents (mmio.h); ILDL_ERR_IO only for gzip input (a plain
 *      file always reads); a failure leaves a non-empty, NUL-terminated message in msglen
 *      bytes (a heap buffer of exactly msglen bytes, so AddressSanitizer sees any overrun)
 *   M2 a matrix read successfully is what mmio.h promises: n >= 1, rowptr from 0 and
 *      non-decreasing, columns in range and strictly increasing in every row (sorted, no
 *      duplicates), every value finite, pattern and values exactly symmetric
 *   M3 a vector read successfully has n >= 1 finite values; a failed read returns no vector
 *   M4 plain and gzip read alike: a plain input is gzip-compressed by the harness and read
 *      again, a gzip input (one complete member) is inflated by the harness and read again as
 *      plain text; status, message, matrix and vector must agree bit for bit
 * Memory and undefined behaviour: AddressSanitizer, LeakSanitizer, UBSan; allocations are
 * bounded by libFuzzer's -malloc_limit_mb (tests/fuzz/CMakeLists.txt, run_fuzz.sh).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, pwrite, ftruncate, setenv */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "blockildl.h"
#include "core/csr.h"
#include "io/mmio.h"

#define FUZZ_MAX_INPUT (1u << 20)    /* longer inputs are skipped (keeps executions fast) */
#define MAX_INFLATED (4u << 20) /* M4: a gzip input inflating to more is not compared */

static char g_path[2][256];
static int g_fd[2] = {-1, -1};

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_mmio: oracle failed: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

static void cleanup_files(void)
{
    for (int k = 0; k < 2; k++)
        if (g_fd[k] >= 0) {
            close(g_fd[k]);
            unlink(g_path[k]);
        }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("TMPDIR");
    if (!dir || !dir[0]) dir = "/tmp";
    for (int k = 0; k < 2; k++) {
        snprintf(g_path[k], sizeof g_path[k], "%s/ildl_fuzz_mmio_%c_XXXXXX", dir, k ? 'b' : 'a');
        g_fd[k] = mkstemp(g_path[k]);
        if (g_fd[k] < 0) {
            fprintf(stderr, "fuzz_mmio: cannot create a temporary file in %s: %s\n", dir, strerror(errno));
            exit(1);
        }
    }
    atexit(cleanup_files);
    return 0;
}

/* Replace the content of temporary file k by buf[len]. */
static void put_file(int k, const uint8_t *buf, size_t len)
{
    if (ftruncate(g_fd[k], 0) != 0) fail("harness", "ftruncate");
    size_t off = 0;
    while (off < len) {
        ssize_t w = pwrite(g_fd[k], buf + off, len - off, (off_t)off);
        if (w <= 0) fail("harness", "pwrite");
        off += (size_t)w;
    }
}

/* ------------------------------------------------------------------ one read of both readers */

typedef struct {
    int st_m, st_v;
    char *msg_m, *msg_v; /* heap buffers of msglen bytes */
    ildl_csr A;
    double *x;
    int32_t nx;
} result;

static int is_member(int st, const int *set, int nset)
{
    for (int k = 0; k < nset; k++)
        if (st == set[k]) return 1;
    return 0;
}

static void check_msg(const char *who, const char *msg, size_t msglen, int st)
{
    if (!memchr(msg, '\0', msglen)) fail(who, "message not NUL-terminated within msglen");
    if (st != ILDL_SUCCESS && msglen > 1 && msg[0] == '\0') fail(who, "failure without a message");
}

/* M2: the matrix a successful ildl_mm_read returns. */
static void check_matrix(const ildl_csr *A)
{
    char d[160];
    int32_t n = A->n;
    if (n < 1 || !A->rowptr) fail("M2 matrix", "n < 1 or no rowptr");
    if (A->rowptr[0] != 0) fail("M2 matrix", "rowptr[0] != 0");
    for (int32_t i = 0; i < n; i++)
        if (A->rowptr[i + 1] < A->rowptr[i]) fail("M2 matrix", "rowptr decreases");
    int64_t nnz = A->rowptr[n];
    if (nnz > 0 && (!A->col || !A->val)) fail("M2 matrix", "entries but no col/val arrays");
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = A->col[p];
            if (j < 0 || j >= n) {
                snprintf(d, sizeof d, "row %d: column %d outside 0..%d", (int)i, (int)j, (int)n - 1);
                fail("M2 matrix", d);
            }
            if (p > A->rowptr[i] && A->col[p - 1] >= j) {
                snprintf(d, sizeof d, "row %d: columns %d, %d not strictly increasing", (int)i,
                         (int)A->col[p - 1], (int)j);
                fail("M2 matrix", d);
            }
            if (!isfinite(A->val[p])) {
                snprintf(d, sizeof d, "entry (%d,%d) = %g returned with ILDL_SUCCESS", (int)i, (int)j, A->val[p]);
                fail("M2 matrix", d);
            }
        }
    /* exact symmetry: (j,i) exists with the same bits */
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = A->col[p];
            int64_t lo = A->rowptr[j], hi = A->rowptr[j + 1];
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (A->col[mid] < i) lo = mid + 1;
                else hi = mid;
            }
            if (lo >= A->rowptr[j + 1] || A->col[lo] != i) {
                snprintf(d, sizeof d, "entry (%d,%d) has no (%d,%d)", (int)i, (int)j, (int)j, (int)i);
                fail("M2 matrix", d);
            }
            if (memcmp(&A->val[p], &A->val[lo], sizeof(double)) != 0) {
                snprintf(d, sizeof d, "a(%d,%d) = %.17g but a(%d,%d) = %.17g", (int)i, (int)j, A->val[p],
                         (int)j, (int)i, A->val[lo]);
                fail("M2 matrix", d);
            }
        }
}

static void read_both(const char *path, size_t msglen, int gz, result *R)
{
    static const int doc_m[] = {ILDL_SUCCESS, ILDL_ERR_IO, ILDL_ERR_FORMAT, ILDL_ERR_NOT_SQUARE,
                                ILDL_ERR_INDEX_RANGE, ILDL_ERR_NAN_INF, ILDL_ERR_NOT_SYMMETRIC,
                                ILDL_ERR_SINGULAR, ILDL_ERR_EMPTY, ILDL_ERR_OUT_OF_MEMORY};
    static const int doc_v[] = {ILDL_SUCCESS, ILDL_ERR_IO, ILDL_ERR_FORMAT, ILDL_ERR_INDEX_RANGE,
                                ILDL_ERR_NAN_INF, ILDL_ERR_EMPTY, ILDL_ERR_SIZE_MISMATCH,
                                ILDL_ERR_OUT_OF_MEMORY};
    char d[96];
    memset(R, 0, sizeof *R);
    R->msg_m = malloc(msglen);
    R->msg_v = malloc(msglen);
    if (!R->msg_m || !R->msg_v) fail("harness", "malloc");
    memset(R->msg_m, 'Z', msglen);
    memset(R->msg_v, 'Z', msglen);

    R->st_m = ildl_mm_read(path, &R->A, R->msg_m, msglen);
    if (!is_member(R->st_m, doc_m, (int)(sizeof doc_m / sizeof *doc_m))) {
        snprintf(d, sizeof d, "ildl_mm_read returned %d, not a documented status", R->st_m);
        fail("M1 status", d);
    }
    if (R->st_m == ILDL_ERR_IO && !gz) fail("M1 status", "ILDL_ERR_IO reading a plain file");
    check_msg("M1 ildl_mm_read", R->msg_m, msglen, R->st_m);
    if (R->st_m == ILDL_SUCCESS) check_matrix(&R->A);

    R->x = (double *)(uintptr_t)1; /* must be replaced */
    R->nx = -7;
    /* the length a caller needs, as `ildl solve --rhs` passes the matrix's n (never 0 here: a
     * coordinate header may then declare any length, which is allocated) */
    int32_t want_n = R->st_m == ILDL_SUCCESS ? R->A.n : 1 + (int32_t)(msglen % 200);
    R->st_v = ildl_mm_read_vector(path, want_n, &R->x, &R->nx, R->msg_v, msglen);
    if (!is_member(R->st_v, doc_v, (int)(sizeof doc_v / sizeof *doc_v))) {
        snprintf(d, sizeof d, "ildl_mm_read_vector returned %d, not a documented status", R->st_v);
        fail("M1 status", d);
    }
    if (R->st_v == ILDL_ERR_IO && !gz) fail("M1 status", "ILDL_ERR_IO reading a plain file (vector)");
    check_msg("M1 ildl_mm_read_vector", R->msg_v, msglen, R->st_v);
    if (R->st_v == ILDL_SUCCESS) {
        if (R->nx != want_n || !R->x) fail("M3 vector", "success with a length other than the one asked for");
        for (int32_t i = 0; i < R->nx; i++)
            if (!isfinite(R->x[i])) {
                snprintf(d, sizeof d, "x[%d] = %g returned with ILDL_SUCCESS", (int)i, R->x[i]);
                fail("M3 vector", d);
            }
    } else if (R->x != NULL) {
        fail("M3 vector", "a failed read left *x non-NULL");
    }
}

static void free_result(result *R)
{
    free(R->msg_m);
    free(R->msg_v);
    ildl_csr_free(&R->A);
    if (R->st_v == ILDL_SUCCESS) free(R->x);
}

/* M4: two reads of the same text agree bit for bit. */
static void compare(const result *a, const result *b, size_t msglen)
{
    char d[1200];
    if (a->st_m != b->st_m || strcmp(a->msg_m, b->msg_m) != 0) {
        snprintf(d, sizeof d, "ildl_mm_read: status %d '%.500s' vs %d '%.500s'", a->st_m, a->msg_m, b->st_m,
                 b->msg_m);
        fail("M4 plain vs gzip", d);
    }
    if (a->st_m == ILDL_SUCCESS) {
        int32_t n = a->A.n;
        if (b->A.n != n || memcmp(a->A.rowptr, b->A.rowptr, sizeof(int64_t) * ((size_t)n + 1)) != 0)
            fail("M4 plain vs gzip", "matrix order or row pointers differ");
        size_t nnz = (size_t)a->A.rowptr[n];
        if (nnz && (memcmp(a->A.col, b->A.col, sizeof(int32_t) * nnz) != 0 ||
                    memcmp(a->A.val, b->A.val, sizeof(double) * nnz) != 0))
            fail("M4 plain vs gzip", "matrix entries differ");
    }
    if (a->st_v != b->st_v || strcmp(a->msg_v, b->msg_v) != 0) {
        snprintf(d, sizeof d, "ildl_mm_read_vector: status %d '%.500s' vs %d '%.500s'", a->st_v, a->msg_v,
                 b->st_v, b->msg_v);
        fail("M4 plain vs gzip", d);
    }
    if (a->st_v == ILDL_SUCCESS &&
        (a->nx != b->nx || memcmp(a->x, b->x, sizeof(double) * (size_t)a->nx) != 0))
        fail("M4 plain vs gzip", "vectors differ");
    (void)msglen;
}

/* ------------------------------------------------------------------ zlib helpers (harness side) */

static uint8_t *gzip_compress(const uint8_t *data, size_t size, int level, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) fail("harness", "deflateInit2");
    size_t cap = deflateBound(&zs, (uLong)size) + 64;
    uint8_t *out = malloc(cap);
    if (!out) fail("harness", "malloc");
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)size;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) fail("harness", "deflate");
    *out_len = cap - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

/* The text of a gzip input of exactly one complete member, or NULL (corrupt, truncated,
 * followed by more bytes, or inflating to more than MAX_INFLATED). */
static uint8_t *gzip_inflate(const uint8_t *data, size_t size, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 15 + 16) != Z_OK) fail("harness", "inflateInit2");
    size_t cap = 4096, len = 0;
    uint8_t *out = malloc(cap);
    if (!out) fail("harness", "malloc");
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)size;
    int ret;
    for (;;) {
        if (len == cap) {
            if (cap >= MAX_INFLATED) { ret = Z_BUF_ERROR; break; }
            cap *= 2;
            uint8_t *nb = realloc(out, cap);
            if (!nb) fail("harness", "realloc");
            out = nb;
        }
        zs.next_out = out + len;
        zs.avail_out = (uInt)(cap - len);
        ret = inflate(&zs, Z_NO_FLUSH);
        len = cap - zs.avail_out;
        if (ret == Z_STREAM_END || (ret != Z_OK && ret != Z_BUF_ERROR)) break;
        if (ret == Z_BUF_ERROR && zs.avail_in == 0 && len < cap) break; /* truncated */
    }
    int whole = ret == Z_STREAM_END && zs.avail_in == 0;
    inflateEnd(&zs);
    if (!whole) {
        free(out);
        return NULL;
    }
    *out_len = len;
    return out;
}


/* ------------------------------------------------------------------ entry point */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) return 0;
    int gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    uint8_t *other = NULL, *text = NULL;
    size_t other_len = 0, text_len = 0;
    if (gz) {
        text = gzip_inflate(data, size, &text_len);
        /* text that is itself gzip would be inflated once more when read as a file */
        if (text && text_len >= 2 && text[0] == 0x1f && text[1] == 0x8b) {
            free(text);
            text = NULL;
        }
        other = text;
        other_len = text_len;
    } else {
        other = gzip_compress(data, size, 1 + (int)(size % 9), &other_len);
    }
    /* mostly a roomy message buffer, sometimes a short one (truncation) */
    size_t msglen = (size % 7 == 3) ? 1 + size % 40 : 512;

    result r1, r2;
    put_file(0, data, size);
    read_both(g_path[0], msglen, gz, &r1);
    if (other) {
        put_file(1, other, other_len);
        read_both(g_path[1], msglen, !gz, &r2);
        compare(&r1, &r2, msglen);
        free_result(&r2);
    }
    free_result(&r1);
    free(other);
    return 0;
}
