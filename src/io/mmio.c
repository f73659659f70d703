/* mmio.c -- Matrix Market reader/writer through zlib, so .mtx and .mtx.gz read alike.
 *
 * Reading keeps every entry as a triplet tagged with its file line, so that errors found
 * only after the whole file is in (a missing symmetric partner, say) can still name the
 * line a user has to look at. Triplets are bucketed by row, sorted by column within each
 * row and duplicates summed in file order, which keeps the result deterministic. */
#include "io/mmio.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "blockildl.h"
#include "core/util.h"

#define MM_MAX_LINE (1 << 20) /* longer lines are garbage, not Matrix Market */
#define MM_SYM_TOL 1e-12      /* relative tolerance for symmetry of "general" files */

/* ------------------------------------------------------------------ line reader */

typedef struct {
    gzFile f;
    char *buf;
    size_t cap;
    int64_t line; /* number of the line last returned (1-based) */
    char *msg;
    size_t msglen;
} mm_reader;

/* Read the next raw line into r->buf without its line ending. Returns 1 (line), 0 (end of
 * file) or a negative ILDL status (message set). */
/* Open path (plain or gzip) for reading line by line. ILDL_ERR_OUT_OF_MEMORY leaves nothing
 * to free; ILDL_ERR_IO leaves r->buf allocated (the caller's cleanup frees it). */
static int mm_open(const char *path, char *msg, size_t msglen, mm_reader *r)
{
    r->msg = msg;
    r->msglen = msglen;
    r->cap = 256;
    r->buf = ildl_malloc(r->cap);
    if (!r->buf) return ILDL_ERR_OUT_OF_MEMORY;
    r->f = gzopen(path, "rb");
    if (!r->f) {
        ildl_msg(msg, msglen, "cannot open '%s': %s", path, strerror(errno));
        return ILDL_ERR_IO;
    }
    return ILDL_SUCCESS;
}

static int mm_getline(mm_reader *r)
{
    size_t len = 0;
    r->buf[0] = '\0';
    for (;;) {
        /* gzgets reports no length: a sentinel in the last byte tells a full buffer (NUL
         * written there) from a short line holding an embedded NUL byte */
        r->buf[r->cap - 1] = 'x';
        if (!gzgets(r->f, r->buf + len, (int)(r->cap - len))) {
            int err;
            const char *es = gzerror(r->f, &err);
            if (err != Z_OK && err != Z_STREAM_END) {
                ildl_msg(r->msg, r->msglen, "line %lld: read error: %s", (long long)(r->line + 1),
                         es ? es : "unknown zlib error");
                return -ILDL_ERR_IO;
            }
            if (len == 0) return 0;
            break; /* end of file right after a full buffer */
        }
        len += strlen(r->buf + len);
        if (len > 0 && r->buf[len - 1] == '\n') break;
        if (len + 1 == r->cap && r->buf[r->cap - 1] == '\0') {
            if (r->cap >= MM_MAX_LINE) {
                ildl_msg(r->msg, r->msglen, "line %lld: line longer than %d bytes",
                         (long long)(r->line + 1), MM_MAX_LINE);
                return -ILDL_ERR_FORMAT;
            }
            char *nb = realloc(r->buf, 2 * r->cap);
            if (!nb) {
                ildl_msg(r->msg, r->msglen, "line %lld: out of memory", (long long)(r->line + 1));
                return -ILDL_ERR_OUT_OF_MEMORY;
            }
            r->buf = nb;
            r->cap *= 2;
            continue;
        }
        if (gzeof(r->f)) break; /* last line without a newline */
        ildl_msg(r->msg, r->msglen, "line %lld: NUL byte in the line", (long long)(r->line + 1));
        return -ILDL_ERR_FORMAT;
    }
    r->line++;
    while (len > 0 && (r->buf[len - 1] == '\n' || r->buf[len - 1] == '\r')) r->buf[--len] = '\0';
    return 1;
}

