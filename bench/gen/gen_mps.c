/* gen_mps.c -- MPS reader (fixed and free format, plain or gzip) into an ildl_gen_lp. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "blockildl.h"
#include "core/util.h"
#include "gen.h"

/* ------------------------------------------------------------------ name table */

/* Names in one pool with an open-addressing hash index (LP files have millions of names). */
typedef struct {
    char *pool;
    size_t plen, pcap;
    size_t *off;
    int32_t count, ocap;
    int32_t *slot; /* -1 = empty; size nslot, a power of two */
    size_t nslot;
} names;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void names_free(names *t)
{
    free(t->pool);
    free(t->off);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* Index of s, or -1. */
static int32_t names_find(const names *t, const char *s)
{
    if (!t->nslot) return -1;
    size_t mask = t->nslot - 1;
    for (size_t h = (size_t)hash_str(s) & mask;; h = (h + 1) & mask) {
        int32_t k = t->slot[h];
        if (k < 0) return -1;
        if (strcmp(t->pool + t->off[k], s) == 0) return k;
    }
}

/* Rebuild the hash index with room for twice the names. */
static int names_rehash(names *t, size_t nslot)
{
    int32_t *slot = malloc(sizeof(int32_t) * nslot);
    if (!slot) return ILDL_ERR_OUT_OF_MEMORY;
    for (size_t h = 0; h < nslot; h++) slot[h] = -1;
    for (int32_t k = 0; k < t->count; k++) {
        size_t h = (size_t)hash_str(t->pool + t->off[k]) & (nslot - 1);
        while (slot[h] >= 0) h = (h + 1) & (nslot - 1);
        slot[h] = k;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    return ILDL_SUCCESS;
}

/* Append s (known to be absent); its index goes to *idx. */
static int names_add(names *t, const char *s, int32_t *idx)
{
    size_t len = strlen(s) + 1;
    if (t->count == INT32_MAX - 1) return ILDL_ERR_OUT_OF_MEMORY;
    if (t->plen + len > t->pcap) {
        size_t cap = t->pcap ? 2 * t->pcap : 4096;
        while (cap < t->plen + len) cap *= 2;
        char *p = realloc(t->pool, cap);
        if (!p) return ILDL_ERR_OUT_OF_MEMORY;
        t->pool = p;
        t->pcap = cap;
    }
    if (t->count == t->ocap) {
        int32_t cap = t->ocap ? 2 * t->ocap : 256;
        size_t *o = realloc(t->off, sizeof(size_t) * (size_t)cap);
        if (!o) return ILDL_ERR_OUT_OF_MEMORY;
        t->off = o;
        t->ocap = cap;
    }
    memcpy(t->pool + t->plen, s, len);
    t->off[t->count] = t->plen;
    t->plen += len;
    *idx = t->count++;
    if (2 * (size_t)t->count > t->nslot) {
        int st = names_rehash(t, t->nslot ? 2 * t->nslot : 512);
        if (st) return st;
    } else {
        size_t h = (size_t)hash_str(s) & (t->nslot - 1);
        while (t->slot[h] >= 0) h = (h + 1) & (t->nslot - 1);
        t->slot[h] = *idx;
    }
    return ILDL_SUCCESS;
}

/* ------------------------------------------------------------------ reader state */

enum { S_NONE, S_ROWS, S_COLUMNS, S_RHS, S_RANGES, S_BOUNDS, S_SKIP };

typedef struct {
    gzFile f;
    const char *path;
    int dialect;
    long line;
    char *buf;       /* current line */
    size_t cap;
    char *tok;       /* copy of the line cut into tokens */
    char fix[6][16]; /* fixed-format fields */
    const char *fld[6];
    /* rows (all ROWS entries, N rows included) */
    names rows;
    char *rtype;
    double *rhs, *rng;
    unsigned char *has_rng;
    int32_t rcap, objrow;
    /* columns */
    names cols;
    double *obj, *lo, *hi;
    unsigned char *isint;
    int32_t ccap, cur;
    int intmode;
    /* coefficients */
    int32_t *ti, *tj;
    double *tv;
    int64_t nt, tcap;
    /* first set names seen */
    char rhsset[64], rngset[64], bndset[64];
    int have_rhsset, have_rngset, have_bndset;
    char name[64];
} mps;

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return 0;
    return *a == *b;
}

/* Read one line of any length into r->buf (newline removed). 1: line, 0: end, <0: status. */
static int read_line(mps *r)
{
    size_t len = 0;
    for (;;) {
        if (r->cap - len < 2) {
            size_t cap = r->cap ? 2 * r->cap : 1024;
            char *b = realloc(r->buf, cap);
            if (!b) return -ILDL_ERR_OUT_OF_MEMORY;
            r->buf = b;
            r->cap = cap;
        }
        if (!gzgets(r->f, r->buf + len, (int)(r->cap - len > INT32_MAX ? INT32_MAX
                                                                         : r->cap - len))) {
            int err;
            gzerror(r->f, &err);
            if (err != Z_OK && err != Z_BUF_ERROR) return -ILDL_ERR_IO;
            if (len == 0) return 0;
            break;
        }
        len += strlen(r->buf + len);
        if (len > 0 && r->buf[len - 1] == '\n') break;
        if (gzeof(r->f)) break;
    }
    while (len > 0 && (r->buf[len - 1] == '\n' || r->buf[len - 1] == '\r')) r->buf[--len] = 0;
    r->line++;
    return 1;
}

/* Parse a whole field as a number; |v| >= 1e30 means infinity (the MPS convention). */
static int parse_num(const char *s, double *v)
{
    if (!s || !*s) return 0;
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end) return 0;
    if (*v >= 1e30) *v = INFINITY;
    if (*v <= -1e30) *v = -INFINITY;
    return 1;
}

