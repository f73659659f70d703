/* gje.c -- block-Jacobi's Gauss-Jordan inversion with implicit pivoting and the batched apply:
 * the CPU reference of src/cuda/gje.cu (contracts and floating-point order: gje.h). */
#include "cpu/gje.h"
#include <math.h>
#include <string.h>

/* |x| for the pivot search: NaN below every number. */
static double pivot_key(double x)
{
    return isnan(x) ? -0.5 : fabs(x);
}

/* One block: W (m x m, row-major, ld ILDL_GJE_MAX) in place; piv[k] = pivot row of step k,
 * step[r] = the step whose pivot row was r. Returns the perturbed pivots. */
static int gje_block(int m, double W[ILDL_GJE_MAX][ILDL_GJE_MAX], int *piv, int *step, double tol, double perturb)
{
    int used[ILDL_GJE_MAX] = {0}, perturbed = 0;
    for (int k = 0; k < m; k++) {
        int r = -1;
        double best = -1.0;
        for (int i = 0; i < m; i++) {
            if (used[i]) continue;
            double key = pivot_key(W[i][k]);
            if (key > best) best = key, r = i;
        }
        used[r] = 1;
        piv[k] = r;
        step[r] = k;
        double p = W[r][k];
        if (!(fabs(p) >= tol)) { /* below tol, or NaN */
            p = p < 0.0 ? -perturb : perturb;
            perturbed++;
        }
        const double d = 1.0 / p;
        W[r][k] = 1.0;
        for (int j = 0; j < m; j++) W[r][j] = W[r][j] * d;
        for (int i = 0; i < m; i++) {
            if (i == r) continue;
            double f = W[i][k];
            W[i][k] = 0.0;
            for (int j = 0; j < m; j++) W[i][j] = W[i][j] - f * W[r][j];
        }
    }
    return perturbed;
}

int64_t ildl_gje_invert(int64_t count, const int32_t *size, const int64_t *offset, const double *A,
                        double pivot_tol, double pivot_perturb, double *inv, int32_t *perturbed)
{
    int64_t bad = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : bad)
    for (int64_t b = 0; b < count; b++) {
        int m = size[b], piv[ILDL_GJE_MAX], step[ILDL_GJE_MAX];
        double W[ILDL_GJE_MAX][ILDL_GJE_MAX];
        const double *a = A + offset[b];
        double *out = inv + offset[b];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) W[i][j] = a[(int64_t)i * m + j];
        int np = gje_block(m, W, piv, step, pivot_tol, pivot_perturb), finite = 1;
        for (int r = 0; r < m; r++)
            for (int c = 0; c < m; c++) {
                /* row step[r] of the inverse, column piv[c]; column-major */
                out[(int64_t)piv[c] * m + step[r]] = W[r][c];
                finite &= isfinite(W[r][c]) != 0;
            }
        if (perturbed) perturbed[b] = finite ? np : -1;
        bad += (np > 0 || !finite);
    }
    return bad;
}

void ildl_gje_apply(int64_t count, const int32_t *size, const int64_t *offset, const int64_t *rowptr,
                    const double *inv, const double *x, double *z)
{
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < count; b++) {
        int m = size[b];
        const double *v = inv + offset[b], *xb = x + rowptr[b];
        double *zb = z + rowptr[b];
        double xl[ILDL_GJE_MAX];
        memcpy(xl, xb, sizeof(double) * (size_t)m); /* x and z may be the same array */
        for (int i = 0; i < m; i++) {
            double s = 0.0;
            for (int j = 0; j < m; j++) s = s + v[(int64_t)j * m + i] * xl[j];
            zb[i] = s;
        }
    }
}

int64_t ildl_gje_check_batch(int64_t count, const int32_t *size, const int64_t *offset, const int64_t *rowptr)
{
    if (offset[0] != 0 || rowptr[0] != 0) return 1;
    for (int64_t b = 0; b < count; b++) {
        int64_t m = size[b];
        if (m < 1 || m > ILDL_GJE_MAX || offset[b + 1] != offset[b] + m * m || rowptr[b + 1] != rowptr[b] + m)
            return b + 1;
    }
    return 0;
}
