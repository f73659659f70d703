/* block.c -- cosine-similarity blocking (Saad 2003) of the rows of a symmetric matrix.
 * The pattern P_i of row i is its column set plus the diagonal; the similarity of rows i, j
 * is |P_i & P_j| / sqrt(|P_i| |P_j|). RB (here) keeps a given order and cuts it into runs; BR
 * clusters rows over several coarsening levels and orders the final coarse graph (block_br.c,
 * with block_group.c, block_coarsen.c and block_br_order.c). Also the checks both share. */

#include "analyse/block.h"
#include "blockildl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyse/block_internal.h"
#include "core/util.h"

/* ---------------------------------------------------------------- shared checks */

/* ILDL_SUCCESS if the common arguments are usable, else ILDL_ERR_INVALID_OPTION. */
int ildl_block_check(const ildl_csr *A, int max_bs, double threshold)
{
    if (!A || A->n <= 0 || !A->rowptr || (A->rowptr[A->n] > 0 && !A->col))
        return ILDL_ERR_INVALID_OPTION;
    if (max_bs < 1 || max_bs > ILDL_TILE) return ILDL_ERR_INVALID_OPTION;
    if (!(threshold >= 0.0 && threshold <= 1.0)) return ILDL_ERR_INVALID_OPTION; /* NaN too */
    return ILDL_SUCCESS;
}

/* 1 if pair is NULL or a valid involution: pair[i] = -1 or pair[pair[i]] = i != pair[i]. */
int ildl_block_pair_valid(int32_t n, const int32_t *pair)
{
    if (!pair) return 1;
    for (int32_t i = 0; i < n; i++) {
        int32_t p = pair[i];
        if (p == -1) continue;
        if (p < 0 || p >= n || p == i || pair[p] != i) return 0;
    }
    return 1;
}

int ildl_block_order_valid(int32_t n, const int32_t *order, int32_t *mark)
{
    for (int32_t i = 0; i < n; i++) mark[i] = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t r = order[k];
        if (r < 0 || r >= n || mark[r]) return 0;
        mark[r] = 1;
    }
    return 1;
}

/* Free what a blocking holds (block.h). */
void ildl_blocking_free(ildl_blocking *b)
{
    if (!b) return;
    free(b->perm);
    free(b->bstart);
    memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------- strategy RB */

/* Mark P_r (row r of A plus its diagonal) with stamp; returns |P_r|. */
static int64_t mark_row(const ildl_csr *A, int32_t r, int32_t *mark, int32_t stamp)
{
    int64_t len = A->rowptr[r + 1] - A->rowptr[r];
    int hasdiag = 0;
    for (int64_t q = A->rowptr[r]; q < A->rowptr[r + 1]; q++) {
        mark[A->col[q]] = stamp;
        hasdiag |= (A->col[q] == r);
    }
    mark[r] = stamp;
    return len + !hasdiag;
}

/* 1 if cos(P_r, marked pattern of size sf) >= threshold. */
static int rb_similar(const ildl_csr *A, int32_t r, const int32_t *mark, int32_t stamp,
                      int64_t sf, double threshold)
{
    int64_t hits = 0, len = A->rowptr[r + 1] - A->rowptr[r];
    int hasdiag = 0;
    for (int64_t q = A->rowptr[r]; q < A->rowptr[r + 1]; q++) {
        int32_t c = A->col[q];
        hits += (mark[c] == stamp);
        hasdiag |= (c == r);
    }
    if (!hasdiag) {
        hits += (mark[r] == stamp);
        len++;
    }
    return (double)hits / sqrt((double)sf * (double)len) >= threshold;
}

/* Rows of the indivisible unit starting at position k of order: 2 for an adjacent pair. */
static int rb_unit(int32_t n, const int32_t *order, const int32_t *pair, int32_t k)
{
    return (pair && k + 1 < n && pair[order[k]] == order[k + 1]) ? 2 : 1;
}

/* Strategy RB (block.h): runs of the given order. */
int ildl_block_rb(const ildl_csr *A, const int32_t *order, const int32_t *pair, int max_bs,
                  double threshold, ildl_blocking *out)
{
    int32_t *mark = NULL, *bstart = NULL;
    if (out) memset(out, 0, sizeof *out);
    if (!out) return ILDL_ERR_INVALID_OPTION;
    int st = ildl_block_check(A, max_bs, threshold);
    if (st) return st;
    int32_t n = A->n;
    if (!order || !ildl_block_pair_valid(n, pair)) return ILDL_ERR_INVALID_OPTION;
    /* a pair cannot share a block of one row, so 1-row blocks ignore pairs */
    if (max_bs < 2) pair = NULL;
    mark = ildl_malloc(sizeof(int32_t) * (size_t)n);
    bstart = ildl_malloc(sizeof(int32_t) * ((size_t)n + 1));
    out->perm = ildl_malloc(sizeof(int32_t) * (size_t)n);
    if (!mark || !bstart || !out->perm) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    if (!ildl_block_order_valid(n, order, mark)) {
        st = ILDL_ERR_INVALID_OPTION;
        goto cleanup;
    }
    for (int32_t i = 0; i < n; i++) mark[i] = -1;

    int32_t nb = 0, k = 0;
    while (k < n) {
        /* stamp = the block's start position, unique per block */
        int64_t sf = mark_row(A, order[k], mark, k);
        int32_t stamp = k, size = rb_unit(n, order, pair, k);
        bstart[nb++] = k;
        k += size;
        while (k < n) {
            int u = rb_unit(n, order, pair, k);
            if (size + u > max_bs) break;
            if (!rb_similar(A, order[k], mark, stamp, sf, threshold)) break;
            if (u == 2 && !rb_similar(A, order[k + 1], mark, stamp, sf, threshold)) break;
            size += u;
            k += u;
        }
    }
    bstart[nb] = n;
    memcpy(out->perm, order, sizeof(int32_t) * (size_t)n);
    out->n = n;
    out->nb = nb;
    int32_t *shrunk = realloc(bstart, sizeof(int32_t) * ((size_t)nb + 1));
    out->bstart = shrunk ? shrunk : bstart; /* shrinking failed: keep the larger array */
    bstart = NULL;

cleanup:
    free(mark);
    free(bstart);
    if (st) ildl_blocking_free(out);
    return st;
}