/* Cut the line into whitespace tokens (at most 8 kept); returns the count. */
static int tokenize(mps *r, char **t)
{
    int nt = 0;
    char *p = r->tok;
    strcpy(p, r->buf);
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        if (nt < 8) t[nt] = p;
        nt++;
        while (*p && !isspace((unsigned char)*p)) p++;
        if (*p) *p++ = 0;
    }
    return nt;
}

/* Fixed-format fields: columns 2-3, 5-12, 15-22, 25-36, 40-47, 50-61, blanks trimmed. */
static void fixed_fields(mps *r)
{
    static const int a[6] = {1, 4, 14, 24, 39, 49}, b[6] = {3, 12, 22, 36, 47, 61};
    size_t len = strlen(r->buf);
    for (int k = 0; k < 6; k++) {
        char *d = r->fix[k];
        int n = 0;
        for (int c = a[k]; c < b[k] && (size_t)c < len; c++) d[n++] = r->buf[c];
        d[n] = 0;
        while (n > 0 && isspace((unsigned char)d[n - 1])) d[--n] = 0;
        int s = 0;
        while (d[s] && isspace((unsigned char)d[s])) s++;
        memmove(d, d + s, strlen(d + s) + 1);
        r->fld[k] = d;
    }
}

/* 1 if the bound type carries a value (SC: optional). */
static int bound_needs_value(const char *t)
{
    return ieq(t, "UP") || ieq(t, "LO") || ieq(t, "FX") || ieq(t, "LI") || ieq(t, "UI");
}

/* Map whitespace tokens onto the six fixed-format fields for the current section; 0 if the
 * count does not fit the section. */
static int free_fields(mps *r, int sec)
{
    char *t[8];
    int nt = tokenize(r, t);
    static const char *empty = "";
    for (int k = 0; k < 6; k++) r->fld[k] = empty;
    if (nt > 8) return 0;
    switch (sec) {
    case S_ROWS:
        if (nt != 2) return 0;
        r->fld[0] = t[0], r->fld[1] = t[1];
        return 1;
    case S_COLUMNS:
        if (nt != 3 && nt != 5) return 0;
        for (int k = 0; k < nt; k++) r->fld[k + 1] = t[k];
        return 1;
    case S_RHS:
    case S_RANGES:
        if (nt < 2 || nt > 5) return 0;
        if (nt % 2) {
            for (int k = 0; k < nt; k++) r->fld[k + 1] = t[k];
        } else {
            for (int k = 0; k < nt; k++) r->fld[k + 2] = t[k];
        }
        return 1;
    case S_BOUNDS: {
        double v;
        if (nt < 2 || nt > 4) return 0;
        r->fld[0] = t[0];
        if (bound_needs_value(t[0])) {
            if (nt == 4) r->fld[1] = t[1], r->fld[2] = t[2], r->fld[3] = t[3];
            else if (nt == 3) r->fld[2] = t[1], r->fld[3] = t[2];
            else return 0;
        } else if (nt == 4) {
            r->fld[1] = t[1], r->fld[2] = t[2], r->fld[3] = t[3];
        } else if (nt == 3) {
            /* "TYPE set col" or "TYPE col value": a known column followed by a number wins */
            if (names_find(&r->cols, t[1]) >= 0 && parse_num(t[2], &v))
                r->fld[2] = t[1], r->fld[3] = t[2];
            else
                r->fld[1] = t[1], r->fld[2] = t[2];
        } else {
            r->fld[2] = t[1];
        }
        return 1;
    }
    default:
        return 1;
    }
}

