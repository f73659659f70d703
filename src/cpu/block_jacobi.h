/* block_jacobi.h -- block-Jacobi on an analysis: the diagonal blocks of the scaled, permuted
 * matrix (the analysis' scaling S, order and blocking P) inverted by Gauss-Jordan elimination
 * (cpu/gje.h), and M^{-1} r = S P^T blockdiag(B_b^{-1}) P S r, B_b the blocks of P S A S P^T.
 * On the CPU; the batch it builds is the one src/cuda/gje.cu inverts to the same bits. */
#ifndef ILDL_CPU_BLOCK_JACOBI_H
#define ILDL_CPU_BLOCK_JACOBI_H
#include <stdint.h>
#include "analyse/block.h"
#include "core/csr.h"
#include "cpu/factor.h"

typedef struct ildl_block_jacobi {
    int32_t n;
    int64_t count;         /* blocks */
    int32_t *size;         /* [count] rows per block */
    int64_t *offset;       /* [count+1] first entry of each block */
    int64_t *rowptr;       /* [count+1] first analysed row of each block (the blocking's bstart) */
    int32_t *iperm;        /* [n] original row -> analysed row */
    const int32_t *perm;   /* the blocking's perm (analysed row -> original row), borrowed */
    const double *scale;   /* [n] the analysis' scaling (original rows), borrowed */
    double *blocks, *inv;  /* [offset[count]]: the blocks (row-major), their inverses (column-major) */
    int32_t *perturbed;    /* [count] per block: perturbed pivots, -1 where its inverse is not finite */
    int64_t bad;           /* blocks with a perturbed pivot or a non-finite inverse */
    double *work;          /* [n] */
} ildl_block_jacobi;

/* The batch for blocking blk (of A's order) and scaling scale (both must outlive bj): sizes,
 * offsets and memory; nothing computed. ILDL_SUCCESS, ILDL_ERR_OUT_OF_MEMORY, or
 * ILDL_ERR_NOT_SUPPORTED for a block of more than ILDL_GJE_MAX rows. */
int ildl_block_jacobi_create(const ildl_blocking *blk, const double *scale, ildl_block_jacobi *bj);

/* Take the diagonal blocks of S A S (A sorted CSR, the blocking's pattern and order) and invert
 * them: pivots below pivot_tol become +-pivot_perturb (cpu/gje.h). Returns bj->bad. */
int64_t ildl_block_jacobi_factor(ildl_block_jacobi *bj, const ildl_csr *A, double pivot_tol, double pivot_perturb);

/* The first half of ildl_block_jacobi_factor: bj->blocks = the diagonal blocks of S A S (for a
 * device to invert). */
void ildl_block_jacobi_extract(ildl_block_jacobi *bj, const ildl_csr *A);

/* A factorization's statistics from bj->perturbed: nperturbed (a block with a non-finite inverse
 * counts all its rows), factor_nnz = the inverses' entries; the rest 0. */
void ildl_block_jacobi_stats(const ildl_block_jacobi *bj, ildl_factor_stats *fs);

/* The map of an application: analysed row k is user row perm[k] (its inverse: iperm) with scale
 * qs[k] = scale[perm[k]] ([n]), the one part that new values (a new scaling) change. */
void ildl_block_jacobi_row_scale(const ildl_block_jacobi *bj, double *qs);

/* z = M^{-1} r (original order; r and z may be the same array). */
void ildl_block_jacobi_apply(ildl_block_jacobi *bj, const double *r, double *z);

void ildl_block_jacobi_free(ildl_block_jacobi *bj);

#endif
