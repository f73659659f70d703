/* dense_rook.c -- rook pivoting (Ashcraft-Grimes-Lewis; cf. LAPACK dsytf2_rook): keep moving
 * to the largest entry of the current column until a diagonal dominates its column (1x1) or
 * an off-diagonal entry is the largest of both its row and its column (2x2). This bounds the
 * entries of U, unlike Bunch-Kaufman, at the price of possibly scanning every column. */
#include <math.h>
#include "cpu/dense_factor.h"
#include "cpu/real.h"

#define LD ILDL_TILE_LD

/* P A P^T = U^T D U with rook pivot selection (alpha = ILDL_BK_ALPHA). */
void RN(ildl_dense_factor_rook)(int m, ildl_real *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const ildl_real alpha = (ildl_real)ILDL_BK_ALPHA;
    RN(ildl_dense_begin)(m, res);
    for (int k = 0; k < m;) {
        int q = k, r, jmax;
        /* column k below the diagonal, read along row k (the tile is symmetric) */
        ildl_real colmax = RN(ildl_dense_absmax)(m, a, k, k + 1, -1, &r);
        if (colmax == 0 || RABS(a[k * LD + k]) >= alpha * colmax) {
            k += RN(ildl_dense_take1)(m, a, k, k, p, res);
            continue;
        }
        /* Invariant: |a(q,r)| = colmax is the largest entry of column q (off its diagonal) and
         * |a(q,q)| < alpha * colmax. colmax grows strictly, so no column is visited twice and
         * the loop ends within m scans; the bound only guards against non-finite input. */
        for (int it = 0;; it++) {
            ildl_real rowmax = RN(ildl_dense_absmax)(m, a, r, k, r, &jmax);
            if (RABS(a[r * LD + r]) >= alpha * rowmax) {
                k += RN(ildl_dense_take1)(m, a, k, r, p, res);
                break;
            }
            if (jmax == q || rowmax <= colmax || it >= m) {
                k += RN(ildl_dense_take2)(m, a, k, q, r, p, res);
                break;
            }
            q = r;
            colmax = rowmax;
            r = jmax;
        }
    }
}