static int fail(mps *r, char *msg, size_t msglen, int st, const char *what, const char *arg)
{
    ildl_msg(msg, msglen, "%s:%ld: %s%s%s%s", r->path, r->line, what, arg ? " '" : "",
             arg ? arg : "", arg ? "'" : "");
    return st;
}

/* Resize an array to need items of elem bytes (the old contents kept). */
static int grow(void **p, size_t elem, int64_t need)
{
    void *q = realloc(*p, elem * (size_t)need);
    if (!q) return ILDL_ERR_OUT_OF_MEMORY;
    *p = q;
    return ILDL_SUCCESS;
}

static int add_row(mps *r, char type, const char *name)
{
    int32_t k;
    int st = names_add(&r->rows, name, &k);
    if (st) return st;
    if (k >= r->rcap) {
        int32_t cap = r->rcap ? 2 * r->rcap : 256;
        if (grow((void **)&r->rtype, 1, cap) || grow((void **)&r->rhs, 8, cap) ||
            grow((void **)&r->rng, 8, cap) || grow((void **)&r->has_rng, 1, cap))
            return ILDL_ERR_OUT_OF_MEMORY;
        r->rcap = cap;
    }
    r->rtype[k] = type;
    r->rhs[k] = 0.0;
    r->rng[k] = 0.0;
    r->has_rng[k] = 0;
    if (type == 'N' && r->objrow < 0) r->objrow = k;
    return ILDL_SUCCESS;
}

static int add_col(mps *r, const char *name, int32_t *idx)
{
    int st = names_add(&r->cols, name, idx);
    if (st) return st;
    int32_t k = *idx;
    if (k >= r->ccap) {
        int32_t cap = r->ccap ? 2 * r->ccap : 256;
        if (grow((void **)&r->obj, 8, cap) || grow((void **)&r->lo, 8, cap) ||
            grow((void **)&r->hi, 8, cap) || grow((void **)&r->isint, 1, cap))
            return ILDL_ERR_OUT_OF_MEMORY;
        r->ccap = cap;
    }
    r->obj[k] = 0.0;
    r->lo[k] = 0.0;
    r->hi[k] = INFINITY;
    r->isint[k] = (unsigned char)r->intmode;
    return ILDL_SUCCESS;
}

static int add_coef(mps *r, int32_t i, int32_t j, double v)
{
    if (r->nt == r->tcap) {
        int64_t cap = r->tcap ? 2 * r->tcap : 4096;
        if (grow((void **)&r->ti, 4, cap) || grow((void **)&r->tj, 4, cap) ||
            grow((void **)&r->tv, 8, cap))
            return ILDL_ERR_OUT_OF_MEMORY;
        r->tcap = cap;
    }
    r->ti[r->nt] = i;
    r->tj[r->nt] = j;
    r->tv[r->nt++] = v;
    return ILDL_SUCCESS;
}

/* Set-name filter: a line naming no set is always taken; otherwise only lines of the first
 * named set are (returns 0 to skip the line). */
static int same_set(char *keep, int *have, const char *s)
{
    if (!*s) return 1;
    if (!*have) {
        snprintf(keep, 64, "%s", s);
        *have = 1;
        return 1;
    }
    return strncmp(keep, s, 63) == 0;
}

