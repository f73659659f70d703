/* solve.cu -- block triangular solves with U^T D U on the GPU, mirroring src/cpu/solve.c entry
 * for entry (same summation orders), in two schedules:
 *
 *  levels     one launch per level and direction (the reference schedule);
 *  sync-free  one persistent launch per direction: blocks take block rows by an atomic
 *             ticket in level order, wait for the rows they depend on through per-row
 *             done flags (epoch-stamped, so nothing is reset between applications), and
 *             publish their own row with a fence followed by the flag.
 *
 * A block of W warps takes a block row: each warp stages an off-diagonal tile in shared memory
 * before it waits for the row the tile depends on, and warp 0 combines the partial sums in tile
 * order, so W (2, 4 or 8, per direction) changes the speed, never a bit of the result.
 *
 * A row's arithmetic is the same in both schedules and reads only final values, so both give
 * bit-identical results; the sync-free one removes the per-level launch gaps that dominate
 * on deep matrices. Taking rows by ticket in level order (not by blockIdx) guarantees that
 * every row a block waits for has already been claimed by a running block: no deadlock even
 * when the grid is not resident all at once.
 *
 * Staged tiles are kept in the type of the stored factor (S): double, or float when the factor
 * is single precision (precision single or mixed: val32). The arithmetic is double either way
 * (a float widens exactly), so the bits are the same, but float tiles take half the shared
 * memory, and more blocks, i.e. more rows in flight, fit an SM. */
#include "cuda/factor_kernels.cuh"

#include <cub/device/device_scan.cuh>


/* How rows publish and wait (solve_set_protocol): 0, fences (volatile poll, fence; fence,
 * atomicExch); 1, acquire load / release store of a per-row flag; 2, no flags: the sweep
 * writes into a vector filled with SF_UNSET beforehand, and a waiting warp polls the values it
 * needs until none is SF_UNSET (one relaxed 8-byte store per value, single-copy atomic; the
 * value arrives with the poll that sees it, and the writer needs no fence). Same results. */
__constant__ int c_sf_protocol;
/* A signalling NaN: arithmetic never produces one (it quiets NaNs), and every value a sweep
 * writes comes out of an addition, so no written value can look unset. */
#define SF_UNSET 0x7ff4deadbeefcafeLL
/* The longest pause between two polls of a flag, ns (solve_set_backoff). */
__constant__ unsigned c_sf_backoff;
/* A one-warp row asks L1 for V_ii's lines this many tiles before its end (solve_set_vii_l1;
 * 0: never): its last tiles wait on the rows finished last, so the lines arrive meanwhile and
 * the V_ii product at the row's end reads L1 instead of L2 (perf-notes §74). */
__constant__ int c_vii_l1_ahead;

/* The calling thread polls *flag by acquire loads until it carries epoch, pausing between polls
 * (8 ns, doubling up to max_ns): thousands of spinning warps otherwise load the L2 that the
 * rows on the critical path need. */
__device__ __forceinline__ void acquire_until(const int *flag, int epoch, unsigned max_ns)
{
    for (unsigned ns = 8;;) {
        int v;
        asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
        if (v == epoch) break;
        __nanosleep(ns);
        if (ns < max_ns) ns *= 2;
    }
}

/* Wait until row k's flag carries this epoch, then make its x visible to the warp. */
__device__ __forceinline__ void sf_wait(const int *done, int32_t k, int epoch)
{
    if ((threadIdx.x & 31) == 0) {
        if (c_sf_protocol) {
            acquire_until(done + k, epoch, c_sf_backoff);
        } else {
            unsigned ns = 8;
            while (*(volatile const int *)(done + k) != epoch) {
                __nanosleep(ns);
                if (ns < c_sf_backoff) ns *= 2;
            }
            __threadfence();
        }
    }
    __syncwarp(); /* the lanes' loads of x come after lane 0's acquire */
}

/* Wait until *flag carries this epoch (acquire, lane 0 of each warp): a split row's running sum
 * (row_chunk) before its last item goes on from it. */
__device__ __forceinline__ void sf_wait_ready(const int *flag, int epoch)
{
    if ((threadIdx.x & 31) == 0) acquire_until(flag, epoch, 256);
    __syncwarp(); /* the lanes' loads of the running sum come after lane 0's acquire */
}

/* Publish row i: its x values first, then the flag. */
__device__ __forceinline__ void sf_publish(int *done, int32_t i, int epoch)
{
    if (c_sf_protocol) {
        __syncwarp(); /* the lanes' writes of x come before lane 0's release (cumulative) */
        if ((threadIdx.x & 31) == 0)
            asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(done + i), "r"(epoch) : "memory");
        return;
    }
    __threadfence();
    __syncwarp();
    if ((threadIdx.x & 31) == 0) atomicExch(done + i, epoch);
}

/* Load a dependency's x: in the sync-free schedule bypass L1 (written by another SM). */
template <bool SF> __device__ __forceinline__ double ld_dep(const double *p)
{
    return SF ? __ldcg(p) : *p;
}

#ifdef ILDL_SOLVE_TRACE
__shared__ int s_trace_spun; /* the no-staging path: this tile's first poll found a value unset */
#endif
/* Protocol 2: lane c < m returns p[c] once it is set (all lanes wait for all m values). */
__device__ __forceinline__ double sf_poll_values(const double *p, int m)
{
    int c = threadIdx.x & 31;
    unsigned ns = 8;
    double v = 0.0;
    for (;;) {
        int ok = 1;
        if (c < m) {
            long long b;
            asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(b) : "l"(p + c) : "memory");
            v = __longlong_as_double(b);
            ok = b != SF_UNSET;
#ifdef SF_DIAG_NOWAIT /* experiments only: the sweeps timed without waiting (wrong results) */
            ok = 1;
#endif
        }
        if (__all_sync(0xffffffffu, ok)) break;
#ifdef ILDL_SOLVE_TRACE
        if (c == 0) s_trace_spun = 1;
#endif
        __nanosleep(ns);
        if (ns < c_sf_backoff) ns *= 2;
    }
    return c < m ? v : 0.0;
}

/* A dependency's m values p[0..m) for lane c < m (0 beyond): after its flag (protocols 0, 1)
 * or polled (2) in the sync-free schedule, final already in the level schedule. */
template <bool SF>
__device__ __forceinline__ double dep_values(const double *p, int m, int32_t k, const int *done, int epoch)
{
    int c = threadIdx.x & 31;
    if (SF && c_sf_protocol == 2) return sf_poll_values(p, m);
    if (SF) sf_wait(done, k, epoch);
    return c < m ? ld_dep<SF>(p + c) : 0.0;
}

/* Store a row's value: relaxed in the sync-free schedule (others poll it under protocol 2). */
template <bool SF> __device__ __forceinline__ void st_row(double *p, double v)
{
    if (SF)
        asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(__double_as_longlong(v)) : "memory");
    else
        *p = v;
}

#ifdef ILDL_SOLVE_TRACE
/* Experiments only (-DILDL_SOLVE_TRACE): per ticket and direction, the claim time, the last
 * dependency wait (time << 24 | row), the publish time, in globaltimer ns (solve_set_trace). */
__device__ unsigned long long *g_sf_trace;
__shared__ unsigned long long s_trace_last, s_trace_sum[4], s_trace_mark[2]; /* stage, wait, compute ns;
                                                                        * tiles; groups summed, V_ii applied */
__device__ __forceinline__ unsigned long long trace_now()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* the time once v is computed */
__device__ __forceinline__ unsigned long long trace_after(double v)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : "d"(v));
    return t;
}
#define TRACE_WAITED(dep)                                                                          \
    do {                                                                                           \
        if ((threadIdx.x & 31) == 0)                                                               \
            atomicMax(&s_trace_last, ((trace_now() & ((1ULL << 40) - 1)) << 24) | (unsigned)(dep)); \
    } while (0)
#define TRACE_T(v) unsigned long long v = trace_now()
#define TRACE_MARK(k, v)                                                                           \
    do {                                                                                           \
        if (threadIdx.x == 0) s_trace_mark[k] = trace_after(v);                                    \
    } while (0)
#define TRACE_ADD(k, ns)                                                                           \
    do {                                                                                           \
        if ((threadIdx.x & 31) == 0) atomicAdd(&s_trace_sum[k], (ns));                             \
    } while (0)
/* The no-staging path, a tile's dependency: before the wait (the time; s_trace_spun cleared),
 * and once xd is in: its time in the wait; if the poll spun, the row's last spun wait (its end
 * and dependency, s_trace_last). */
__device__ __forceinline__ unsigned long long trace_tile_begin()
{
    if ((threadIdx.x & 31) == 0) s_trace_spun = 0;
    __syncwarp();
    return trace_now();
}
__device__ __forceinline__ void trace_tile_wait(unsigned long long tw0, double xd, int32_t dep)
{
    unsigned long long tw1 = trace_after(xd);
    __syncwarp();
    if ((threadIdx.x & 31) == 0) {
        s_trace_sum[1] += tw1 - tw0;
        s_trace_sum[3] += 1;
        if (s_trace_spun) {
            s_trace_sum[0] += 1;
            s_trace_sum[2] += tw1 - tw0;
            s_trace_last = ((tw1 & ((1ULL << 40) - 1)) << 24) | (unsigned)dep;
        }
    }
    __syncwarp();
}
/* A row's records start (the claim time; sums reset) and end (written after the publish). */
__device__ __forceinline__ unsigned long long trace_row_begin()
{
    if (threadIdx.x == 0) {
        s_trace_last = 0;
        for (int k = 0; k < 4; k++) s_trace_sum[k] = 0;
        s_trace_mark[0] = s_trace_mark[1] = 0;
    }
    return trace_now();
}
__device__ __forceinline__ void trace_row_end(int dir, int32_t nb, int t, int32_t i, unsigned long long t_claim)
{
    if (threadIdx.x != 0 || !g_sf_trace) return;
    unsigned long long *r = g_sf_trace + ((size_t)dir * nb + t) * 10;
    r[0] = t_claim;
    r[1] = s_trace_last;
    r[2] = trace_now();
    r[3] = (unsigned long long)i;
    for (int k = 0; k < 4; k++) r[4 + k] = s_trace_sum[k];
    r[8] = s_trace_mark[0];
    r[9] = s_trace_mark[1];
}
/* The level position of ticket t's row (the trace's records are per position). */
__device__ __forceinline__ int trace_pos(const int2 *items, int t) { return items[t].x; }
#else
__device__ __forceinline__ int trace_pos(const int2 *, int) { return 0; }
__device__ __forceinline__ unsigned long long trace_tile_begin() { return 0; }
__device__ __forceinline__ void trace_tile_wait(unsigned long long, double, int32_t) {}
__device__ __forceinline__ unsigned long long trace_row_begin() { return 0; }
__device__ __forceinline__ void trace_row_end(int, int32_t, int, int32_t, unsigned long long) {}
#define TRACE_WAITED(dep) ((void)0)
#define TRACE_T(v) ((void)0)
#define TRACE_MARK(k, v) ((void)0)
#define TRACE_ADD(k, ns) ((void)0)
#endif

#define SLD 33 /* padded leading dimension of a staged tile: no bank conflicts either way */
#define STILE (LD * SLD)

/* Tiles whose partial sums a block keeps before combining them (a row with more tiles is done
 * in several groups, a barrier each). Few, so that more blocks fit an SM: the tiles come in the
 * order their dependencies are solved (fwd_seq, bwd_seq), so the late ones are in the last
 * group anyway. (Before that order, the backward sweep kept 64: its late tiles were at the
 * start of a row, and 16 made stokes64's backward sweep 4.4 -> 8.4 ms; perf-notes §13.) */
