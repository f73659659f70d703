/* mmio.c -- the Matrix Market matrix reader (ildl_mm_read) through zlib, so .mtx and .mtx.gz
 * read alike; the vector reader is mmio_vector.c, the writer mmio_write.c, and the parsing
 * they share mmio_parse.c.
 *
 * Reading keeps every entry as a triplet tagged with its file line, so that errors found
 * only after the whole file is in (a missing symmetric partner, say) can still name the
 * line a user has to look at. Triplets are bucketed by row, sorted by column within each
 * row and duplicates summed in file order, which keeps the result deterministic. */
#include "io/mmio.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "blockildl.h"
#include "core/util.h"
#include "io/mmio_internal.h"

#define MM_SYM_TOL 1e-12 /* relative tolerance for symmetry of "general" files */

/* ------------------------------------------------------------------ triplets */

/* Order within a row: by column, then by file line (so sums happen in file order). */
static int mm_trip_before(const mm_trip *a, const mm_trip *b)
{
    return a->j < b->j || (a->j == b->j && a->line < b->line);
}

static int mm_trip_cmp(const void *a, const void *b)
{
    const mm_trip *x = a, *y = b;
    return mm_trip_before(x, y) ? -1 : (mm_trip_before(y, x) ? 1 : 0);
}

static void mm_sort_row(mm_trip *t, int64_t len)
{
    if (len > 24) {
        qsort(t, (size_t)len, sizeof(mm_trip), mm_trip_cmp);
        return;
    }
    for (int64_t a = 1; a < len; a++) {
        mm_trip x = t[a];
        int64_t b = a;
        for (; b > 0 && mm_trip_before(&x, &t[b - 1]); b--) t[b] = t[b - 1];
        t[b] = x;
    }
}

/* Bucket nt triplets by row into *out (sorted by column, duplicates summed, first line
 * kept) with row pointers *rp [n+1]. Frees nothing of t. ILDL_ERR_NAN_INF (message in msg)
 * when duplicates sum to an infinity, or ILDL_ERR_OUT_OF_MEMORY. */
static int mm_rows(int32_t n, const mm_trip *t, int64_t nt, int64_t **rp_out, mm_trip **out, char *msg,
                   size_t msglen)
{
    int64_t *rp = ildl_calloc((size_t)n + 1, sizeof(int64_t));
    int64_t *next = ildl_malloc(sizeof(int64_t) * (size_t)n);
    mm_trip *s = ildl_malloc(sizeof(mm_trip) * (size_t)nt);
    if (!rp || !next || !s) {
        free(rp); free(next); free(s);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    for (int64_t k = 0; k < nt; k++) rp[t[k].i + 1]++;
    for (int32_t i = 0; i < n; i++) rp[i + 1] += rp[i];
    memcpy(next, rp, sizeof(int64_t) * (size_t)n);
    for (int64_t k = 0; k < nt; k++) s[next[t[k].i]++] = t[k];
    free(next);
    /* sort and compact each row in place; rp is rewritten as rows shrink */
    int64_t q = 0, start = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t end = rp[i + 1];
        mm_sort_row(s + start, end - start);
        int64_t first = q;
        for (int64_t p = start; p < end; p++) {
            if (q > first && s[q - 1].j == s[p].j) {
                s[q - 1].v += s[p].v;
                if (!ildl_isfinite(s[q - 1].v)) {
                    ildl_msg(msg, msglen, "line %lld: the entries (%d,%d) sum to %g", (long long)s[p].line,
                             (int)i + 1, (int)s[p].j + 1, s[q - 1].v);
                    free(rp);
                    free(s);
                    return ILDL_ERR_NAN_INF;
                }
            } else {
                s[q++] = s[p];
            }
        }
        rp[i] = first;
        start = end;
    }
    rp[n] = q;
    *rp_out = rp;
    *out = s;
    return ILDL_SUCCESS;
}

/* Position of column j in the sorted row segment s[lo..hi), or -1. */
static int64_t mm_find(const mm_trip *s, int64_t lo, int64_t hi, int32_t j)
{
    int64_t end = hi;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s[mid].j < j) lo = mid + 1;
        else hi = mid;
    }
    return (lo < end && s[lo].j == j) ? lo : -1;
}

