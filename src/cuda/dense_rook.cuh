/* dense_rook.cuh -- rook pivoting on the GPU (mirror of src/cpu/dense_rook.c). */
#ifndef ILDL_CUDA_DENSE_ROOK_CUH
#define ILDL_CUDA_DENSE_ROOK_CUH
#include "cuda/dense_common.cuh"

template <typename R>
static __device__ void dd_factor_rook(int m, R *a, const dense_params_d *p, dense_res *res,
                               R *u1, R *u2)
{
    const R alpha = (R)ILDL_BK_ALPHA_D;
    dd_begin(res);
    for (int k = 0; k < m;) {
        int q = k, r, jmax;
        R colmax = dd_absmax(m, a, k, k + 1, -1, &r);
        if (colmax == 0 || r_abs(a[k * LD + k]) >= alpha * colmax) {
            k += dd_take1(m, a, k, k, p, res, u1);
            continue;
        }
        for (int it = 0;; it++) {
            R rowmax = dd_absmax(m, a, r, k, r, &jmax);
            if (r_abs(a[r * LD + r]) >= alpha * rowmax) {
                k += dd_take1(m, a, k, r, p, res, u1);
                break;
            }
            if (jmax == q || rowmax <= colmax || it >= m) {
                k += dd_take2(m, a, k, q, r, p, res, u1, u2);
                break;
            }
            q = r;
            colmax = rowmax;
            r = jmax;
        }
    }
}
#endif
