/* solve_sums_staged.cuh -- one tile's partial sums in the kernels that stage tiles: a tile is
 * copied densely into the warp's shared-memory tile before its dependency's wait (zeros where a
 * sparse tile stores nothing), or, sparse with at most SMALL_SPARSE entries, kept in registers
 * and summed by output with the lane table of add_sparse_chunk. Either way the CPU's products
 * and additions in the CPU's order (src/cpu/solve.c). */
#ifndef ILDL_CUDA_SOLVE_SUMS_STAGED_CUH
#define ILDL_CUDA_SOLVE_SUMS_STAGED_CUH
#include "cuda/solve_sync.cuh"
#include "cuda/solve_tiles.cuh"

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
 * entries in ~25x25), and no zero fill. */
#ifndef SMALL_SPARSE_CHUNKS
#define SMALL_SPARSE_CHUNKS 2
#endif
#define SMALL_SPARSE (SMALL_SPARSE_CHUNKS * LD)

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

/* Lane c of one warp: s_c = sum_l U_t(l,c) x_k(l) over l ascending for tile t = (k,i) (mk x mi);
 * a sparse tile adds its stored entries (small ones from registers, every stored entry; staged
 * ones skip the exact zeros, which for finite x changes no bit: s starts at +0, never becomes -0), a
 * dense one every entry: the CPU's two loops, bit for bit. */
template <bool SF, int P, typename S>
__device__ __forceinline__ double tile_tmatvec_staged(const dev_tiles &T, const tile_meta<P> *m, int q, int mi,
                                                      const double *x, S *us)
{
    int c = threadIdx.x & 31;
    int mk = m->depm[q];
    if (m->sparse[q] && m->nnz[q] <= SMALL_SPARSE) {
        sparse_regs<S> e = load_small_sparse<P, S>(T, m, q); /* final: load it while k finishes */
        double xk = dep_values<SF>(x + m->dep0[q], mk);
        if (SF) TRACE_WAITED(m->dep[q]);
        return small_sparse_sum<true, S>(e, m->nnz[q], xk, m->wc[q], us);
    }
    TRACE_T(t0);
    int sparse = stage_tile(T, m, q, mk, mi, us); /* the factor is final: load it while k finishes */
    TRACE_T(t1);
    double xk = dep_values<SF>(x + m->dep0[q], mk);
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
                                                     const double *x, S *us)
{
    int r = threadIdx.x & 31;
    int mj = m->depm[q];
    if (m->sparse[q] && m->nnz[q] <= SMALL_SPARSE) {
        sparse_regs<S> e = load_small_sparse<P, S>(T, m, q);
        double xj = dep_values<SF>(x + m->dep0[q], mj);
        if (SF) TRACE_WAITED(m->dep[q]);
        return small_sparse_sum<false, S>(e, m->nnz[q], xj, 0, us); /* backward: width 32 */
    }
    TRACE_T(t0);
    int sparse = stage_tile(T, m, q, mi, mj, us);
    TRACE_T(t1);
    double xj = dep_values<SF>(x + m->dep0[q], mj);
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

#endif
