/* dense_none.c -- static pivoting: the order comes from the analysis (matching, 2x2 pairs),
 * so nothing is interchanged here; near-zero pivots are perturbed instead. */
#include "cpu/dense_factor.h"

/* P = I; 2x2 pivots only where p->pair_hint marks them (a hint on the last row is ignored). */
void ildl_dense_factor_none(int m, double *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const int8_t *hint = p->pair_hint;
    ildl_dense_begin(m, res);
    for (int k = 0; k < m;) {
        if (hint && hint[k] == 1 && k + 1 < m)
            k += ildl_dense_take2(m, a, k, k, k + 1, p, res);
        else
            k += ildl_dense_take1(m, a, k, k, p, res);
    }
}
