/* factor_solve.cuh -- the off-diagonal solve of one tile by one warp, shared by phase A of the
 * block-iLDL^T factorization (k_phase_a_solve) and the fixed-point sweeps (fixed_point.cu):
 * rows of B into pivot order, then B <- D_i^-1 U_ii^-T B, in the order of
 * ildl_dense_solve_offdiag (src/cpu/dense_common.c): every entry subtracts its terms q ascending
 * and is divided as there, so the bits are the reference's. */
#ifndef ILDL_CUDA_FACTOR_SOLVE_CUH
#define ILDL_CUDA_FACTOR_SOLVE_CUH
#include "cuda/context.cuh"

/* Called by a whole warp; lane l holds row l's pivot record (myperm: B's row that becomes row
 * l; mytype, mydd, mydo: D's). W: U_ii (ld 32, any memory), w: the warp's shared tile (U_ii is
 * copied there, with all loads in flight at once), B: the tile (ld 32, read and written; lane c
 * keeps column c in registers). */
template <typename R>
__device__ __forceinline__ void d_offdiag_solve_warp(int mi, int mj, const R *W, R *w, int myperm, int mytype,
                                                     double mydd, double mydo, R *B)
{
    int lane = threadIdx.x & 31;
    R b[LD];
#pragma unroll
    for (int r = 0; r < LD; r++) {
        int pr = __shfl_sync(0xffffffffu, myperm, r);
        b[r] = (r < mi && lane < mj) ? B[pr * LD + lane] : (R)0;
    }
#pragma unroll 8
    for (int r = 0; r < LD; r++) w[r * LD + lane] = W[r * LD + lane];
    __syncwarp();
    /* U^T forward substitution: b[r] -= U_ii(q, r) b[q], q ascending */
#pragma unroll
    for (int q = 0; q + 1 < LD; q++) {
        if (q + 1 >= mi) break; /* uniform */
        R wq = w[q * LD + lane]; /* row q of U_ii: lane r holds U_ii(q, r) */
        R bq = b[q];
#pragma unroll
        for (int r = q + 1; r < LD; r++) {
            R wr = __shfl_sync(0xffffffffu, wq, r);
            if (r < mi) b[r] -= wr * bq;
        }
    }
#pragma unroll
    for (int r = 0; r < LD; r++) {
        if (r >= mi) break; /* uniform */
        int ty = __shfl_sync(0xffffffffu, mytype, r);
        double ddr = __shfl_sync(0xffffffffu, mydd, r), dor = __shfl_sync(0xffffffffu, mydo, r);
        double ddn = __shfl_sync(0xffffffffu, mydd, (r + 1) & 31);
        if (ty == 1) {
            b[r] /= (R)ddr;
        } else if (ty == 2 && r + 1 < LD) {
            R da = ddr, db = dor, dc = ddn;
            R x = b[r], y = b[r + 1];
            ildl_pivot2_solve(da, db, dc, ildl_pivot2_det(da, db, dc), x, y, &b[r], &b[r + 1]);
        }
    }
    if (lane < mj) {
#pragma unroll
        for (int r = 0; r < LD; r++)
            if (r < mi) B[r * LD + lane] = b[r];
    }
}


#endif