static int mm_isspace(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* 1 if the line holds only whitespace or is a '%' comment. */
static int mm_skippable(const char *s)
{
    while (mm_isspace(*s)) s++;
    return *s == '\0' || *s == '%';
}

/* Next line that is not blank and not a comment: 1, 0 at end of file, or -status. */
static int mm_getdata(mm_reader *r)
{
    int got;
    while ((got = mm_getline(r)) == 1)
        if (!mm_skippable(r->buf)) return 1;
    return got;
}

/* Split the next whitespace-delimited token off *p (NUL-terminating it); NULL if none. */
static char *mm_token(char **p)
{
    char *s = *p;
    while (mm_isspace(*s)) s++;
    if (*s == '\0') {
        *p = s;
        return NULL;
    }
    char *t = s;
    while (*s && !mm_isspace(*s)) s++;
    if (*s) *s++ = '\0';
    *p = s;
    return t;
}

/* Split a line into at most max tokens; returns how many there were (max+1 if more). */
static int mm_split(char *line, char **tok, int max)
{
    int k = 0;
    char *p = line, *t;
    while ((t = mm_token(&p)) != NULL) {
        if (k == max) return max + 1;
        tok[k++] = t;
    }
    return k;
}

/* Parse a whole token as a base-10 integer: 0 ok, 1 not an integer, 2 overflow. */
static int mm_parse_int(const char *t, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(t, &end, 10);
    if (end == t || *end != '\0') return 1;
    return errno == ERANGE ? 2 : 0;
}

/* Parse a whole token as a real number: 0 ok, 1 not a number (overflow gives +-Inf). */
static int mm_parse_real(const char *t, double *v)
{
    char *end;
    *v = strtod(t, &end);
    return (end == t || *end != '\0') ? 1 : 0;
}

static int mm_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return *a == *b;
}

/* ------------------------------------------------------------------ header */

/* 1 if the line starts with the (case-insensitive) %%MatrixMarket banner. */
static int mm_has_banner(const char *s)
{
    const char *b = "%%matrixmarket";
    for (; *b; b++, s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != *b) return 0;
    }
    return *s == '\0' || mm_isspace(*s);
}

enum { MM_COORD, MM_ARRAY };
enum { MM_REAL, MM_INTEGER, MM_PATTERN };
enum { MM_GENERAL, MM_SYMMETRIC };

typedef struct {
    int format, field, symmetry;
} mm_header;

/* Read and check the banner line (line 1). Unsupported kinds give ILDL_ERR_FORMAT. */
static int mm_read_banner(mm_reader *r, mm_header *h)
{
    int got = mm_getline(r);
    if (got < 0) return -got;
    if (got == 0) {
        ildl_msg(r->msg, r->msglen, "line 1: empty file, expected a %%%%MatrixMarket header");
        return ILDL_ERR_FORMAT;
    }
    char *tok[6];
    int nt = mm_split(r->buf, tok, 5);
    if (nt < 1 || !mm_ieq(tok[0], "%%MatrixMarket")) {
        ildl_msg(r->msg, r->msglen, "line 1: missing %%%%MatrixMarket header");
        return ILDL_ERR_FORMAT;
    }
    if (nt != 5) {
        ildl_msg(r->msg, r->msglen,
                 "line 1: header needs 4 words after %%%%MatrixMarket (object format field symmetry)");
        return ILDL_ERR_FORMAT;
    }
    if (!mm_ieq(tok[1], "matrix")) {
        ildl_msg(r->msg, r->msglen, "line 1: object '%.40s' not supported (only 'matrix')", tok[1]);
        return ILDL_ERR_FORMAT;
    }
    if (mm_ieq(tok[2], "coordinate")) h->format = MM_COORD;
    else if (mm_ieq(tok[2], "array")) h->format = MM_ARRAY;
    else {
        ildl_msg(r->msg, r->msglen, "line 1: unknown format '%.40s' (expected coordinate or array)",
                 tok[2]);
        return ILDL_ERR_FORMAT;
    }
    if (mm_ieq(tok[3], "real") || mm_ieq(tok[3], "double")) h->field = MM_REAL;
    else if (mm_ieq(tok[3], "integer")) h->field = MM_INTEGER;
    else if (mm_ieq(tok[3], "pattern")) h->field = MM_PATTERN;
    else {
        ildl_msg(r->msg, r->msglen,
                 "line 1: field '%.40s' not supported (only real, integer or pattern; the solver "
                 "is real)", tok[3]);
        return ILDL_ERR_FORMAT;
    }
    if (mm_ieq(tok[4], "general")) h->symmetry = MM_GENERAL;
    else if (mm_ieq(tok[4], "symmetric")) h->symmetry = MM_SYMMETRIC;
    else {
        ildl_msg(r->msg, r->msglen,
                 "line 1: symmetry '%.40s' not supported (only symmetric or general; "
                 "skew-symmetric and hermitian matrices are not real symmetric)", tok[4]);
        return ILDL_ERR_FORMAT;
    }
    return ILDL_SUCCESS;
}

