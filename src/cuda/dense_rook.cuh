/* dense_rook.cuh -- rook pivoting on the GPU (mirror of src/cpu/dense_rook.c). */
#ifndef ILDL_CUDA_DENSE_ROOK_CUH
#define ILDL_CUDA_DENSE_ROOK_CUH
#include "cuda/dense_common.cuh"

template <int NW, typename R>
static __device__ void dd_factor_rook(int m, R *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const R alpha = (R)ILDL_BK_ALPHA;
    dd_begin<NW>(res);
    for (int k = 0; k < m;) {
        int q = k, r, jmax;
        R colmax = dd_absmax(m, a, k, k + 1, -1, &r);
        if (ildl_pivot_diag_first(r_abs(a[k * DLD + k]), colmax, alpha)) {
            k += dd_take1<NW>(m, a, k, k, p, res, false);
            continue;
        }
        for (int it = 0;; it++) {
            R rowmax = dd_absmax(m, a, r, k, r, &jmax);
            int pick = ildl_pivot_rook_step(r_abs(a[r * DLD + r]), rowmax, colmax, jmax, q, it, m, alpha);
            if (pick == ILDL_PICK_R) {
                k += dd_take1<NW>(m, a, k, r, p, res);
                break;
            }
            if (pick == ILDL_PICK_PAIR) {
                k += dd_take2<NW>(m, a, k, q, r, p, res);
                break;
            }
            q = r;
            colmax = rowmax;
            r = jmax;
        }
    }
}
#endif
