/* dense_bk.cuh -- Bunch-Kaufman pivoting on the GPU (mirror of src/cpu/dense_bk.c). */
#ifndef ILDL_CUDA_DENSE_BK_CUH
#define ILDL_CUDA_DENSE_BK_CUH
#include "cuda/dense_common.cuh"

template <int NW, typename R>
static __device__ void dd_factor_bk(int m, R *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const R alpha = (R)ILDL_BK_ALPHA;
    dd_begin<NW>(res);
    for (int k = 0; k < m;) {
        int r, jmax;
        R akk = r_abs(a[k * DLD + k]);
        R lambda = dd_absmax(m, a, k, k + 1, -1, &r);
        if (ildl_pivot_diag_first(akk, lambda, alpha)) {
            k += dd_take1<NW>(m, a, k, k, p, res, false);
            continue;
        }
        R sigma = dd_absmax(m, a, r, k, r, &jmax);
        switch (ildl_pivot_bk_choose(akk, lambda, sigma, r_abs(a[r * DLD + r]), alpha)) {
        case ILDL_PICK_K: k += dd_take1<NW>(m, a, k, k, p, res); break;
        case ILDL_PICK_R: k += dd_take1<NW>(m, a, k, r, p, res); break;
        default: k += dd_take2<NW>(m, a, k, k, r, p, res); break;
        }
    }
}
#endif