#ifndef PARTS_FORWARD
#define PARTS_FORWARD 8
#endif
#ifndef PARTS_BACKWARD
#define PARTS_BACKWARD 8
#endif

/* What a warp needs to know about one off-diagonal tile of the row being solved, gathered by
 * the whole block at once before any warp waits: staging then costs one dependent load (the
 * values) instead of three (tile index, offset and format, values). */
template <int P, bool L = false> struct tile_meta {
    int64_t off[P];
    int32_t nnz[P], dep[P], dep0[P], depm[P];
    uint8_t sparse[P], wc[P]; /* wc: a sparse tile's chunk code, W = 32 >> wc (ildl_sparse_chunk_code) */
    /* L (the kernels without staging tiles): a sparse tile's entries per output (lane_cnt_*),
     * and forward where its column-by-column copy starts (lane_off) */
    uint8_t cnt[L ? P : 1][LD];
    int64_t loff[L ? P : 1];
};

/* Fill meta for `count` tiles starting at position `first` of block column i's list (fwd_seq)
 * for the forward solve, of block row i's (bwd_seq) for the backward solve; dep is the other
 * block (row k forward, column j backward). One 16-byte load per tile (k_solve_meta packed it
 * after the factorization). Block-wide, ends with a barrier. */
template <bool FORWARD, int P, bool L>
__device__ __forceinline__ void gather_meta(const dev_tiles &T, int64_t first, int count, tile_meta<P, L> *m)
{
    if constexpr (L) { /* the counts as 4-byte words, coalesced */
        const uint32_t *src = reinterpret_cast<const uint32_t *>((FORWARD ? T.lane_cnt_f : T.lane_cnt_b) + first * LD);
        uint32_t *dst = reinterpret_cast<uint32_t *>(&m->cnt[0][0]);
        for (int k = threadIdx.x; k < count * (LD / 4); k += blockDim.x) dst[k] = src[k];
        if (FORWARD)
            for (int k = threadIdx.x; k < count; k += blockDim.x) m->loff[k] = T.lane_off[first + k];
    }
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        solve_meta x = (FORWARD ? T.fwd_meta : T.bwd_meta)[first + k];
        m->off[k] = x.a & ((1LL << SOLVE_META_OFF_BITS) - 1);
        m->nnz[k] = (int32_t)((x.a >> SOLVE_META_OFF_BITS) & 2047);
        m->sparse[k] = (uint8_t)((x.a >> (SOLVE_META_OFF_BITS + 11)) & 1);
        m->depm[k] = (int32_t)((x.a >> (SOLVE_META_OFF_BITS + 12)) & 63);
        m->wc[k] = (uint8_t)((x.a >> (SOLVE_META_OFF_BITS + 18)) & 3);
        m->dep[k] = x.dep;
        m->dep0[k] = x.dep0;
    }
    __syncthreads();
}

/* Pack the solves' view of the tile at every position of fwd_seq (FORWARD) or bwd_seq, after a
 * factorization: one thread per position. */
template <bool FORWARD> __global__ void k_solve_meta(dev_tiles T)
{
    int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= T.ntiles) return;
    int64_t t = FORWARD ? T.fwd_seq[q] : T.bwd_seq[q];
    int32_t d = FORWARD ? T.row[t] : T.col[t];
    int32_t b0 = T.bstart[d];
    long long depm = T.bstart[d + 1] - b0, sparse = T.format[t] == ILDL_TILE_SPARSE;
    long long wc = sparse ? ildl_sparse_chunk_code(T.nnz[t], T.idx + T.off[t], FORWARD) : 0;
    solve_meta x;
    x.a = (long long)T.off[t] | ((long long)T.nnz[t] << SOLVE_META_OFF_BITS) |
          (sparse << (SOLVE_META_OFF_BITS + 11)) | (depm << (SOLVE_META_OFF_BITS + 12)) |
          (wc << (SOLVE_META_OFF_BITS + 18));
    x.dep = d;
    x.dep0 = b0;
    (FORWARD ? T.fwd_meta : T.bwd_meta)[q] = x;
}

/* The sync-free items' records (sf_rowrec) of one direction, one thread per item. */
template <bool FORWARD> __global__ void k_sf_records(dev_tiles T)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (FORWARD ? T.sf_nitems_f : T.sf_nitems_b)) return;
    int2 item = (FORWARD ? T.sf_items_f : T.sf_items_b)[t];
    int32_t i = T.level_rows[item.x];
    sf_rowrec r;
    r.i = i;
    r.b0 = T.bstart[i];
    r.u0 = T.off[T.row_ptr[i]];
    r.q0 = FORWARD ? T.col_ptr[i] : T.row_ptr[i] + 1;
    r.nq = (int32_t)((FORWARD ? T.fwd_end[i] : T.bwd_end[i]) - r.q0); /* k_skip_empty */
    r.mc = (T.bstart[i + 1] - r.b0) | ((item.y + 1) << 8);
    (FORWARD ? T.sf_rec_f : T.sf_rec_b)[t] = r;
}

/* Block row i's tiles in the sweep's order (fwd_seq0 or bwd_seq0 over the row's range) into
 * fwd_seq / bwd_seq with the empty ones (sparse, every entry dropped by the factorization)
 * behind the others, whose order is kept; fwd_end[i] / bwd_end[i]: where the empty ones begin.
 * An empty tile only adds +0 to its row's sums (the CPU reference adds nothing for it), so a
 * sweep that stops at the end gives the same bits for finite values, without the tile's wait
 * for its dependency or its loads (stokes64: 5% of the tiles, perf-notes §73). A split row
 * (sf_scr_* >= 0) keeps every tile where it is: its items are planned by its tile count.
 * skip == 0 keeps every row whole (experiments: ILDL_SKIP_EMPTY=0). One warp per row. */
