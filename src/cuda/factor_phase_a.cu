/* factor_phase_a.cu -- phase A of the block-iLDL^T factorization on the GPU, per chunk of rows
 * of one level (the driver is factor.cu), in the floating-point order of the CPU reference
 * (src/cpu/factor.c, phase A):
 *   k_pull_products  one block per update of the chunk's split tiles (plan.cu, pull_split_plan):
 *                    its products apart, into a scratch the next two kernels subtract in k order;
 *   k_phase_a_diag   one 32x32-thread block per block row: pull the updates into the diagonal
 *                    tile (or subtract its products), and a team of 4 of its warps factors it
 *                    (none/BK/Rook, dense_factor.cuh);
 *   k_phase_a_pull   one block per off-diagonal tile: pull its updates, or subtract its products
 *                    (beside the diagonal kernel, on a second stream);
 *   k_phase_a_solve  one warp per off-diagonal tile: permute rows, solve with U_ii and D_i;
 *   k_phase_a_drop   one block per block row: row norms (warp 0's serial sums of squares staged
 *                    four tiles at a time), tau-dropping and counting (a warp per tile).
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
                                                       const int2 *split, const R *prod,
                                                       R *inflight, ildl_dense_result *res_out)
{
    __shared__ R W[TILE], win[4 * TILE]; /* the pulls' windows, then dd_factor's scratch */
    R *const sU = win, *const sDU = win + TILE, *const sU2 = win + 2 * TILE, *const sDU2 = win + 3 * TILE;
    R *const up[6] = {sU, sU, sDU, sU2, sU2, sDU2}; /* U_ki is U_kj: one window per update */
    __shared__ ildl_dense_result res;
    int tid = threadIdx.y * LD + threadIdx.x;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i];
    R *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;

    d_zero_tile(W);
    d_load_a(T, t0, true, W);
    /* the tiles (k,i), k < i, in k ascending: their products computed apart (split), or
     * pulled here two at a time (as the off-diagonal tiles) */
    int2 sp = split[blockIdx.x];
    if (sp.y >= 0) d_pull_products_commit(prod + (int64_t)sp.x * TILE, sp.y, mi, mi, W, true);
    else d_pull_diag_all<R>(T, i, mi, W, up);
    ildl_dense_params dp;
    dp.pivot_tol = prm.pivot_tol;
    dp.perturb = prm.perturb;
    dp.pair_hint = prm.pair_hint ? prm.pair_hint + T.bstart[i] : NULL;
    dd_factor(prm.pivoting, mi, W, win, &dp, &res);
    if (tid < mi) {
        int32_t b = T.bstart[i];
        T.piv[b + tid] = res.perm[tid];
        T.d_diag[b + tid] = res.d_diag[tid];
        T.d_off[b + tid] = res.d_off[tid];
        T.piv_type[b + tid] = res.type[tid];
    }
    slot[tid] = W[tid];
    dd_result_store(tid, res, res_out + blockIdx.x);
    if (tid == 0) prm.block_perturbed[i] = res.nperturbed;
}

/* A2, one block per off-diagonal tile of the chunk: B_ij = A_ij minus the updates from the
 * rows k < i present in block columns i and j, written to the tile's in-flight slot. It does not
 * read row i's diagonal factor, so it runs beside k_phase_a_diag (factor_chunks: two streams);
 * k_phase_a_solve then finishes the tile. */
/* (two blocks per SM: the register cap costs a few spilled bytes and gains 10-20%) */
template <typename R>
__global__ void __launch_bounds__(1024, 2) k_phase_a_pull(dev_tiles T, const int32_t *rows,
                                                       const int32_t *rowbase, const int32_t *tile_rr,
                                                       const int32_t *tile_s, const int2 *split, const R *prod,
                                                       R *inflight)
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
    /* the k < i in both block columns, in k ascending: computed apart (split), or two at a time */
    __shared__ pull_list L;
    int2 sp = split[blockIdx.x];
    if (sp.y >= 0) d_pull_products_commit(prod + (int64_t)sp.x * TILE, sp.y, mi, mj, sB, false);
    else d_pull_offd_all<R>(T, i, j, mi, mj, sB, up, &L);
    inflight[((int64_t)rowbase[rr] + s) * TILE + tid] = sB[tid];
}