/* One data line of the current section, its fields in r->fld. */
static int data_line(mps *r, int sec, char *msg, size_t msglen)
{
    const char **f = r->fld;
    int st;
    double v = 0.0;
    if (sec == S_ROWS) {
        char t = (char)toupper((unsigned char)f[0][0]);
        if (f[0][0] == 0 || f[0][1] != 0 || !strchr("NELG", t))
            return fail(r, msg, msglen, ILDL_ERR_FORMAT, "unknown row type", f[0]);
        if (!f[1][0]) return fail(r, msg, msglen, ILDL_ERR_FORMAT, "row without a name", NULL);
        if (names_find(&r->rows, f[1]) >= 0)
            return fail(r, msg, msglen, ILDL_ERR_FORMAT, "duplicate row", f[1]);
        return add_row(r, t, f[1]);
    }
    if (sec == S_COLUMNS) {
        if (strcmp(f[2], "'MARKER'") == 0 || strcmp(f[2], "MARKER") == 0) {
            const char *m = f[3][0] ? f[3] : f[4];
            if (strstr(m, "INTORG")) r->intmode = 1;
            else if (strstr(m, "INTEND")) r->intmode = 0;
            else return fail(r, msg, msglen, ILDL_ERR_FORMAT, "unknown marker", m);
            return ILDL_SUCCESS;
        }
        if (!f[1][0]) return fail(r, msg, msglen, ILDL_ERR_FORMAT, "column without a name", NULL);
        if (r->cur < 0 || strcmp(r->cols.pool + r->cols.off[r->cur], f[1]) != 0) {
            int32_t k = names_find(&r->cols, f[1]);
            if (k < 0 && (st = add_col(r, f[1], &k))) return st;
            r->cur = k;
        }
        for (int p = 2; p <= 4; p += 2) {
            if (p == 4 && !f[4][0] && !f[5][0]) break;
            int32_t i = names_find(&r->rows, f[p]);
            if (i < 0) return fail(r, msg, msglen, ILDL_ERR_FORMAT, "unknown row", f[p]);
            if (!parse_num(f[p + 1], &v))
                return fail(r, msg, msglen, ILDL_ERR_FORMAT, "bad number", f[p + 1]);
            if (!isfinite(v))
                return fail(r, msg, msglen, ILDL_ERR_NAN_INF, "infinite coefficient", f[p + 1]);
            if (i == r->objrow) r->obj[r->cur] += v;
            else if (r->rtype[i] != 'N' && (st = add_coef(r, i, r->cur, v))) return st;
        }
        return ILDL_SUCCESS;
    }
    if (sec == S_RHS || sec == S_RANGES) {
        int ok = sec == S_RHS ? same_set(r->rhsset, &r->have_rhsset, f[1])
                              : same_set(r->rngset, &r->have_rngset, f[1]);
        if (!ok) return ILDL_SUCCESS;
        for (int p = 2; p <= 4; p += 2) {
            if (p == 4 && !f[4][0] && !f[5][0]) break;
            int32_t i = names_find(&r->rows, f[p]);
            if (i < 0) return fail(r, msg, msglen, ILDL_ERR_FORMAT, "unknown row", f[p]);
            if (!parse_num(f[p + 1], &v) || !isfinite(v))
                return fail(r, msg, msglen, ILDL_ERR_FORMAT, "bad number", f[p + 1]);
            if (r->rtype[i] == 'N') continue; /* objective offset: irrelevant to A */
            if (sec == S_RHS) {
                r->rhs[i] = v;
            } else {
                r->rng[i] = v;
                r->has_rng[i] = 1;
            }
        }
        return ILDL_SUCCESS;
    }
    if (sec == S_BOUNDS) {
        const char *t = f[0];
        static const char *const types[] = {"UP", "LO", "FX", "FR", "MI", "PL", "BV", "LI",
                                            "UI", "SC"};
        int known = 0;
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) known |= ieq(t, types[k]);
        if (!known) return fail(r, msg, msglen, ILDL_ERR_FORMAT, "unknown bound type", t);
        if (!same_set(r->bndset, &r->have_bndset, f[1])) return ILDL_SUCCESS;
        int32_t j = names_find(&r->cols, f[2]);
        if (j < 0) return fail(r, msg, msglen, ILDL_ERR_FORMAT, "unknown column", f[2]);
        int needs = bound_needs_value(t);
        int hasv = f[3][0] != 0;
        if (hasv && !parse_num(f[3], &v))
            return fail(r, msg, msglen, ILDL_ERR_FORMAT, "bad number", f[3]);
        if (needs && !hasv) return fail(r, msg, msglen, ILDL_ERR_FORMAT, "bound without value", t);
        if (ieq(t, "UP") || ieq(t, "UI")) {
            /* the traditional rule: a negative upper bound on a column still at lower bound 0
             * makes it unbounded below */
            if (v < 0 && r->lo[j] == 0.0) r->lo[j] = -INFINITY;
            r->hi[j] = v;
            if (ieq(t, "UI")) r->isint[j] = 1;
        } else if (ieq(t, "LO") || ieq(t, "LI")) {
            r->lo[j] = v;
            if (ieq(t, "LI")) r->isint[j] = 1;
        } else if (ieq(t, "FX")) {
            r->lo[j] = r->hi[j] = v;
        } else if (ieq(t, "FR")) {
            r->lo[j] = -INFINITY, r->hi[j] = INFINITY;
        } else if (ieq(t, "MI")) {
            r->lo[j] = -INFINITY;
        } else if (ieq(t, "PL")) {
            r->hi[j] = INFINITY;
        } else if (ieq(t, "BV")) {
            r->lo[j] = 0.0, r->hi[j] = 1.0, r->isint[j] = 1;
        } else { /* SC: semicontinuous, x = 0 or lo <= x <= v */
            r->hi[j] = hasv ? v : INFINITY;
        }
        return ILDL_SUCCESS;
    }
    return ILDL_SUCCESS; /* S_SKIP */
}

