/* dense_bk.c -- Bunch-Kaufman partial pivoting: each step scans column k and at most one
 * more column r, which is what makes it cheap for a warp. */
#include <math.h>
#include "cpu/dense_factor.h"

#define LD ILDL_TILE_LD

/* P A P^T = U^T D U with Bunch-Kaufman pivot selection (alpha = ILDL_BK_ALPHA). */
void ildl_dense_factor_bk(int m, double *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const double alpha = ILDL_BK_ALPHA;
    ildl_dense_begin(m, res);
    for (int k = 0; k < m;) {
        int r, jmax;
        double akk = fabs(a[k * LD + k]);
        /* column k below the diagonal, read along row k (the tile is symmetric) */
        double lambda = ildl_dense_absmax(m, a, k, k + 1, -1, &r);
        double sigma;
        if (lambda == 0 || akk >= alpha * lambda) {
            k += ildl_dense_take1(m, a, k, k, p, res);
            continue;
        }
        sigma = ildl_dense_absmax(m, a, r, k, r, &jmax); /* >= lambda: it includes a(r,k) */
        if (akk * sigma >= alpha * lambda * lambda)
            k += ildl_dense_take1(m, a, k, k, p, res);
        else if (fabs(a[r * LD + r]) >= alpha * sigma)
            k += ildl_dense_take1(m, a, k, r, p, res);
        else
            k += ildl_dense_take2(m, a, k, k, r, p, res);
    }
}