/* Read the size line "rows cols [entries]" (want tokens: 2 for array, 3 for coordinate). */
static int mm_read_size(mm_reader *r, int want, long long sz[3])
{
    int got = mm_getdata(r);
    if (got < 0) return -got;
    if (got == 0) {
        ildl_msg(r->msg, r->msglen, "line %lld: end of file before the size line",
                 (long long)(r->line + 1));
        return ILDL_ERR_FORMAT;
    }
    char *tok[4];
    int nt = mm_split(r->buf, tok, 3);
    if (nt != want) {
        ildl_msg(r->msg, r->msglen, "line %lld: size line must hold %d integers (%s)",
                 (long long)r->line, want, want == 3 ? "rows cols entries" : "rows cols");
        return ILDL_ERR_FORMAT;
    }
    for (int k = 0; k < want; k++) {
        int e = mm_parse_int(tok[k], &sz[k]);
        if (e || sz[k] < 0) {
            ildl_msg(r->msg, r->msglen, "line %lld: size '%.40s' is not a non-negative integer",
                     (long long)r->line, tok[k]);
            return ILDL_ERR_FORMAT;
        }
    }
    return ILDL_SUCCESS;
}

/* ------------------------------------------------------------------ triplets */

typedef struct {
    int32_t i, j;
    double v;
    int64_t line;
} mm_trip;

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

/* Read nnz coordinate entries into t (grown as lines arrive, never trusting the declared
 * count for the allocation), checking each line. Lower-canonical if sym. */
