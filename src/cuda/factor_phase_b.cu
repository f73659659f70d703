/* factor_phase_b.cu -- phase B of the block-iLDL^T factorization on the GPU, per chunk of rows
 * (the driver is factor.cu): the leftover grants and storage offsets of the chunk's tiles in
 * storage order, and the pivot counts.
 *   k_phase_b         one block: the CPU reference's sequential rule (src/cpu/factor.c)
 *                     computed with prefix sums, so grants and offsets are the reference's;
 *   k_phase_b_atomic  the paper's racing protocol (ILDL_LEFTOVER_ATOMIC, not reproducible),
 *                     then k_phase_b_atomic_end.
 * Integer arithmetic only: no value type. Launches in factor_phases.cuh. */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include "cuda/context.cuh"
#include "cuda/factor_phases.cuh"

/* What storage slot g needs, from the static slot table (ildl_cuda_create): a dense tile
 * stores its m_i x m_j entries; a sparse off-diagonal tile stores what it keeps, up to its
 * capacity plus a leftover grant. Reading one table entry replaces a binary search over the
 * chunk's rows and five dependent loads per slot. */
struct slot_info {
    int64_t dense, cap;
    bool sparse;
};

__device__ __forceinline__ slot_info slot_get(const int64_t *slot_size, int64_t g)
{
    slot_info x;
    int64_t v = slot_size[g];
    x.sparse = v < 0;
    x.cap = x.sparse ? -v - 1 : 0;
    x.dense = x.sparse ? 0 : v;
    return x;
}

#define SCAN_THREADS 1024
typedef cub::BlockScan<long long, SCAN_THREADS> scan_t;
typedef cub::BlockReduce<long long, SCAN_THREADS> reduce_t;

/* Leftover grants and storage offsets for the nslots tiles of one chunk, deterministic: the
 * reference's sequential rule (src/cpu/factor.c: in storage order, a sparse tile over its
 * capacity gets min(excess, leftover left)) computed with two block-wide prefix sums. The
 * grants before tile f add up to min(E_f, L0), E_f the excesses before f and L0 the leftover
 * at the chunk's start, so tile f gets clamp(L0 - E_f, 0, excess_f). One block; the counts
 * are integer sums, so reducing them in any order is exact. */
__global__ void __launch_bounds__(SCAN_THREADS) k_phase_b(dev_tiles T, int32_t nrows, int64_t nslots,
                                                          const int64_t *slot_size, const int64_t *need,
                                                          const ildl_dense_result *res, factor_state *st,
                                                          int end_of_level)
{
    __shared__ union {
        typename scan_t::TempStorage scan;
        typename reduce_t::TempStorage reduce;
    } tmp;
    __shared__ factor_state S;
    int tid = threadIdx.x;
    if (tid == 0) S = *st;
    __syncthreads();
    if (S.err) return; /* uniform */
    long long n2x2 = 0, npert = 0, granted_sum = 0, credit_sum = 0;
    for (int32_t rr = tid; rr < nrows; rr += SCAN_THREADS) {
        n2x2 += res[rr].n2x2;
        npert += res[rr].nperturbed;
    }
    const long long L0 = S.leftover, used0 = S.used, so0 = S.so;
    long long runE = 0, runU = 0;
    for (int64_t base = 0; base < nslots; base += SCAN_THREADS) {
        int64_t f = base + tid;
        bool valid = f < nslots;
        slot_info x = {0, 0, false};
        long long nd = 0;
        if (valid) {
            x = slot_get(slot_size, so0 + f);
            nd = need[f];
        }
        long long excess = (valid && x.sparse && nd > x.cap) ? nd - x.cap : 0, E, aggE;
        scan_t(tmp.scan).ExclusiveSum(excess, E, aggE);
        __syncthreads();
        E += runE;
        long long granted = 0;
        if (excess > 0) {
            long long avail = L0 - E;
            granted = avail <= 0 ? 0 : (avail < excess ? avail : excess);
        }
        long long stored = !valid ? 0 : x.sparse ? (nd > x.cap ? x.cap + granted : nd) : x.dense, U, aggU;
        scan_t(tmp.scan).ExclusiveSum(stored, U, aggU);
        __syncthreads();
        if (valid) {
            int64_t t = T.tile_order[so0 + f];
            T.off[t] = used0 + runU + U;
            T.nnz[t] = stored;
            granted_sum += granted;
            if (x.sparse) credit_sum += x.cap + granted - stored;
        }
        runE += aggE;
        runU += aggU;
    }
    long long sums[4] = {n2x2, npert, granted_sum, credit_sum};
    for (int k = 0; k < 4; k++) {
        long long v = reduce_t(tmp.reduce).Sum(sums[k]);
        __syncthreads();
        sums[k] = v; /* valid in thread 0 */
    }
    if (tid == 0) {
        S.n2x2 += (int)sums[0];
        S.nperturbed += (int)sums[1];
        S.so += nslots;
        S.leftover -= sums[2];
        S.granted += sums[2];
        S.credit += sums[3];
        S.used += runU;
        if (S.used > T.total_cap) S.err = ILDL_ERR_INTERNAL;
        if (end_of_level && !S.err) {
            S.leftover += S.credit;
            S.credit = 0;
        }
        *st = S;
    }
}