template <bool FORWARD> __global__ void k_skip_empty(dev_tiles T, int skip)
{
    const unsigned FULL = 0xffffffffu;
    int32_t i = (int32_t)(((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    if (i >= T.nb) return;
    int lane = threadIdx.x & 31;
    int64_t q0 = FORWARD ? T.col_ptr[i] : T.row_ptr[i] + 1, qe = FORWARD ? T.col_diag[i] : T.row_ptr[i + 1];
    const int64_t *src = FORWARD ? T.fwd_seq0 : T.bwd_seq0;
    int64_t *dst = FORWARD ? T.fwd_seq : T.bwd_seq, *end = FORWARD ? T.fwd_end : T.bwd_end;
    const bool whole = !skip || (FORWARD ? T.sf_scr_f : T.sf_scr_b)[i] >= 0;
    int64_t w = q0;
    for (int pass = 0; pass < 2; pass++) { /* the non-empty tiles, then the empty ones */
        for (int64_t b = q0; b < qe; b += 32) {
            int64_t q = b + lane, t = q < qe ? src[q] : 0;
            bool take = q < qe && (whole || (T.nnz[t] != 0) == (pass == 0));
            unsigned m = __ballot_sync(FULL, take);
            if (take) dst[w + __popc(m & ((1u << lane) - 1))] = t;
            w += __popc(m);
        }
        if (pass == 0 && lane == 0) end[i] = w;
        if (whole) break;
    }
}

void solve_meta_launch(const dev_tiles &T, int skip_empty, cudaStream_t s)
{
    unsigned rgrid = (unsigned)(((int64_t)T.nb * 32 + 255) / 256);
    k_skip_empty<true><<<rgrid, 256, 0, s>>>(T, skip_empty);
    k_skip_empty<false><<<rgrid, 256, 0, s>>>(T, skip_empty);
    unsigned grid = (unsigned)((T.ntiles + 255) / 256);
    k_solve_meta<true><<<grid, 256, 0, s>>>(T);
    k_solve_meta<false><<<grid, 256, 0, s>>>(T);
    if (T.sf_rec_f) k_sf_records<true><<<(unsigned)((T.sf_nitems_f + 255) / 256), 256, 0, s>>>(T);
    if (T.sf_rec_b) k_sf_records<false><<<(unsigned)((T.sf_nitems_b + 255) / 256), 256, 0, s>>>(T);
}

/* Stored factor value p in the staging type S: float exactly when the factor is stored in float
 * (solve_launch picks S by T.val32), so the choice costs no branch per load. */
template <typename S> __device__ __forceinline__ S stage_val(const dev_tiles &T, int64_t p);
template <> __device__ __forceinline__ double stage_val<double>(const dev_tiles &T, int64_t p) { return T.val[p]; }
template <> __device__ __forceinline__ float stage_val<float>(const dev_tiles &T, int64_t p) { return T.val32[p]; }

/* ------------------------------------------------------------ lanes (solves without staging) */

/* Entries of the sparse tile at each position of fwd_seq in the forward copy (0 for a dense
 * one): the sizes that lane_off sums. One thread per position. */
__global__ void k_lane_sizes(dev_tiles T)
{
    int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= T.ntiles) return;
    int64_t t = T.fwd_seq[q];
    T.lane_size[q] = T.format[t] == ILDL_TILE_SPARSE ? T.nnz[t] : 0;
}

template <typename S> __device__ __forceinline__ void lane_store(const dev_tiles &T, int64_t p, S v);
template <> __device__ __forceinline__ void lane_store<double>(const dev_tiles &T, int64_t p, double v) { T.lane_val[p] = v; }
template <> __device__ __forceinline__ void lane_store<float>(const dev_tiles &T, int64_t p, float v) { T.lane_val32[p] = v; }

/* The lanes of the sparse tile at each position of fwd_seq (FORWARD) or bwd_seq, one warp per
 * position (0 for a dense tile), and forward its entries column by column. A tile of chunk
 * width 32 (ildl_sparse_chunk_code 0): lane o's byte is output o's entries (columns forward,
 * rows backward). Narrower: lane L's byte is the entries of the tile's L-th chunk (in the order
 * output, then range: the order of the forward copy and of the stored tile) in bits 0-4 and the
 * chunks of output L in bits 5-7 (at most 4 of 8 inputs each; a chunk holds at most 16). The
 * stored entries are in row-major order, so a column's entries keep their rows ascending: each
 * lane takes one entry of a batch, and its place is its column's next free place plus its rank
 * among the batch's entries of the same column. */
#define LANE_WARPS 8
template <bool FORWARD, typename S> __global__ void __launch_bounds__(LANE_WARPS * 32) k_solve_lanes(dev_tiles T)
{
    const unsigned FULL = 0xffffffffu;
    __shared__ int s_at[LANE_WARPS][LD];
    __shared__ int s_rc[LANE_WARPS][4][LD]; /* entries per range (of 8 inputs) and output */
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int64_t q = (int64_t)blockIdx.x * LANE_WARPS + w;
    if (q >= T.ntiles) return; /* uniform per warp */
    int64_t t = FORWARD ? T.fwd_seq[q] : T.bwd_seq[q];
    uint8_t *cnt = (FORWARD ? T.lane_cnt_f : T.lane_cnt_b) + q * LD;
    if (T.format[t] != ILDL_TILE_SPARSE) {
        cnt[lane] = 0;
        return;
    }
    const int64_t off = T.off[t];
    const int nz = (int)T.nnz[t];
    /* the chunk code k_solve_meta packed (solve_meta_launch runs first, on the same stream);
     * backward always 0: ildl_sparse_chunk_code */
    const int wc = FORWARD ? (int)((T.fwd_meta[q].a >> (SOLVE_META_OFF_BITS + 18)) & 3) : 0;
    s_at[w][lane] = 0;
    if constexpr (FORWARD) {
#pragma unroll
        for (int g = 0; g < 4; g++) s_rc[w][g][lane] = 0;
    }
    __syncwarp();
    for (int e = lane; e < nz; e += LD) {
        int ix = T.idx[off + e];
        int o = FORWARD ? (ix & 31) : (ix >> 5);
        if (!FORWARD) T.lane_col[off + e] = (uint8_t)(ix & 31);
        atomicAdd(&s_at[w][o], 1);
        if constexpr (FORWARD) atomicAdd(&s_rc[w][(ix >> 5) >> 3][o], 1);
    }
    __syncwarp();
    int c = s_at[w][lane], start = c;
    if (wc == 0) {
        cnt[lane] = (uint8_t)c; /* at most LD entries per row or column */
    } else { /* chunks of 32 >> wc inputs: 2 or 4 ranges of 8 each */
        int per = 4 >> wc, nch = 0, len[4]; /* ranges of 8 per chunk */
#pragma unroll
        for (int k = 0; k < 4; k++) {
            len[k] = 0;
#pragma unroll
            for (int g = 0; g < 4; g++)
                if (g / per == k) len[k] += s_rc[w][g][lane];
            nch += len[k] > 0;
        }
        int first = nch; /* output lane's first chunk: the chunks of the outputs before it */
#pragma unroll
        for (int d = 1; d < LD; d <<= 1) {
            int y = __shfl_up_sync(FULL, first, d);
            if (lane >= d) first += y;
        }
        first -= nch;
        __syncwarp();
        s_at[w][lane] = 0; /* now the chunks' entries, by chunk */
        __syncwarp();
        for (int k = 0, j = 0; k < 4; k++)
            if (len[k] > 0) s_at[w][first + j++] = len[k];
        __syncwarp();
        cnt[lane] = (uint8_t)(s_at[w][lane] | (nch << 5));
        __syncwarp();
        s_at[w][lane] = 0;
        __syncwarp();
    }
    if constexpr (FORWARD) { /* the copy, column by column */
#pragma unroll
    for (int d = 1; d < LD; d <<= 1) {
        int y = __shfl_up_sync(FULL, start, d);
        if (lane >= d) start += y;
    }
    s_at[w][lane] = start - c; /* column lane's first place */
    __syncwarp();
    const int64_t base = T.lane_off[q];
    for (int e0 = 0; e0 < nz; e0 += LD) {
        int e = e0 + lane;
        bool act = e < nz;
        int ix = act ? T.idx[off + e] : 0;
        int col = act ? (ix & 31) : LD + lane; /* idle lanes in groups of their own */
        unsigned grp = __match_any_sync(FULL, col);
        int rank = __popc(grp & ((1u << lane) - 1u));
        int at = act ? s_at[w][col] + rank : 0;
        __syncwarp();
        if (act && rank == 0) s_at[w][col] += __popc(grp);
        __syncwarp();
        if (act) {
            lane_store<S>(T, base + at, stage_val<S>(T, off + e));
            T.lane_row[base + at] = (uint8_t)(ix >> 5);
        }
    }
    }
}

/* The solves' packed V_ii (vii_pk or vii_pk32, whichever the solves read) and a pointer to block
 * row i's. */
template <typename S> __device__ __forceinline__ S *vii_packed(const dev_tiles &T, int32_t i);
template <> __device__ __forceinline__ double *vii_packed<double>(const dev_tiles &T, int32_t i) { return T.vii_pk + T.vii_off[i]; }
template <> __device__ __forceinline__ float *vii_packed<float>(const dev_tiles &T, int32_t i) { return T.vii_pk32 + T.vii_off[i]; }

/* V_ii's strict upper triangle from the diagonal tile (mi x mi, row-major) into the packed copy,
 * one warp per block row, row l's entries by lanes. */
template <typename S> __global__ void __launch_bounds__(LANE_WARPS * 32) k_vii_pack(dev_tiles T)
{
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int32_t i = (int32_t)blockIdx.x * LANE_WARPS + w;
    if (i >= T.nb) return; /* uniform per warp */
    int mi = dev_bsize(T, i);
    const int64_t u0 = T.off[T.row_ptr[i]];
    S *dst = vii_packed<S>(T, i);
    for (int l = 0; l + 1 < mi; l++) {
        int c = l + 1 + lane;
        if (c < mi) dst[vii_pos(l, mi) + c - l - 1] = stage_val<S>(T, u0 + (int64_t)l * mi + c);
    }
}

/* The scan's scratch bytes for n positions (allocated once at setup). */
size_t solve_lanes_tmp_bytes(int64_t n)
{
    size_t b = 0;
    cub::DeviceScan::ExclusiveSum(NULL, b, (const int64_t *)NULL, (int64_t *)NULL, (int64_t)n);
    return b;
}

/* Rebuild the lanes from the factor just computed (or just rounded to single), on stream s. */
cudaError_t solve_lanes_launch(const dev_tiles &T, cudaStream_t s)
{
    if (!T.lane_cnt_f || T.ntiles == 0) return cudaSuccess;
    k_lane_sizes<<<(unsigned)((T.ntiles + 255) / 256), 256, 0, s>>>(T);
    size_t b = T.lane_tmp_bytes;
    cudaError_t e = cub::DeviceScan::ExclusiveSum(T.lane_tmp, b, (const int64_t *)T.lane_size, T.lane_off,
                                                  (int64_t)T.ntiles, s);
    if (e != cudaSuccess) return e;
    unsigned grid = (unsigned)((T.ntiles + LANE_WARPS - 1) / LANE_WARPS);
    if (T.val32) k_solve_lanes<true, float><<<grid, LANE_WARPS * 32, 0, s>>>(T);
    else k_solve_lanes<true, double><<<grid, LANE_WARPS * 32, 0, s>>>(T);
    k_solve_lanes<false, double><<<grid, LANE_WARPS * 32, 0, s>>>(T);
    unsigned vgrid = (unsigned)((T.nb + LANE_WARPS - 1) / LANE_WARPS);
    if (T.val32) k_vii_pack<float><<<vgrid, LANE_WARPS * 32, 0, s>>>(T);
    else k_vii_pack<double><<<vgrid, LANE_WARPS * 32, 0, s>>>(T);
    return cudaGetLastError();
}

/* Stage tile k of meta (mr x mc) into us (ld SLD) as dense, by one warp; sparse tiles get
 * zeros where nothing is stored. Returns 1 for a sparse tile. */
template <int P, typename S>
__device__ __forceinline__ int stage_tile(const dev_tiles &T, const tile_meta<P> *m, int k, int mr, int mc,
                                          S *us)
{
    int lane = threadIdx.x & 31;
    const int64_t v0 = m->off[k];
    int sparse = m->sparse[k];
    __syncwarp();
    /* the loads of STAGE_BATCH rows (entries) are issued before any is stored: one memory
     * latency per batch instead of a few per tile row */
    constexpr int STAGE_BATCH = 16;
    if (sparse) {
        for (int r = 0; r < mr; r++)
            if (lane < mc) us[r * SLD + lane] = 0;
        __syncwarp();
        const uint16_t *ix = T.idx + v0;
        int nz = m->nnz[k];
        for (int e0 = 0; e0 < nz; e0 += STAGE_BATCH * LD) {
            S v[STAGE_BATCH];
            int p[STAGE_BATCH];
#pragma unroll
            for (int b = 0; b < STAGE_BATCH; b++) {
                int e = e0 + b * LD + lane;
                p[b] = e < nz ? ix[e] : -1;
                v[b] = e < nz ? stage_val<S>(T, v0 + e) : (S)0;
            }
#pragma unroll
            for (int b = 0; b < STAGE_BATCH; b++)
                if (p[b] >= 0) us[(p[b] >> 5) * SLD + (p[b] & 31)] = v[b];
        }
    } else {
        for (int r0 = 0; r0 < mr; r0 += STAGE_BATCH) {
            S v[STAGE_BATCH];
#pragma unroll
            for (int b = 0; b < STAGE_BATCH; b++)
                v[b] = (r0 + b < mr && lane < mc) ? stage_val<S>(T, v0 + (int64_t)(r0 + b) * mc + lane) : (S)0;
#pragma unroll
            for (int b = 0; b < STAGE_BATCH; b++)
                if (r0 + b < mr && lane < mc) us[(r0 + b) * SLD + lane] = v[b];
        }
    }
    __syncwarp();
    return sparse;
}

/* Sparse tiles of at most SMALL_SPARSE entries skip the dense staging: each lane keeps its
 * entries in registers (loaded before the wait) and, once x is there, forms their products;
 * the products of one output index are then added by its lane in entry order, which is the
 * CPU's order (s_o starts at 0 and adds v*x per stored entry, idx ascending). Less work than
 * the dense loop over the whole tile (a sparse tile of the 1M control problems has ~40
 * entries in ~25x25), and no zero fill. c_small_sparse = 0 turns it off (experiments). */
#ifndef SMALL_SPARSE_CHUNKS
#define SMALL_SPARSE_CHUNKS 2
#endif
#define SMALL_SPARSE (SMALL_SPARSE_CHUNKS * LD)
__constant__ int c_small_sparse;

template <typename S> struct sparse_regs {
    S v[SMALL_SPARSE_CHUNKS];
    uint16_t ix[SMALL_SPARSE_CHUNKS];
};

/* Entries lane, lane + 32, ... of the sparse tile k of meta: values and local indices. */
template <int P, typename S>
__device__ __forceinline__ sparse_regs<S> load_small_sparse(const dev_tiles &T, const tile_meta<P> *m, int k)
{
    int lane = threadIdx.x & 31, nz = m->nnz[k];
    const int64_t v0 = m->off[k];
    sparse_regs<S> e;
#pragma unroll
    for (int b = 0; b < SMALL_SPARSE_CHUNKS; b++) {
        int q = b * LD + lane;
        e.v[b] = q < nz ? stage_val<S>(T, v0 + q) : (S)0;
        e.ix[b] = q < nz ? T.idx[v0 + q] : (uint16_t)0;
    }
    return e;
}

/* An output's running sum in chunks (ildl_sparse_chunk_code): s the finished chunks' sum, ch the
 * current chunk's, g its range of inputs. */
struct chunked_sum {
    double s, ch;
    int g;
};

/* Add the products v_e * xd(in_e) of the cnt entries e held one per lane to their outputs'
 * chunked sums, for each output o in entry order: forward o = column (idx & 31), in = row
 * (idx >> 5); backward the other way round; a product whose input lies in the next range of
 * 1 << shift inputs closes the chunk. xd: lane l holds the dependency's x(l). scratch: 32 x 32
 * lane numbers and 32 counts. */
template <bool FORWARD, typename S>
__device__ __forceinline__ void add_sparse_chunk(chunked_sum &a, S v, uint16_t ix, int cnt, double xd, int shift,
                                                 uint8_t *scratch)
{
    const unsigned FULL = 0xffffffffu;
    int lane = threadIdx.x & 31;
    int act = lane < cnt;
    int o = act ? (FORWARD ? (ix & 31) : (ix >> 5)) : LD; /* idle lanes group apart */
    int in = FORWARD ? (ix >> 5) : (ix & 31);
    double p = (double)v * __shfl_sync(FULL, xd, in);
    unsigned grp = __match_any_sync(FULL, o);
    int rank = __popc(grp & ((1u << lane) - 1u));
    int *count = reinterpret_cast<int *>(scratch + LD * LD);
    __syncwarp(); /* the previous user of scratch is done */
    count[lane] = 0;
    __syncwarp();
    if (act) {
        scratch[o * LD + rank] = (uint8_t)lane;
        if (rank == 0) count[o] = __popc(grp);
    }
    __syncwarp();
    int n = count[lane];
    int nmax = __reduce_max_sync(FULL, n);
    for (int k = 0; k < nmax; k++) {
        int from = k < n ? scratch[lane * LD + k] : 0;
        double pk = __shfl_sync(FULL, p, from);
        int gk = FORWARD ? __shfl_sync(FULL, in, from) >> shift : 0; /* backward: one chunk */
        if (k < n) {
            if (gk != a.g) a.s += a.ch, a.ch = 0.0, a.g = gk;
            a.ch += pk;
        }
    }
}

/* The partial sums of a small sparse tile e (nz entries) after its dependency's x arrived. */
template <bool FORWARD, typename S>
__device__ __forceinline__ double small_sparse_sum(const sparse_regs<S> &e, int nz, double xd, int wc, S *us)
{
    uint8_t *scratch = reinterpret_cast<uint8_t *>(us);
    chunked_sum a = {0.0, 0.0, 0};
#pragma unroll
    for (int b = 0; b < SMALL_SPARSE_CHUNKS; b++)
        if (nz > b * LD) add_sparse_chunk<FORWARD, S>(a, e.v[b], e.ix[b], nz - b * LD, xd, 5 - wc, scratch);
    return a.s + a.ch;
}

/* The solves without staging tiles (NS: chosen per setup for wide levels, sf_nostage_default in
 * backend.cu). A sparse tile is summed by lanes, each lane its own output's entries
 * (sparse_sum_lanes, over the counts and the forward copy that solve_lanes_launch builds after
 * each factorization), a dense one straight from global memory (forward: lane c reads column
 * c, coalesced; backward: lane r reads row r, through L1). The same products and additions in
 * the same order as the staged loops. */
/* Ask L2 for count values from p: one 128-byte line per lane and pass, no registers held
 * across a wait. A dense tile's values (prefetch_dense), which a tile without staging reads
 * after its dependency's wait; the backward sweep's packed V_ii. */
template <typename S> __device__ __forceinline__ const S *stage_ptr(const dev_tiles &T, int64_t p);
template <typename S> __device__ __forceinline__ void prefetch_l2_lines(const S *p, int count)
{
    constexpr int per_line = 128 / sizeof(S);
    for (int e = (threadIdx.x & 31) * per_line; e < count; e += LD * per_line)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(p + e));
}
/* The same into L1 (p's first and last elements' lines included whatever p's alignment). */
template <typename S> __device__ __forceinline__ void prefetch_l1_lines(const S *p, int count)
{
    if (count <= 0) return;
    const char *a = (const char *)p, *z = (const char *)(p + count - 1);
    const char *a0 = (const char *)((uintptr_t)a & ~(uintptr_t)127);
    for (const char *l = a0 + (threadIdx.x & 31) * 128; l <= z; l += LD * 128)
        asm volatile("prefetch.global.L1 [%0];" ::"l"(l));
}
template <typename S> __device__ __forceinline__ void prefetch_dense(const dev_tiles &T, int64_t v0, int count)
{
    prefetch_l2_lines<S>(stage_ptr<S>(T, v0), count);
}

template <bool FORWARD, typename S>
__device__ __forceinline__ double dense_global(const dev_tiles &T, int64_t v0, int mdep, int mi, double xd)
{
    int o = threadIdx.x & 31;
    double s = 0.0;
#pragma unroll
    for (int l = 0; l < LD; l++) {
        double xl = __shfl_sync(0xffffffffu, xd, l);
        bool on = l < mdep && o < mi;
        /* forward: U(l, o) of the mdep x mi tile; backward: U(o, l) of the mi x mdep tile */
        int64_t at = FORWARD ? (int64_t)l * mi + o : (int64_t)o * mdep + l;
        double u = on ? (double)stage_val<S>(T, v0 + at) : 0.0;
        if (on) s += u * xl;
    }
    return s;
}
/* A warp's share of a solve block's shared memory, in elements of S: its staging tile, or (NS)
 * nothing. */
template <typename S, bool NS> __host__ __device__ constexpr int warp_stage()
{
    return NS ? 0 : STILE;
}

/* The solves' copy of stored value p in the staging type (lane_val or lane_val32, as
 * stage_ptr), and the value itself. */
template <typename S> __device__ __forceinline__ const S *lane_ptr(const dev_tiles &T, int64_t p);
template <> __device__ __forceinline__ const double *lane_ptr<double>(const dev_tiles &T, int64_t p) { return T.lane_val + p; }
template <> __device__ __forceinline__ const float *lane_ptr<float>(const dev_tiles &T, int64_t p) { return T.lane_val32 + p; }
template <typename S> __device__ __forceinline__ S lane_val(const dev_tiles &T, int64_t p) { return *lane_ptr<S>(T, p); }

/* A sparse tile's sums without staging, each lane adding its own output's entries: lane o's
 * entries are cnt[o] consecutive ones, in the CPU's order (forward: column o of the
 * column-by-column copy, rows ascending; backward: row o of the stored tile, columns
 * ascending), so the sum s_o = 0, s_o += v * x(in) per entry has the CPU's bits. The warp
 * steps as often as the tile's longest output has entries (~100 instructions a tile where the
 * lane table of add_sparse_chunk took ~500, perf-notes §52). Forward, a tile of chunk width 8 or
 * 16 (ildl_sparse_chunk_code) is summed by chunks instead, lane L its L-th chunk, and lane o then
 * adds output o's chunks in order: control70's forward steps per tile 11.2 -> 6.3 (perf-notes
 * §65). The first LANE_PRE_FORWARD (8: a chunk of width 8 needs no more) or LANE_PRE_BACKWARD
 * (6) steps' entries are loaded before the dependency's wait (perf-notes §53, §57, §59, §65). Forward, a lane past its count adds v * x = (+0) * x = +-0
 * without a predicate: for finite x that changes no bit (s starts at +0 and never becomes -0),
 * the condition under which the staged loops skip exact zeros too. Predicated, the compiler
 * adds and selects (two FSEL and moves a step) and the forward sweep is 2-7% slower (perf-notes
 * §59). Backward the predicate stays: without it that sweep gained nothing. */
#ifndef LANE_PRE_FORWARD
#define LANE_PRE_FORWARD 8
#endif
#ifndef LANE_PRE_BACKWARD
#define LANE_PRE_BACKWARD 6
#endif
/* Ask L1 for the lines of a lane's entries from entry p on (its value's and its row's or
 * column's), before the dependency's wait: the steps past LANE_PRE then load from L1 after it
 * instead of making a second round trip to memory (perf-notes §59: forward sweep -0.4 to -3%). */
template <bool FORWARD, typename S> __device__ __forceinline__ void prefetch_lane_tail(const dev_tiles &T, int64_t p)
{
    const void *v = FORWARD ? (const void *)lane_ptr<S>(T, p) : (const void *)stage_ptr<S>(T, p);
    const void *r = FORWARD ? (const void *)(T.lane_row + p) : (const void *)(T.lane_col + p);
    asm volatile("prefetch.global.L1 [%0];" ::"l"(v));
    asm volatile("prefetch.global.L1 [%0];" ::"l"(r));
}

template <bool FORWARD, bool SF, int P, typename S>
__device__ __forceinline__ double sparse_sum_lanes(const dev_tiles &T, const tile_meta<P, true> *m, int q,
                                                   const double *x, const int *done, int epoch)
{
    const unsigned FULL = 0xffffffffu;
    /* k_solve_lanes' byte: lane o's entries (width 32), or its chunk's entries and output o's
     * chunks (narrower; the same loop then sums chunk o, and the chunks are added after it) */
    const int wcq = FORWARD ? m->wc[q] : 0; /* uniform; backward always 0 (ildl_sparse_chunk_code) */
    const bool split = wcq != 0;
    int o = threadIdx.x & 31, b = m->cnt[q][o];
    int cnt = split ? (b & 31) : b, nch = split ? (b >> 5) : 0;
    int start = cnt | (nch << 16);
#pragma unroll
    for (int d = 1; d < LD; d <<= 1) { /* inclusive prefix sum of the counts and the chunks */
        int y = __shfl_up_sync(FULL, start, d);
        if (o >= d) start += y;
    }
    start -= cnt | (nch << 16);
    const int first = start >> 16; /* output o's first chunk's lane */
    start &= 0xffff;
    int kmax = __reduce_max_sync(FULL, (unsigned)cnt);
    constexpr int LANE_PRE = FORWARD ? LANE_PRE_FORWARD : LANE_PRE_BACKWARD;
    const int64_t e0 = (FORWARD ? m->loff[q] : m->off[q]) + start;
    S v[LANE_PRE];
    int in[LANE_PRE];
#pragma unroll
    for (int k = 0; k < LANE_PRE; k++) {
        v[k] = k < cnt ? (FORWARD ? lane_val<S>(T, e0 + k) : stage_val<S>(T, e0 + k)) : (S)0;
        in[k] = k < cnt ? (int)(FORWARD ? T.lane_row : T.lane_col)[e0 + k] : 0;
    }
    if (cnt > LANE_PRE) prefetch_lane_tail<FORWARD, S>(T, e0 + LANE_PRE);
    unsigned long long tw0 = trace_tile_begin();
    double xd = dep_values<SF>(x + m->dep0[q], m->depm[q], m->dep[q], done, epoch);
    if (SF) trace_tile_wait(tw0, xd, m->dep[q]);
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < LANE_PRE; k++) {
        double p = (double)v[k] * __shfl_sync(FULL, xd, in[k]);
        if (FORWARD || k < cnt) s += p; /* forward: unpredicated, see above */
    }
    for (int k = LANE_PRE; k < kmax; k++) {
        S vk = k < cnt ? (FORWARD ? lane_val<S>(T, e0 + k) : stage_val<S>(T, e0 + k)) : (S)0;
        int ik = k < cnt ? (int)(FORWARD ? T.lane_row : T.lane_col)[e0 + k] : 0;
        double p = (double)vk * __shfl_sync(FULL, xd, ik);
        if (FORWARD || k < cnt) s += p;
    }
    if (split) { /* output o: its chunks' sums in order, from lanes first, first + 1, ...: at
                    * most 2 chunks of width 16 (wc 1) or 4 of width 8 (wc 2), unrolled */
        double tot = __shfl_sync(FULL, s, first);
        double y1 = __shfl_sync(FULL, s, (first + 1) & 31);
        if (nch > 1) tot += y1;
        if (wcq == 2) {
            double y2 = __shfl_sync(FULL, s, (first + 2) & 31);
            double y3 = __shfl_sync(FULL, s, (first + 3) & 31);
            if (nch > 2) tot += y2;
            if (nch > 3) tot += y3;
        }
        s = nch ? tot : 0.0;
    }
    return s;
}

