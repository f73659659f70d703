/* factor_phase_a.cu -- phase A of the block-iLDL^T factorization on the GPU, per chunk of rows
 * of one level (the driver is factor.cu), in the floating-point order of the CPU reference
 * (src/cpu/factor.c, phase A):
 *   k_phase_a_diag   one 32x32-thread block per block row: pull the updates into the diagonal
 *                    tile, and a team of 4 of its warps factors it (none/BK/Rook, dense_factor.cuh);
 *   k_phase_a_pull   one block per off-diagonal tile: pull its updates (beside the diagonal
 *                    kernel, on a second stream);
 *   k_phase_a_solve  one warp per off-diagonal tile: permute rows, solve with U_ii and D_i;
 *   k_phase_a_drop   one block per block row: row norms, tau-dropping and counting.
 * Templates on the value type R: double, or float for precision single (the CPU reference's
 * single build, every operation in float); their launches are factor_phases.cuh's. */
#include "cuda/context.cuh"
#include "cuda/dense_factor.cuh"
#include "cuda/factor_phases.cuh"
#include "cuda/factor_pull.cuh"
#include "cuda/factor_solve.cuh"

/* Dynamic shared memory of k_phase_a_pull: 7 tiles (above the default 48 KiB for double). */
template <typename R> constexpr size_t pull_smem_bytes() { return (size_t)7 * TILE * sizeof(R); }

/* A1, one block per block row: the diagonal tile: A_ii minus the updates of column i, then the
 * dense factorization; writes U_ii to the row's first in-flight slot and P_i, D_i to T. */
template <typename R>
__global__ void __launch_bounds__(1024) k_phase_a_diag(dev_tiles T, factor_params_d prm,
                                                       const int32_t *rows, const int32_t *rowbase,
                                                       R *inflight, ildl_dense_result *res_out)
{
    __shared__ R W[TILE], sU[TILE], sDU[TILE], sU2[TILE], sDU2[TILE];
    R *const up[6] = {sU, sU, sDU, sU2, sU2, sDU2}; /* U_ki is U_kj: one window per update */
    __shared__ ildl_dense_result res;
    int tid = threadIdx.y * LD + threadIdx.x;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i];
    R *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;

    d_zero_tile(W);
    d_load_a(T, t0, true, W);
    /* the tiles (k,i), k < i, in k ascending, two at a time (as the off-diagonal tiles) */
    d_pull_diag_all<R>(T, i, mi, W, up);
    ildl_dense_params dp;
    dp.pivot_tol = prm.pivot_tol;
    dp.perturb = prm.perturb;
    dp.pair_hint = prm.pair_hint ? prm.pair_hint + T.bstart[i] : NULL;
    dd_factor(prm.pivoting, mi, W, &dp, &res);
    if (tid < mi) {
        int32_t b = T.bstart[i];
        T.piv[b + tid] = res.perm[tid];
        T.d_diag[b + tid] = res.d_diag[tid];
        T.d_off[b + tid] = res.d_off[tid];
        T.piv_type[b + tid] = res.type[tid];
    }
    slot[tid] = W[tid];
    if (tid < LD) {
        ildl_dense_result *o = res_out + blockIdx.x;
        o->perm[tid] = res.perm[tid];
        o->d_diag[tid] = res.d_diag[tid];
        o->d_off[tid] = res.d_off[tid];
        o->type[tid] = res.type[tid];
        if (tid == 0) {
            o->n2x2 = res.n2x2;
            o->nperturbed = res.nperturbed;
            prm.block_perturbed[i] = res.nperturbed;
        }
    }
}

/* A2, one block per off-diagonal tile of the chunk: B_ij = A_ij minus the updates from the
 * rows k < i present in block columns i and j, written to the tile's in-flight slot. It does not
 * read row i's diagonal factor, so it runs beside k_phase_a_diag (factor_chunks: two streams);
 * k_phase_a_solve then finishes the tile. */
