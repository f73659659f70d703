/* factor_kernels.cuh -- declarations shared by factor.cu, solve.cu and backend.cu. */
#ifndef ILDL_CUDA_FACTOR_KERNELS_CUH
#define ILDL_CUDA_FACTOR_KERNELS_CUH
#include "cuda/dense_common.cuh"

struct factor_params_d {
    int pivoting;
    double drop_tol, pivot_tol, perturb;
    const int8_t *pair_hint; /* device, [n], or NULL */
};

/* Device-resident running state of one factorization (phase B is its only writer). */
struct factor_state {
    int64_t so, used, leftover, credit, granted;
    int n2x2, nperturbed, err;
};

__global__ void k_phase_a_diag(dev_tiles T, factor_params_d prm, const int32_t *rows,
                               const int32_t *rowbase, double *inflight, dense_res *res_out);
__global__ void k_phase_a_offdiag(dev_tiles T, const int32_t *rows, const int32_t *rowbase,
                                  const int32_t *tile_rr, const int32_t *tile_s, double *inflight,
                                  const dense_res *res_in);
__global__ void k_phase_a_drop(dev_tiles T, factor_params_d prm, const int32_t *rows,
                               const int32_t *rowbase, double *inflight, int64_t *need,
                               double *rownorm_out);
__global__ void k_phase_b(dev_tiles T, const int32_t *rows, int32_t nrows, const int32_t *rowbase,
                          int64_t nslots, const int64_t *need, const dense_res *res, factor_state *st,
                          int end_of_level);
__global__ void k_phase_b_atomic(dev_tiles T, const int32_t *rows, int32_t nrows, const int32_t *rowbase,
                                 int64_t nslots, const int64_t *need, const dense_res *res,
                                 factor_state *st);
__global__ void k_phase_b_atomic_end(dev_tiles T, int64_t nslots, factor_state *st, int end_of_level);
__global__ void k_phase_c(dev_tiles T, const int32_t *rows, const int32_t *rowbase,
                          double *inflight, const int64_t *need, factor_state *st);

/* Level-scheduled solve kernels (solve.cu). */
__global__ void k_forward_level(dev_tiles T, const int32_t *rows, double *x);
__global__ void k_backward_level(dev_tiles T, const int32_t *rows, double *x);
__global__ void k_dsolve(dev_tiles T, double *x);
__global__ void k_syncfree_begin(int *epoch, int *tickets);
__global__ void k_forward_syncfree(dev_tiles T, double *x, int *done, int *ticket, const int *epoch);
__global__ void k_backward_syncfree(dev_tiles T, double *x, int *done, int *ticket, const int *epoch);
/* Warps per block of the solve kernels: block row i's off-diagonal tiles are spread over them. */
#define SOLVE_WARPS 8
/* Tiles whose partial sums a solve block keeps before combining them (more: several groups). */
#define SOLVE_PARTS 64
/* Dynamic shared memory of the solve kernels: a staged tile per warp, the diagonal tile and
 * the partial sums. */
#define SOLVE_SMEM_BYTES (((size_t)SOLVE_WARPS * 32 * 33 + 32 * 32 + SOLVE_PARTS * 32) * sizeof(double))

#endif
