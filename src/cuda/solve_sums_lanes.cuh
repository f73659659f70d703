/* solve_sums_lanes.cuh -- one tile's partial sums in the kernels without staging tiles. */
#ifndef ILDL_CUDA_SOLVE_SUMS_LANES_CUH
#define ILDL_CUDA_SOLVE_SUMS_LANES_CUH
#include "cuda/solve_sync.cuh"
#include "cuda/solve_tiles.cuh"

/* The solves without staging tiles (NS: chosen per setup for wide levels, sf_nostage_default in
 * solve_select.cu). A sparse tile is summed by lanes, each lane its own output's entries
 * (sparse_sum_lanes, over the counts and the forward copy that solve_lanes_launch builds after
 * each factorization), a dense one straight from global memory (forward: lane c reads column
 * c, coalesced; backward: lane r reads row r, through L1). The same products and additions in
 * the same order as the staged loops. */
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

/* A sparse tile's sums without staging, each lane adding its own output's entries: lane o's
 * entries are cnt[o] consecutive ones, in the CPU's order (forward: column o of the
 * column-by-column copy, rows ascending; backward: row o of the stored tile, columns
 * ascending), so the sum s_o = 0, s_o += v * x(in) per entry has the CPU's bits. The warp
 * steps as often as the tile's longest output has entries (~100 instructions a tile where the
 * lane table of add_sparse_chunk took ~500). Forward, a tile of chunk width 8 or 16
 * (ildl_sparse_chunk_code) is summed by chunks instead, lane L its L-th chunk, and lane o then
 * adds output o's chunks in order: control70's forward steps per tile 11.2 -> 6.3. The first
 * LANE_PRE_FORWARD (8: a chunk of width 8 needs no more) or LANE_PRE_BACKWARD (6) steps'
 * entries are loaded before the dependency's wait, so that most tiles' loads are in flight
 * while it waits (the fastest counts measured). Forward, a lane past its count adds
 * v * x = (+0) * x = +-0 without a predicate: for finite x that changes no bit (s starts at +0
 * and never becomes -0), the condition under which the staged loops skip exact zeros too.
 * Predicated, the compiler adds and selects (two FSEL and moves a step) and the forward sweep is
 * 2-7% slower. Backward the predicate stays: without it that sweep gained nothing. */
#ifndef LANE_PRE_FORWARD
#define LANE_PRE_FORWARD 8
#endif
#ifndef LANE_PRE_BACKWARD
#define LANE_PRE_BACKWARD 6
#endif
/* Ask L1 for the lines of a lane's entries from entry p on (its value's and its row's or
 * column's), before the dependency's wait: the steps past LANE_PRE then load from L1 after it
 * instead of making a second round trip to memory (forward sweep -0.4 to -3%). */
template <bool FORWARD, typename S> __device__ __forceinline__ void prefetch_lane_tail(const dev_tiles &T, int64_t p)
{
    const void *v = FORWARD ? (const void *)lane_ptr<S>(T, p) : (const void *)stage_ptr<S>(T, p);
    const void *r = FORWARD ? (const void *)(T.lane_row + p) : (const void *)(T.lane_col + p);
    asm volatile("prefetch.global.L1 [%0];" ::"l"(v));
    asm volatile("prefetch.global.L1 [%0];" ::"l"(r));
}

template <bool FORWARD, bool SF, int P, typename S>
__device__ __forceinline__ double sparse_sum_lanes(const dev_tiles &T, const tile_meta<P, true> *m, int q,
                                                   const double *x)
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
    double xd = dep_values<SF>(x + m->dep0[q], m->depm[q]);
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
                                                   const double *x, S *us)
{
    if (m->sparse[q]) return sparse_sum_lanes<FORWARD, SF, P, S>(T, m, q, x);
    int md = m->depm[q];
    prefetch_dense<S>(T, m->off[q], md * mi);
    unsigned long long tw0 = trace_tile_begin();
    double xd = dep_values<SF>(x + m->dep0[q], md);
    if (SF) trace_tile_wait(tw0, xd, m->dep[q]);
    return dense_global<FORWARD, S>(T, m->off[q], md, mi, xd);
}

#endif
