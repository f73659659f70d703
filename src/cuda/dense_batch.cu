/* dense_batch.cu -- dd_factor (dense_factor.cuh: the dense step of the diagonal kernel and of the
 * fixed-point sweeps) over a batch of tiles, each factored alone in double or in float, for the
 * tests: the step can then be compared bit for bit with the CPU reference's ildl_dense_factor
 * on tiles that no matrix of the suite reaches (NaN, ties, zero diagonals, perturbed pivots). */
#include "cuda/context.cuh"
#include "cuda/dense_factor.cuh"
extern "C" {
#include "cuda/cuda_backend.h"
}

/* One 32x32-thread block per tile b: tiles[b] (ld 32, zeros outside its m[b] x m[b] part) into
 * shared memory in the value type R, factored, the tile and the pivot record written back. */
template <typename R>
__global__ void __launch_bounds__(1024) k_dense_batch(int pivoting, const int32_t *m, const double *tiles,
                                                      const int8_t *hint, double pivot_tol, double perturb,
                                                      double *out, ildl_dense_result *res_out)
{
    __shared__ R W[TILE], scratch[DTILE];
    __shared__ ildl_dense_result res;
    int tid = threadIdx.y * LD + threadIdx.x;
    int64_t b = blockIdx.x;
    W[tid] = (R)tiles[b * TILE + tid];
    __syncthreads();
    ildl_dense_params dp;
    dp.pivot_tol = pivot_tol;
    dp.perturb = perturb;
    dp.pair_hint = hint ? hint + b * LD : NULL;
    dd_factor(pivoting, m[b], W, scratch, &dp, &res);
    out[b * TILE + tid] = (double)W[tid];
    dd_result_store(tid, res, res_out + b);
}

extern "C" int ildl_cuda_dense_factor_host(int device_id, int pivoting, int single, int64_t count, const int32_t *m,
                                           const double *tiles, const int8_t *pair_hint, double pivot_tol,
                                           double perturb, double *out, ildl_dense_result *res, char *msg,
                                           size_t msglen)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    int32_t *d_m = NULL;
    double *d_t = NULL, *d_o = NULL;
    int8_t *d_h = NULL;
    ildl_dense_result *d_r = NULL;
    ildl_cuda_clear_message();
    if (count <= 0) return ILDL_SUCCESS;
    if (count > INT32_MAX) {
        ildl_msg(msg, msglen, "dense batch: %lld tiles, at most %d per call", (long long)count, INT32_MAX);
        return ILDL_ERR_INVALID_OPTION;
    }
    for (int64_t b = 0; b < count; b++)
        if (m[b] < 0 || m[b] > LD) {
            ildl_msg(msg, msglen, "dense batch: tile %lld has %d rows, not 0..%d", (long long)b, (int)m[b], LD);
            return ILDL_ERR_INVALID_OPTION;
        }
    const size_t values = (size_t)count * TILE;
    CU(cudaSetDevice(device_id));
    CU(cudaMalloc((void **)&d_m, sizeof(int32_t) * (size_t)count));
    CU(cudaMalloc((void **)&d_t, sizeof(double) * values));
    CU(cudaMalloc((void **)&d_o, sizeof(double) * values));
    CU(cudaMalloc((void **)&d_r, sizeof(ildl_dense_result) * (size_t)count));
    if (pair_hint) CU(cudaMalloc((void **)&d_h, (size_t)count * LD));
    CU(cudaMemcpy(d_m, m, sizeof(int32_t) * (size_t)count, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(d_t, tiles, sizeof(double) * values, cudaMemcpyHostToDevice));
    if (pair_hint) CU(cudaMemcpy(d_h, pair_hint, (size_t)count * LD, cudaMemcpyHostToDevice));
    if (single)
        k_dense_batch<float><<<(unsigned)count, dim3(LD, LD)>>>(pivoting, d_m, d_t, d_h, pivot_tol, perturb, d_o, d_r);
    else
        k_dense_batch<double><<<(unsigned)count, dim3(LD, LD)>>>(pivoting, d_m, d_t, d_h, pivot_tol, perturb, d_o,
                                                                 d_r);
    CU_LAUNCH();
    CU(cudaMemcpy(out, d_o, sizeof(double) * values, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(res, d_r, sizeof(ildl_dense_result) * (size_t)count, cudaMemcpyDeviceToHost));
cleanup:
    cudaFree(d_m);
    cudaFree(d_t);
    cudaFree(d_o);
    cudaFree(d_h);
    cudaFree(d_r);
    if (status) ildl_msg(msg, msglen, "%s", ildl_cuda_status_message(status));
    return status;
}