/* tile_tmatvec (FORWARD) or tile_matvec of tile q without staging: a sparse tile by lanes
 * (sparse_sum_lanes), a dense one straight from global memory (asked of L2 before the
 * dependency's wait). */
template <bool FORWARD, bool SF, int P, typename S>
__device__ __forceinline__ double tile_sum_nostage(const dev_tiles &T, const tile_meta<P, true> *m, int q, int mi,
                                                   const double *x, S *us, const int *done, int epoch)
{
    if (m->sparse[q]) return sparse_sum_lanes<FORWARD, SF, P, S>(T, m, q, x, done, epoch);
    int md = m->depm[q];
    prefetch_dense<S>(T, m->off[q], md * mi);
    unsigned long long tw0 = trace_tile_begin();
    double xd = dep_values<SF>(x + m->dep0[q], md, m->dep[q], done, epoch);
    if (SF) trace_tile_wait(tw0, xd, m->dep[q]);
    return dense_global<FORWARD, S>(T, m->off[q], md, mi, xd);
}

/* Lane c of one warp: s_c = sum_l U_t(l,c) x_k(l) over l ascending for tile t = (k,i) (mk x mi);
 * a sparse tile adds its stored entries (small ones from registers, every stored entry; staged
 * ones skip the exact zeros, which for finite x changes no bit: s starts at +0, never becomes -0), a
 * dense one every entry: the CPU's two loops, bit for bit. */