/* Section keyword -> section id; -2 for ENDATA, -3 for NAME, -1 if not a keyword. */
static int section_of(const char *w)
{
    if (ieq(w, "NAME")) return -3;
    if (ieq(w, "ROWS")) return S_ROWS;
    if (ieq(w, "COLUMNS")) return S_COLUMNS;
    if (ieq(w, "RHS")) return S_RHS;
    if (ieq(w, "RANGES")) return S_RANGES;
    if (ieq(w, "BOUNDS")) return S_BOUNDS;
    if (ieq(w, "ENDATA")) return -2;
    if (ieq(w, "OBJSENSE") || ieq(w, "OBJSENS") || ieq(w, "OBJNAME")) return S_SKIP;
    return -1;
}

static int row_sorted(const int32_t *col, int64_t a, int64_t b)
{
    for (int64_t p = a + 1; p < b; p++)
        if (col[p - 1] > col[p]) return 0;
    return 1;
}

typedef struct { int32_t c; double v; } colval;

static int colval_cmp(const void *x, const void *y)
{
    const colval *s = x, *t = y;
    return (s->c > t->c) - (s->c < t->c);
}

/* Sort a long row that arrived out of order (columns listed non-contiguously in the file). */
static int sort_long_row(ildl_gen_lp *lp, int64_t a, int64_t b)
{
    colval *w = malloc(sizeof(colval) * (size_t)(b - a));
    if (!w) return ILDL_ERR_OUT_OF_MEMORY;
    for (int64_t p = a; p < b; p++) w[p - a].c = lp->col[p], w[p - a].v = lp->val[p];
    qsort(w, (size_t)(b - a), sizeof(colval), colval_cmp);
    for (int64_t p = a; p < b; p++) lp->col[p] = w[p - a].c, lp->val[p] = w[p - a].v;
    free(w);
    return ILDL_SUCCESS;
}

