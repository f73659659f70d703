/* factor_syncfree.cu -- the sync-free schedule of the factorization (ildl_options.factor_schedule
 * SYNCFREE) on the dense path (factor_dense_path: every tile dense, tau = 0, so every tile's
 * storage offset is static): the last levels (plan.cu, factor_sf_plan: of at most ILDL_FSF_ROWS
 * block rows; the levels before them run in the level schedule first) in one persistent launch,
 * k_factor_sf, whose 32x32-thread blocks take tasks by ticket in the plan's order (block rows in
 * level order, per row its split products, its diagonal tile, its off-diagonal pulls, its solves
 * four tiles at a time, its column permutations four tiles at a time) and wait on counters for
 * what a task reads:
 *   JOB   up to 8 updates of split tiles into the products' ring, four at a time by groups of 8
 *         warps (k_pull_products' operations on dense tiles), once the row's dependencies are
 *         done and each ring slot's previous product was subtracted;
 *   DIAG  the diagonal tile pulled (or its products subtracted) and factored, U_ii stored
 *         (k_phase_a_diag, then phase C's dense store);
 *   PULL  an off-diagonal tile pulled (or its products subtracted) into its storage
 *         (k_phase_a_pull);
 *   SOLVE up to four off-diagonal tiles, eight warps each, solved in place with U_ii and D_i
 *         (k_phase_a_solve_block's operations, read from storage);
 *   COLS  the columns of up to four tiles (k,i), k < i, into block i's pivot order (phase C),
 *         after all of row i's pulls read them; no task waits for it.
 * Every entry gets the level schedule's operations in the same order, so the factor is the
 * same bits (tests/cuda/test_cuda_factor.c). A row is done when its diagonal and solves are; its
 * last task then counts it into the dependency counter of every block column it holds a tile
 * in (the rows of the suffix only count those of the suffix: the others are done). A task waits only on tasks of smaller tickets, which running
 * blocks hold, so the launch cannot deadlock whatever number of its blocks are resident.
 * Waits: warp 0 polls with acquire loads (the SM's L1 invalidated), then a block barrier;
 * signals: a block barrier, then thread 0's fence and atomic add. */
#include "cuda/context.cuh"
#include "cuda/dense_factor.cuh"
#include "cuda/factor_phases.cuh"
#include "cuda/factor_pull.cuh"
#include "cuda/factor_solve.cuh"

/* Dynamic shared memory of k_factor_sf: 12 tiles (the pulls' 7; the solves' 4 groups x 2; the
 * products' 4 groups x 3). */
template <typename R> constexpr size_t fsf_smem_bytes() { return (size_t)12 * TILE * sizeof(R); }

/* Warps per group of a SOLVE task, and its groups (one tile each). */
#define FSF_SOLVE_WARPS 8
#define FSF_SOLVE_GROUPS (LD / FSF_SOLVE_WARPS) /* plan.cu's FSF_SOLVE_TILES */

/* Warp 0 (all its lanes, converged) waits until *p >= target (acquire loads; the lanes' loads of
 * one address are one request). */
__device__ __forceinline__ void fsf_wait(const int *p, int target)
{
    for (unsigned ns = 8;;) {
        int v;
        asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
        if (__all_sync(0xffffffffu, v >= target)) break;
        __nanosleep(ns);
        if (ns < 256) ns *= 2;
    }
}

/* Thread 0, after a block barrier: *p += v, ordered after the block's writes. */
__device__ __forceinline__ void fsf_signal(int *p, int v)
{
    __threadfence();
    atomicAdd(p, v);
}

/* The counters of a launch (fsf_view over fsf_params::sync, zeroed before it). */
struct fsf_counters {
    int *ticket, *dep, *jobs, *diag, *pulls, *done, *tile, *ring;
};

__device__ __forceinline__ fsf_counters fsf_view(const fsf_params &P)
{
    fsf_counters k;
    k.ticket = P.sync;
    k.dep = P.sync + 1;
    k.jobs = k.dep + P.nb;
    k.diag = k.jobs + P.nb;
    k.pulls = k.diag + P.nb;
    k.done = k.pulls + P.nb;
    k.tile = k.done + P.nb;
    k.ring = k.tile + P.ntiles;
    return k;
}