/* The paper's conservative atomic protocol (Alg. 2) instead of the scan: one thread per tile of
 * the chunk, in any order. A tile over its capacity subtracts its whole excess from the leftover
 * counter, keeps what was there (never more than its excess) and gives the rest back; storage
 * comes from an atomic counter. Never over-allocates, but grants and the storage layout depend
 * on the race: the factor is not reproducible (ILDL_LEFTOVER_ATOMIC). */
__global__ void k_phase_b_atomic(dev_tiles T, int32_t nrows, int64_t nslots, const int64_t *slot_size,
                                  const int64_t *need, const ildl_dense_result *res, factor_state *st)
{
    int64_t f = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (st->err) return;
    if (f < nrows) {
        atomicAdd(&st->n2x2, res[f].n2x2);
        atomicAdd(&st->nperturbed, res[f].nperturbed);
    }
    if (f >= nslots) return;
    int64_t g = st->so + f, t = T.tile_order[g]; /* st->so moves only in k_phase_b_atomic_end */
    slot_info x = slot_get(slot_size, g);
    long long nd = need[f];
    unsigned long long *leftover = (unsigned long long *)&st->leftover;
    long long granted = 0, stored = x.dense;
    if (x.sparse) {
        if (nd > x.cap) {
            long long required = nd - x.cap;
            long long wasfree = (long long)atomicAdd(leftover, (unsigned long long)(-required));
            granted = wasfree <= 0 ? 0 : (wasfree < required ? wasfree : required);
            atomicAdd(leftover, (unsigned long long)(required - granted));
            stored = x.cap + granted;
        } else {
            stored = nd;
        }
        atomicAdd((unsigned long long *)&st->credit, (unsigned long long)(x.cap + granted - stored));
        if (granted) atomicAdd((unsigned long long *)&st->granted, (unsigned long long)granted);
    }
    T.off[t] = (int64_t)atomicAdd((unsigned long long *)&st->used, (unsigned long long)stored);
    T.nnz[t] = stored;
}

/* After the atomic protocol: slots consumed, capacity check, credits at the end of a level. */
__global__ void k_phase_b_atomic_end(dev_tiles T, int64_t nslots, factor_state *st, int end_of_level)
{
    if (st->err) return;
    st->so += nslots;
    if (st->used > T.total_cap) st->err = ILDL_ERR_INTERNAL;
    if (end_of_level && !st->err) {
        st->leftover += st->credit;
        st->credit = 0;
    }
}

/* ------------------------------------------------------------ launches */

void phase_b_launch(cudaStream_t s, const dev_tiles &T, int32_t nrows, int64_t nslots, const int64_t *slot_size,
                    const int64_t *need, const ildl_dense_result *res, factor_state *st, int end_of_level)
{
    k_phase_b<<<1, SCAN_THREADS, 0, s>>>(T, nrows, nslots, slot_size, need, res, st, end_of_level);
}

void phase_b_atomic_launch(cudaStream_t s, const dev_tiles &T, int32_t nrows, int64_t nslots,
                           const int64_t *slot_size, const int64_t *need, const ildl_dense_result *res, factor_state *st)
{
    k_phase_b_atomic<<<(unsigned)((nslots + 255) / 256), 256, 0, s>>>(T, nrows, nslots, slot_size, need, res, st);
}

void phase_b_atomic_end_launch(cudaStream_t s, const dev_tiles &T, int64_t nslots, factor_state *st,
                               int end_of_level)
{
    k_phase_b_atomic_end<<<1, 1, 0, s>>>(T, nslots, st, end_of_level);
}
