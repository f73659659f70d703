/* solve.cu -- level-scheduled block triangular solves with U^T D U on the GPU, one warp per
 * block row of a level, mirroring src/cpu/solve.c entry for entry (same summation orders). */
#include "cuda/factor_kernels.cuh"

/* x_i <- U_ii^-T (x_i - sum_k U_ki^T x_k) for the block rows of one level. */
__global__ void k_forward_level(dev_tiles T, const int32_t *rows, double *x)
{
    __shared__ double us[TILE];
    int c = threadIdx.x;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    double *xi = x + T.bstart[i];
    double xv = (c < mi) ? xi[c] : 0.0;
    for (int64_t q = T.col_ptr[i]; q < T.col_ptr[i + 1]; q++) {
        int64_t t = T.col_tiles[q];
        int32_t k = T.row[t];
        if (k >= i) break;
        const double *xk = x + T.bstart[k];
        const double *v = T.val + T.off[t];
        double s = 0.0;
        if (T.format[t] == ILDL_TILE_SPARSE) {
            const uint16_t *ix = T.idx + T.off[t];
            int64_t nz = T.nnz[t];
            for (int64_t e = 0; e < nz; e++)
                if ((ix[e] & 31) == c) s += v[e] * xk[ix[e] >> 5];
        } else if (c < mi) {
            int mk = dev_bsize(T, k);
            for (int l = 0; l < mk; l++) s += v[l * mi + c] * xk[l];
        }
        xv -= s;
    }
    /* U_ii^-T: lane c accumulates s_c over l ascending as x_l becomes final (the CPU's
     * order); x_l is broadcast by shuffle, U_ii row l is read from shared memory */
    const double *u = T.val + T.off[T.row_ptr[i]];
    for (int e = c; e < mi * mi; e += LD) us[e] = u[e];
    __syncwarp();
    double s = 0.0;
    for (int l = 0; l < mi; l++) {
        if (c == l) xv -= s;
        double xl = __shfl_sync(0xffffffffu, xv, l);
        if (c > l && c < mi) s += us[l * mi + c] * xl;
    }
    if (c < mi) xi[c] = xv;
}

/* x_i <- U_ii^-1 (x_i - sum_j U_ij x_j) for the block rows of one level. */
__global__ void k_backward_level(dev_tiles T, const int32_t *rows, double *x)
{
    __shared__ double us[TILE];
    int r = threadIdx.x;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    double *xi = x + T.bstart[i];
    double xv = (r < mi) ? xi[r] : 0.0;
    for (int64_t t = T.row_ptr[i] + 1; t < T.row_ptr[i + 1]; t++) {
        int32_t j = T.col[t];
        const double *xj = x + T.bstart[j];
        const double *v = T.val + T.off[t];
        double s = 0.0;
        if (T.format[t] == ILDL_TILE_SPARSE) {
            const uint16_t *ix = T.idx + T.off[t];
            int64_t nz = T.nnz[t];
            for (int64_t e = 0; e < nz; e++)
                if ((ix[e] >> 5) == r) s += v[e] * xj[ix[e] & 31];
        } else if (r < mi) {
            int mj = dev_bsize(T, j);
            for (int c = 0; c < mj; c++) s += v[r * mj + c] * xj[c];
        }
        xv -= s;
    }
    /* U_ii^-1: lane r accumulates s_r over c descending as x_c becomes final */
    const double *u = T.val + T.off[T.row_ptr[i]];
    for (int e = r; e < mi * mi; e += LD) us[e] = u[e];
    __syncwarp();
    double s = 0.0;
    for (int c = mi - 1; c >= 0; c--) {
        if (r == c) xv -= s;
        double xc = __shfl_sync(0xffffffffu, xv, c);
        if (r < c) s += us[r * mi + c] * xc;
    }
    if (r < mi) xi[r] = xv;
}

/* x <- D^-1 x (1x1 and 2x2 pivots); one thread per row, the first of a 2x2 does both. */
__global__ void k_dsolve(dev_tiles T, double *x)
{
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= T.n) return;
    int8_t ty = T.piv_type[k];
    double a = T.d_diag[k];
    if (ty == 2 && k + 1 < T.n) {
        double b = T.d_off[k], c = T.d_diag[k + 1];
        double det = a * c - b * b, x0 = x[k], x1 = x[k + 1];
        x[k] = (c * x0 - b * x1) / det;
        x[k + 1] = (a * x1 - b * x0) / det;
    } else if (ty != 0) {
        x[k] /= a;
    }
}