/* Block-wide: row r's tasks finished v more of its units (its diagonal and its off-diagonal
 * solves: what later rows read of it); the task that finishes the last counts the row into its
 * block columns' dependency counters. */
__device__ void fsf_complete(const dev_tiles &T, const fsf_params &P, const fsf_counters &K, int32_t r, int v)
{
    int tid = threadIdx.y * LD + threadIdx.x, last = 0;
    __syncthreads();
    if (tid == 0) {
        __threadfence();
        last = atomicAdd(K.done + r, v) + v == P.row[r].total;
    }
    if (!__syncthreads_or(last)) return; /* the barrier broadcasts thread 0's answer */
    __threadfence();
    int32_t i = T.level_rows[r];
    int64_t t0 = T.row_ptr[i], nt = T.row_ptr[i + 1] - t0;
    for (int64_t s = 1 + tid; s < nt; s += TILE) atomicAdd(K.dep + P.row[T.col[t0 + s]].pos, 1);
}

/* Warp 0: wait for row r's dependencies and, when it has them, its split products. */
__device__ __forceinline__ void fsf_wait_inputs(const fsf_params &P, const fsf_counters &K, int32_t r)
{
    fsf_wait(K.dep + r, P.row[r].ndeps);
    if (P.row[r].njobs > 0) fsf_wait(K.jobs + r, P.row[r].njobs);
}

/* After a tile subtracted its n products at ring slots p0..: the slots may be reused. */
__device__ __forceinline__ void fsf_free_ring(const fsf_counters &K, int p0, int n)
{
    int tid = threadIdx.y * LD + threadIdx.x;
    for (int x = tid; x < n; x += TILE) atomicAdd(K.ring + p0 + x, 1);
}

/* One update U_ki^T D_k U_kj of dense tiles ti = (k,i), tj = (k,j) into p (TILE values, as
 * d_pull_product writes it: entry r*LD + c, only c >= r when ti == tj) by group g of
 * FSF_SOLVE_WARPS warps, its tiles staged in su, sj, sdu: the operations of d_pull_stage and
 * d_pull_dot4 on dense tiles, in the same order per entry. Called by every group of the block
 * (the two block barriers); a group with active false only takes part in them. */
template <typename R>
__device__ void fsf_product_group(const dev_tiles &T, int64_t ti, int64_t tj, bool active, R *su, R *sj, R *sdu,
                                  R *p)
{
    constexpr int NW = FSF_SOLVE_WARPS, NR = LD / NW;
    int c = threadIdx.x, w = threadIdx.y % NW;
    int32_t k = T.row[tj];
    int mk = dev_bsize(T, k), mi = dev_bsize(T, T.col[ti]), mj = dev_bsize(T, T.col[tj]), bk = T.bstart[k];
    bool same = ti == tj;
    const R *vi = fac_val<R>(T) + T.off[ti], *vj = fac_val<R>(T) + T.off[tj];
    if (active) {
#pragma unroll
        for (int q = 0; q < NR; q++) {
            int l = w + NW * q;
            if (l < mk && c < mj) sj[l * LD + c] = vj[l * mj + c];
            if (!same && l < mk && c < mi) su[l * LD + c] = vi[l * mi + c];
        }
    }
    __syncthreads();
    if (active) {
#pragma unroll
        for (int q = 0; q < NR; q++) { /* D_k U_kj (d_pull_fetch_d, d_pull_apply_d) */
            int l = w + NW * q;
            if (l < mk && c < mj) {
                int8_t ty = T.piv_type[bk + l];
                R dd = T.d_diag[bk + l], v;
                if (ty == 2 && l + 1 < mk) v = dd * sj[l * LD + c] + (R)T.d_off[bk + l] * sj[(l + 1) * LD + c];
                else if (ty == 0 && l > 0 && T.piv_type[bk + l - 1] == 2)
                    v = (R)T.d_off[bk + l - 1] * sj[(l - 1) * LD + c] + dd * sj[l * LD + c];
                else v = dd * sj[l * LD + c];
                sdu[l * LD + c] = v;
            }
        }
    }
    __syncthreads();
    int r0 = 4 * w;
    if (active && r0 < mi && c < mj && (!same || c >= r0)) {
        R s[4];
        d_pull_dot4(mk, same ? sj : su, sdu, r0, c, s);
        for (int q = 0; q < 4; q++) {
            int r = r0 + q;
            if (r < mi && (!same || c >= r)) p[r * LD + c] = s[q];
        }
    }
}

