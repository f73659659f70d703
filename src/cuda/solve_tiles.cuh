/* solve_tiles.cuh -- the solves' view of a tile: the shape of a staged tile and of a block's
 * partial sums, the metadata a block gathers for a group of tiles, where the values the solves
 * read are (the factor, the lanes' copy, the packed V_ii, in the staging type S), and the
 * prefetches of their lines. */
#ifndef ILDL_CUDA_SOLVE_TILES_CUH
#define ILDL_CUDA_SOLVE_TILES_CUH
#include "cuda/factor_kernels.cuh"

#define SLD 33 /* padded leading dimension of a staged tile: no bank conflicts either way */
#define STILE (LD * SLD)

/* Tiles whose partial sums a block keeps before combining them (a row with more tiles is done
 * in several groups, a barrier each). Few, so that more blocks fit an SM: the tiles come in the
 * order their dependencies are solved (fwd_seq, bwd_seq), so the late ones are in the last
 * group anyway. (Before that order, the backward sweep kept 64: its late tiles were at the
 * start of a row, and 16 made stokes64's backward sweep 4.4 -> 8.4 ms.) */
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

/* Stored factor value p in the staging type S: float exactly when the factor is stored in float
 * (solve_launch picks S by T.val32), so the choice costs no branch per load. */
template <typename S> __device__ __forceinline__ S stage_val(const dev_tiles &T, int64_t p);
template <> __device__ __forceinline__ double stage_val<double>(const dev_tiles &T, int64_t p) { return T.val[p]; }
template <> __device__ __forceinline__ float stage_val<float>(const dev_tiles &T, int64_t p) { return T.val32[p]; }
template <typename S> __device__ __forceinline__ const S *stage_ptr(const dev_tiles &T, int64_t p);
template <> __device__ __forceinline__ const double *stage_ptr<double>(const dev_tiles &T, int64_t p) { return T.val + p; }
template <> __device__ __forceinline__ const float *stage_ptr<float>(const dev_tiles &T, int64_t p) { return T.val32 + p; }

/* The solves' copy of stored value p in the staging type (lane_val or lane_val32, as
 * stage_ptr), and the value itself. */
template <typename S> __device__ __forceinline__ const S *lane_ptr(const dev_tiles &T, int64_t p);
template <> __device__ __forceinline__ const double *lane_ptr<double>(const dev_tiles &T, int64_t p) { return T.lane_val + p; }
template <> __device__ __forceinline__ const float *lane_ptr<float>(const dev_tiles &T, int64_t p) { return T.lane_val32 + p; }
template <typename S> __device__ __forceinline__ S lane_val(const dev_tiles &T, int64_t p) { return *lane_ptr<S>(T, p); }

/* The solves' packed V_ii (vii_pk or vii_pk32, whichever the solves read) and a pointer to block
 * row i's. */
template <typename S> __device__ __forceinline__ S *vii_packed(const dev_tiles &T, int32_t i);
template <> __device__ __forceinline__ double *vii_packed<double>(const dev_tiles &T, int32_t i) { return T.vii_pk + T.vii_off[i]; }
template <> __device__ __forceinline__ float *vii_packed<float>(const dev_tiles &T, int32_t i) { return T.vii_pk32 + T.vii_off[i]; }

/* A warp's share of a solve block's shared memory, in elements of S: its staging tile, or (NS)
 * nothing. */
template <typename S, bool NS> __host__ __device__ constexpr int warp_stage()
{
    return NS ? 0 : STILE;
}

/* Ask L2 for count values from p: one 128-byte line per lane and pass, no registers held
 * across a wait. A dense tile's values (prefetch_dense), which a tile without staging reads
 * after its dependency's wait; the backward sweep's packed V_ii. */
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

#endif