static int mm_read_entries(mm_reader *r, const mm_header *h, int32_t nrows, int32_t ncols,
                           long long nnz, int sym, mm_trip **t_out)
{
    int want = h->field == MM_PATTERN ? 2 : 3;
    int64_t cap = nnz < 65536 ? (nnz > 0 ? nnz : 1) : 65536, k = 0;
    mm_trip *t = ildl_malloc(sizeof(mm_trip) * (size_t)cap);
    int st = ILDL_SUCCESS, got;
    if (!t) return ILDL_ERR_OUT_OF_MEMORY;
    while ((got = mm_getdata(r)) == 1) {
        char *tok[4];
        long long ii, jj;
        double v = 1.0;
        if (k == nnz) {
            ildl_msg(r->msg, r->msglen, "line %lld: more entries than the %lld declared",
                     (long long)r->line, nnz);
            st = ILDL_ERR_FORMAT;
            goto cleanup;
        }
        int nt = mm_split(r->buf, tok, want);
        if (nt != want) {
            ildl_msg(r->msg, r->msglen, "line %lld: expected %d fields (%s), found %s",
                     (long long)r->line, want, want == 2 ? "row col" : "row col value",
                     nt > want ? "more" : "fewer");
            st = ILDL_ERR_FORMAT;
            goto cleanup;
        }
        int ei = mm_parse_int(tok[0], &ii), ej = mm_parse_int(tok[1], &jj);
        if (ei == 1 || ej == 1) {
            ildl_msg(r->msg, r->msglen, "line %lld: index '%.40s' is not an integer",
                     (long long)r->line, ei == 1 ? tok[0] : tok[1]);
            st = ILDL_ERR_FORMAT;
            goto cleanup;
        }
        if (ei || ej || ii < 1 || ii > nrows || jj < 1 || jj > ncols) {
            ildl_msg(r->msg, r->msglen, "line %lld: index (%.40s,%.40s) outside 1..%d x 1..%d",
                     (long long)r->line, tok[0], tok[1], (int)nrows, (int)ncols);
            st = ILDL_ERR_INDEX_RANGE;
            goto cleanup;
        }
        if (want == 3) {
            int bad;
            if (h->field == MM_INTEGER) {
                long long iv;
                bad = mm_parse_int(tok[2], &iv);
                v = (double)iv;
            } else {
                bad = mm_parse_real(tok[2], &v);
            }
            if (bad) {
                ildl_msg(r->msg, r->msglen, "line %lld: value '%.40s' is not %s",
                         (long long)r->line, tok[2],
                         h->field == MM_INTEGER ? "an integer in range" : "a number");
                st = ILDL_ERR_FORMAT;
                goto cleanup;
            }
            if (!ildl_isfinite(v)) {
                ildl_msg(r->msg, r->msglen, "line %lld: value '%.40s' is not finite",
                         (long long)r->line, tok[2]);
                st = ILDL_ERR_NAN_INF;
                goto cleanup;
            }
        }
        if (k == cap) {
            int64_t nc = cap * 2 < nnz ? cap * 2 : nnz;
            mm_trip *nt2 = realloc(t, sizeof(mm_trip) * (size_t)nc);
            if (!nt2) {
                ildl_msg(r->msg, r->msglen, "line %lld: out of memory", (long long)r->line);
                st = ILDL_ERR_OUT_OF_MEMORY;
                goto cleanup;
            }
            t = nt2;
            cap = nc;
        }
        int32_t i = (int32_t)(ii - 1), j = (int32_t)(jj - 1);
        if (sym && j > i) {
            int32_t tmp = i;
            i = j;
            j = tmp;
        }
        t[k].i = i;
        t[k].j = j;
        t[k].v = v;
        t[k].line = r->line;
        k++;
    }
    if (got < 0) {
        st = -got;
        goto cleanup;
    }
    if (k < nnz) {
        ildl_msg(r->msg, r->msglen, "line %lld: end of file after %lld of the %lld declared entries",
                 (long long)(r->line + 1), (long long)k, nnz);
        st = ILDL_ERR_FORMAT;
    }
cleanup:
    if (st) free(t);
    else *t_out = t;
    return st;
}

/* ------------------------------------------------------------------ public */

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
    st = mm_open(path, msg, msglen, &r);
    if (st == ILDL_ERR_OUT_OF_MEMORY) return st;
    if (st) goto cleanup;
    gzbuffer(r.f, 1 << 17);
    st = mm_read_banner(&r, &h);
    if (st) goto cleanup;
    if (h.format != MM_COORD) {
        ildl_msg(msg, msglen, "line 1: dense 'array' format not supported for a sparse matrix "
                 "(use coordinate)");
        st = ILDL_ERR_FORMAT;
        goto cleanup;
    }
    st = mm_read_size(&r, 3, sz);
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
    st = mm_read_entries(&r, &h, n, n, sz[2], sym, &t);
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

