/* gje.h -- block-Jacobi's batch of small dense blocks inverted by Gauss-Jordan elimination with
 * implicit pivoting (Anzt, Dongarra, Flegar, Quintana-Orti 2017), and the batched product with
 * the inverses. This is the CPU reference; src/cuda/gje.cu (one warp per block, a row per lane in
 * registers) computes the same bits (both round every operation alone: no contraction to FMA).
 *
 * A batch of count blocks: block b has size[b] rows (1..ILDL_GJE_MAX), its entries from
 * offset[b] (offset[b+1] = offset[b] + size[b]^2), its rows of the vectors from rowptr[b]
 * (rowptr[b+1] = rowptr[b] + size[b]). Input blocks are row-major; inverses are stored
 * column-major (inv[offset[b] + j*m + i] = (A_b^{-1})_{ij}), the order the apply reads.
 *
 * Floating-point order of one block (W = A_b, row-major, updated in place), for k = 0..m-1:
 *   r = the row not yet a pivot row with the largest |W[r][k]| (NaN counts as -1/2, below every
 *       number; ties: the smallest r), p = W[r][k]; where |p| < pivot_tol (or p is NaN) p becomes
 *       +pivot_perturb, or -pivot_perturb where p < 0 (counted as perturbed);
 *   d = 1 / p, W[r][k] = 1, then W[r][j] = W[r][j] * d for j = 0..m-1;
 *   for every other row i: f = W[i][k], W[i][k] = 0, W[i][j] = W[i][j] - f * W[r][j], j = 0..m-1.
 * Row r was the pivot row of step k: A^{-1}[k][piv[c]] = W[r][c] (piv[c]: the pivot row of step c).
 * The apply: z_i = sum over j = 0..m-1, in that order from 0.0, of inv_ij * x_j. */
#ifndef ILDL_CPU_GJE_H
#define ILDL_CPU_GJE_H
#include <stdint.h>

#define ILDL_GJE_MAX 32 /* rows of a block at most: one warp's lanes */

/* Invert the count blocks of A into inv (layouts above; inv may be A: each block is read whole
 * before its inverse is written, on the device too). perturbed[b] (may be NULL) gets the
 * number of block b's perturbed pivots, or -1 where an entry of its inverse is not finite (it
 * overflowed; its inverse is then not usable). Returns the number of blocks with a perturbed
 * pivot or a non-finite entry (0: every inverse is that of its block). */
int64_t ildl_gje_invert(int64_t count, const int32_t *size, const int64_t *offset, const double *A,
                        double pivot_tol, double pivot_perturb, double *inv, int32_t *perturbed);

/* z = blockdiag(inv) x: for each block b, z[rowptr[b] + i] = sum_j inv_b(i, j) x[rowptr[b] + j]. */
void ildl_gje_apply(int64_t count, const int32_t *size, const int64_t *offset, const int64_t *rowptr,
                    const double *inv, const double *x, double *z);

/* The checks of a batch's description: sizes in 1..ILDL_GJE_MAX, offset and rowptr (count + 1
 * entries each) the prefix sums of size^2 and size from 0. Returns 0, or 1 + the first block
 * whose size or prefix sums are wrong. */
int64_t ildl_gje_check_batch(int64_t count, const int32_t *size, const int64_t *offset, const int64_t *rowptr);

#endif