/* A0, one block per update of the chunk's split tiles (plan.cu, pull_split_plan): job q's
 * products into prod[q], for k_phase_a_diag and k_phase_a_pull to subtract in order. Before
 * both kernels: it reads only what earlier chunks stored. */
template <typename R>
__global__ void __launch_bounds__(1024, 2) k_pull_products(dev_tiles T, const int64_t *job_ti, const int64_t *job_tj,
                                                           R *prod)
{
    __shared__ R su[TILE], sj[TILE], sdu[TILE];
    int64_t ti = job_ti[blockIdx.x], tj = job_tj[blockIdx.x];
    int mi = dev_bsize(T, T.col[ti]), mj = dev_bsize(T, T.col[tj]);
    pull_fetch<R> f;
    d_pull_fetch(T, ti, tj, mi, mj, &f);
    d_pull_product(f, mi, mj, su, sj, sdu, prod + (int64_t)blockIdx.x * TILE);
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

/* Warps per off-diagonal tile of k_phase_a_solve_block. */
#define SOLVE_BLOCK_WARPS 8

/* Phase C's work in a narrow chunk on the dense path, by a block of SOLVE_BLOCK_WARPS warps
 * (k_phase_a_solve_block with store): b < nrows stores block row rows[b]'s diagonal tile as its
 * dense strict upper part, a larger b permutes the columns of tile coltile[b - nrows] = (k,i)
 * into block i's pivot order; k_phase_c's operations on dense tiles (factor_phase_c.cu). */
template <typename R>
__device__ void d_store_dense_rest(const dev_tiles &T, const int32_t *rows, const int32_t *rowbase,
                                   const R *inflight, int64_t b, int32_t nrows, const int64_t *coltile)
{
    constexpr int NR = LD / SOLVE_BLOCK_WARPS;
    int c = threadIdx.x, w = threadIdx.y;
    if (b < nrows) {
        int32_t i = rows[b];
        int mi = dev_bsize(T, i);
        const R *slot = inflight + (int64_t)rowbase[b] * TILE;
        R *v = fac_val<R>(T) + T.off[T.row_ptr[i]];
#pragma unroll
        for (int k = 0; k < NR; k++) {
            int r = w + SOLVE_BLOCK_WARPS * k;
            if (r < mi && c < mi) v[r * mi + c] = c > r ? slot[r * LD + c] : (R)0;
        }
        return;
    }
    int64_t t = coltile[b - nrows];
    int32_t i = T.col[t];
    int mi = dev_bsize(T, i), mk = dev_bsize(T, T.row[t]);
    R *v = fac_val<R>(T) + T.off[t];
    int pc = c < mi ? T.piv[T.bstart[i] + c] : 0;
    R x[NR];
#pragma unroll
    for (int k = 0; k < NR; k++) {
        int r = w + SOLVE_BLOCK_WARPS * k;
        x[k] = (r < mk && c < mi) ? v[r * mi + pc] : (R)0;
    }
    __syncthreads(); /* every entry read before any is rewritten */
#pragma unroll
    for (int k = 0; k < NR; k++) {
        int r = w + SOLVE_BLOCK_WARPS * k;
        if (r < mk && c < mi) v[r * mi + c] = x[k];
    }
}

/* A2' for a narrow chunk, one block per off-diagonal tile: the same operations as
 * k_phase_a_solve, spread over SOLVE_BLOCK_WARPS warps. Thread (c, w) keeps column c of the
 * rows w, w + 8, w + 16, w + 24 in registers; step q, after one block barrier, subtracts
 * U_ii(q, r) b[q] from its rows r > q (b[q] final since step q - 1, from shared memory), so each
 * entry subtracts its terms q ascending as in ildl_dense_solve_offdiag: the bits of the warp's
 * solve, with a critical path of 31 barriers instead of a warp's ~500 dependent steps (a
 * warp's solve of one tile took about 35 us: narrow levels waited for it). With store (a narrow
 * chunk on the dense path) the kernel is also the chunk's phase C: a solved tile goes straight
 * into its storage, and blocks nofd.. take the rows' diagonal tiles and the column permutations
 * (d_store_dense_rest): one launch fewer per level (perf-notes §89). */
template <typename R>
__global__ void __launch_bounds__(32 * SOLVE_BLOCK_WARPS) k_phase_a_solve_block(dev_tiles T, const int32_t *rows,
                                                                                const int32_t *rowbase,
                                                                                const int32_t *tile_rr,
                                                                                const int32_t *tile_s, R *inflight,
                                                                                const ildl_dense_result *res_in,
                                                                                bool store, int64_t nofd,
                                                                                int32_t nrows,
                                                                                const int64_t *coltile)
{
    __shared__ R sW[TILE], sb[TILE];
    __shared__ int sperm[LD], stype[LD];
    __shared__ double sdd[LD], sdo[LD];
    int c = threadIdx.x, w = threadIdx.y, tid = w * LD + c;
    if (store && blockIdx.x >= nofd) {
        d_store_dense_rest<R>(T, rows, rowbase, inflight, blockIdx.x - nofd, nrows, coltile);
        return;
    }
    int32_t rr = tile_rr[blockIdx.x], s = tile_s[blockIdx.x];
    int32_t i = rows[rr];
    int mi = dev_bsize(T, i);
    int64_t t = T.row_ptr[i] + s;
    int mj = dev_bsize(T, T.col[t]);
    const R *W = inflight + (int64_t)rowbase[rr] * TILE; /* U_ii, written by k_phase_a_diag */
    R *B = inflight + ((int64_t)rowbase[rr] + s) * TILE;
    /* the result: into the slot, or with store (dense tiles) straight into the tile's storage */
    R *out = store ? fac_val<R>(T) + T.off[t] : B;
    int ldo = store ? mj : LD;
    const ildl_dense_result &res = res_in[rr];
    if (tid < LD) {
        sperm[tid] = tid < mi ? res.perm[tid] : 0;
        stype[tid] = res.type[tid];
        sdd[tid] = res.d_diag[tid];
        sdo[tid] = res.d_off[tid];
    }
    for (int e = tid; e < TILE; e += LD * SOLVE_BLOCK_WARPS) sW[e] = W[e];
    __syncthreads();
    d_offdiag_solve_block<R, SOLVE_BLOCK_WARPS>(mi, mj, w, sW, sb, sperm, stype, sdd, sdo, B, LD, out, ldo, true);
}

/* Tiles staged per barrier in k_phase_a_drop's row norms. */
#define DROP_STAGE 4

/* A3, one block per block row: row norms over the whole block row in the reference's order,
 * then tau-dropping of the off-diagonal tiles and their counts. */
template <typename R>
__global__ void __launch_bounds__(1024) k_phase_a_drop(dev_tiles T, factor_params_d prm,
                                                       const int32_t *rows, const int32_t *rowbase,
                                                       R *inflight, int64_t *need,
                                                       R *rownorm_out)
{
    __shared__ R rn[LD];
    __shared__ R sb[DROP_STAGE][LD * (LD + 1)]; /* padded: thread r reads row r without bank conflicts */
    __shared__ int smj[DROP_STAGE];
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    int32_t i = rows[blockIdx.x];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i], nt = T.row_ptr[i + 1] - t0;
    R *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;
    int64_t *nd = need + rowbase[blockIdx.x];
    /* row norms in the reference's order (1, then each tile's row left to right): DROP_STAGE
     * tiles at a time staged in shared memory by the whole block as their squares (each rounded
     * as the reference's b*b, no FMA), with their widths, the next ones requested before these
     * are summed: warp 0's serial sums wait only for their adds */
    R acc = 1.0, cur[DROP_STAGE];
    int wcur = 0;
    for (int g = 0; g < DROP_STAGE; g++) cur[g] = g < nt ? slot[g * TILE + tid] : (R)0;
    if (ty == 1 && tx < DROP_STAGE && tx < nt) wcur = tx == 0 ? mi : dev_bsize(T, T.col[t0 + tx]);
    for (int64_t s0 = 0; s0 < nt; s0 += DROP_STAGE) {
        for (int g = 0; g < DROP_STAGE; g++) sb[g][ty * (LD + 1) + tx] = cur[g] * cur[g];
        if (ty == 1 && tx < DROP_STAGE) smj[tx] = wcur;
        int64_t s1 = s0 + DROP_STAGE;
        for (int g = 0; g < DROP_STAGE; g++)
            if (s1 + g < nt) cur[g] = slot[(s1 + g) * TILE + tid];
        if (ty == 1 && tx < DROP_STAGE && s1 + tx < nt) wcur = dev_bsize(T, T.col[t0 + s1 + tx]);
        __syncthreads();
        if (ty == 0 && tx < mi) {
            for (int g = 0; g < DROP_STAGE && s0 + g < nt; g++) {
                const R *sq = sb[g] + tx * (LD + 1);
                if (s0 + g == 0) {
                    for (int c = tx + 1; c < mi; c++) acc += sq[c];
                } else if (smj[g] == LD) { /* a full-width tile: the loads all ahead of the adds */
#pragma unroll
                    for (int c = 0; c < LD; c++) acc += sq[c];
                } else {
                    int mj = smj[g];
#pragma unroll 8
                    for (int c = 0; c < mj; c++) acc += sq[c];
                }
            }
        }
        __syncthreads();
    }
    if (ty == 0 && tx < mi) {
        rn[tx] = r_sqrt(acc);
        rownorm_out[(int64_t)blockIdx.x * LD + tx] = rn[tx];
    }
    __syncthreads();
    if (tid == 0) nd[0] = (int64_t)mi * mi;
    /* tau-dropping, warp w taking the tiles s = 1 + w, 1 + w + 32, ...: lane c column c, row by
     * row; the count of what a tile keeps by ballots */
    for (int64_t s = 1 + ty; s < nt; s += LD) {
        int mj = dev_bsize(T, T.col[t0 + s]);
        R *b = slot + s * TILE;
        if (prm.drop_tol == 0.0 && T.format[t0 + s] != ILDL_TILE_SPARSE) { /* tau = 0 keeps dense tiles */
            if (tx == 0) nd[s] = (int64_t)mi * mj;
            continue;
        }
        int cnt = 0;
#pragma unroll 4
        for (int r = 0; r < mi; r++) {
            bool keep = false;
            if (tx < mj) {
                R v = r_abs(b[r * LD + tx]);
                R tol = (R)prm.drop_tol * rn[r];
                if (v <= tol || v == 0) b[r * LD + tx] = 0.0;
                else keep = true;
            }
            cnt += __popc(__ballot_sync(0xffffffffu, keep));
        }
        if (tx == 0) nd[s] = cnt;
    }
}

