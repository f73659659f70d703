/* fill.c -- the coarse block graph of U and its block level of fill (paper Sec. IV-A).
 *
 * Rows of the coarse graph are processed in order, as in the symbolic phase of ILU(k)
 * (Hysom & Pothen). When block row i is processed every row k < i is final, so the blocks
 * (k,i) that update row i are known: they are kept in one linked list per block column,
 * threaded through the pattern arrays themselves and ascending in k because rows are
 * appended in order. Row i then scatters its level-0 blocks and the candidates
 * lvl(k,i) + lvl(k,j) + 1 of every such k into a dense workspace, keeps levels <= lf,
 * and appends its sorted pattern. Work is that of a symbolic (block) factorization. */
#include "analyse/fill.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"

/* Growable pattern arrays of the coarse graph being built, plus the column lists. */
typedef struct coarse_buf {
    int64_t len, cap;
    int32_t *col;  /* [cap] block column of each stored block */
    int32_t *lvl;  /* [cap] its level of fill */
    int64_t *next; /* [cap] next block of the same block column (row below), or -1 */
} coarse_buf;

/* Make room for at least need blocks. ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
static int buf_reserve(coarse_buf *b, int64_t need)
{
    if (need <= b->cap) return ILDL_SUCCESS;
    int64_t cap = b->cap > 0 ? b->cap : 16;
    while (cap < need) cap *= 2;
    int32_t *col = realloc(b->col, (size_t)cap * sizeof(int32_t));
    if (!col) return ILDL_ERR_OUT_OF_MEMORY;
    b->col = col;
    int32_t *lvl = realloc(b->lvl, (size_t)cap * sizeof(int32_t));
    if (!lvl) return ILDL_ERR_OUT_OF_MEMORY;
    b->lvl = lvl;
    int64_t *next = realloc(b->next, (size_t)cap * sizeof(int64_t));
    if (!next) return ILDL_ERR_OUT_OF_MEMORY;
    b->next = next;
    b->cap = cap;
    return ILDL_SUCCESS;
}

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Offer level v for block column j of the current row: w holds the best level so far,
 * mark[j] == row says j is already in the touched list. */
static void offer(int32_t j, int32_t v, int32_t row, int32_t *w, int32_t *mark, int32_t *list,
                  int32_t *nlist)
{
    if (mark[j] != row) {
        mark[j] = row;
        w[j] = v;
        list[(*nlist)++] = j;
    } else if (v < w[j]) {
        w[j] = v;
    }
}

int ildl_coarse_build(const ildl_csr *Ap, int32_t nb, const int32_t *bstart, int lf,
                      ildl_coarse *out)
{
    int status = ILDL_ERR_OUT_OF_MEMORY;
    int32_t n = Ap->n;
    int32_t *blk = NULL, *w = NULL, *mark = NULL, *list = NULL;
    int64_t *head = NULL, *tail = NULL, *row_ptr = NULL;
    coarse_buf b = {0, 0, NULL, NULL, NULL};
    if (lf < 0) lf = 0;
    memset(out, 0, sizeof(*out));

    blk = ildl_malloc((size_t)n * sizeof(int32_t));
    w = ildl_malloc((size_t)nb * sizeof(int32_t));
    mark = ildl_malloc((size_t)nb * sizeof(int32_t));
    list = ildl_malloc((size_t)nb * sizeof(int32_t));
    head = ildl_malloc((size_t)nb * sizeof(int64_t));
    tail = ildl_malloc((size_t)nb * sizeof(int64_t));
    row_ptr = ildl_malloc((size_t)(nb + 1) * sizeof(int64_t));
    if (!blk || !w || !mark || !list || !head || !tail || !row_ptr) goto cleanup;
    if (buf_reserve(&b, (int64_t)nb + Ap->rowptr[n] / 2 + 1) != ILDL_SUCCESS) goto cleanup;

    for (int32_t bi = 0; bi < nb; bi++) {
        for (int32_t i = bstart[bi]; i < bstart[bi + 1]; i++) blk[i] = bi;
        mark[bi] = -1;
        head[bi] = tail[bi] = -1;
    }

    row_ptr[0] = 0;
    for (int32_t bi = 0; bi < nb; bi++) {
        int32_t nlist = 0;
        /* level 0: the diagonal block (forced) and every block holding an upper entry of A */
        offer(bi, 0, bi, w, mark, list, &nlist);
        for (int32_t i = bstart[bi]; i < bstart[bi + 1]; i++) {
            for (int64_t p = Ap->rowptr[i]; p < Ap->rowptr[i + 1]; p++) {
                if (Ap->col[p] >= i) offer(blk[Ap->col[p]], 0, bi, w, mark, list, &nlist);
            }
        }
        /* fill: every final row k < bi with block (k,bi) updates the blocks (bi,j), j > bi,
         * for which (k,j) is present; those lie after (k,bi) in the sorted row k */
        for (int64_t q = head[bi]; q >= 0; q = b.next[q]) {
            int64_t lki = b.lvl[q];
            /* row k ends at the end of the store or where row k+1 begins with its diagonal
             * block k+1 <= bi, so the column test also finds the end of row k */
            for (int64_t r = q + 1; r < b.len && b.col[r] > bi; r++) {
                int64_t v = lki + (int64_t)b.lvl[r] + 1;
                if (v <= lf) offer(b.col[r], (int32_t)v, bi, w, mark, list, &nlist);
            }
        }
        qsort(list + 1, (size_t)(nlist - 1), sizeof(int32_t), cmp_int32); /* diagonal stays first */
        if (buf_reserve(&b, b.len + nlist) != ILDL_SUCCESS) goto cleanup;
        for (int32_t s = 0; s < nlist; s++) {
            int32_t j = list[s];
            int64_t p = b.len++;
            b.col[p] = j;
            b.lvl[p] = w[j];
            b.next[p] = -1;
            if (j == bi) continue; /* diagonal blocks update nobody */
            if (tail[j] >= 0) b.next[tail[j]] = p; else head[j] = p;
            tail[j] = p;
        }
        row_ptr[bi + 1] = b.len;
    }

    out->nb = nb;
    out->nblocks = b.len;
    out->row_ptr = row_ptr;
    out->col = b.col;
    out->lvl = b.lvl;
    row_ptr = NULL;
    b.col = NULL;
    b.lvl = NULL;
    status = ILDL_SUCCESS;

cleanup:
    free(blk);
    free(w);
    free(mark);
    free(list);
    free(head);
    free(tail);
    free(row_ptr);
    free(b.col);
    free(b.lvl);
    free(b.next);
    return status;
}

void ildl_coarse_free(ildl_coarse *C)
{
    if (!C) return;
    free(C->row_ptr);
    free(C->col);
    free(C->lvl);
    memset(C, 0, sizeof(*C));
}