/* (two blocks per SM: the register cap costs a few spilled bytes and gains 10-20%) */
template <typename R>
__global__ void __launch_bounds__(1024, 2) k_phase_a_pull(dev_tiles T, const int32_t *rows,
                                                       const int32_t *rowbase, const int32_t *tile_rr,
                                                       const int32_t *tile_s, R *inflight)
{
    extern __shared__ __align__(16) unsigned char smem_od_raw[]; /* pull_smem_bytes<R>(): sB and two updates' tiles */
    R *smem_od = reinterpret_cast<R *>(smem_od_raw);
    R *sB = smem_od, *up[6];
    for (int k = 0; k < 6; k++) up[k] = smem_od + (1 + k) * TILE;
    int tid = threadIdx.y * LD + threadIdx.x;
    int32_t rr = tile_rr[blockIdx.x], s = tile_s[blockIdx.x];
    int32_t i = rows[rr];
    int mi = dev_bsize(T, i);
    int64_t t = T.row_ptr[i] + s;
    int32_t j = T.col[t];
    int mj = dev_bsize(T, j);
    d_zero_tile(sB);
    d_load_a(T, t, false, sB);
    /* the k < i in both block columns, in k ascending, two at a time */
    __shared__ pull_list L;
    d_pull_offd_all<R>(T, i, j, mi, mj, sB, up, &L);
    inflight[((int64_t)rowbase[rr] + s) * TILE + tid] = sB[tid];
}

/* Off-diagonal tiles finished per warp (k_phase_a_solve). */
#define SOLVE_TILE_WARPS 4

/* A2', one warp per off-diagonal tile, after k_phase_a_diag and k_phase_a_pull: rows of B into
 * pivot order, then U_ij = D_i^-1 U_ii^-T B. Lane c keeps column c in registers; every entry
 * subtracts its terms q ascending and is divided as in ildl_dense_solve_offdiag, so the bits are
 * the reference's. U_ii is first copied to the warp's shared tile with all loads in flight at
 * once (row q read per step from global memory was one memory latency per pivot row). */
template <typename R>
__global__ void __launch_bounds__(32 * SOLVE_TILE_WARPS) k_phase_a_solve(dev_tiles T, const int32_t *rows,
                                                                          const int32_t *rowbase,
                                                                          const int32_t *tile_rr, const int32_t *tile_s,
                                                                          int64_t nofd, R *inflight,
                                                                          const ildl_dense_result *res_in)
{
    __shared__ R sW[SOLVE_TILE_WARPS][TILE];
    int lane = threadIdx.x;
    int64_t e = (int64_t)blockIdx.x * SOLVE_TILE_WARPS + threadIdx.y;
    if (e >= nofd) return; /* whole warps; no block-wide barrier below */
    int32_t rr = tile_rr[e], s = tile_s[e];
    int32_t i = rows[rr];
    int mi = dev_bsize(T, i);
    int mj = dev_bsize(T, T.col[T.row_ptr[i] + s]);
    const R *W = inflight + (int64_t)rowbase[rr] * TILE; /* U_ii, written by k_phase_a_diag */
    R *B = inflight + ((int64_t)rowbase[rr] + s) * TILE;
    R *w = sW[threadIdx.y];
    const ildl_dense_result &res = res_in[rr];
    /* lane l holds row l's pivot record; every lane needs every row's, by shuffle */
    int myperm = lane < mi ? res.perm[lane] : 0, mytype = res.type[lane];
    double mydd = res.d_diag[lane], mydo = res.d_off[lane];
    d_offdiag_solve_warp<R>(mi, mj, W, w, myperm, mytype, mydd, mydo, B);
}

/* A3, one block per block row: row norms over the whole block row in the reference's order,
 * then tau-dropping of the off-diagonal tiles and their counts. */
