/* block_jacobi.c -- block-Jacobi on an analysis' scaling, order and blocking (contracts:
 * block_jacobi.h), with the Gauss-Jordan inversion and apply of gje.c. */
#include "cpu/block_jacobi.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"
#include "cpu/gje.h"

void ildl_block_jacobi_free(ildl_block_jacobi *bj)
{
    if (!bj) return;
    free(bj->size);
    free(bj->offset);
    free(bj->rowptr);
    free(bj->iperm);
    free(bj->blocks);
    free(bj->inv);
    free(bj->perturbed);
    free(bj->work);
    memset(bj, 0, sizeof *bj);
}

int ildl_block_jacobi_create(const ildl_blocking *blk, const double *scale, ildl_block_jacobi *bj)
{
    memset(bj, 0, sizeof *bj);
    const int32_t n = blk->n, nb = blk->nb;
    for (int32_t b = 0; b < nb; b++)
        if (blk->bstart[b + 1] - blk->bstart[b] > ILDL_GJE_MAX) return ILDL_ERR_NOT_SUPPORTED;
    bj->n = n;
    bj->count = nb;
    bj->perm = blk->perm;
    bj->scale = scale;
    bj->size = malloc(sizeof(int32_t) * (size_t)(nb ? nb : 1));
    bj->offset = malloc(sizeof(int64_t) * (size_t)(nb + 1));
    bj->rowptr = malloc(sizeof(int64_t) * (size_t)(nb + 1));
    bj->iperm = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    bj->perturbed = malloc(sizeof(int32_t) * (size_t)(nb ? nb : 1));
    bj->work = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!bj->size || !bj->offset || !bj->rowptr || !bj->iperm || !bj->perturbed || !bj->work) goto oom;
    bj->offset[0] = bj->rowptr[0] = 0;
    for (int32_t b = 0; b < nb; b++) {
        int64_t m = blk->bstart[b + 1] - blk->bstart[b];
        bj->size[b] = (int32_t)m;
        bj->rowptr[b + 1] = blk->bstart[b + 1];
        bj->offset[b + 1] = bj->offset[b] + m * m;
    }
    for (int32_t k = 0; k < n; k++) bj->iperm[blk->perm[k]] = k;
    bj->blocks = ildl_malloc(sizeof(double) * (size_t)(bj->offset[nb] ? bj->offset[nb] : 1));
    bj->inv = ildl_malloc(sizeof(double) * (size_t)(bj->offset[nb] ? bj->offset[nb] : 1));
    if (!bj->blocks || !bj->inv) goto oom;
    return ILDL_SUCCESS;
oom:
    ildl_block_jacobi_free(bj);
    return ILDL_ERR_OUT_OF_MEMORY;
}

void ildl_block_jacobi_extract(ildl_block_jacobi *bj, const ildl_csr *A)
{
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t b = 0; b < bj->count; b++) {
        const int m = bj->size[b];
        const int64_t r0 = bj->rowptr[b];
        double *blk = bj->blocks + bj->offset[b];
        memset(blk, 0, sizeof(double) * (size_t)m * (size_t)m);
        for (int i = 0; i < m; i++) {
            const int32_t orig = bj->perm[r0 + i];
            const double si = bj->scale[orig];
            for (int64_t p = A->rowptr[orig]; p < A->rowptr[orig + 1]; p++) {
                int64_t pos = bj->iperm[A->col[p]] - r0;
                if (pos >= 0 && pos < m) blk[(int64_t)i * m + pos] = si * A->val[p] * bj->scale[A->col[p]];
            }
        }
    }
}

int64_t ildl_block_jacobi_factor(ildl_block_jacobi *bj, const ildl_csr *A, double pivot_tol, double pivot_perturb)
{
    ildl_block_jacobi_extract(bj, A);
    bj->bad = ildl_gje_invert(bj->count, bj->size, bj->offset, bj->blocks, pivot_tol, pivot_perturb, bj->inv,
                              bj->perturbed);
    return bj->bad;
}

void ildl_block_jacobi_stats(const ildl_block_jacobi *bj, ildl_factor_stats *fs)
{
    memset(fs, 0, sizeof *fs);
    int64_t np = 0;
    for (int64_t b = 0; b < bj->count; b++) np += bj->perturbed[b] < 0 ? bj->size[b] : bj->perturbed[b];
    fs->nperturbed = (int32_t)(np < INT32_MAX ? np : INT32_MAX);
    fs->factor_nnz = bj->offset[bj->count];
}

void ildl_block_jacobi_row_scale(const ildl_block_jacobi *bj, double *qs)
{
    for (int32_t k = 0; k < bj->n; k++) qs[k] = bj->scale[bj->perm[k]];
}

void ildl_block_jacobi_apply(ildl_block_jacobi *bj, const double *r, double *z)
{
    double *w = bj->work;
    const int32_t n = bj->n;
    for (int32_t k = 0; k < n; k++) w[k] = bj->scale[bj->perm[k]] * r[bj->perm[k]];
    ildl_gje_apply(bj->count, bj->size, bj->offset, bj->rowptr, bj->inv, w, w);
    for (int32_t k = 0; k < n; k++) z[bj->perm[k]] = bj->scale[bj->perm[k]] * w[k];
}