/* Turn the collected rows, columns and triplets into lp (A in CSR, summed, no zeros). */
static int assemble(mps *r, ildl_gen_lp *lp)
{
    int st = ILDL_ERR_OUT_OF_MEMORY;
    int32_t nrow = r->rows.count, n = r->cols.count, m = 0;
    int32_t *map = ildl_malloc(sizeof(int32_t) * (size_t)nrow);
    if (!map) return st;
    for (int32_t i = 0; i < nrow; i++) map[i] = r->rtype[i] == 'N' ? -1 : m++;
    snprintf(lp->name, sizeof lp->name, "%s", r->name);
    lp->m = m;
    lp->n = n;
    lp->rowptr = ildl_calloc((size_t)m + 1, sizeof(int64_t));
    lp->col = ildl_malloc(sizeof(int32_t) * (size_t)r->nt);
    lp->val = ildl_malloc(sizeof(double) * (size_t)r->nt);
    lp->rowtype = ildl_malloc((size_t)m);
    lp->rowlo = ildl_malloc(sizeof(double) * (size_t)m);
    lp->rowhi = ildl_malloc(sizeof(double) * (size_t)m);
    lp->rowid = ildl_malloc(sizeof(int32_t) * (size_t)m);
    lp->obj = ildl_malloc(sizeof(double) * (size_t)n);
    lp->collo = ildl_malloc(sizeof(double) * (size_t)n);
    lp->colhi = ildl_malloc(sizeof(double) * (size_t)n);
    lp->is_int = ildl_malloc((size_t)n);
    int64_t *next = ildl_malloc(sizeof(int64_t) * ((size_t)m + 1));
    if (!lp->rowptr || !lp->col || !lp->val || !lp->rowtype || !lp->rowlo || !lp->rowhi ||
        !lp->rowid || !lp->obj || !lp->collo || !lp->colhi || !lp->is_int || !next)
        goto cleanup;
    for (int32_t i = 0; i < nrow; i++) {
        int32_t k = map[i];
        if (k < 0) continue;
        double b = r->rhs[i], R = r->rng[i];
        char t = r->rtype[i];
        lp->rowtype[k] = t;
        lp->rowid[k] = k;
        lp->rowlo[k] = t == 'L' ? -INFINITY : b;
        lp->rowhi[k] = t == 'G' ? INFINITY : b;
        if (r->has_rng[i]) {
            if (t == 'L') lp->rowlo[k] = b - fabs(R);
            else if (t == 'G') lp->rowhi[k] = b + fabs(R);
            else if (R >= 0) lp->rowhi[k] = b + R;
            else lp->rowlo[k] = b + R;
        }
    }
    memcpy(lp->obj, r->obj, sizeof(double) * (size_t)n);
    memcpy(lp->collo, r->lo, sizeof(double) * (size_t)n);
    memcpy(lp->colhi, r->hi, sizeof(double) * (size_t)n);
    memcpy(lp->is_int, r->isint, (size_t)n);
    /* bucket by row (stable: columns arrive mostly in order), then sort, sum, drop zeros */
    for (int64_t t = 0; t < r->nt; t++) lp->rowptr[map[r->ti[t]] + 1]++;
    for (int32_t i = 0; i < m; i++) lp->rowptr[i + 1] += lp->rowptr[i];
    memcpy(next, lp->rowptr, sizeof(int64_t) * ((size_t)m + 1));
    for (int64_t t = 0; t < r->nt; t++) {
        int64_t p = next[map[r->ti[t]]]++;
        lp->col[p] = r->tj[t];
        lp->val[p] = r->tv[t];
    }
    int64_t q = 0;
    for (int32_t i = 0; i < m; i++) {
        int64_t a = lp->rowptr[i], b = lp->rowptr[i + 1];
        if (b - a > 32 && !row_sorted(lp->col, a, b) && (st = sort_long_row(lp, a, b)))
            goto cleanup;
        for (int64_t p = a + 1; p < b; p++) { /* insertion sort: nearly sorted input */
            int32_t c = lp->col[p];
            double v = lp->val[p];
            int64_t s = p - 1;
            while (s >= a && lp->col[s] > c) {
                lp->col[s + 1] = lp->col[s];
                lp->val[s + 1] = lp->val[s];
                s--;
            }
            lp->col[s + 1] = c;
            lp->val[s + 1] = v;
        }
        lp->rowptr[i] = q;
        for (int64_t p = a; p < b;) {
            int32_t c = lp->col[p];
            double v = 0.0;
            for (; p < b && lp->col[p] == c; p++) v += lp->val[p];
            if (v != 0.0) {
                lp->col[q] = c;
                lp->val[q++] = v;
            }
        }
    }
    lp->rowptr[m] = q;
    st = ILDL_SUCCESS;
cleanup:
    free(map);
    free(next);
    return st;
}

static void mps_free(mps *r)
{
    if (r->f) gzclose(r->f);
    free(r->buf);
    free(r->tok);
    names_free(&r->rows);
    names_free(&r->cols);
    free(r->rtype);
    free(r->rhs);
    free(r->rng);
    free(r->has_rng);
    free(r->obj);
    free(r->lo);
    free(r->hi);
    free(r->isint);
    free(r->ti);
    free(r->tj);
    free(r->tv);
}

