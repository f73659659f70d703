/* dense_none.cuh -- static pivoting on the GPU (mirror of src/cpu/dense_none.c). */
#ifndef ILDL_CUDA_DENSE_NONE_CUH
#define ILDL_CUDA_DENSE_NONE_CUH
#include "cuda/dense_common.cuh"

template <int NW, typename R>
static __device__ void dd_factor_none(int m, R *a, const ildl_dense_params *p, ildl_dense_result *res)
{
    const int8_t *hint = p->pair_hint;
    dd_begin<NW>(res);
    for (int k = 0; k < m;) {
        if (hint && hint[k] == 1 && k + 1 < m)
            k += dd_take2<NW>(m, a, k, k, k + 1, p, res);
        else
            k += dd_take1<NW>(m, a, k, k, p, res, false);
    }
}
#endif
