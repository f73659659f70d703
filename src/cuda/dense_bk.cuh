/* dense_bk.cuh -- Bunch-Kaufman pivoting on the GPU (mirror of src/cpu/dense_bk.c). */
#ifndef ILDL_CUDA_DENSE_BK_CUH
#define ILDL_CUDA_DENSE_BK_CUH
#include "cuda/dense_common.cuh"

template <typename R>
static __device__ void dd_factor_bk(int m, R *a, const dense_params_d *p, dense_res *res,
                             R *u1, R *u2)
{
    const R alpha = (R)ILDL_BK_ALPHA_D;
    dd_begin(res);
    for (int k = 0; k < m;) {
        int r, jmax;
        R akk = r_abs(a[k * LD + k]);
        R lambda = dd_absmax(m, a, k, k + 1, -1, &r);
        if (lambda == 0 || akk >= alpha * lambda) {
            k += dd_take1(m, a, k, k, p, res, u1);
            continue;
        }
        R sigma = dd_absmax(m, a, r, k, r, &jmax);
        if (akk * sigma >= alpha * lambda * lambda)
            k += dd_take1(m, a, k, k, p, res, u1);
        else if (r_abs(a[r * LD + r]) >= alpha * sigma)
            k += dd_take1(m, a, k, r, p, res, u1);
        else
            k += dd_take2(m, a, k, k, r, p, res, u1, u2);
    }
}
#endif