/* ------------------------------------------------------------ launches */

template <typename R>
void pull_products_launch(int64_t njobs, cudaStream_t s, const dev_tiles &T, const int64_t *job_ti,
                          const int64_t *job_tj, R *prod)
{
    k_pull_products<R><<<(unsigned)njobs, dim3(LD, LD), 0, s>>>(T, job_ti, job_tj, prod);
}

template <typename R>
void phase_a_diag_launch(int32_t nrows, cudaStream_t s, const dev_tiles &T, const factor_params_d &prm,
                         const int32_t *rows, const int32_t *rowbase, const int2 *split, const R *prod, R *inflight,
                         ildl_dense_result *res)
{
    k_phase_a_diag<R><<<nrows, dim3(LD, LD), 0, s>>>(T, prm, rows, rowbase, split, prod, inflight, res);
}

template <typename R>
void phase_a_pull_launch(int64_t nofd, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                         const int32_t *rowbase, const int32_t *tile_rr, const int32_t *tile_s, const int2 *split,
                         const R *prod, R *inflight)
{
    k_phase_a_pull<R><<<(unsigned)nofd, dim3(LD, LD), pull_smem_bytes<R>(), s>>>(T, rows, rowbase, tile_rr, tile_s,
                                                                                 split, prod, inflight);
}

