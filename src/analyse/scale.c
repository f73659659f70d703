/* scale.c -- symmetric Ruiz equilibration, so that the drop and pivot tolerances of the
 * factorization see entries of comparable size in every row. */
#include "analyse/scale.h"
#include "blockildl.h"
#include "core/util.h"
#include <math.h>
#include <stdlib.h>

/* rmax[i] = max_j |s_i a_ij s_j|; returns max over nonzero rows of |1 - rmax[i]|. */
static double row_maxima(const ildl_csr *A, const double *s, double *rmax)
{
    double err = 0.0;
    /* rows independent, and a maximum does not depend on the order: any thread count gives
     * the serial result */
#pragma omp parallel for schedule(dynamic, 4096) reduction(max : err)
    for (int32_t i = 0; i < A->n; i++) {
        double m = 0.0;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double v = fabs(s[i] * A->val[p]) * s[A->col[p]];
            if (v > m) m = v;
        }
        rmax[i] = m;
        if (m > 0.0 && fabs(1.0 - m) > err) err = fabs(1.0 - m);
    }
    return err;
}

/* Every sweep rescales all rows at once, which keeps S A S symmetric; the log of each row
 * maximum's distance from 1 roughly halves per sweep (Knight, Ruiz and Ucar). */
int ildl_scale_equilibrate(const ildl_csr *A, int max_iter, double tol, double *s)
{
    int32_t n = A->n;
    double *rmax = ildl_malloc(sizeof(double) * (size_t)n);
    if (!rmax) return ILDL_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < n; i++) s[i] = 1.0;
    for (int it = 0;; it++) {
        double err = row_maxima(A, s, rmax);
        if (err <= tol || it >= max_iter) break;
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < n; i++) {
            if (rmax[i] == 0.0) continue; /* zero row keeps s_i = 1 */
            double t = s[i] / sqrt(rmax[i]);
            /* extreme magnitudes near the range limits: keep s finite and positive */
            if (isfinite(t) && t > 0.0) s[i] = t;
        }
    }
    free(rmax);
    return ILDL_SUCCESS;
}

void ildl_scale_apply(ildl_csr *A, const double *s)
{
    for (int32_t i = 0; i < A->n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            A->val[p] *= s[i] * s[A->col[p]];
}
