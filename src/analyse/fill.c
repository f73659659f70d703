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

/* ---------------------------------------------------------------- lf <= 1, in parallel
 *
 * With lf <= 1 a fill block needs lvl(k,i) = lvl(k,j) = 0, and the level-0 blocks of a row
 * are known before any row is processed: they come from A alone. Row i is then
 * L0(i) at level 0 plus, for lf = 1, every j > i of L0(k) for the k < i with i in L0(k), at
 * level 1 -- exactly what the sequential rule yields, but each row on its own, so rows run
 * in parallel and the result does not depend on the thread count. */

static int cmp_int32(const void *a, const void *b);

/* Sort the distinct values v[0..m) ascending (insertion sort when short). */
static void sort_distinct(int32_t *v, int32_t m)
{
    if (m > 32) {
        qsort(v, (size_t)m, sizeof(int32_t), cmp_int32);
        return;
    }
    for (int32_t k = 1; k < m; k++) {
        int32_t x = v[k], j = k - 1;
        for (; j >= 0 && v[j] > x; j--) v[j + 1] = v[j];
        v[j + 1] = x;
    }
}

/* L0(bi) into list, ascending (bi first): bi and the blocks of the upper entries of its rows.
 * mark[nb] is workspace whose entries never equal bi on entry for blocks not yet listed
 * (stamps are block rows, each used once per pass). Returns the count. */
static int32_t level0_row(const ildl_csr *Ap, const int32_t *bstart, const int32_t *blk,
                          int32_t bi, int32_t *mark, int32_t *list)
{
    int32_t m = 0;
    mark[bi] = bi;
    list[m++] = bi;
    for (int32_t i = bstart[bi]; i < bstart[bi + 1]; i++)
        for (int64_t p = Ap->rowptr[i]; p < Ap->rowptr[i + 1]; p++) {
            if (Ap->col[p] < i) continue;
            int32_t b = blk[Ap->col[p]];
            if (mark[b] != bi) {
                mark[b] = bi;
                list[m++] = b;
            }
        }
    sort_distinct(list + 1, m - 1); /* every block is >= bi: the diagonal stays first */
    return m;
}

/* Row bi of the result into list (ascending, bi first) with levels in lvl (indexed by
 * block column): L0(bi), then for lf >= 1 the j > bi of L0(k) for k in LT(bi).
 * mark as in level0_row. Returns the count. */
static int32_t fill_row(const int64_t *l0p, const int32_t *l0, const int64_t *ltp,
                        const int32_t *lt, int32_t bi, int lf, int32_t *mark, int32_t *lvl,
                        int32_t *list)
{
    int32_t m = 0;
    for (int64_t e = l0p[bi]; e < l0p[bi + 1]; e++) {
        mark[l0[e]] = bi;
        lvl[l0[e]] = 0;
        list[m++] = l0[e];
    }
    if (lf < 1) return m;
    int32_t m0 = m;
    for (int64_t e = ltp[bi]; e < ltp[bi + 1]; e++) {
        int32_t k = lt[e];
        for (int64_t f = l0p[k + 1] - 1; f >= l0p[k] && l0[f] > bi; f--) {
            int32_t j = l0[f];
            if (mark[j] != bi) {
                mark[j] = bi;
                lvl[j] = 1;
                list[m++] = j;
            }
        }
    }
    if (m > m0) sort_distinct(list + 1, m - 1);
    return m;
}

/* Per-thread workspace over the nb block columns (inside a parallel region); NULL and *oom
 * set when out of memory. */
static int32_t *workspace(int32_t nb, int32_t **lvl, int32_t **list, int *oom)
{
    int32_t *w = ildl_thread_scratch((size_t)nb * 3 * sizeof(int32_t), oom);
    if (!w) return NULL;
    for (int32_t b = 0; b < nb; b++) w[b] = -1;
    *lvl = w + nb;
    *list = w + 2 * (size_t)nb;
    return w;
}

/* What the row passes of coarse_build_low read and write. */
typedef struct {
    const ildl_csr *Ap;
    const int32_t *bstart, *blk;
    int lf;
    int64_t *l0p, *ltp, *row_ptr; /* row pointers of L0, LT and the result */
    int32_t *l0, *lt;
    ildl_coarse *out;
} low_build;

/* One parallel pass over the block rows: stage 0 makes the rows of L0, stage 1 the rows of
 * the result; pass 0 stores each row's length at ptr[bi + 1], pass 1 (after the prefix sum)
 * writes the row at ptr[bi]. Returns 1 if a thread ran out of memory, else 0. */