template <typename R>
void phase_a_solve_launch(int64_t nofd, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                          const int32_t *rowbase, const int32_t *tile_rr, const int32_t *tile_s, R *inflight,
                          const ildl_dense_result *res, bool narrow)
{
    if (narrow) {
        k_phase_a_solve_block<R><<<(unsigned)nofd, dim3(32, SOLVE_BLOCK_WARPS), 0, s>>>(
            T, rows, rowbase, tile_rr, tile_s, inflight, res, false, nofd, 0, (const int64_t *)NULL);
        return;
    }
    k_phase_a_solve<R><<<(unsigned)((nofd + SOLVE_TILE_WARPS - 1) / SOLVE_TILE_WARPS), dim3(32, SOLVE_TILE_WARPS), 0,
                         s>>>(T, rows, rowbase, tile_rr, tile_s, nofd, inflight, res);
}

template <typename R>
void phase_a_solve_store_launch(int32_t nrows, int64_t nofd, int64_t ncol, cudaStream_t s, const dev_tiles &T,
                                const int32_t *rows, const int32_t *rowbase, const int32_t *tile_rr,
                                const int32_t *tile_s, const int64_t *coltile, R *inflight,
                                const ildl_dense_result *res)
{
    k_phase_a_solve_block<R><<<(unsigned)(nofd + nrows + ncol), dim3(32, SOLVE_BLOCK_WARPS), 0, s>>>(
        T, rows, rowbase, tile_rr, tile_s, inflight, res, true, nofd, nrows, coltile);
}

