/* mmio_parse.c -- reading Matrix Market text through zlib, so .mtx and .mtx.gz read alike:
 * lines of any length (up to MM_MAX_LINE), comments and blank lines skipped, tokens, integers
 * and reals parsed whole, the banner and size lines checked, and coordinate entries read as
 * triplets tagged with their file line, so that errors found later can name the line. Every
 * error leaves a message naming the file line (mmio_internal.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "blockildl.h"
#include "core/util.h"
#include "io/mmio_internal.h"

#define MM_MAX_LINE (1 << 20) /* longer lines are garbage, not Matrix Market */

/* ------------------------------------------------------------------ line reader */

/* Open path (plain or gzip) for reading line by line. ILDL_ERR_OUT_OF_MEMORY leaves nothing
 * to free; ILDL_ERR_IO leaves r->buf allocated (the caller's cleanup frees it). */
int ildl_mm_open(const char *path, char *msg, size_t msglen, mm_reader *r)
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

/* Read the next raw line into r->buf without its line ending. Returns 1 (line), 0 (end of
 * file) or a negative ILDL status (message set). */
int ildl_mm_getline(mm_reader *r)
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
int ildl_mm_getdata(mm_reader *r)
{
    int got;
    while ((got = ildl_mm_getline(r)) == 1)
        if (!mm_skippable(r->buf)) return 1;
    return got;
}

/* Split the next whitespace-delimited token off *p (NUL-terminating it); NULL if none. */
char *ildl_mm_token(char **p)
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
    while ((t = ildl_mm_token(&p)) != NULL) {
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
int ildl_mm_parse_real(const char *t, double *v)
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
int ildl_mm_has_banner(const char *s)
{
    const char *b = "%%matrixmarket";
    for (; *b; b++, s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != *b) return 0;
    }
    return *s == '\0' || mm_isspace(*s);
}

/* Read and check the banner line (line 1). Unsupported kinds give ILDL_ERR_FORMAT. */
int ildl_mm_read_banner(mm_reader *r, mm_header *h)
{
    int got = ildl_mm_getline(r);
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
int ildl_mm_read_size(mm_reader *r, int want, long long sz[3])
{
    int got = ildl_mm_getdata(r);
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

/* ------------------------------------------------------------------ coordinate entries */

/* Read nnz coordinate entries into t (grown as lines arrive, never trusting the declared
 * count for the allocation), checking each line. Lower-canonical if sym. */
int ildl_mm_read_entries(mm_reader *r, const mm_header *h, int32_t nrows, int32_t ncols,
                         long long nnz, int sym, mm_trip **t_out)
{
    int want = h->field == MM_PATTERN ? 2 : 3;
    int64_t cap = nnz < 65536 ? (nnz > 0 ? nnz : 1) : 65536, k = 0;
    mm_trip *t = ildl_malloc(sizeof(mm_trip) * (size_t)cap);
    int st = ILDL_SUCCESS, got;
    if (!t) return ILDL_ERR_OUT_OF_MEMORY;
    while ((got = ildl_mm_getdata(r)) == 1) {
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
                bad = ildl_mm_parse_real(tok[2], &v);
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
