/* solve_multi.c -- the block solves of solve.c for nc right-hand sides at once (1 <= nc <=
 * ILDL_SOLVE_MULTI_MAX), stored row-interleaved: X[r * nc + j] is row r of column j. The factor
 * is read once for all nc columns; each column's arithmetic is that of ildl_cpu_solve, operation
 * for operation (the same sums from +0 in the same order, the same chunks), so every column
 * gets the bits a solve of it alone gets. */
#include "cpu/factor.h"
#include <assert.h>
#include <string.h>
#include "cpu/dense_factor.h"
#include "cpu/real.h"

#define LD ILDL_TILE
#define NC ILDL_SOLVE_MULTI_MAX

/* xi -= u^T xk, dense mk x mi tile. */
static void dense_utx_sub(int mk, int mi, const ildl_real *u, const double *xk, double *xi, int nc)
{
    double s[NC];
    for (int c = 0; c < mi; c++) {
        for (int j = 0; j < nc; j++) s[j] = 0.0;
        for (int l = 0; l < mk; l++) {
            double ul = u[l * mi + c];
            for (int j = 0; j < nc; j++) s[j] += ul * xk[l * nc + j];
        }
        for (int j = 0; j < nc; j++) xi[c * nc + j] -= s[j];
    }
}

/* xi -= u^T xk, sparse tile: solve.c's sparse_utx_sub per column (chunks of W rows). */
static void sparse_utx_sub(int64_t nz, const uint16_t *idx, const ildl_real *v, int code, int mi,
                           const double *xk, double *xi, int nc)
{
    double s[LD * NC], c[LD * NC];
    memset(s, 0, sizeof(double) * LD * (size_t)nc);
    if (code == 0) {
        for (int64_t q = 0; q < nz; q++) {
            int k = idx[q] & 31, l = idx[q] >> 5;
            for (int j = 0; j < nc; j++) s[k * nc + j] += v[q] * xk[l * nc + j];
        }
    } else {
        const int W = LD >> code;
        memset(c, 0, sizeof(double) * LD * (size_t)nc);
        int64_t q = 0;
        for (int r0 = 0; r0 < LD && q < nz; r0 += W) {
            uint32_t touched = 0;
            for (; q < nz && (idx[q] >> 5) < r0 + W; q++) {
                int k = idx[q] & 31, l = idx[q] >> 5;
                for (int j = 0; j < nc; j++) c[k * nc + j] += v[q] * xk[l * nc + j];
                touched |= 1u << k;
            }
            for (; touched; touched &= touched - 1) {
                int k = __builtin_ctz(touched);
                for (int j = 0; j < nc; j++) {
                    s[k * nc + j] += c[k * nc + j];
                    c[k * nc + j] = 0.0;
                }
            }
        }
    }
    for (int k = 0; k < mi; k++)
        for (int j = 0; j < nc; j++) xi[k * nc + j] -= s[k * nc + j];
}

/* xi -= u xj, dense mi x mj tile. */
static void dense_ux_sub(int mi, int mj, const ildl_real *u, const double *xj, double *xi, int nc)
{
    double s[NC];
    for (int r = 0; r < mi; r++) {
        for (int j = 0; j < nc; j++) s[j] = 0.0;
        for (int c = 0; c < mj; c++) {
            double urc = u[r * mj + c];
            for (int j = 0; j < nc; j++) s[j] += urc * xj[c * nc + j];
        }
        for (int j = 0; j < nc; j++) xi[r * nc + j] -= s[j];
    }
}

/* xi -= u xj, sparse tile: the plain sum per row. */
static void sparse_ux_sub(int64_t nz, const uint16_t *idx, const ildl_real *v, int mi, const double *xj,
                          double *xi, int nc)
{
    double s[LD * NC];
    memset(s, 0, sizeof(double) * LD * (size_t)nc);
    for (int64_t q = 0; q < nz; q++) {
        int r = idx[q] >> 5, c = idx[q] & 31;
        for (int j = 0; j < nc; j++) s[r * nc + j] += v[q] * xj[c * nc + j];
    }
    for (int r = 0; r < mi; r++)
        for (int j = 0; j < nc; j++) xi[r * nc + j] -= s[r * nc + j];
}

/* x <- V^T x with the stored inverse V_ii (columns descending). */
static void diag_forward(int m, const ildl_real *v, double *x, int nc)
{
    double s[NC];
    for (int c = m - 1; c > 0; c--) {
        for (int j = 0; j < nc; j++) s[j] = 0.0;
        for (int l = 0; l < c; l++) {
            double vl = v[l * m + c];
            for (int j = 0; j < nc; j++) s[j] += vl * x[l * nc + j];
        }
        for (int j = 0; j < nc; j++) x[c * nc + j] += s[j];
    }
}

