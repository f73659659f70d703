/* dense_rook.c -- rook pivoting (Ashcraft-Grimes-Lewis; cf. LAPACK dsytf2_rook): keep moving
 * to the largest entry of the current column until a diagonal dominates its column (1x1) or
 * an off-diagonal entry is the largest of both its row and its column (2x2). This bounds the
 * entries of U, unlike Bunch-Kaufman, at the price of possibly scanning every column. */
#include <math.h>
#include "cpu/dense_factor.h"
#include "cpu/real.h"

#define LD ILDL_TILE

/* P A P^T = U^T D U with rook pivot selection (alpha = ILDL_BK_ALPHA; the decisions
 * are core/dense_rules.h's, shared with the CUDA kernel). */
void RN(ildl_dense_factor_rook)(int m, ildl_real *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const ildl_real alpha = (ildl_real)ILDL_BK_ALPHA;
    RN(ildl_dense_begin)(m, res);
    for (int k = 0; k < m;) {
        int q = k, r, jmax;
        /* column k below the diagonal, read along row k (the tile is symmetric) */
        ildl_real colmax = RN(ildl_dense_absmax)(m, a, k, k + 1, -1, &r);
        if (RN(ildl_pivot_diag_first)(RABS(a[k * LD + k]), colmax, alpha)) {
            k += RN(ildl_dense_take1)(m, a, k, k, p, res);
            continue;
        }
        /* Invariant: |a(q,r)| = colmax is the largest entry of column q (off its diagonal) and
         * |a(q,q)| < alpha * colmax (ildl_pivot_rook_step says why the walk ends). */
        for (int it = 0;; it++) {
            ildl_real rowmax = RN(ildl_dense_absmax)(m, a, r, k, r, &jmax);
            int pick = RN(ildl_pivot_rook_step)(RABS(a[r * LD + r]), rowmax, colmax, jmax, q, it, m, alpha);
            if (pick == ILDL_PICK_R) {
                k += RN(ildl_dense_take1)(m, a, k, r, p, res);
                break;
            }
            if (pick == ILDL_PICK_PAIR) {
                k += RN(ildl_dense_take2)(m, a, k, q, r, p, res);
                break;
            }
            q = r;
            colmax = rowmax;
            r = jmax;
        }
    }
}