int ildl_mm_read_vector(const char *path, int32_t want_n, double **x, int32_t *n, char *msg, size_t msglen)
{
    mm_reader r = {0};
    mm_header h = {MM_ARRAY, MM_REAL, MM_GENERAL};
    double *v = NULL;
    int64_t len = 0, cap = 0, want = -1; /* want: declared length, -1 if free-form */
    int coord = 0, st = ILDL_SUCCESS, got;
    ildl_msg(msg, msglen, "%s", "");
    if (!path || !x || !n) {
        ildl_msg(msg, msglen, "NULL argument");
        return ILDL_ERR_NULL_ARGUMENT;
    }
    *x = NULL;
    *n = 0;
    st = mm_open(path, msg, msglen, &r);
    if (st == ILDL_ERR_OUT_OF_MEMORY) return st;
    if (st) goto cleanup;
    /* peek at line 1: a Matrix Market banner, or already the first number */
    got = mm_getline(&r);
    if (got < 0) {
        st = -got;
        goto cleanup;
    }
    if (got == 1 && mm_has_banner(r.buf)) {
        /* restart the stream so the banner parser sees line 1 again */
        gzrewind(r.f);
        r.line = 0;
        st = mm_read_banner(&r, &h);
        if (st) goto cleanup;
        if (h.field == MM_PATTERN || h.symmetry != MM_GENERAL) {
            ildl_msg(msg, msglen, "line 1: a vector must be 'real general' or 'integer general'");
            st = ILDL_ERR_FORMAT;
            goto cleanup;
        }
        coord = h.format == MM_COORD;
        long long sz[3];
        st = mm_read_size(&r, coord ? 3 : 2, sz);
        if (st) goto cleanup;
        if ((sz[0] != 1 && sz[1] != 1) || sz[0] * sz[1] == 0) {
            ildl_msg(msg, msglen, "line %lld: a vector must be n x 1 with n > 0, not %lld x %lld",
                     (long long)r.line, sz[0], sz[1]);
            st = (sz[0] == 0 || sz[1] == 0) ? ILDL_ERR_EMPTY : ILDL_ERR_FORMAT;
            goto cleanup;
        }
        long long m = sz[0] > sz[1] ? sz[0] : sz[1];
        if (m >= INT32_MAX) {
            ildl_msg(msg, msglen, "line %lld: length %lld too large", (long long)r.line, m);
            st = ILDL_ERR_INDEX_RANGE;
            goto cleanup;
        }
        if (want_n > 0 && m != want_n) {
            ildl_msg(msg, msglen, "line %lld: the vector has length %lld, not the %d expected", (long long)r.line,
                     m, (int)want_n);
            st = ILDL_ERR_SIZE_MISMATCH;
            goto cleanup;
        }
        want = m;
        if (coord) {
            mm_trip *t = NULL;
            int32_t rows = (int32_t)sz[0], cols = (int32_t)sz[1];
            st = mm_read_entries(&r, &h, rows, cols, sz[2], 0, &t);
            if (st) goto cleanup;
            v = ildl_calloc((size_t)m, sizeof(double));
            if (!v) {
                free(t);
                st = ILDL_ERR_OUT_OF_MEMORY;
                goto cleanup;
            }
            for (long long k = 0; k < sz[2]; k++) {
                double *e = &v[t[k].i + t[k].j];
                *e += t[k].v;
                if (!ildl_isfinite(*e)) {
                    ildl_msg(msg, msglen, "line %lld: the entries of row %d sum to %g", (long long)t[k].line,
                             (int)(t[k].i + t[k].j) + 1, *e);
                    st = ILDL_ERR_NAN_INF;
                    break;
                }
            }
            free(t);
            if (st) goto cleanup;
            len = m;
            goto cleanup;
        }
    } else if (got == 1) {
        gzrewind(r.f);
        r.line = 0;
    }
    cap = want > 0 ? (want < 65536 ? want : 65536) : 1024;
    v = ildl_malloc(sizeof(double) * (size_t)cap);
    if (!v) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    while ((got = mm_getdata(&r)) == 1) {
        char *p = r.buf, *tok;
        while ((tok = mm_token(&p)) != NULL) {
            double d;
            if (want < 0 && want_n > 0 && len == want_n) {
                ildl_msg(msg, msglen, "line %lld: more than the %d values expected", (long long)r.line,
                         (int)want_n);
                st = ILDL_ERR_SIZE_MISMATCH;
                goto cleanup;
            }
            if (want >= 0 && len == want) {
                ildl_msg(msg, msglen, "line %lld: more values than the %lld declared",
                         (long long)r.line, (long long)want);
                st = ILDL_ERR_FORMAT;
                goto cleanup;
            }
            if (len >= INT32_MAX - 1) {
                ildl_msg(msg, msglen, "line %lld: vector too long", (long long)r.line);
                st = ILDL_ERR_INDEX_RANGE;
                goto cleanup;
            }
            if (mm_parse_real(tok, &d)) {
                ildl_msg(msg, msglen, "line %lld: value '%.40s' is not a number",
                         (long long)r.line, tok);
                st = ILDL_ERR_FORMAT;
                goto cleanup;
            }
            if (!ildl_isfinite(d)) {
                ildl_msg(msg, msglen, "line %lld: value '%.40s' is not finite", (long long)r.line,
                         tok);
                st = ILDL_ERR_NAN_INF;
                goto cleanup;
            }
            if (len == cap) {
                int64_t nc = 2 * cap;
                if (want > 0 && nc > want) nc = want;
                double *nv = realloc(v, sizeof(double) * (size_t)nc);
                if (!nv) {
                    st = ILDL_ERR_OUT_OF_MEMORY;
                    goto cleanup;
                }
                v = nv;
                cap = nc;
            }
            v[len++] = d;
        }
    }
    if (got < 0) {
        st = -got;
        goto cleanup;
    }
    if (want >= 0 && len < want) {
        ildl_msg(msg, msglen, "line %lld: end of file after %lld of the %lld declared values",
                 (long long)(r.line + 1), (long long)len, (long long)want);
        st = ILDL_ERR_FORMAT;
    } else if (len == 0) {
        ildl_msg(msg, msglen, "line %lld: no values: the vector is empty", (long long)(r.line + 1));
        st = ILDL_ERR_EMPTY;
    } else if (want_n > 0 && len != want_n) {
        ildl_msg(msg, msglen, "line %lld: %lld values, not the %d expected", (long long)(r.line + 1),
                 (long long)len, (int)want_n);
        st = ILDL_ERR_SIZE_MISMATCH;
    }
cleanup:
    if (r.f) gzclose(r.f);
    free(r.buf);
    if (st == ILDL_ERR_OUT_OF_MEMORY) ildl_msg(msg, msglen, "out of memory");
    if (st) {
        free(v);
    } else {
        *x = v;
        *n = (int32_t)len;
    }
    return st;
}