/* x <- V x with the stored inverse V_ii (rows ascending). */
static void diag_backward(int m, const ildl_real *v, double *x, int nc)
{
    double s[NC];
    for (int r = 0; r + 1 < m; r++) {
        for (int j = 0; j < nc; j++) s[j] = 0.0;
        for (int c = r + 1; c < m; c++) {
            double vc = v[r * m + c];
            for (int j = 0; j < nc; j++) s[j] += vc * x[c * nc + j];
        }
        for (int j = 0; j < nc; j++) x[r * nc + j] += s[j];
    }
}

static void forward_row(const ildl_tiles *T, int32_t i, double *x, int nc)
{
    int mi = ildl_tiles_block_size(T, i);
    double *xi = x + (int64_t)T->bstart[i] * nc;
    for (int64_t q = T->col_ptr[i]; q < T->col_ptr[i + 1]; q++) {
        int64_t t = T->fwd_seq[q];
        int32_t k = T->row[t];
        if (k >= i) break;
        const double *xk = x + (int64_t)T->bstart[k] * nc;
        if (T->format[t] == ILDL_TILE_SPARSE)
            sparse_utx_sub(T->nnz[t], T->idx + T->off[t], TVAL(T) + T->off[t],
                           T->chunk_f ? T->chunk_f[t] : ildl_sparse_chunk_code(T->nnz[t], T->idx + T->off[t], 1),
                           mi, xk, xi, nc);
        else
            dense_utx_sub(ildl_tiles_block_size(T, k), mi, TVAL(T) + T->off[t], xk, xi, nc);
    }
    diag_forward(mi, TVAL(T) + T->off[T->row_ptr[i]], xi, nc);
}

static void backward_row(const ildl_tiles *T, int32_t i, double *x, int nc)
{
    int mi = ildl_tiles_block_size(T, i);
    double *xi = x + (int64_t)T->bstart[i] * nc;
    for (int64_t q = T->row_ptr[i] + 1; q < T->row_ptr[i + 1]; q++) {
        int64_t t = T->bwd_seq[q];
        int32_t j = T->col[t];
        const double *xj = x + (int64_t)T->bstart[j] * nc;
        if (T->format[t] == ILDL_TILE_SPARSE)
            sparse_ux_sub(T->nnz[t], T->idx + T->off[t], TVAL(T) + T->off[t], mi, xj, xi, nc);
        else
            dense_ux_sub(mi, ildl_tiles_block_size(T, j), TVAL(T) + T->off[t], xj, xi, nc);
    }
    diag_backward(mi, TVAL(T) + T->off[T->row_ptr[i]], xi, nc);
}

/* D^-1 (or |D|^-1) per column, as solve.c's d_solve. */
static void d_solve(const ildl_tiles *T, double *x, int nc, int abs_d)
{
    for (int32_t k = 0; k < T->n; k++) {
        double a = T->d_diag[k];
        if (T->piv_type[k] == 2 && k + 1 < T->n) {
            double b = T->d_off[k], c = T->d_diag[k + 1], det = ildl_pivot2_det(a, b, c);
            for (int j = 0; j < nc; j++) {
                double x0 = x[k * nc + j], x1 = x[(k + 1) * nc + j];
                if (abs_d) ildl_pivot2_abs_solve(a, b, c, x0, x1, &x[k * nc + j], &x[(k + 1) * nc + j]);
                else ildl_pivot2_solve(a, b, c, det, x0, x1, &x[k * nc + j], &x[(k + 1) * nc + j]);
            }
            k++;
        } else {
            double d = abs_d ? fabs(a) : a;
            for (int j = 0; j < nc; j++) x[(int64_t)k * nc + j] /= d;
        }
    }
}

void RN(ildl_cpu_solve_multi)(const ildl_tiles *T, double *x, int nc, int abs_d)
{
    assert(TVAL(T) && T->diag_inverted && nc >= 1 && nc <= NC);
    for (int32_t lev = 0; lev < T->nlevels; lev++) {
        int32_t r0 = T->level_ptr[lev], nrows = T->level_ptr[lev + 1] - r0;
#pragma omp parallel for schedule(dynamic, 4) if (nrows > 16)
        for (int32_t rr = 0; rr < nrows; rr++) forward_row(T, T->level_rows[r0 + rr], x, nc);
    }
    d_solve(T, x, nc, abs_d);
    for (int32_t lev = T->nlevels - 1; lev >= 0; lev--) {
        int32_t r0 = T->level_ptr[lev], nrows = T->level_ptr[lev + 1] - r0;
#pragma omp parallel for schedule(dynamic, 4) if (nrows > 16)
        for (int32_t rr = 0; rr < nrows; rr++) backward_row(T, T->level_rows[r0 + rr], x, nc);
    }
}
