/* fill_complete.c -- the complete block fill of the coarse graph (the ladder's complete rung) by
 * the elimination tree (the symbolic factorization; Liu 1990): row i of U's block pattern is
 * row i of A's upper block pattern joined with the rows of i's children in the elimination
 * tree, less their column i; its parent is its first column after i. Each row is read once, by
 * its parent: work O(|U|) plus the sorting of each row, where fill.c's level-of-fill rule
 * visits row k once for every block (k, i) of it (O(sum over k of |row k|^2): 73 s against a
 * few for a 1M-row 3D Helmholtz problem). The pattern is fill.c's for any lf >= nb - 2 (a fill
 * path has at most nb - 2 intermediate blocks); the levels are not computed: every fill block
 * gets lvl 1. */
#include "analyse/fill.h"
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Grow col/lvl to hold at least need blocks. ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
static int reserve(int64_t need, int64_t *cap, int32_t **col, int32_t **lvl)
{
    if (need <= *cap) return ILDL_SUCCESS;
    int64_t c = *cap > 0 ? *cap : 16;
    while (c < need) c *= 2;
    int32_t *a = realloc(*col, (size_t)c * sizeof(int32_t));
    if (!a) return ILDL_ERR_OUT_OF_MEMORY;
    *col = a;
    int32_t *b = realloc(*lvl, (size_t)c * sizeof(int32_t));
    if (!b) return ILDL_ERR_OUT_OF_MEMORY;
    *lvl = b;
    *cap = c;
    return ILDL_SUCCESS;
}

int ildl_coarse_build_complete(const ildl_csr *Ap, int32_t nb, const int32_t *bstart, ildl_coarse *out)
{
    int status = ILDL_ERR_OUT_OF_MEMORY;
    int32_t n = Ap->n;
    int32_t *blk = NULL, *mark = NULL, *list = NULL, *lv = NULL, *child = NULL, *sibling = NULL;
    int32_t *col = NULL, *lvl = NULL;
    int64_t *row_ptr = NULL, cap = 0, len = 0;
    memset(out, 0, sizeof(*out));
    blk = ildl_malloc((size_t)n * sizeof(int32_t));
    mark = ildl_malloc((size_t)nb * sizeof(int32_t));
    list = ildl_malloc((size_t)nb * sizeof(int32_t));
    lv = ildl_malloc((size_t)nb * sizeof(int32_t));
    child = ildl_malloc((size_t)nb * sizeof(int32_t));   /* first child in the elimination tree */
    sibling = ildl_malloc((size_t)nb * sizeof(int32_t)); /* next child of the same parent */
    row_ptr = ildl_malloc((size_t)(nb + 1) * sizeof(int64_t));
    if (!blk || !mark || !list || !lv || !child || !sibling || !row_ptr) goto cleanup;
    if (reserve((int64_t)nb + Ap->rowptr[n] / 2 + 1, &cap, &col, &lvl)) goto cleanup;
    for (int32_t b = 0; b < nb; b++) {
        for (int32_t i = bstart[b]; i < bstart[b + 1]; i++) blk[i] = b;
        mark[b] = -1;
        child[b] = -1;
    }
    row_ptr[0] = 0;
    for (int32_t bi = 0; bi < nb; bi++) {
        int32_t m = 0;
        /* the diagonal block (forced) and the blocks of A's upper entries: level 0 */
        mark[bi] = bi;
        lv[bi] = 0;
        list[m++] = bi;
        for (int32_t i = bstart[bi]; i < bstart[bi + 1]; i++)
            for (int64_t p = Ap->rowptr[i]; p < Ap->rowptr[i + 1]; p++) {
                int32_t j = blk[Ap->col[p]];
                if (Ap->col[p] >= i && mark[j] != bi) {
                    mark[j] = bi;
                    lv[j] = 0;
                    list[m++] = j;
                }
            }
        /* the children's rows past bi: fill (their columns are > the child, >= bi) */
        for (int32_t c = child[bi]; c >= 0; c = sibling[c])
            for (int64_t p = row_ptr[c]; p < row_ptr[c + 1]; p++) {
                int32_t j = col[p];
                if (j > bi && mark[j] != bi) {
                    mark[j] = bi;
                    lv[j] = 1;
                    list[m++] = j;
                }
            }
        qsort(list + 1, (size_t)(m - 1), sizeof(int32_t), cmp_int32); /* diagonal stays first */
        if (reserve(len + m, &cap, &col, &lvl)) goto cleanup;
        for (int32_t s = 0; s < m; s++) {
            col[len] = list[s];
            lvl[len++] = lv[list[s]];
        }
        row_ptr[bi + 1] = len;
        if (m > 1) { /* parent: the first column after bi */
            int32_t parent = list[1];
            sibling[bi] = child[parent];
            child[parent] = bi;
        }
    }
    out->nb = nb;
    out->nblocks = len;
    out->row_ptr = row_ptr;
    out->col = col;
    out->lvl = lvl;
    row_ptr = NULL;
    col = NULL;
    lvl = NULL;
    status = ILDL_SUCCESS;
cleanup:
    free(blk);
    free(mark);
    free(list);
    free(lv);
    free(child);
    free(sibling);
    free(row_ptr);
    free(col);
    free(lvl);
    return status;
}
