/* solve_rows.cuh -- the row algorithms: one block row of a sweep by the W warps of a block
 * (row_forward, row_backward; one warp: row_one_warp), and an item of a split row (row_chunk).
 * Each subtracts its tiles' partial sums in tile order and ends with V_ii, whatever W, so the
 * bits are the CPU's; SF: the sync-free schedule (dependencies polled), else the level one. */
#ifndef ILDL_CUDA_SOLVE_ROWS_CUH
#define ILDL_CUDA_SOLVE_ROWS_CUH
#include "cuda/solve_sums_lanes.cuh"
#include "cuda/solve_sums_staged.cuh"
#include "cuda/solve_vii.cuh"

/* A one-warp row asks L1 for V_ii's lines this many tiles before its end: its last tiles wait
 * on the rows finished last, so the lines arrive meanwhile and the V_ii product at the row's
 * end reads L1 instead of lines evicted from L2 since the row's start. At least 1. */
#define VII_L1_AHEAD 1

/* One tile's partial sums for the forward (tile_tmatvec) and backward (tile_matvec) sweeps:
 * staged, or without staging tiles (NS). */
template <bool SF, int P, typename S, bool NS = false>
__device__ __forceinline__ double tile_tmatvec(const dev_tiles &T, const tile_meta<P, NS> *m, int q, int mi,
                                               const double *x, S *us)
{
    if constexpr (NS) return tile_sum_nostage<true, SF, P, S>(T, m, q, mi, x, us);
    else return tile_tmatvec_staged<SF, P, S>(T, m, q, mi, x, us);
}

template <bool SF, int P, typename S, bool NS = false>
__device__ __forceinline__ double tile_matvec(const dev_tiles &T, const tile_meta<P, NS> *m, int q, int mi,
                                              const double *x, S *us)
{
    if constexpr (NS) return tile_sum_nostage<false, SF, P, S>(T, m, q, mi, x, us);
    else return tile_matvec_staged<SF, P, S>(T, m, q, mi, x, us);
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
__device__ void row_one_warp(const dev_tiles &T, const row_at &ra, const double *xin, double *x, double *smem)
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
    /* V_ii = U_ii^-1 for the end: asked of L1 shortly before it (qpf below), not of L2 at the
     * row's start too: a line asked for then is mostly gone from L2 by the end of a row of
     * tens of tiles, and was read from memory twice */
    /* the tile before which V_ii is asked of L1: VII_L1_AHEAD from the end, or the first */
    const int64_t qpf = ra.qend - VII_L1_AHEAD > ra.q0 ? ra.qend - VII_L1_AHEAD : ra.q0;
    for (int64_t cb = ra.q0; cb < ra.qend; cb += P) {
        int ng = (int)(ra.qend - cb < P ? ra.qend - cb : P);
        gather_meta<FORWARD>(T, cb, ng, &meta);
        for (int q = 0; q < ng; q++) {
            if (cb + q == qpf) {
                if constexpr (PK) prefetch_l1_lines<S>(vp, mi * (mi - 1) / 2);
                else prefetch_vii<S, true>(T, u0, mi);
            }
            xv -= FORWARD ? tile_tmatvec<SF, P, S, NS>(T, &meta, q, mi, x, us)
                          : tile_matvec<SF, P, S, NS>(T, &meta, q, mi, x, us);
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
__device__ void row_forward(const dev_tiles &T, const row_at &ra, const double *xin, double *x, double *smem)
{
    if constexpr (W == 1) {
        row_one_warp<true, SF, S, NS>(T, ra, xin, x, smem);
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
            part[q * LD + c] = tile_tmatvec<SF, P, S, NS>(T, &meta, q, mi, x, us);
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
__device__ void row_backward(const dev_tiles &T, const row_at &ra, const double *xin, double *x, double *smem)
{
    if constexpr (W == 1) {
        row_one_warp<false, SF, S, NS>(T, ra, xin, x, smem);
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
            part[q * LD + r] = tile_matvec<SF, P, S, NS>(T, &meta, q, mi, x, us);
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
 * done by one block, with its tiles spread over many.
 * Forward, row_chunk takes every item but the last: the block that finishes the last of those
 * subtracts their partial sums from x_in(i) in tile order, leaves this running sum in the
 * row's first scratch slot and releases T.sf_ready[i] with the sweep's epoch; the last item
 * (forward_syncfree) waits for it and sums the row's remaining tiles from it as a whole row
 * does, V_ii and the store included: the same bits again, and the one pass over every tile's
 * partial sums is no longer on the row's path after its last dependency (where it was, that
 * pass cost the Stokes rows it split more than the split saved). No item waits for a later
 * item of its row, so the ticket order still guarantees progress. */
template <int W, typename S, bool FORWARD, bool VG = false, bool NS = false>
__device__ void row_chunk(const dev_tiles &T, int32_t i, int chunk, const double *xin, double *x, double *smem,
                          int epoch)
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
            double v = FORWARD ? tile_tmatvec<true, P, S, NS>(T, &meta, q, mi, x, us)
                               : tile_matvec<true, P, S, NS>(T, &meta, q, mi, x, us);
            __stcg(scr + (cb - q0 + q) * LD + c, v);
        }
        __syncthreads(); /* meta is rewritten by the next group */
    }
    __threadfence(); /* the partial sums before the count */
    __syncthreads();
    if (threadIdx.x == 0) s_last = atomicAdd(T.sf_count + i, 1) == nchunks - (FORWARD ? 2 : 1);
    __syncthreads();
    if (!s_last) return;
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
        return;
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
}

#endif
