/* dense_none.c -- static pivoting: the order comes from the analysis (matching, 2x2 pairs),
 * so nothing is interchanged here; near-zero pivots are perturbed instead. */
#include "cpu/dense_factor.h"
#include "cpu/real.h"

/* P = I; 2x2 pivots only where p->pair_hint marks them (a hint on the last row is ignored). */
void RN(ildl_dense_factor_none)(int m, ildl_real *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const int8_t *hint = p->pair_hint;
    RN(ildl_dense_begin)(m, res);
    for (int k = 0; k < m;) {
        if (hint && hint[k] == 1 && k + 1 < m)
            k += RN(ildl_dense_take2)(m, a, k, k, k + 1, p, res);
        else
            k += RN(ildl_dense_take1)(m, a, k, k, p, res);
    }
}