template <typename R>
__global__ void __launch_bounds__(1024) k_phase_a_drop(dev_tiles T, factor_params_d prm,
                                                       const int32_t *rows, const int32_t *rowbase,
                                                       R *inflight, int64_t *need,
                                                       R *rownorm_out)
{
    __shared__ R rn[LD];
    __shared__ R sb[LD * (LD + 1)]; /* padded: thread r reads row r without bank conflicts */
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i], nt = T.row_ptr[i + 1] - t0;
    R *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;
    int64_t *nd = need + rowbase[blockIdx.x];
    /* row norms in the reference's order (1, then each tile's row left to right), each tile
     * staged in shared memory by the whole block so the 32 serial sums read no global memory */
    /* the next tile (and its width) is requested before this one is summed: its memory
     * latency hides behind the sum */
    R acc = 1.0, cur = slot[tid];
    int mj_cur = mi, mj_next = 0;
    for (int64_t s = 0; s < nt; s++) {
        sb[ty * (LD + 1) + tx] = cur;
        if (s + 1 < nt) {
            cur = slot[(s + 1) * TILE + tid];
            mj_next = dev_bsize(T, T.col[t0 + s + 1]);
        }
        __syncthreads();
        if (ty == 0 && tx < mi) {
            const R *b = sb + tx * (LD + 1);
            if (s == 0) {
                for (int c = tx + 1; c < mi; c++) acc += b[c] * b[c];
            } else {
                for (int c = 0; c < mj_cur; c++) acc += b[c] * b[c];
            }
        }
        mj_cur = mj_next;
        __syncthreads();
    }
    if (ty == 0 && tx < mi) {
        rn[tx] = r_sqrt(acc);
        rownorm_out[(int64_t)blockIdx.x * LD + tx] = rn[tx];
    }
    __syncthreads();
    if (tid == 0) nd[0] = (int64_t)mi * mi;
    /* again one tile ahead: its value and width are requested before this one's barrier */
    R tol = (ty < mi) ? (R)prm.drop_tol * rn[ty] : (R)0;
    if (nt > 1) {
        cur = slot[TILE + tid];
        mj_cur = dev_bsize(T, T.col[t0 + 1]);
    }
    for (int64_t s = 1; s < nt; s++) {
        R val = cur;
        int mj = mj_cur;
        if (s + 1 < nt) {
            cur = slot[(s + 1) * TILE + tid];
            mj_cur = dev_bsize(T, T.col[t0 + s + 1]);
        }
        int keep = 0;
        if (ty < mi && tx < mj) {
            R v = r_abs(val);
            if (v <= tol || v == 0) slot[s * TILE + tid] = 0.0;
            else keep = 1;
        }
        int cnt = __syncthreads_count(keep);
        if (tid == 0) nd[s] = cnt;
    }
}

/* ------------------------------------------------------------ launches */

template <typename R>
void phase_a_diag_launch(int32_t nrows, cudaStream_t s, const dev_tiles &T, const factor_params_d &prm,
                         const int32_t *rows, const int32_t *rowbase, R *inflight, ildl_dense_result *res)
{
    k_phase_a_diag<R><<<nrows, dim3(LD, LD), 0, s>>>(T, prm, rows, rowbase, inflight, res);
}

template <typename R>
void phase_a_pull_launch(int64_t nofd, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                         const int32_t *rowbase, const int32_t *tile_rr, const int32_t *tile_s, R *inflight)
{
    k_phase_a_pull<R><<<(unsigned)nofd, dim3(LD, LD), pull_smem_bytes<R>(), s>>>(T, rows, rowbase, tile_rr, tile_s,
                                                                                 inflight);
}

template <typename R>
void phase_a_solve_launch(int64_t nofd, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                          const int32_t *rowbase, const int32_t *tile_rr, const int32_t *tile_s, R *inflight,
                          const ildl_dense_result *res)
{
    k_phase_a_solve<R><<<(unsigned)((nofd + SOLVE_TILE_WARPS - 1) / SOLVE_TILE_WARPS), dim3(32, SOLVE_TILE_WARPS), 0,
                         s>>>(T, rows, rowbase, tile_rr, tile_s, nofd, inflight, res);
}

template <typename R>
void phase_a_drop_launch(int32_t nrows, cudaStream_t s, const dev_tiles &T, const factor_params_d &prm,
                         const int32_t *rows, const int32_t *rowbase, R *inflight, int64_t *need, R *rownorm)
{
    k_phase_a_drop<R><<<nrows, dim3(LD, LD), 0, s>>>(T, prm, rows, rowbase, inflight, need, rownorm);
}

#define PHASE_A_INSTANCES(R)                                                                                     \
    template void phase_a_diag_launch<R>(int32_t, cudaStream_t, const dev_tiles &, const factor_params_d &,     \
                                         const int32_t *, const int32_t *, R *, ildl_dense_result *);                   \
    template void phase_a_pull_launch<R>(int64_t, cudaStream_t, const dev_tiles &, const int32_t *,             \
                                         const int32_t *, const int32_t *, const int32_t *, R *);               \
    template void phase_a_solve_launch<R>(int64_t, cudaStream_t, const dev_tiles &, const int32_t *,            \
                                          const int32_t *, const int32_t *, const int32_t *, R *,               \
                                          const ildl_dense_result *);                                                   \
    template void phase_a_drop_launch<R>(int32_t, cudaStream_t, const dev_tiles &, const factor_params_d &,     \
                                         const int32_t *, const int32_t *, R *, int64_t *, R *);
PHASE_A_INSTANCES(double)
PHASE_A_INSTANCES(float)

cudaError_t factor_configure(void)
{
    cudaError_t e = cudaFuncSetAttribute(k_phase_a_pull<double>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)pull_smem_bytes<double>());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(k_phase_a_pull<float>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)pull_smem_bytes<float>());
    return e;
}
