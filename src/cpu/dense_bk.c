/* dense_bk.c -- Bunch-Kaufman partial pivoting: each step scans column k and at most one
 * more column r, which is what makes it cheap for a warp. */
#include <math.h>
#include "cpu/dense_factor.h"
#include "cpu/real.h"

#define LD ILDL_TILE

/* P A P^T = U^T D U with Bunch-Kaufman pivot selection (alpha = ILDL_BK_ALPHA; the
 * decisions are core/dense_rules.h's, shared with the CUDA kernel). */
void RN(ildl_dense_factor_bk)(int m, ildl_real *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const ildl_real alpha = (ildl_real)ILDL_BK_ALPHA;
    RN(ildl_dense_begin)(m, res);
    for (int k = 0; k < m;) {
        int r, jmax;
        ildl_real akk = RABS(a[k * LD + k]);
        /* column k below the diagonal, read along row k (the tile is symmetric) */
        ildl_real lambda = RN(ildl_dense_absmax)(m, a, k, k + 1, -1, &r);
        ildl_real sigma;
        if (RN(ildl_pivot_diag_first)(akk, lambda, alpha)) {
            k += RN(ildl_dense_take1)(m, a, k, k, p, res);
            continue;
        }
        sigma = RN(ildl_dense_absmax)(m, a, r, k, r, &jmax); /* >= lambda: it includes a(r,k) */
        switch (RN(ildl_pivot_bk_choose)(akk, lambda, sigma, RABS(a[r * LD + r]), alpha)) {
        case ILDL_PICK_K: k += RN(ildl_dense_take1)(m, a, k, k, p, res); break;
        case ILDL_PICK_R: k += RN(ildl_dense_take1)(m, a, k, r, p, res); break;
        default: k += RN(ildl_dense_take2)(m, a, k, k, r, p, res); break;
        }
    }
}