/* One tile of a SOLVE task by a group of FSF_SOLVE_WARPS warps: tile t of row i (mi x mj, in
 * storage) becomes D_i^-1 U_ii^-T P_i B in place; U_ii from its storage. k_phase_a_solve_block's
 * operations (d_offdiag_solve_block, factor_solve.cuh). Called by every group of the block with tiles of
 * the same row (the same block barriers); a group with store false only takes part in them. */
template <typename R>
__device__ void fsf_solve_tile(const dev_tiles &T, int32_t i, int64_t t, bool store, R *sW, R *sb, int *sperm,
                               int *stype, double *sdd, double *sdo)
{
    constexpr int NW = FSF_SOLVE_WARPS;
    int c = threadIdx.x, w = threadIdx.y % NW, tid = w * LD + c;
    int mi = dev_bsize(T, i), mj = dev_bsize(T, T.col[t]);
    int32_t bi = T.bstart[i];
    const R *U = fac_val<R>(T) + T.off[T.row_ptr[i]];
    R *B = fac_val<R>(T) + T.off[t];
    if (tid < LD) {
        sperm[tid] = tid < mi ? T.piv[bi + tid] : 0;
        stype[tid] = tid < mi ? T.piv_type[bi + tid] : 0;
        sdd[tid] = tid < mi ? T.d_diag[bi + tid] : 0.0;
        sdo[tid] = tid < mi ? T.d_off[bi + tid] : 0.0;
    }
    for (int e = tid; e < TILE; e += LD * NW) {
        int q = e / LD, r = e % LD;
        sW[e] = (q < mi && r < mi) ? U[q * mi + r] : (R)0;
    }
    __syncthreads();
    d_offdiag_solve_block<R, NW>(mi, mj, w, sW, sb, sperm, stype, sdd, sdo, B, mj, B, mj, store);
}

