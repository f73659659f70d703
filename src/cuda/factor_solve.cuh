/* factor_solve.cuh -- the off-diagonal solve of one tile, by one warp (phase A of the
 * block-iLDL^T factorization, k_phase_a_solve, and the fixed-point sweeps, fixed_point.cu) or by
 * a block's warps (k_phase_a_solve_block and the sync-free factorization's SOLVE tasks): rows of
 * B into pivot order, then B <- D_i^-1 U_ii^-T B, in the order of ildl_dense_solve_offdiag
 * (src/cpu/dense_common.c): every entry subtracts its terms q ascending and is divided as there,
 * so the bits are the reference's. */
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


/* The off-diagonal solve of one tile by NW warps (every thread of the block calls it: block
 * barriers), U_ii (strict upper part, ld LD) in sW, the pivot record in sperm, stype, sdd, sdo
 * (shared): thread (c, w) keeps column c of the rows w, w + NW, ... of P_i B (B's rows, ld ldb)
 * in registers; step q, after one barrier, subtracts U_ii(q, r) b[q] from its rows r > q (b[q]
 * final since step q - 1, from sb), so each entry subtracts its terms q ascending as in
 * ildl_dense_solve_offdiag; then D_i^-1 (a 2x2 pivot's rows both solve the pair and keep their
 * own result) into out (ld ldo) where store. The bits of the warp's solve, with 31 barriers on
 * the critical path. B's entries are all read before the first barrier: out may be B. */
template <typename R, int NW>
__device__ void d_offdiag_solve_block(int mi, int mj, int w, const R *sW, R *sb, const int *sperm, const int *stype,
                                      const double *sdd, const double *sdo, const R *B, int ldb, R *out, int ldo,
                                      bool store)
{
    constexpr int NR = LD / NW; /* rows per thread */
    int c = threadIdx.x;
    R b[NR];
#pragma unroll
    for (int k = 0; k < NR; k++) {
        int r = w + NW * k;
        b[k] = (r < mi && c < mj) ? B[sperm[r] * ldb + c] : (R)0;
    }
    /* U^T forward substitution: b[r] -= U_ii(q, r) b[q], q ascending */
#pragma unroll
    for (int q = 0; q + 1 < LD; q++) {
        if (q + 1 >= mi) break; /* uniform */
        if ((q % NW) == w) sb[q * LD + c] = b[q / NW];
        __syncthreads();
        R bq = sb[q * LD + c];
#pragma unroll
        for (int k = 0; k < NR; k++) {
            int r = w + NW * k;
            if (r > q && r < mi) b[k] -= sW[q * LD + r] * bq;
        }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < NR; k++) sb[(w + NW * k) * LD + c] = b[k];
    __syncthreads();
    if (store && c < mj) {
#pragma unroll
        for (int k = 0; k < NR; k++) {
            int r = w + NW * k;
            if (r >= mi) break;
            int ty = stype[r];
            R v = b[k];
            if (ty == 1) {
                v /= (R)sdd[r];
            } else if (ty == 2 && r + 1 < LD) {
                R da = sdd[r], db = sdo[r], dc = sdd[r + 1], o2;
                ildl_pivot2_solve(da, db, dc, ildl_pivot2_det(da, db, dc), sb[r * LD + c], sb[(r + 1) * LD + c], &v, &o2);
            } else if (ty == 0 && r > 0 && stype[r - 1] == 2) {
                R da = sdd[r - 1], db = sdo[r - 1], dc = sdd[r], o1;
                ildl_pivot2_solve(da, db, dc, ildl_pivot2_det(da, db, dc), sb[(r - 1) * LD + c], sb[r * LD + c], &o1,
                                  &v);
            }
            out[r * ldo + c] = v;
        }
    }
}
#endif
