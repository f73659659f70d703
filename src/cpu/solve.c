/* solve.c -- level-scheduled block solves with the factor U^T D U (paper Sec. IV-C):
 * forward with U^T over the levels ascending, D^-1, backward with U over the levels
 * descending. Rows of one level are independent; each row's arithmetic runs in a fixed
 * order, so the result does not depend on the number of threads.
 *
 * Per-tile operations (the CUDA kernels mirror them one to one):
 *   forward  x_i -= U_ki^T x_k for the tiles of column i in the order fwd_seq (level of k
 *            ascending, then k: the order in which the x_k become final); per tile
 *            s_c = sum_{l ascending} U_ki(l,c) x_k(l), then x_i(c) -= s_c; a sparse tile
 *            takes s_c in chunks of W rows (ildl_sparse_chunk_code: W = 8, 16 or 32), each
 *            chunk summed from 0 with l ascending, the chunks' sums added in order;
 *            then x_i <- V_ii^T x_i (V_ii = U_ii^{-1}, stored): for every c,
 *            x_i(c) = x_i(c) + s_c, s_c = sum_{l<c ascending} V_ii(l,c) x_i(l) (old values).
 *   D        1x1: x /= d; 2x2 [a b; b c]: det = a c - b b,
 *            x0' = (c x0 - b x1) / det, x1' = (a x1 - b x0) / det.
 *   backward x_i -= U_ij x_j for the tiles of row i in the order bwd_seq (level of j
 *            descending, then j); per tile
 *            s_r = sum_{c ascending} U_ij(r,c) x_j(c), then x_i(r) -= s_r;
 *            then x_i <- V_ii x_i: x_i(r) = x_i(r) + s_r, s_r = sum_{c>r ascending}
 *            V_ii(r,c) x_i(c) (old values).
 * A sparse tile visits its entries in ascending local index, which for each output entry
 * is the same order as the dense loop (skipping exact zeros).
 *
 * The arithmetic is always double. The single build (cpu/real.h, ildl_cpu_solve_s) reads the
 * float factor of precision single and widens each value exactly: a solve in float arithmetic
 * made SQMR stall on indefinite problems (a shifted 2D Laplacian: 3.9e-6 after 1000 iterations
 * where this converges in 56), and the vectors cost little next to the factor. */
#include "cpu/factor.h"
#include <assert.h>
#include <string.h>
#include "cpu/dense_factor.h"
#include "cpu/real.h"

#define LD ILDL_TILE

/* xi -= u^T xk for a dense mk x mi tile (row-major, ld mi). */
static void dense_utx_sub(int mk, int mi, const ildl_real *u, const double *xk, double *xi)
{
    for (int c = 0; c < mi; c++) {
        double s = 0.0;
        for (int l = 0; l < mk; l++) s += u[l * mi + c] * xk[l];
        xi[c] -= s;
    }
}

/* xi -= u^T xk for a sparse tile of nz entries (idx ascending: rows ascending), mi columns;
 * column c's sum in chunks of W rows (code: ildl_sparse_chunk_code): c_c sums a chunk from +0,
 * s_c adds the non-empty chunks in order. Width 32 (code 0) is the plain sum. */
static void sparse_utx_sub(int64_t nz, const uint16_t *idx, const ildl_real *v, int code, int mi,
                           const double *xk, double *xi)
{
    double s[LD];
    memset(s, 0, sizeof(s));
    if (code == 0) {
        for (int64_t q = 0; q < nz; q++) s[idx[q] & 31] += v[q] * xk[idx[q] >> 5];
        for (int k = 0; k < mi; k++) xi[k] -= s[k];
        return;
    }
    /* the rows ascend, so each range of W rows is one run of entries: sum it into c, then add
     * the columns it touched into s (no branch per entry on whether a chunk ends) */
    const int W = LD >> code;
    double c[LD];
    memset(c, 0, sizeof(c));
    int64_t q = 0;
    for (int r0 = 0; r0 < LD && q < nz; r0 += W) {
        uint32_t touched = 0;
        for (; q < nz && (idx[q] >> 5) < r0 + W; q++) {
            int k = idx[q] & 31;
            c[k] += v[q] * xk[idx[q] >> 5];
            touched |= 1u << k;
        }
        for (; touched; touched &= touched - 1) { /* the chunks just summed; c back to +0 */
            int k = __builtin_ctz(touched);
            s[k] += c[k];
            c[k] = 0.0;
        }
    }
    for (int k = 0; k < mi; k++) xi[k] -= s[k];
}

/* xi -= u xj for a dense mi x mj tile (row-major, ld mj). */
static void dense_ux_sub(int mi, int mj, const ildl_real *u, const double *xj, double *xi)
{
    for (int r = 0; r < mi; r++) {
        double s = 0.0;
        for (int c = 0; c < mj; c++) s += u[r * mj + c] * xj[c];
        xi[r] -= s;
    }
}

/* xi -= u xj for a sparse tile of nz entries (idx ascending), mi rows: the plain sum per row
 * (the backward chunk width is always 32, ildl_sparse_chunk_code). */
static void sparse_ux_sub(int64_t nz, const uint16_t *idx, const ildl_real *v, int mi,
                          const double *xj, double *xi)
{
    double s[LD];
    memset(s, 0, sizeof(s));
    for (int64_t q = 0; q < nz; q++) s[idx[q] >> 5] += v[q] * xj[idx[q] & 31];
    for (int r = 0; r < mi; r++) xi[r] -= s[r];
}