/* Full symmetric CSR from the summed lower triangle (rp, s): each row is its own lower part
 * followed by the mirrored entries of later rows, which arrive in increasing order. */
static int mm_mirror(int32_t n, const int64_t *rp, const mm_trip *s, ildl_csr *A)
{
    int64_t nl = rp[n], off = 0;
    for (int64_t p = 0; p < nl; p++) off += (s[p].j != s[p].i);
    int64_t *cnt = ildl_calloc((size_t)n + 1, sizeof(int64_t));
    if (!cnt) return ILDL_ERR_OUT_OF_MEMORY;
    int st = ildl_csr_alloc(n, nl + off, A);
    if (st) {
        free(cnt);
        return st;
    }
    for (int32_t i = 0; i < n; i++) cnt[i] = rp[i + 1] - rp[i];
    for (int64_t p = 0; p < nl; p++)
        if (s[p].j != s[p].i) cnt[s[p].j]++;
    A->rowptr[0] = 0;
    for (int32_t i = 0; i < n; i++) A->rowptr[i + 1] = A->rowptr[i] + cnt[i];
    for (int32_t i = 0; i < n; i++) {
        int64_t q = A->rowptr[i];
        for (int64_t p = rp[i]; p < rp[i + 1]; p++, q++) {
            A->col[q] = s[p].j;
            A->val[q] = s[p].v;
        }
        cnt[i] = q; /* next free slot of row i */
    }
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
            int32_t j = s[p].j;
            if (j == i) continue;
            A->col[cnt[j]] = i;
            A->val[cnt[j]++] = s[p].v;
        }
    free(cnt);
    return ILDL_SUCCESS;
}

/* Check that the summed general matrix (rp, s) is symmetric, averaging values within the
 * tolerance so the result is exactly symmetric; copy it into A. */
static int mm_general(int32_t n, const int64_t *rp, mm_trip *s, ildl_csr *A, char *msg,
                      size_t msglen)
{
    for (int32_t i = 0; i < n; i++) {
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
            int32_t j = s[p].j;
            if (j >= i) continue; /* each pair is checked once, from its lower entry */
            int64_t q = mm_find(s, rp[j], rp[j + 1], i);
            if (q < 0) {
                ildl_msg(msg, msglen,
                         "line %lld: entry (%d,%d) has no matching (%d,%d): the general matrix "
                         "is not symmetric", (long long)s[p].line, (int)i + 1, (int)j + 1,
                         (int)j + 1, (int)i + 1);
                return ILDL_ERR_NOT_SYMMETRIC;
            }
            double a = s[p].v, b = s[q].v;
            if (fabs(a - b) > MM_SYM_TOL * fmax(fabs(a), fabs(b))) {
                ildl_msg(msg, msglen,
                         "line %lld: a(%d,%d) = %.17g but a(%d,%d) = %.17g (line %lld): the general "
                         "matrix is not symmetric", (long long)s[p].line, (int)i + 1, (int)j + 1,
                         a, (int)j + 1, (int)i + 1, b, (long long)s[q].line);
                return ILDL_ERR_NOT_SYMMETRIC;
            }
            s[p].v = s[q].v = a + 0.5 * (b - a); /* 0.5 * (a + b) would overflow near DBL_MAX; the
                                                      two have one sign, so b - a cannot */
        }
        /* an upper entry whose lower partner is missing is caught from the partner's row */
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
            int32_t j = s[p].j;
            if (j <= i) continue;
            if (mm_find(s, rp[j], rp[j + 1], i) < 0) {
                ildl_msg(msg, msglen,
                         "line %lld: entry (%d,%d) has no matching (%d,%d): the general matrix "
                         "is not symmetric", (long long)s[p].line, (int)i + 1, (int)j + 1,
                         (int)j + 1, (int)i + 1);
                return ILDL_ERR_NOT_SYMMETRIC;
            }
        }
    }
    int64_t nnz = rp[n];
    int st = ildl_csr_alloc(n, nnz, A);
    if (st) return st;
    memcpy(A->rowptr, rp, sizeof(int64_t) * ((size_t)n + 1));
    for (int64_t p = 0; p < nnz; p++) {
        A->col[p] = s[p].j;
        A->val[p] = s[p].v;
    }
    return ILDL_SUCCESS;
}