template <bool SF, int P, typename S>
__device__ __forceinline__ double tile_tmatvec_staged(const dev_tiles &T, const tile_meta<P> *m, int q, int mi,
                                                      const double *x, S *us, const int *done, int epoch)
{
    int c = threadIdx.x & 31;
    int mk = m->depm[q];
    if (c_small_sparse && m->sparse[q] && m->nnz[q] <= SMALL_SPARSE) {
        sparse_regs<S> e = load_small_sparse<P, S>(T, m, q); /* final: load it while k finishes */
        double xk = dep_values<SF>(x + m->dep0[q], mk, m->dep[q], done, epoch);
        if (SF) TRACE_WAITED(m->dep[q]);
        return small_sparse_sum<true, S>(e, m->nnz[q], xk, m->wc[q], us);
    }
    TRACE_T(t0);
    int sparse = stage_tile(T, m, q, mk, mi, us); /* the factor is final: load it while k finishes */
    TRACE_T(t1);
    double xk = dep_values<SF>(x + m->dep0[q], mk, m->dep[q], done, epoch);
    if (SF) TRACE_WAITED(m->dep[q]);
    TRACE_T(t2);
    /* unrolled over the whole tile, rows past mk masked: the loads and shuffles do not
     * depend on s, so they are all in flight while only the additions wait on each other */
    double s = 0.0, ch = 0.0; /* ch: the current chunk of W = 32 >> wc rows (a dense tile: 32) */
    const int wm = (LD >> m->wc[q]) - 1;
#pragma unroll
    for (int l = 0; l < LD; l++) {
        double xl = __shfl_sync(0xffffffffu, xk, l);
        double u = us[l * SLD + c];
        if (l < mk && c < mi && (!sparse || u != 0.0)) ch += u * xl;
        if ((l & wm) == wm) s += ch, ch = 0.0;
    }
#ifdef ILDL_SOLVE_TRACE
    { unsigned long long t3 = trace_after(s); TRACE_ADD(0, t1 - t0); TRACE_ADD(1, t2 - t1); TRACE_ADD(2, t3 - t2); TRACE_ADD(3, 1ULL); }
#endif
    return s;
}

/* Lane r of one warp: s_r = sum_c U_t(r,c) x_j(c) over c ascending for tile t = (i,j). */
template <bool SF, int P, typename S>
__device__ __forceinline__ double tile_matvec_staged(const dev_tiles &T, const tile_meta<P> *m, int q, int mi,
                                                     const double *x, S *us, const int *done, int epoch)
{
    int r = threadIdx.x & 31;
    int mj = m->depm[q];
    if (c_small_sparse && m->sparse[q] && m->nnz[q] <= SMALL_SPARSE) {
        sparse_regs<S> e = load_small_sparse<P, S>(T, m, q);
        double xj = dep_values<SF>(x + m->dep0[q], mj, m->dep[q], done, epoch);
        if (SF) TRACE_WAITED(m->dep[q]);
        return small_sparse_sum<false, S>(e, m->nnz[q], xj, 0, us); /* backward: width 32 */
    }
    TRACE_T(t0);
    int sparse = stage_tile(T, m, q, mi, mj, us);
    TRACE_T(t1);
    double xj = dep_values<SF>(x + m->dep0[q], mj, m->dep[q], done, epoch);
    if (SF) TRACE_WAITED(m->dep[q]);
    TRACE_T(t2);
    double s = 0.0; /* unrolled and masked; backward a tile is one chunk (ildl_sparse_chunk_code) */
#pragma unroll
    for (int c = 0; c < LD; c++) {
        double xc = __shfl_sync(0xffffffffu, xj, c);
        double u = us[r * SLD + c];
        if (c < mj && r < mi && (!sparse || u != 0.0)) s += u * xc;
    }
#ifdef ILDL_SOLVE_TRACE
    { unsigned long long t3 = trace_after(s); TRACE_ADD(0, t1 - t0); TRACE_ADD(1, t2 - t1); TRACE_ADD(2, t3 - t2); TRACE_ADD(3, 1ULL); }
#endif
    return s;
}

/* One tile's partial sums for the forward (tile_tmatvec) and backward (tile_matvec) sweeps:
 * staged, or without staging tiles (NS). */
template <bool SF, int P, typename S, bool NS = false>
__device__ __forceinline__ double tile_tmatvec(const dev_tiles &T, const tile_meta<P, NS> *m, int q, int mi,
                                               const double *x, S *us, const int *done, int epoch)
{
    if constexpr (NS) return tile_sum_nostage<true, SF, P, S>(T, m, q, mi, x, us, done, epoch);
    else return tile_tmatvec_staged<SF, P, S>(T, m, q, mi, x, us, done, epoch);
}

template <bool SF, int P, typename S, bool NS = false>
__device__ __forceinline__ double tile_matvec(const dev_tiles &T, const tile_meta<P, NS> *m, int q, int mi,
                                              const double *x, S *us, const int *done, int epoch)
{
    if constexpr (NS) return tile_sum_nostage<false, SF, P, S>(T, m, q, mi, x, us, done, epoch);
    else return tile_matvec_staged<SF, P, S>(T, m, q, mi, x, us, done, epoch);
}

/* Lane c of one warp: x_c + sum_{l<c} V(l,c) y_l, l ascending (the CPU's order), for y = xv
 * and V_ii = U_ii^-1 staged in ud (mi x mi, row-major): the forward sweep's U_ii^-T. Unrolled
 * with masks: the loads and shuffles are all in flight, only the additions chained. */
template <typename S> __device__ __forceinline__ double vii_forward(double xv, const S *ud, int mi)
{
    int c = threadIdx.x & 31;
    __syncwarp();
    double s = 0.0;
#pragma unroll
    for (int l = 0; l < LD - 1; l++) {
        double yl = __shfl_sync(0xffffffffu, xv, l);
        double v = ud[l * mi + c]; /* l * mi + c < TILE: in the staged tile, used only for c < mi */
        if (c > l && c < mi) s += v * yl;
    }
    return xv + s;
}

/* Lane r: x_r + sum_{c>r} V(r,c) y_c, c ascending, V_ii staged with ld SLD: the backward
 * sweep's U_ii^-1. */
template <typename S> __device__ __forceinline__ double vii_backward(double xv, const S *ud, int mi)
{
    int r = threadIdx.x & 31;
    __syncwarp();
    double s = 0.0;
#pragma unroll
    for (int c = 1; c < LD; c++) {
        double yc = __shfl_sync(0xffffffffu, xv, c);
        double v = ud[r * SLD + c];
        if (r < c && c < mi) s += v * yc;
    }
    return xv + s;
}

/* V_ii's entries in the staging type, and an L2 prefetch of them by one warp: the sweeps that
 * read V_ii from global memory ask for it when they start a row and read it when the row's sums
 * are done. They read only its strict upper triangle, so lane l asks for the lines of row l's
 * part past the diagonal (at most 31 entries, 248 bytes: three lines), not the whole tile, whose
 * lower triangle's lines were read from memory for nothing (perf-notes §69). */
template <typename S> __device__ __forceinline__ const S *stage_ptr(const dev_tiles &T, int64_t p);
template <> __device__ __forceinline__ const double *stage_ptr<double>(const dev_tiles &T, int64_t p) { return T.val + p; }
template <> __device__ __forceinline__ const float *stage_ptr<float>(const dev_tiles &T, int64_t p) { return T.val32 + p; }
template <bool L1> __device__ __forceinline__ void prefetch_line(const void *p) /* into L1, or L2 */
{
    if constexpr (L1) asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
    else asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}
/* L1: into L1 instead, shortly before the row's end (row_one_warp, c_vii_l1_ahead). */
template <typename S, bool L1 = false> __device__ __forceinline__ void prefetch_vii(const dev_tiles &T, int64_t u0, int mi)
{
    int l = threadIdx.x & 31;
    if (l + 1 < mi) {
        const char *a = (const char *)stage_ptr<S>(T, u0 + (int64_t)l * mi + l + 1);
        const char *b = (const char *)stage_ptr<S>(T, u0 + (int64_t)l * mi + mi - 1);
        prefetch_line<L1>(a);
        if (b - a >= 128) prefetch_line<L1>(a + 128);
        prefetch_line<L1>(b);
    }
}

/* vii_forward with V_ii read from global memory (lane c reads column c: one coalesced load per
 * row l); the same products and additions in the same order, so the same bits. */
template <typename S> __device__ __forceinline__ double vii_forward_global(double xv, const dev_tiles &T, int64_t u0,
                                                                          int mi)
{
    int c = threadIdx.x & 31;
    double s = 0.0;
#pragma unroll
    for (int l = 0; l < LD - 1; l++) {
        double yl = __shfl_sync(0xffffffffu, xv, l);
        double v = (c > l && c < mi) ? (double)stage_val<S>(T, u0 + (int64_t)l * mi + c) : 0.0;
        if (c > l && c < mi) s += v * yl;
    }
    return xv + s;
}

/* vii_backward with V_ii read from global memory (lane r reads row r, through L1: the tile is
 * read-only during the solves); the same products in the same order, so the same bits. */
/* Lane r: x_r + sum_{c>r} V(r,c) y_c, c ascending, with V(r,c) = base[row + c] for r < c < mi:
 * the backward sweep's U_ii^-1 read from global memory (lane r reads its own row through L1). */
template <typename S> __device__ __forceinline__ double vii_backward_row(double xv, const S *base, int row, int mi)
{
    int r = threadIdx.x & 31;
    double s = 0.0;
#pragma unroll
    for (int c = 1; c < LD; c++) {
        double yc = __shfl_sync(0xffffffffu, xv, c);
        bool on = r < c && c < mi;
        double v = on ? (double)base[row + c] : 0.0;
        if (on) s += v * yc;
    }
    return xv + s;
}

/* vii_backward with V_ii read from global memory: the mi x mi tile at u0 (row-major), the same
 * products in the same order, so the same bits. */
template <typename S> __device__ __forceinline__ double vii_backward_global(double xv, const dev_tiles &T, int64_t u0,
                                                                           int mi)
{
    return vii_backward_row<S>(xv, stage_ptr<S>(T, u0), (threadIdx.x & 31) * mi, mi);
}

/* The same over the packed copy vp (k_vii_pack), half the bytes. The backward sweep asks L2 for
 * the whole copy once the row's first metadata is in (prefetch_l2_lines). perf-notes §62:
 * backward -8 to -14%; the forward sweep, whose V_ii reads are coalesced and asked of L2 at the
 * row's start, was 4-14% slower with the packed copy (the same bits) and reads the whole tile. */
