/* mmio_write.c -- the Matrix Market writer (ildl_mm_write): the lower triangle of a
 * symmetric matrix as "coordinate real symmetric" text, through zlib (gzip when the path ends
 * in .gz), buffered. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "blockildl.h"
#include "core/util.h"
#include "io/mmio.h"

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
/* Write A (mmio.h). */
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
