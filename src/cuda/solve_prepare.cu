/* solve_prepare.cu -- what the solves need rebuilt after each factorization (the offsets and
 * counts of the tiles change): the packed records of every tile position and work item, each
 * block row's empty tiles moved behind the others, and, for the kernels without staging tiles,
 * the lanes' counts and copies and the packed V_ii; and the small kernels around a sweep (the
 * values set to "not written yet", D^-1). */
#include "cuda/solve_sync.cuh"
#include "cuda/solve_tiles.cuh"

#include <cub/device/device_scan.cuh>

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
 * for its dependency or its loads (stokes64: 5% of the tiles, -0.7% per iteration). A split row
 * (sf_scr_* >= 0) keeps every tile where it is: its items are planned by its tile count.
 * One warp per row. */
template <bool FORWARD> __global__ void k_skip_empty(dev_tiles T)
{
    const unsigned FULL = 0xffffffffu;
    int32_t i = (int32_t)(((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    if (i >= T.nb) return;
    int lane = threadIdx.x & 31;
    int64_t q0 = FORWARD ? T.col_ptr[i] : T.row_ptr[i] + 1, qe = FORWARD ? T.col_diag[i] : T.row_ptr[i + 1];
    const int64_t *src = FORWARD ? T.fwd_seq0 : T.bwd_seq0;
    int64_t *dst = FORWARD ? T.fwd_seq : T.bwd_seq, *end = FORWARD ? T.fwd_end : T.bwd_end;
    const bool whole = (FORWARD ? T.sf_scr_f : T.sf_scr_b)[i] >= 0;
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

void solve_meta_launch(const dev_tiles &T, cudaStream_t s)
{
    unsigned rgrid = (unsigned)(((int64_t)T.nb * 32 + 255) / 256);
    k_skip_empty<true><<<rgrid, 256, 0, s>>>(T);
    k_skip_empty<false><<<rgrid, 256, 0, s>>>(T);
    unsigned grid = (unsigned)((T.ntiles + 255) / 256);
    k_solve_meta<true><<<grid, 256, 0, s>>>(T);
    k_solve_meta<false><<<grid, 256, 0, s>>>(T);
    if (T.sf_rec_f) k_sf_records<true><<<(unsigned)((T.sf_nitems_f + 255) / 256), 256, 0, s>>>(T);
    if (T.sf_rec_b) k_sf_records<false><<<(unsigned)((T.sf_nitems_b + 255) / 256), 256, 0, s>>>(T);
}

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

/* ------------------------------------------------------------ around the sweeps */

/* v <- SF_UNSET (before a sync-free forward sweep writes v); the sweep's epoch and tickets too;
 * and, when r is not NULL, w = qs .* r[q] (the preconditioner's gather, in the same pass). */
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

/* x <- D^-1 x (1x1 and 2x2 pivots), or |D|^-1 x (abs_d: each pivot's eigenvalues by magnitude,
 * ildl_pivot2_abs_solve, as the CPU's d_solve); one thread per row, the first of a 2x2 does both. */
__global__ void k_dsolve(dev_tiles T, double *x, double *unset, const int *skip, int abs_d)
{
    if (*skip) return;
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= T.n) return;
    if (unset) unset[k] = __longlong_as_double(SF_UNSET);
    int8_t ty = T.piv_type[k];
    double a = T.d_diag[k];
    if (ty == 2 && k + 1 < T.n) {
        double b = T.d_off[k], c = T.d_diag[k + 1];
        double x0 = x[k], x1 = x[k + 1];
        if (abs_d) ildl_pivot2_abs_solve(a, b, c, x0, x1, &x[k], &x[k + 1]);
        else ildl_pivot2_solve(a, b, c, ildl_pivot2_det(a, b, c), x0, x1, &x[k], &x[k + 1]);
    } else if (ty != 0) {
        x[k] /= abs_d ? fabs(a) : a;
    }
}