/* Append a formatted piece to the output buffer, flushing it through gzwrite when full. */
typedef struct {
    gzFile f;
    char buf[1 << 16];
    size_t len;
    int failed;
} mm_writer;

static void mm_flush(mm_writer *w)
{
    if (w->len && !w->failed && gzwrite(w->f, w->buf, (unsigned)w->len) != (int)w->len)
        w->failed = 1;
    w->len = 0;
}

static void mm_put_entry(mm_writer *w, int32_t i, int32_t j, double v)
{
    if (sizeof w->buf - w->len < 96) mm_flush(w);
    int k = snprintf(w->buf + w->len, sizeof w->buf - w->len, "%d %d %.17g\n", (int)i + 1,
                     (int)j + 1, v);
    if (k > 0) w->len += (size_t)k;
}

int ildl_mm_write(const char *path, const ildl_csr *A, char *msg, size_t msglen)
{
    ildl_msg(msg, msglen, "%s", "");
    if (!path || !A || !A->rowptr || (A->rowptr[A->n] > 0 && (!A->col || !A->val))) {
        ildl_msg(msg, msglen, "NULL argument");
        return ILDL_ERR_NULL_ARGUMENT;
    }
    size_t pl = strlen(path);
    int gz = pl >= 3 && strcmp(path + pl - 3, ".gz") == 0;
    mm_writer *w = ildl_malloc(sizeof *w);
    if (!w) {
        ildl_msg(msg, msglen, "out of memory");
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    w->len = 0;
    w->failed = 0;
    /* "T" writes plain text through the same interface */
    w->f = gzopen(path, gz ? "wb6" : "wbT");
    if (!w->f) {
        ildl_msg(msg, msglen, "cannot create '%s': %s", path, strerror(errno));
        free(w);
        return ILDL_ERR_IO;
    }
    int64_t nl = 0;
    for (int32_t i = 0; i < A->n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) nl += (A->col[p] <= i);
    w->len = (size_t)snprintf(w->buf, sizeof w->buf,
                              "%%%%MatrixMarket matrix coordinate real symmetric\n"
                              "%% written by libblockildl %s (lower triangle)\n%d %d %lld\n",
                              ILDL_VERSION_STRING, (int)A->n, (int)A->n, (long long)nl);
    for (int32_t i = 0; i < A->n && !w->failed; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->col[p] <= i) mm_put_entry(w, i, A->col[p], A->val[p]);
    mm_flush(w);
    int failed = w->failed;
    if (gzclose(w->f) != Z_OK) failed = 1;
    free(w);
    if (failed) {
        ildl_msg(msg, msglen, "write to '%s' failed", path);
        return ILDL_ERR_IO;
    }
    return ILDL_SUCCESS;
}