template <typename S> __device__ __forceinline__ double vii_backward_packed(double xv, const S *vp, int mi)
{
    int r = threadIdx.x & 31;
    return vii_backward_row<S>(xv, vp, vii_pos(r, mi) - r - 1, mi);
}

/* Where a block row's data is: its number, first row and size, V_ii's offset, its tiles'
 * positions [q0, qend) in the direction's order. From a sync-free record, or from T. */
struct row_at {
    int32_t i, b0;
    int mi;
    int64_t u0, q0, qend;
};

__device__ __forceinline__ row_at row_from_rec(const sf_rowrec &r)
{
    row_at a;
    a.i = r.i;
    a.b0 = r.b0;
    a.mi = r.mc & 255;
    a.u0 = r.u0;
    a.q0 = r.q0;
    a.qend = r.q0 + r.nq;
    return a;
}

template <bool FORWARD> __device__ __forceinline__ row_at row_from_tiles(const dev_tiles &T, int32_t i)
{
    row_at a;
    a.i = i;
    a.b0 = T.bstart[i];
    a.mi = T.bstart[i + 1] - a.b0;
    a.u0 = T.off[T.row_ptr[i]];
    a.q0 = FORWARD ? T.col_ptr[i] : T.row_ptr[i] + 1;
    a.qend = FORWARD ? T.fwd_end[i] : T.bwd_end[i]; /* the empty tiles skipped (k_skip_empty) */
    return a;
}

/* One warp per block row (W == 1): the warp subtracts each tile's sums as it finishes them, in
 * tile order (the order warp 0 subtracts the groups' partial sums in, so the same bits), with
 * no partial sums in shared memory, no barriers and V_ii read from global memory: a block needs
 * ~2.6 KB of shared memory (set_carveout_ns leaves the rest of the SM to L1), and as many rows
 * as warps are in flight. Up to LD tiles' metadata per gather (one load per lane). */
#ifndef PARTS_ONE_WARP
#define PARTS_ONE_WARP LD
#endif

template <bool FORWARD, bool SF, typename S, bool NS>
__device__ void row_one_warp(const dev_tiles &T, const row_at &ra, const double *xin, double *x, double *smem,
                             const int *done, int epoch)
{
    constexpr int P = PARTS_ONE_WARP;
    __shared__ tile_meta<P, NS> meta;
    int c = threadIdx.x & 31;
    S *us = reinterpret_cast<S *>(smem);
    int mi = ra.mi;
    double xv = c < mi ? ld_dep<SF>(xin + ra.b0 + c) : 0.0;
    const int64_t u0 = ra.u0;
    constexpr bool PK = NS && !FORWARD; /* the backward sweep reads the packed V_ii (k_vii_pack) */
    const S *vp = NULL;
    if constexpr (PK) vp = vii_packed<S>(T, ra.i);
    /* V_ii = U_ii^-1 for the end: asked of L1 shortly before it (qpf below), or else of L2 now.
     * Not both: a line asked for at the start of a row of tens of tiles is mostly gone from L2
     * by its end, read from memory twice (perf-notes §74: -4% per iteration without it) */
    if (!PK && !c_vii_l1_ahead) prefetch_vii<S>(T, u0, mi);
    /* the tile before which V_ii is asked of L1: c_vii_l1_ahead from the end, or the first */
    const int64_t qpf = c_vii_l1_ahead ? (ra.qend - c_vii_l1_ahead > ra.q0 ? ra.qend - c_vii_l1_ahead : ra.q0) : -1;
    for (int64_t cb = ra.q0; cb < ra.qend; cb += P) {
        int ng = (int)(ra.qend - cb < P ? ra.qend - cb : P);
        gather_meta<FORWARD>(T, cb, ng, &meta);
        /* packed: asked for once the first group's metadata is in, not at the row's start
         * where the load of its offset held up the first tile (perf-notes §62) */
        if (PK && cb == ra.q0 && !c_vii_l1_ahead) prefetch_l2_lines<S>(vp, mi * (mi - 1) / 2);
        for (int q = 0; q < ng; q++) {
            if (cb + q == qpf) {
                if constexpr (PK) prefetch_l1_lines<S>(vp, mi * (mi - 1) / 2);
                else prefetch_vii<S, true>(T, u0, mi);
            }
            xv -= FORWARD ? tile_tmatvec<SF, P, S, NS>(T, &meta, q, mi, x, us, done, epoch)
                          : tile_matvec<SF, P, S, NS>(T, &meta, q, mi, x, us, done, epoch);
        }
        __syncwarp(); /* meta is rewritten by the next group */
    }
    TRACE_MARK(0, xv);
    if constexpr (PK) xv = vii_backward_packed<S>(xv, vp, mi);
    else xv = FORWARD ? vii_forward_global<S>(xv, T, u0, mi) : vii_backward_global<S>(xv, T, u0, mi);
    TRACE_MARK(1, xv);
    if (c < mi) st_row<SF>(x + ra.b0 + c, xv);
    __syncwarp();
}

/* x_i <- U_ii^-T (x_i - sum_k U_ki^T x_k) by the W warps of a block: warp w takes tiles
 * w, w + W, ... of each group of PARTS_FORWARD tiles at its own pace (no barrier between its
 * tiles, so one warp's wait does not hold the others); warp 0 then subtracts the group's sums
 * in tile order (the CPU's order, so the bits do not depend on W) and finally multiplies by
 * V_ii^T (V_ii = U_ii^-1, stored by the factorization). The tiles are in fwd_seq's order, by
 * the level of k: the rows finished last come last, so a row's last wait is in its last group,
 * with nothing left to stage or gather after it.
 * Shared memory (smem_bytes): a staging tile per warp, V_ii, the partial sums. */
template <int W, bool SF, typename S, bool VG = false, bool NS = false>
__device__ void row_forward(const dev_tiles &T, const row_at &ra, const double *xin, double *x, double *smem,
                            const int *done, int epoch)
{
    if constexpr (W == 1) {
        row_one_warp<true, SF, S, NS>(T, ra, xin, x, smem, done, epoch);
    } else {
    constexpr int P = PARTS_FORWARD;
    __shared__ tile_meta<P, NS> meta;
    int w = threadIdx.x >> 5, c = threadIdx.x & 31;
    S *us = reinterpret_cast<S *>(smem) + w * warp_stage<S, NS>(), *ud = reinterpret_cast<S *>(smem) + W * warp_stage<S, NS>();
    /* 8-byte aligned: W * STILE (+ TILE) is even; VG: no V_ii in shared memory */
    double *part = reinterpret_cast<double *>(VG ? ud : ud + TILE);
    int mi = ra.mi;
    double *xi = x + ra.b0;
    double xv = (w == 0 && c < mi) ? ld_dep<SF>(xin + ra.b0 + c) : 0.0;
    const int64_t u0 = ra.u0;
    if (w == 0 && VG) prefetch_vii<S>(T, u0, mi); /* V_ii = U_ii^-1 for the end, asked for now */
    if (w == 0 && !VG) /* V_ii for the end, loaded now */
        for (int e = c; e < mi * mi; e += LD) ud[e] = stage_val<S>(T, u0 + e);
    int64_t q0 = ra.q0, qend = ra.qend;
    for (int64_t cb = q0; cb < qend; cb += P) {
        int ng = (int)(qend - cb < P ? qend - cb : P);
        gather_meta<true>(T, cb, ng, &meta);
        for (int q = w; q < ng; q += W)
            part[q * LD + c] = tile_tmatvec<SF, P, S, NS>(T, &meta, q, mi, x, us, done, epoch);
        __syncthreads();
        if (w == 0)
            for (int q = 0; q < ng; q++) xv -= part[q * LD + c];
        __syncthreads();
    }
    if (w != 0) return;
    TRACE_MARK(0, xv);
    xv = VG ? vii_forward_global<S>(xv, T, u0, mi) : vii_forward(xv, ud, mi);
    TRACE_MARK(1, xv);
    if (c < mi) st_row<SF>(xi + c, xv);
    __syncwarp();
    }
}

/* x_i <- U_ii^-1 (x_i - sum_j U_ij x_j), tiles split over the warps as in row_forward, in
 * bwd_seq's order (the rows j the backward sweep finishes first come first). V_ii is staged
 * with ld SLD: lane r reads row r, and an unpadded 32-column tile would put every lane on one
 * bank. */
template <int W, bool SF, typename S, bool NS = false>
__device__ void row_backward(const dev_tiles &T, const row_at &ra, const double *xin, double *x, double *smem,
                             const int *done, int epoch)
{
    if constexpr (W == 1) {
        row_one_warp<false, SF, S, NS>(T, ra, xin, x, smem, done, epoch);
    } else {
    constexpr int P = PARTS_BACKWARD;
    __shared__ tile_meta<P, NS> meta;
    int w = threadIdx.x >> 5, r = threadIdx.x & 31;
    S *us = reinterpret_cast<S *>(smem) + w * warp_stage<S, NS>(), *ud = reinterpret_cast<S *>(smem) + W * warp_stage<S, NS>();
    double *part = reinterpret_cast<double *>(ud + STILE); /* 8-byte aligned: (W + 1) * STILE is even */
    int mi = ra.mi;
    double *xi = x + ra.b0;
    double xv = (w == 0 && r < mi) ? ld_dep<SF>(xin + ra.b0 + r) : 0.0;
    const int64_t u0 = ra.u0;
    if (w == 0) /* V_ii = U_ii^-1 for the end, loaded now */
        for (int rr = 0; rr < mi; rr++)
            if (r < mi) ud[rr * SLD + r] = stage_val<S>(T, u0 + (int64_t)rr * mi + r);
    int64_t t0 = ra.q0, tend = ra.qend;
    for (int64_t cb = t0; cb < tend; cb += P) {
        int ng = (int)(tend - cb < P ? tend - cb : P);
        gather_meta<false>(T, cb, ng, &meta);
        for (int q = w; q < ng; q += W)
            part[q * LD + r] = tile_matvec<SF, P, S, NS>(T, &meta, q, mi, x, us, done, epoch);
        __syncthreads();
        if (w == 0)
            for (int q = 0; q < ng; q++) xv -= part[q * LD + r];
        __syncthreads();
    }
    if (w != 0) return;
    TRACE_MARK(0, xv);
    xv = vii_backward(xv, ud, mi);
    TRACE_MARK(1, xv);
    if (r < mi) st_row<SF>(xi + r, xv);
    __syncwarp();
    }
}

/* xv minus the first n partial sums of a split row's scratch (lane c's column), in tile order,
 * the loads of 16 in flight at a time. */
__device__ __forceinline__ double subtract_partials(const double *scr, int64_t n, int c, double xv)
{
    for (int64_t q0b = 0; q0b < n; q0b += 16) {
        double v[16];
#pragma unroll
        for (int k = 0; k < 16; k++) v[k] = q0b + k < n ? __ldcg(scr + (q0b + k) * LD + c) : 0.0;
#pragma unroll
        for (int k = 0; k < 16; k++)
            if (q0b + k < n) xv -= v[k];
    }
    return xv;
}

