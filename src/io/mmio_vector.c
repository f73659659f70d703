/* mmio_vector.c -- the Matrix Market vector reader (ildl_mm_read_vector): an "array" or
 * "coordinate" n x 1 (or 1 x n) file, or a headerless list of numbers, checked against the
 * length the caller needs before anything of the declared size is allocated. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "blockildl.h"
#include "core/util.h"
#include "io/mmio.h"
#include "io/mmio_internal.h"

/* Read a dense vector (mmio.h). */
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
    st = ildl_mm_open(path, msg, msglen, &r);
    if (st == ILDL_ERR_OUT_OF_MEMORY) return st;
    if (st) goto cleanup;
    /* peek at line 1: a Matrix Market banner, or already the first number */
    got = ildl_mm_getline(&r);
    if (got < 0) {
        st = -got;
        goto cleanup;
    }
    if (got == 1 && ildl_mm_has_banner(r.buf)) {
        /* restart the stream so the banner parser sees line 1 again */
        gzrewind(r.f);
        r.line = 0;
        st = ildl_mm_read_banner(&r, &h);
        if (st) goto cleanup;
        if (h.field == MM_PATTERN || h.symmetry != MM_GENERAL) {
            ildl_msg(msg, msglen, "line 1: a vector must be 'real general' or 'integer general'");
            st = ILDL_ERR_FORMAT;
            goto cleanup;
        }
        coord = h.format == MM_COORD;
        long long sz[3];
        st = ildl_mm_read_size(&r, coord ? 3 : 2, sz);
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
            st = ildl_mm_read_entries(&r, &h, rows, cols, sz[2], 0, &t);
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
    while ((got = ildl_mm_getdata(&r)) == 1) {
        char *p = r.buf, *tok;
        while ((tok = ildl_mm_token(&p)) != NULL) {
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
            if (ildl_mm_parse_real(tok, &d)) {
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