static int low_pass(const low_build *x, int32_t nb, int stage, int pass)
{
    int oom = 0;
    int64_t *ptr = stage == 0 ? x->l0p : x->row_ptr;
#pragma omp parallel
    {
        int32_t *lvl = NULL, *list = NULL, *mark = workspace(nb, &lvl, &list, &oom);
#pragma omp for schedule(dynamic, 64)
        for (int32_t bi = 0; bi < nb; bi++) {
            if (!mark) continue;
            int32_t m = stage == 0 ? level0_row(x->Ap, x->bstart, x->blk, bi, mark, list)
                                   : fill_row(x->l0p, x->l0, x->ltp, x->lt, bi, x->lf, mark, lvl, list);
            if (pass == 0) {
                ptr[bi + 1] = m;
            } else if (stage == 0) {
                memcpy(x->l0 + ptr[bi], list, (size_t)m * sizeof(int32_t));
            } else {
                for (int32_t s = 0; s < m; s++) {
                    x->out->col[ptr[bi] + s] = list[s];
                    x->out->lvl[ptr[bi] + s] = lvl[list[s]];
                }
            }
        }
        free(mark);
    }
    return oom;
}

/* ildl_coarse_build for lf <= 1 (see above). */
static int coarse_build_low(const ildl_csr *Ap, int32_t nb, const int32_t *bstart, int lf,
                            ildl_coarse *out)
{
    int32_t n = Ap->n, *blk = NULL;
    low_build x = {Ap, bstart, NULL, lf, NULL, NULL, NULL, NULL, NULL, out};
    blk = ildl_malloc((size_t)n * sizeof(int32_t));
    x.blk = blk;
    x.l0p = ildl_calloc((size_t)nb + 1, sizeof(int64_t));
    x.ltp = ildl_calloc((size_t)nb + 1, sizeof(int64_t));
    x.row_ptr = ildl_calloc((size_t)nb + 1, sizeof(int64_t));
    if (!blk || !x.l0p || !x.ltp || !x.row_ptr) goto oom;
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t bi = 0; bi < nb; bi++)
        for (int32_t i = bstart[bi]; i < bstart[bi + 1]; i++) blk[i] = bi;

    /* L0, then the result rows: count, prefix sum, fill (two passes keep the layout
     * thread-independent) */
    for (int stage = 0; stage < 2; stage++) {
        int64_t *ptr = stage == 0 ? x.l0p : x.row_ptr;
        if (low_pass(&x, nb, stage, 0)) goto oom;
        for (int32_t bi = 0; bi < nb; bi++) ptr[bi + 1] += ptr[bi];
        if (stage == 0) {
            x.l0 = ildl_malloc((size_t)ptr[nb] * sizeof(int32_t));
            if (!x.l0) goto oom;
        } else {
            out->col = ildl_malloc((size_t)ptr[nb] * sizeof(int32_t));
            out->lvl = ildl_malloc((size_t)ptr[nb] * sizeof(int32_t));
            if (!out->col || !out->lvl) goto oom;
        }
        if (low_pass(&x, nb, stage, 1)) goto oom;
        if (stage == 1) break;
        /* LT(j): the k < j with j in L0(k), ascending (a stable transpose, serial: O(nnz(L0))) */
        const int64_t *l0p = x.l0p;
        const int32_t *l0 = x.l0;
        int64_t *ltp = x.ltp;
        x.lt = ildl_malloc((size_t)l0p[nb] * sizeof(int32_t));
        if (!x.lt) goto oom;
        for (int32_t k = 0; k < nb; k++)
            for (int64_t e = l0p[k] + 1; e < l0p[k + 1]; e++) ltp[l0[e] + 1]++;
        for (int32_t j = 0; j < nb; j++) ltp[j + 1] += ltp[j];
        for (int32_t k = 0; k < nb; k++)
            for (int64_t e = l0p[k] + 1; e < l0p[k + 1]; e++) x.lt[ltp[l0[e]]++] = k;
        for (int32_t j = nb; j > 0; j--) ltp[j] = ltp[j - 1];
        ltp[0] = 0;
    }
    out->nb = nb;
    out->nblocks = x.row_ptr[nb];
    out->row_ptr = x.row_ptr;
    free(blk); free(x.l0p); free(x.l0); free(x.ltp); free(x.lt);
    return ILDL_SUCCESS;

oom:
    free(blk); free(x.l0p); free(x.l0); free(x.ltp); free(x.lt); free(x.row_ptr);
    ildl_coarse_free(out);
    return ILDL_ERR_OUT_OF_MEMORY;
}

/* ---------------------------------------------------------------- any lf, sequential */


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
    if (lf >= ILDL_MAX_FILL_LEVEL) return ildl_coarse_build_complete(Ap, nb, bstart, out);
    /* one thread: the sequential rule does less work than the two-pass parallel path */
    if (lf <= 1 && ildl_max_threads() > 1) return coarse_build_low(Ap, nb, bstart, lf, out);

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