/* A sync-free work item of a split row (a row with more than T.sf_chunk tiles; sf_items):
 * the W warps take chunk `chunk` of the row's tiles (fwd_seq order forward, bwd_seq order
 * backward) and write each tile's partial sums to the row's scratch. Backward, the block that
 * finishes the row's last item (T.sf_count) subtracts all of them from x_i in tile order, as
 * row_backward does group by group, applies V_ii and stores the row: the bits of the whole row
 * done by one block, with its tiles spread over many; returns 1 (uniformly) in that block.
 * Forward, row_chunk takes every item but the last: the block that finishes the last of those
 * subtracts their partial sums from x_in(i) in tile order, leaves this running sum in the
 * row's first scratch slot and releases T.sf_ready[i] with the sweep's epoch; the last item
 * (forward_syncfree) waits for it and sums the row's remaining tiles from it as a whole row
 * does, V_ii and the store included: the same bits again, and the one pass over every tile's
 * partial sums is no longer on the row's path after its last dependency (perf-notes §72: that
 * pass had cost the Stokes rows it split more than the split saved). Returns 0 forward. No
 * item waits for a later item of its row, so the ticket order still guarantees progress. */
template <int W, typename S, bool FORWARD, bool VG = false, bool NS = false>
__device__ int row_chunk(const dev_tiles &T, int32_t i, int chunk, const double *xin, double *x, double *smem,
                         const int *done, int epoch)
{
    constexpr int P = FORWARD ? PARTS_FORWARD : PARTS_BACKWARD;
    __shared__ tile_meta<P, NS> meta;
    __shared__ int s_last;
    int w = threadIdx.x >> 5, c = threadIdx.x & 31;
    S *us = reinterpret_cast<S *>(smem) + w * warp_stage<S, NS>(), *ud = reinterpret_cast<S *>(smem) + W * warp_stage<S, NS>();
    int mi = dev_bsize(T, i);
    int64_t q0 = FORWARD ? T.col_ptr[i] : T.row_ptr[i] + 1, qend = FORWARD ? T.col_diag[i] : T.row_ptr[i + 1];
    int64_t ntile = qend - q0, a = q0 + (int64_t)chunk * T.sf_chunk;
    int64_t e = a + T.sf_chunk < qend ? a + T.sf_chunk : qend;
    int nchunks = (int)((ntile + T.sf_chunk - 1) / T.sf_chunk);
    double *scr = T.sf_scratch + (FORWARD ? T.sf_scr_f[i] : T.sf_scr_b[i]) * LD;
    for (int64_t cb = a; cb < e; cb += P) {
        int ng = (int)(e - cb < P ? e - cb : P);
        gather_meta<FORWARD>(T, cb, ng, &meta);
        for (int q = w; q < ng; q += W) {
            double v = FORWARD ? tile_tmatvec<true, P, S, NS>(T, &meta, q, mi, x, us, done, epoch)
                               : tile_matvec<true, P, S, NS>(T, &meta, q, mi, x, us, done, epoch);
            __stcg(scr + (cb - q0 + q) * LD + c, v);
        }
        __syncthreads(); /* meta is rewritten by the next group */
    }
    __threadfence(); /* the partial sums before the count */
    __syncthreads();
    if (threadIdx.x == 0) s_last = atomicAdd(T.sf_count + i, 1) == nchunks - (FORWARD ? 2 : 1);
    __syncthreads();
    if (!s_last) return 0;
    __threadfence(); /* the count before the other items' partial sums */
    if constexpr (FORWARD) { /* forward: the items but the last, into the row's running sum */
        if (w == 0) {
            double xv = c < mi ? ld_dep<true>(xin + T.bstart[i] + c) : 0.0;
            xv = subtract_partials(scr, (int64_t)(nchunks - 1) * T.sf_chunk, c, xv);
            __stcg(scr + c, xv); /* in the first tile's slot, read above by this lane */
            __threadfence();
            __syncwarp();
            if (c == 0) {
                T.sf_count[i] = 0; /* ready for the next sweep */
                asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(T.sf_ready + i), "r"(epoch) : "memory");
            }
            __syncwarp();
        }
        return 0;
    }
    if (w == 0) { /* backward: every item's partial sums, V_ii and the row */
        double xv = c < mi ? ld_dep<true>(xin + T.bstart[i] + c) : 0.0;
        const int64_t u0 = T.off[T.row_ptr[i]];
        if (W > 1) /* W == 1 reads V_ii from global memory below: its shared memory has no room */
            for (int rr = 0; rr < mi; rr++)
                if (c < mi) ud[rr * SLD + c] = stage_val<S>(T, u0 + (int64_t)rr * mi + c);
        xv = subtract_partials(scr, ntile, c, xv);
        if constexpr (NS && W == 1)
            xv = vii_backward_packed<S>(xv, vii_packed<S>(T, i), mi);
        else
            xv = W == 1 ? vii_backward_global<S>(xv, T, u0, mi) : vii_backward(xv, ud, mi);
        if (c < mi) st_row<true>(x + T.bstart[i] + c, xv);
        if (c == 0) T.sf_count[i] = 0; /* every item of the row is done: ready for the next sweep */
        __syncwarp();
    }
    return 1;
}

/* ------------------------------------------------------------ level schedule */

template <int W, typename S> __global__ void __launch_bounds__(W * 32) k_forward_level(dev_tiles T, const int32_t *rows, double *x,
                                                                            const int *skip)
{
    extern __shared__ double smem[];
    if (*skip) return;
    row_forward<W, false, S>(T, row_from_tiles<true>(T, rows[blockIdx.x]), x, x, smem, NULL, 0);
}

template <int W, typename S> __global__ void __launch_bounds__(W * 32) k_backward_level(dev_tiles T, const int32_t *rows, double *x,
                                                                             const int *skip)
{
    extern __shared__ double smem[];
    if (*skip) return;
    row_backward<W, false, S>(T, row_from_tiles<false>(T, rows[blockIdx.x]), x, x, smem, NULL, 0);
}

/* ------------------------------------------------------------ sync-free schedule */

/* New epoch for the flags, tickets back to zero (one thread, before each solve). */
__global__ void k_syncfree_begin(int *epoch, int *tickets, const int *skip)
{
    if (*skip) return;
    epoch[0] += 1;
    tickets[0] = 0;
    tickets[1] = 0;
}

/* The next ticket for the whole block (uniform), or >= nb when the work is done. */
__device__ __forceinline__ int sf_take(int *ticket, int *slot)
{
    __syncthreads(); /* the previous row's reads of *slot are over */
    if (threadIdx.x == 0) *slot = atomicAdd(ticket, 1);
    __syncthreads();
    return *slot;
}

/* The sync-free sweeps' bodies; NS: without staging tiles (more blocks fit an SM). */
template <int W, typename S, bool VG, bool NS>
__device__ __forceinline__ void forward_syncfree(const dev_tiles &T, const double *xin, double *x, int *done,
                                                 int *ticket, const int *epoch, const int *skip)
{
    extern __shared__ double smem[];
    __shared__ int slot;
    if (*skip) return; /* SQMR has halted: this iteration is discarded */
    int ep = *epoch;
    for (;;) {
        int t = sf_take(ticket, &slot);
        if (t >= T.sf_nitems_f) break;
        const sf_rowrec rec = T.sf_rec_f[t];
        int32_t i = rec.i, chunk = (rec.mc >> 8) - 1;
        /* the row's data from T, not the record: the record made this kernel 17-21% slower
         * (its code, not its loads: perf-notes §48); the ticket's row still comes from it */
        row_at ra = row_from_tiles<true>(T, i);
        const double *xr = xin;
        if (chunk >= 0) { /* an item of a split row */
            int last = (int)((ra.qend - ra.q0 - 1) / T.sf_chunk);
            if (chunk < last) { /* partial sums; the last of these to finish sums them up */
                row_chunk<W, S, true, VG, NS>(T, i, chunk, xin, x, smem, done, ep);
                continue;
            }
            /* the last item: the row's rest as a whole row, from the others' running sum
             * (row_forward reads its input at xr + b0: here the row's first scratch slot) */
            sf_wait_ready(T.sf_ready + i, ep);
            ra.q0 += (int64_t)last * T.sf_chunk;
            xr = T.sf_scratch + T.sf_scr_f[i] * LD - ra.b0;
        }
        unsigned long long t_claim = trace_row_begin();
        row_forward<W, true, S, VG, NS>(T, ra, xr, x, smem, done, ep);
        if (threadIdx.x < 32 && c_sf_protocol != 2) sf_publish(done, i, ep);
        trace_row_end(0, T.nb, trace_pos(T.sf_items_f, t), i, t_claim);
    }
}

template <int W, typename S, bool NS>
__device__ __forceinline__ void backward_syncfree(const dev_tiles &T, const double *xin, double *x, int *done,
                                                  int *ticket, const int *epoch, const int *skip)
{
    extern __shared__ double smem[];
    __shared__ int slot;
    if (*skip) return; /* SQMR has halted: this iteration is discarded */
    int ep = *epoch;
    for (;;) {
        int t = sf_take(ticket, &slot);
        if (t >= T.sf_nitems_b) break;
        const sf_rowrec rec = T.sf_rec_b[t];
        int32_t i = rec.i, chunk = (rec.mc >> 8) - 1;
        if (chunk >= 0) { /* a chunk of a split row */
            if (row_chunk<W, S, false, false, NS>(T, i, chunk, xin, x, smem, done, ep) && threadIdx.x < 32 &&
                c_sf_protocol != 2)
                sf_publish(done, i, ep);
            continue;
        }
        unsigned long long t_claim = trace_row_begin();
        row_backward<W, true, S, NS>(T, row_from_rec(rec), xin, x, smem, done, ep);
        if (threadIdx.x < 32 && c_sf_protocol != 2) sf_publish(done, i, ep);
        trace_row_end(1, T.nb, T.nb - 1 - trace_pos(T.sf_items_b, t), i, t_claim);
    }
}

template <int W, typename S, bool VG>
__global__ void __launch_bounds__(W * 32) k_forward_syncfree(dev_tiles T, const double *xin, double *x, int *done,
                                                            int *ticket, const int *epoch, const int *skip)
{
    forward_syncfree<W, S, VG, false>(T, xin, x, done, ticket, epoch, skip);
}

template <int W, typename S>
__global__ void __launch_bounds__(W * 32) k_backward_syncfree(dev_tiles T, const double *xin, double *x, int *done,
                                                             int *ticket, const int *epoch, const int *skip)
{
    backward_syncfree<W, S, false>(T, xin, x, done, ticket, epoch, skip);
}

/* Without staging tiles shared memory no longer limits the blocks per SM, registers do: the
 * bound asks for SF_NS_WARPS_PER_SM warps per SM (32: 64 registers; 56 unbounded, with
 * spills), perf-notes §51. */
#ifndef SF_NS_WARPS_PER_SM
#define SF_NS_WARPS_PER_SM 32
#endif
template <int W, typename S, bool VG>
__global__ void __launch_bounds__(W * 32, SF_NS_WARPS_PER_SM / W) k_forward_syncfree_ns(dev_tiles T, const double *xin, double *x,
                                                                        int *done, int *ticket, const int *epoch,
                                                                        const int *skip)
{
    forward_syncfree<W, S, VG, true>(T, xin, x, done, ticket, epoch, skip);
}

template <int W, typename S>
__global__ void __launch_bounds__(W * 32, SF_NS_WARPS_PER_SM / W) k_backward_syncfree_ns(dev_tiles T, const double *xin, double *x,
                                                                         int *done, int *ticket, const int *epoch,
                                                                         const int *skip)
{
    backward_syncfree<W, S, true>(T, xin, x, done, ticket, epoch, skip);
}

/* ------------------------------------------------------------ host side */

/* Dynamic shared memory of a solve kernel of W warps staging tiles of type S: a staged tile
 * per warp (ns: only add_sparse_chunk's scratch), V_ii (S; not in the forward kernel that
 * reads it from global memory, vg), the partial sums (double). */