/* The persistent kernel: tasks by ticket until none is left. */
template <typename R>
__global__ void __launch_bounds__(1024, 1) k_factor_sf(dev_tiles T, factor_params_d prm, fsf_params P, R *prod)
{
    extern __shared__ __align__(16) unsigned char fsf_smem_raw[];
    R *sm = reinterpret_cast<R *>(fsf_smem_raw);
    __shared__ int s_ticket[2]; /* this task's ticket, and the last one's (read before it) */
    __shared__ pull_list L;
    __shared__ ildl_dense_result res;
    __shared__ int sperm[FSF_SOLVE_GROUPS][LD], stype[FSF_SOLVE_GROUPS][LD];
    __shared__ double sdd[FSF_SOLVE_GROUPS][LD], sdo[FSF_SOLVE_GROUPS][LD];
    const fsf_counters K = fsf_view(P);
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * LD + tx;
    for (int it = 0;; it ^= 1) {
        if (ty == 0) { /* warp 0, converged: lane 0 draws the ticket, every lane stores it */
            int qt = 0;
            if (tx == 0) qt = atomicAdd(K.ticket, 1);
            qt = __shfl_sync(0xffffffffu, qt, 0);
            s_ticket[it] = qt;
        }
        __syncthreads();
        int q = s_ticket[it];
        if (q >= P.ntasks) return;
        fsf_task tk = P.tasks[q];
        int kind = tk.kr >> FSF_KIND_SHIFT;
        int32_t r = tk.kr & ((1 << FSF_KIND_SHIFT) - 1);
        int32_t i = T.level_rows[r];
        int mi = dev_bsize(T, i);
        int64_t t0 = T.row_ptr[i];
        if (kind == FSF_JOB) { /* jobs a.. into ring slots b.., c of them (<= FSF_JOB_BATCH) */
            if (ty == 0) {
                fsf_wait(K.dep + r, P.row[r].ndeps);
                for (int x = 0; x < tk.c; x++) fsf_wait(K.ring + tk.b + x, P.job_use[tk.a + x]);
            }
            __syncthreads();
            int g = ty / FSF_SOLVE_WARPS; /* a product per group, FSF_SOLVE_GROUPS at a time */
            for (int x0 = 0; x0 < tk.c; x0 += FSF_SOLVE_GROUPS) {
                int x = x0 + g < tk.c ? x0 + g : x0;
                fsf_product_group<R>(T, P.job_ti[tk.a + x], P.job_tj[tk.a + x], x0 + g < tk.c, sm + 3 * g * TILE,
                                     sm + (3 * g + 1) * TILE, sm + (3 * g + 2) * TILE,
                                     prod + (int64_t)(tk.b + x) * TILE);
                __syncthreads();
            }
            if (tid == 0) fsf_signal(K.jobs + r, tk.c);
        } else if (kind == FSF_DIAG) { /* a = first ring slot, b = products (-1: pulled here) */
            R *W = sm, *win = sm + TILE;
            R *const up[6] = {win, win, win + TILE, win + 2 * TILE, win + 2 * TILE, win + 3 * TILE};
            if (ty == 0) fsf_wait_inputs(P, K, r);
            __syncthreads();
            d_zero_tile(W);
            d_load_a(T, t0, true, W);
            if (tk.b >= 0) {
                d_pull_products_commit(prod + (int64_t)tk.a * TILE, tk.b, mi, mi, W, true);
                fsf_free_ring(K, tk.a, tk.b);
            } else {
                d_pull_diag_all<R>(T, i, mi, W, up);
            }
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
            if (ty < mi && tx < mi) fac_val<R>(T)[T.off[t0] + ty * mi + tx] = tx > ty ? W[ty * LD + tx] : (R)0;
            if (tid == 0) prm.block_perturbed[i] = res.nperturbed;
            __syncthreads();
            if (tid == 0) fsf_signal(K.diag + r, 1);
            fsf_complete(T, P, K, r, 1);
        } else if (kind == FSF_PULL) { /* a = slot s of the row, b = first ring slot, c = products */
            R *sB = sm;
            R *up[6];
            for (int k = 0; k < 6; k++) up[k] = sm + (1 + k) * TILE;
            int64_t t = t0 + tk.a;
            int32_t j = T.col[t];
            int mj = dev_bsize(T, j);
            if (ty == 0) fsf_wait_inputs(P, K, r);
            __syncthreads();
            d_zero_tile(sB);
            d_load_a(T, t, false, sB);
            if (tk.c >= 0) {
                d_pull_products_commit(prod + (int64_t)tk.b * TILE, tk.c, mi, mj, sB, false);
                fsf_free_ring(K, tk.b, tk.c);
            } else {
                d_pull_offd_all<R>(T, i, j, mi, mj, sB, up, &L);
            }
            if (ty < mi && tx < mj) fac_val<R>(T)[T.off[t] + ty * mj + tx] = sB[ty * LD + tx];
            __syncthreads();
            if (tid == 0) {
                __threadfence();
                atomicAdd(K.tile + t, 1);
                atomicAdd(K.pulls + r, 1);
            }
        } else if (kind == FSF_SOLVE) { /* a = first slot s, b = tiles (<= FSF_SOLVE_GROUPS) */
            int g = ty / FSF_SOLVE_WARPS;
            if (ty == 0) {
                fsf_wait(K.diag + r, 1);
                for (int k = 0; k < tk.b; k++) fsf_wait(K.tile + t0 + tk.a + k, 1);
            }
            __syncthreads();
            fsf_solve_tile<R>(T, i, t0 + tk.a + (g < tk.b ? g : 0), g < tk.b, sm + 2 * g * TILE,
                              sm + (2 * g + 1) * TILE, sperm[g], stype[g], sdd[g], sdo[g]);
            fsf_complete(T, P, K, r, tk.b);
        } else { /* FSF_COLS: a = first of the column's tiles (k,i), k < i, b = how many (<=
                  * FSF_SOLVE_GROUPS), into block i's pivot order, a tile per group; after every
                  * read of them (row i's pulls); no task waits for it */
            int g = ty / FSF_SOLVE_WARPS, w = ty % FSF_SOLVE_WARPS;
            if (ty == 0) {
                fsf_wait(K.diag + r, 1);
                fsf_wait(K.pulls + r, (int)(T.row_ptr[i + 1] - t0 - 1));
            }
            __syncthreads();
            constexpr int NR = LD / FSF_SOLVE_WARPS;
            bool act = g < tk.b; /* an idle group takes part in the barrier only (mk = 0) */
            int64_t t = act ? T.col_tiles[T.col_ptr[i] + tk.a + g] : 0;
            int mk = act ? dev_bsize(T, T.row[t]) : 0;
            R *v = fac_val<R>(T) + (act ? T.off[t] : 0);
            int pc = tx < mi ? T.piv[T.bstart[i] + tx] : 0;
            R x[NR];
#pragma unroll
            for (int k = 0; k < NR; k++) {
                int rr = w + FSF_SOLVE_WARPS * k;
                x[k] = (rr < mk && tx < mi) ? v[rr * mi + pc] : (R)0;
            }
            __syncthreads(); /* every entry read before any is rewritten */
#pragma unroll
            for (int k = 0; k < NR; k++) {
                int rr = w + FSF_SOLVE_WARPS * k;
                if (rr < mk && tx < mi) v[rr * mi + tx] = x[k];
            }
        }
        __syncthreads(); /* the shared tiles free for the next task */
    }
}