/* ------------------------------------------------------------------ public */

/* Read a symmetric matrix (mmio.h). */
int ildl_mm_read(const char *path, ildl_csr *A, char *msg, size_t msglen)
{
    mm_reader r = {0};
    mm_header h;
    mm_trip *t = NULL, *s = NULL;
    int64_t *rp = NULL;
    long long sz[3];
    int st;
    ildl_msg(msg, msglen, "%s", "");
    if (!path || !A) {
        ildl_msg(msg, msglen, "NULL argument");
        return ILDL_ERR_NULL_ARGUMENT;
    }
    memset(A, 0, sizeof *A);
    st = ildl_mm_open(path, msg, msglen, &r);
    if (st == ILDL_ERR_OUT_OF_MEMORY) return st;
    if (st) goto cleanup;
    gzbuffer(r.f, 1 << 17);
    st = ildl_mm_read_banner(&r, &h);
    if (st) goto cleanup;
    if (h.format != MM_COORD) {
        ildl_msg(msg, msglen, "line 1: dense 'array' format not supported for a sparse matrix "
                 "(use coordinate)");
        st = ILDL_ERR_FORMAT;
        goto cleanup;
    }
    st = ildl_mm_read_size(&r, 3, sz);
    if (st) goto cleanup;
    if (sz[0] != sz[1]) {
        ildl_msg(msg, msglen, "line %lld: matrix is %lld x %lld, not square", (long long)r.line,
                 sz[0], sz[1]);
        st = ILDL_ERR_NOT_SQUARE;
        goto cleanup;
    }
    if (sz[0] == 0) {
        ildl_msg(msg, msglen, "line %lld: matrix order n = 0: the matrix is empty",
                 (long long)r.line);
        st = ILDL_ERR_EMPTY;
        goto cleanup;
    }
    if (sz[0] >= INT32_MAX) {
        ildl_msg(msg, msglen, "line %lld: order %lld too large (32-bit indices)",
                 (long long)r.line, sz[0]);
        st = ILDL_ERR_INDEX_RANGE;
        goto cleanup;
    }
    /* a symmetric file with more entries than n^2 cannot be valid either; only the 64-bit
     * bound matters for the arithmetic below (full nnz <= 2*nnz) */
    if (sz[2] > INT64_MAX / 4) {
        ildl_msg(msg, msglen, "line %lld: entry count %lld too large", (long long)r.line, sz[2]);
        st = ILDL_ERR_FORMAT;
        goto cleanup;
    }
    int32_t n = (int32_t)sz[0];
    int sym = h.symmetry == MM_SYMMETRIC;
    /* every row needs an entry, and a stored entry covers at most two rows (one of each pair of
     * a symmetric file) or one: refuse before anything of size n is allocated, so that the
     * n-sized arrays below are bounded by what the file holds */
    if ((sym ? 2 * sz[2] : sz[2]) < sz[0]) {
        ildl_msg(msg, msglen, "line %lld: %lld %sentries cannot cover %lld rows: some row is empty",
                 (long long)r.line, sz[2], sym ? "symmetric " : "", sz[0]);
        st = ILDL_ERR_SINGULAR;
        goto cleanup;
    }
    st = ildl_mm_read_entries(&r, &h, n, n, sz[2], sym, &t);
    if (st) goto cleanup;
    st = mm_rows(n, t, (int64_t)sz[2], &rp, &s, msg, msglen);
    if (st) {
        if (st == ILDL_ERR_OUT_OF_MEMORY) ildl_msg(msg, msglen, "out of memory");
        goto cleanup;
    }
    free(t);
    t = NULL;
    st = sym ? mm_mirror(n, rp, s, A) : mm_general(n, rp, s, A, msg, msglen);
    if (st == ILDL_ERR_OUT_OF_MEMORY) ildl_msg(msg, msglen, "out of memory");
cleanup:
    if (r.f) gzclose(r.f);
    free(r.buf);
    free(t);
    free(s);
    free(rp);
    if (st) ildl_csr_free(A);
    return st;
}