template <int W, typename S> static size_t smem_bytes(bool forward, bool vg = false, bool ns = false)
{
    size_t ws = ns ? (size_t)warp_stage<S, true>() : (size_t)warp_stage<S, false>();
    if (W == 1) return ws * sizeof(S); /* row_one_warp: V_ii from global memory, no partial sums */
    return forward ? ((size_t)W * ws + (vg ? 0 : TILE)) * sizeof(S) + (size_t)PARTS_FORWARD * LD * sizeof(double)
                   : ((size_t)W * ws + STILE) * sizeof(S) + (size_t)PARTS_BACKWARD * LD * sizeof(double);
}

static cudaError_t set_smem(const void *kernel, size_t bytes)
{
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess) /* as much shared memory as the SM has: more resident blocks */
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 (int)cudaSharedmemCarveoutMaxShared);
    return e;
}

/* The kernels without staging tiles keep ~2.6 KB of shared memory a block (one warp): as much
 * of the SM as shared memory as blocks_per_sm of them need, the rest as L1, instead of all of
 * it as shared memory (L1 then ~28 KB on an H100). Their loads go through L1: the backward
 * sweep's rows of V_ii (a line per lane, used over 31 steps), the lanes' entries that share
 * sectors across steps. perf-notes §57: control70 backward 0.345 -> 0.326 ms. ILDL_SF_CARVEOUT
 * (a percent; experiments) overrides, -1 asks for all of it as shared memory as before. */
static cudaError_t set_carveout_ns(const void *kernel, int blocks_per_sm, size_t dynamic_bytes)
{
    int dev = 0, per_sm = 0, reserved = 0, pct;
    cudaFuncAttributes fa;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&fa, kernel);
    if (e != cudaSuccess || per_sm <= 0) return e;
    size_t need = (size_t)blocks_per_sm * (fa.sharedSizeBytes + dynamic_bytes + (size_t)reserved);
    pct = (int)((100 * need + (size_t)per_sm - 1) / (size_t)per_sm);
    const char *env = getenv("ILDL_SF_CARVEOUT");
    if (env) pct = atoi(env);
    if (pct < 0 || pct > 100) pct = (int)cudaSharedmemCarveoutMaxShared;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, pct);
}

/* The sync-free kernel of one direction: forward reading V_ii from global memory (vg) or
 * staging it, without staging tiles (ns) or with. */
template <int W, typename S> static const void *syncfree_kernel(bool forward, bool vg, bool ns)
{
    if (!forward) return ns ? (const void *)k_backward_syncfree_ns<W, S> : (const void *)k_backward_syncfree<W, S>;
    if (ns) return vg ? (const void *)k_forward_syncfree_ns<W, S, true> : (const void *)k_forward_syncfree_ns<W, S, false>;
    return vg ? (const void *)k_forward_syncfree<W, S, true> : (const void *)k_forward_syncfree<W, S, false>;
}

/* Raise the shared-memory limits of the kernels of one direction with W warps staging S;
 * *per_sm: how many blocks of its sync-free kernel (forward: the one that reads V_ii from
 * global memory if vg; ns: the one without staging tiles) fit on one SM. */
template <int W, typename S> static cudaError_t configure_w(bool forward, bool vg, bool ns, int *per_sm)
{
    size_t b = smem_bytes<W, S>(forward), bs = smem_bytes<W, S>(forward, forward && vg, ns);
    const void *lk = forward ? (const void *)k_forward_level<W, S> : (const void *)k_backward_level<W, S>;
    const void *sk = syncfree_kernel<W, S>(forward, forward && vg, ns);
    cudaError_t e = set_smem(lk, b);
    if (e == cudaSuccess) e = set_smem(sk, bs);
    if (e == cudaSuccess && ns) e = set_carveout_ns(sk, SF_NS_WARPS_PER_SM / W, bs);
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, sk, W * 32, bs);
    return e;
}

#ifdef ILDL_SOLVE_TRACE
cudaError_t solve_set_trace(unsigned long long *buf)
{
    return cudaMemcpyToSymbol(g_sf_trace, &buf, sizeof buf);
}
#endif

cudaError_t solve_set_small_sparse(int on)
{
    int v = on ? 1 : 0;
    return cudaMemcpyToSymbol(c_small_sparse, &v, sizeof v);
}

cudaError_t solve_set_backoff(unsigned ns)
{
    return cudaMemcpyToSymbol(c_sf_backoff, &ns, sizeof ns);
}

cudaError_t solve_set_vii_l1(int ahead)
{
    int v = ahead > 0 ? ahead : 0;
    return cudaMemcpyToSymbol(c_vii_l1_ahead, &v, sizeof v);
}

cudaError_t solve_set_protocol(int protocol)
{
    int p = protocol == 2 ? 2 : protocol ? 1 : 0;
    return cudaMemcpyToSymbol(c_sf_protocol, &p, sizeof p);
}

int solve_warps_valid(int warps) { return warps == 1 || warps == 2 || warps == 4 || warps == 8; }

template <typename S>
static cudaError_t configure_s(int warps_f, int warps_b, bool vg, bool ns, int *fwd_per_sm, int *bwd_per_sm)
{
    cudaError_t e = warps_f == 1 ? configure_w<1, S>(true, vg, ns, fwd_per_sm)
                  : warps_f == 2 ? configure_w<2, S>(true, vg, ns, fwd_per_sm)
                  : warps_f == 4 ? configure_w<4, S>(true, vg, ns, fwd_per_sm) : configure_w<8, S>(true, vg, ns, fwd_per_sm);
    if (e != cudaSuccess) return e;
    return warps_b == 1 ? configure_w<1, S>(false, false, ns, bwd_per_sm)
         : warps_b == 2 ? configure_w<2, S>(false, false, ns, bwd_per_sm)
         : warps_b == 4 ? configure_w<4, S>(false, false, ns, bwd_per_sm) : configure_w<8, S>(false, false, ns, bwd_per_sm);
}

cudaError_t solve_configure(int warps_f, int warps_b, bool float_tiles, bool vg, bool ns, int *fwd_per_sm,
                            int *bwd_per_sm)
{
    return float_tiles ? configure_s<float>(warps_f, warps_b, vg, ns, fwd_per_sm, bwd_per_sm)
                       : configure_s<double>(warps_f, warps_b, vg, ns, fwd_per_sm, bwd_per_sm);
}

template <int W, typename S>
static void launch_w(int kind, unsigned grid, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                     const double *xin, double *x, int *done, int *ticket, const int *epoch, const int *skip)
{
    const bool fwd = kind != SOLVE_BACKWARD_LEVEL && kind != SOLVE_BACKWARD_SYNCFREE && kind != SOLVE_BACKWARD_SYNCFREE_NS;
    const bool vg = kind == SOLVE_FORWARD_SYNCFREE_VG || kind == SOLVE_FORWARD_SYNCFREE_VG_NS;
    const bool ns = kind == SOLVE_FORWARD_SYNCFREE_NS || kind == SOLVE_FORWARD_SYNCFREE_VG_NS ||
                    kind == SOLVE_BACKWARD_SYNCFREE_NS;
    size_t sm = smem_bytes<W, S>(fwd, vg, ns);
    switch (kind) { /* the sweeps without staging tiles with their output persisting in L2 */
    case SOLVE_FORWARD_LEVEL: k_forward_level<W, S><<<grid, W * 32, sm, s>>>(T, rows, x, skip); break;
    case SOLVE_BACKWARD_LEVEL: k_backward_level<W, S><<<grid, W * 32, sm, s>>>(T, rows, x, skip); break;
    case SOLVE_FORWARD_SYNCFREE: k_forward_syncfree<W, S, false><<<grid, W * 32, sm, s>>>(T, xin, x, done, ticket, epoch, skip); break;
    case SOLVE_FORWARD_SYNCFREE_VG: k_forward_syncfree<W, S, true><<<grid, W * 32, sm, s>>>(T, xin, x, done, ticket, epoch, skip); break;
    case SOLVE_FORWARD_SYNCFREE_NS:
        launch_l2_window(T, x, T.n, k_forward_syncfree_ns<W, S, false>, grid, W * 32, sm, s, T, xin, x, done, ticket, epoch, skip);
        break;
    case SOLVE_FORWARD_SYNCFREE_VG_NS:
        launch_l2_window(T, x, T.n, k_forward_syncfree_ns<W, S, true>, grid, W * 32, sm, s, T, xin, x, done, ticket, epoch, skip);
        break;
    case SOLVE_BACKWARD_SYNCFREE_NS:
        launch_l2_window(T, x, T.n, k_backward_syncfree_ns<W, S>, grid, W * 32, sm, s, T, xin, x, done, ticket, epoch, skip);
        break;
    default: k_backward_syncfree<W, S><<<grid, W * 32, sm, s>>>(T, xin, x, done, ticket, epoch, skip); break;
    }
}

template <typename S>
static void launch_s(int warps, int kind, unsigned grid, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                     const double *xin, double *x, int *done, int *ticket, const int *epoch, const int *skip)
{
    if (warps == 1) launch_w<1, S>(kind, grid, s, T, rows, xin, x, done, ticket, epoch, skip);
    else if (warps == 2) launch_w<2, S>(kind, grid, s, T, rows, xin, x, done, ticket, epoch, skip);
    else if (warps == 4) launch_w<4, S>(kind, grid, s, T, rows, xin, x, done, ticket, epoch, skip);
    else launch_w<8, S>(kind, grid, s, T, rows, xin, x, done, ticket, epoch, skip);
}

void solve_launch(int warps, int kind, unsigned grid, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                  const double *xin, double *x, int *done, int *ticket, const int *epoch, const int *skip)
{
    /* the factor's storage type decides the staging type (solve_configure was told the same) */
    if (T.val32) launch_s<float>(warps, kind, grid, s, T, rows, xin, x, done, ticket, epoch, skip);
    else launch_s<double>(warps, kind, grid, s, T, rows, xin, x, done, ticket, epoch, skip);
}

/* v <- SF_UNSET (protocol 2: before a sweep writes v); the sweep's epoch and tickets too; and,
 * when r is not NULL, w = qs .* r[q] (the preconditioner's gather, in the same pass). */
__global__ void k_sf_unset(double *v, int32_t n, int *epoch, int *tickets, const int *skip, const int32_t *q,
                           const double *qs, const double *r, double *w)
{
    if (*skip) return;
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k == 0) {
        epoch[0] += 1;
        tickets[0] = 0;
        tickets[1] = 0;
    }
    if (k < n) {
        v[k] = __longlong_as_double(SF_UNSET);
        if (r) w[k] = qs[k] * r[q[k]];
    }
}

/* x <- D^-1 x (1x1 and 2x2 pivots); one thread per row, the first of a 2x2 does both. */
__global__ void k_dsolve(dev_tiles T, double *x, double *unset, const int *skip)
{
    if (*skip) return;
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= T.n) return;
    if (unset) unset[k] = __longlong_as_double(SF_UNSET);
    int8_t ty = T.piv_type[k];
    double a = T.d_diag[k];
    if (ty == 2 && k + 1 < T.n) {
        double b = T.d_off[k], c = T.d_diag[k + 1];
        double det = a * c - b * b, x0 = x[k], x1 = x[k + 1];
        x[k] = (c * x0 - b * x1) / det;
        x[k + 1] = (a * x1 - b * x0) / det;
    } else if (ty != 0) {
        x[k] /= a;
    }
}