int ildl_gen_mps_read(const char *path, int dialect, ildl_gen_lp *lp, char *msg, size_t msglen)
{
    ildl_msg(msg, msglen, "%s", "");
    if (!path || !lp) return ILDL_ERR_NULL_ARGUMENT;
    memset(lp, 0, sizeof *lp);
    if (dialect < ILDL_GEN_MPS_AUTO || dialect > ILDL_GEN_MPS_FIXED) {
        ildl_msg(msg, msglen, "unknown MPS dialect %d", dialect);
        return ILDL_ERR_INVALID_OPTION;
    }
    int st = ILDL_SUCCESS, sec = S_NONE, ended = 0, seen_rows = 0, got;
    mps r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.dialect = dialect;
    r.objrow = -1;
    r.cur = -1;
    r.f = gzopen(path, "rb");
    if (!r.f) {
        ildl_msg(msg, msglen, "cannot open '%s': %s", path, errno ? strerror(errno) : "error");
        return ILDL_ERR_IO;
    }
    while (!ended && (got = read_line(&r)) > 0) {
        char *b = r.buf;
        size_t len = strlen(b);
        char *tmp = realloc(r.tok, len + 1);
        if (!tmp) {
            st = ILDL_ERR_OUT_OF_MEMORY;
            goto cleanup;
        }
        r.tok = tmp;
        size_t s = 0;
        while (b[s] && isspace((unsigned char)b[s])) s++;
        if (!b[s] || b[0] == '*') continue;
        if (s == 0) {
            /* a word in column 1 starts a section, unless (free MPS) it is not a keyword and
             * the current section takes data */
            char *t[8];
            int nt = tokenize(&r, t);
            int k = section_of(t[0]);
            if (k == -3) {
                const char *nm = nt > 1 ? b + (t[1] - r.tok) : "";
                snprintf(r.name, sizeof r.name, "%s", nm);
                for (size_t e = strlen(r.name); e > 0 && isspace((unsigned char)r.name[e - 1]);)
                    r.name[--e] = 0;
                continue;
            }
            if (k == -2) {
                ended = 1;
                continue;
            }
            if (k >= 0) {
                if (k == S_COLUMNS && !seen_rows) {
                    st = fail(&r, msg, msglen, ILDL_ERR_FORMAT, "COLUMNS before ROWS", NULL);
                    goto cleanup;
                }
                if (k == S_ROWS) seen_rows = 1;
                sec = k;
                continue;
            }
            if (sec == S_NONE || dialect == ILDL_GEN_MPS_FIXED) {
                st = fail(&r, msg, msglen, ILDL_ERR_FORMAT, "unknown section", t[0]);
                goto cleanup;
            }
        }
        if (sec == S_NONE) {
            st = fail(&r, msg, msglen, ILDL_ERR_FORMAT, "data before any section", NULL);
            goto cleanup;
        }
        if (sec == S_SKIP) continue;
        int ok = dialect != ILDL_GEN_MPS_FIXED && free_fields(&r, sec);
        if (!ok) {
            if (dialect == ILDL_GEN_MPS_FREE) {
                char shown[48];
                snprintf(shown, sizeof shown, "%s", r.buf + s);
                st = fail(&r, msg, msglen, ILDL_ERR_FORMAT, "wrong number of fields in", shown);
                goto cleanup;
            }
            fixed_fields(&r);
        }
        if ((st = data_line(&r, sec, msg, msglen))) {
            if (st == ILDL_ERR_OUT_OF_MEMORY) ildl_msg(msg, msglen, "out of memory");
            goto cleanup;
        }
    }
    if (got < 0) {
        st = -got;
        if (st == ILDL_ERR_IO) fail(&r, msg, msglen, st, "read error (corrupt gzip?)", NULL);
        else ildl_msg(msg, msglen, "out of memory");
        goto cleanup;
    }
    if (!ended) {
        st = fail(&r, msg, msglen, ILDL_ERR_FORMAT, "missing ENDATA (truncated file?)", NULL);
        goto cleanup;
    }
    if (!seen_rows) {
        st = fail(&r, msg, msglen, ILDL_ERR_FORMAT, "no ROWS section", NULL);
        goto cleanup;
    }
    st = assemble(&r, lp);
    if (st) ildl_msg(msg, msglen, "out of memory");
cleanup:
    mps_free(&r);
    if (st) ildl_gen_lp_free(lp);
    return st;
}

void ildl_gen_lp_free(ildl_gen_lp *lp)
{
    if (!lp) return;
    free(lp->rowptr);
    free(lp->col);
    free(lp->val);
    free(lp->rowtype);
    free(lp->rowlo);
    free(lp->rowhi);
    free(lp->rowid);
    free(lp->obj);
    free(lp->collo);
    free(lp->colhi);
    free(lp->is_int);
    memset(lp, 0, sizeof *lp);
}