template <typename R>
int factor_sf_launch(ildl_cuda_ctx *c, const factor_params_d &prm, cudaStream_t s)
{
    const cuda_factor_work &F = c->fac;
    fsf_params P;
    P.tasks = F.d_sf_tasks;
    P.ntasks = F.sf_ntasks;
    P.sync = F.d_sf_sync;
    P.row = F.d_sf_row;
    P.job_ti = F.d_job_ti;
    P.job_tj = F.d_job_tj;
    P.job_use = F.d_sf_job_use;
    P.nb = c->nb;
    P.ntiles = c->T.ntiles;
    cudaError_t e = cudaMemsetAsync(F.d_sf_sync, 0, sizeof(int) * (size_t)F.sf_sync_len, s);
    if (e != cudaSuccess) {
        ildl_cuda_note_error(e, "cudaMemsetAsync", __FILE__, __LINE__);
        return ILDL_ERR_DEVICE;
    }
    k_factor_sf<R><<<F.sf_blocks, dim3(LD, LD), fsf_smem_bytes<R>(), s>>>(c->T, prm, P,
                                                                          reinterpret_cast<R *>(F.d_prod));
    e = cudaGetLastError();
    if (e != cudaSuccess) {
        ildl_cuda_note_error(e, "k_factor_sf", __FILE__, __LINE__);
        return ILDL_ERR_DEVICE;
    }
    return ILDL_SUCCESS;
}
template int factor_sf_launch<double>(ildl_cuda_ctx *, const factor_params_d &, cudaStream_t);
template int factor_sf_launch<float>(ildl_cuda_ctx *, const factor_params_d &, cudaStream_t);

cudaError_t factor_sf_configure(int *blocks_per_sm)
{
    cudaError_t e = cudaFuncSetAttribute(k_factor_sf<double>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)fsf_smem_bytes<double>());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(k_factor_sf<float>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)fsf_smem_bytes<float>());
    int nd = 0, nf = 0;
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nd, k_factor_sf<double>, LD * LD, fsf_smem_bytes<double>());
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nf, k_factor_sf<float>, LD * LD, fsf_smem_bytes<float>());
    *blocks_per_sm = nd < nf ? nd : nf;
    return e;
}