/* x <- U_ii^-T x = V^T x with the stored inverse v = V_ii (m x m, ld m, strict upper part of a
 * unit upper matrix). Columns c descending, so the x[l], l < c, read are still the old ones. On
 * the GPU every lane computes its c at once: a product, not a chain of m dependent steps. */
static void diag_forward(int m, const ildl_real *v, double *x)
{
    for (int c = m - 1; c > 0; c--) {
        double s = 0.0;
        for (int l = 0; l < c; l++) s += v[l * m + c] * x[l];
        x[c] += s;
    }
}

/* x <- U_ii^-1 x = V x with the stored inverse v = V_ii; rows r ascending (old x[c], c > r). */
static void diag_backward(int m, const ildl_real *v, double *x)
{
    for (int r = 0; r + 1 < m; r++) {
        double s = 0.0;
        for (int c = r + 1; c < m; c++) s += v[r * m + c] * x[c];
        x[r] += s;
    }
}

/* Forward step of block row i: x_i <- U_ii^-T (x_i - sum_k U_ki^T x_k). */
static void forward_row(const ildl_tiles *T, int32_t i, double *x)
{
    int mi = ildl_tiles_block_size(T, i);
    double *xi = x + T->bstart[i];
    for (int64_t q = T->col_ptr[i]; q < T->col_ptr[i + 1]; q++) {
        int64_t t = T->fwd_seq[q];
        int32_t k = T->row[t];
        if (k >= i) break; /* the tiles with k < i come first in fwd_seq too */
        const double *xk = x + T->bstart[k];
        if (T->format[t] == ILDL_TILE_SPARSE)
            sparse_utx_sub(T->nnz[t], T->idx + T->off[t], TVAL(T) + T->off[t],
                           T->chunk_f ? T->chunk_f[t] : ildl_sparse_chunk_code(T->nnz[t], T->idx + T->off[t], 1),
                           mi, xk, xi);
        else
            dense_utx_sub(ildl_tiles_block_size(T, k), mi, TVAL(T) + T->off[t], xk, xi);
    }
    diag_forward(mi, TVAL(T) + T->off[T->row_ptr[i]], xi);
}

/* Backward step of block row i: x_i <- U_ii^-1 (x_i - sum_j U_ij x_j). */
static void backward_row(const ildl_tiles *T, int32_t i, double *x)
{
    int mi = ildl_tiles_block_size(T, i);
    double *xi = x + T->bstart[i];
    for (int64_t q = T->row_ptr[i] + 1; q < T->row_ptr[i + 1]; q++) {
        int64_t t = T->bwd_seq[q];
        int32_t j = T->col[t];
        const double *xj = x + T->bstart[j];
        if (T->format[t] == ILDL_TILE_SPARSE)
            sparse_ux_sub(T->nnz[t], T->idx + T->off[t], TVAL(T) + T->off[t], mi, xj, xi);
        else
            dense_ux_sub(mi, ildl_tiles_block_size(T, j), TVAL(T) + T->off[t], xj, xi);
    }
    diag_backward(mi, TVAL(T) + T->off[T->row_ptr[i]], xi);
}

/* x <- D^-1 x with D's 1x1 and 2x2 pivots, or with |D|^-1 (abs_d: each pivot's eigenvalues
 * taken by magnitude, ildl_pivot2_abs_solve). */
static void d_solve(const ildl_tiles *T, double *x, int abs_d)
{
    for (int32_t k = 0; k < T->n; k++) {
        double a = T->d_diag[k];
        if (T->piv_type[k] == 2 && k + 1 < T->n) {
            double b = T->d_off[k], c = T->d_diag[k + 1];
            double x0 = x[k], x1 = x[k + 1];
            if (abs_d) ildl_pivot2_abs_solve(a, b, c, x0, x1, &x[k], &x[k + 1]);
            else ildl_pivot2_solve(a, b, c, ildl_pivot2_det(a, b, c), x0, x1, &x[k], &x[k + 1]);
            k++;
        } else {
            x[k] /= abs_d ? fabs(a) : a;
        }
    }
}

static void solve(const ildl_tiles *T, double *x, int abs_d)
{
    assert(TVAL(T) && T->diag_inverted); /* the factor of this precision, prepared for solves */
    for (int32_t lev = 0; lev < T->nlevels; lev++) {
        int32_t r0 = T->level_ptr[lev], nrows = T->level_ptr[lev + 1] - r0;
#pragma omp parallel for schedule(dynamic, 4) if (nrows > 16)
        for (int32_t rr = 0; rr < nrows; rr++) forward_row(T, T->level_rows[r0 + rr], x);
    }
    d_solve(T, x, abs_d);
    for (int32_t lev = T->nlevels - 1; lev >= 0; lev--) {
        int32_t r0 = T->level_ptr[lev], nrows = T->level_ptr[lev + 1] - r0;
#pragma omp parallel for schedule(dynamic, 4) if (nrows > 16)
        for (int32_t rr = 0; rr < nrows; rr++) backward_row(T, T->level_rows[r0 + rr], x);
    }
}

void RN(ildl_cpu_solve)(const ildl_tiles *T, double *x) { solve(T, x, 0); }

void RN(ildl_cpu_solve_abs)(const ildl_tiles *T, double *x) { solve(T, x, 1); }