template <typename R>
void phase_a_drop_launch(int32_t nrows, cudaStream_t s, const dev_tiles &T, const factor_params_d &prm,
                         const int32_t *rows, const int32_t *rowbase, R *inflight, int64_t *need, R *rownorm)
{
    k_phase_a_drop<R><<<nrows, dim3(LD, LD), 0, s>>>(T, prm, rows, rowbase, inflight, need, rownorm);
}

#define PHASE_A_INSTANCES(R)                                                                                     \
    template void pull_products_launch<R>(int64_t, cudaStream_t, const dev_tiles &, const int64_t *,            \
                                          const int64_t *, R *);                                                \
    template void phase_a_diag_launch<R>(int32_t, cudaStream_t, const dev_tiles &, const factor_params_d &,     \
                                         const int32_t *, const int32_t *, const int2 *, const R *, R *,        \
                                         ildl_dense_result *);                                                  \
    template void phase_a_pull_launch<R>(int64_t, cudaStream_t, const dev_tiles &, const int32_t *,             \
                                         const int32_t *, const int32_t *, const int32_t *, const int2 *,       \
                                         const R *, R *);                                                       \
    template void phase_a_solve_launch<R>(int64_t, cudaStream_t, const dev_tiles &, const int32_t *,            \
                                          const int32_t *, const int32_t *, const int32_t *, R *,               \
                                          const ildl_dense_result *, bool);                                     \
    template void phase_a_solve_store_launch<R>(int32_t, int64_t, int64_t, cudaStream_t, const dev_tiles &,      \
                                                const int32_t *, const int32_t *, const int32_t *,              \
                                                const int32_t *, const int64_t *, R *,                          \
                                                const ildl_dense_result *);                                     \
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
