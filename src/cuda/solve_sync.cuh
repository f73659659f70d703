/* solve_sync.cuh -- how the rows of a sync-free sweep wait for each other (the values they
 * need, polled until set) and store their own, and the hooks of the trace build
 * (-DILDL_SOLVE_TRACE: when each ticket was claimed, waited and finished; empty otherwise). The
 * level schedule reads final values and needs none of it (SF = false). */
#ifndef ILDL_CUDA_SOLVE_SYNC_CUH
#define ILDL_CUDA_SOLVE_SYNC_CUH
#include "cuda/factor_kernels.cuh"

/* How rows wait for each other: no flags. A sweep writes into a vector filled with SF_UNSET
 * beforehand, and a waiting warp polls the values it needs until none is SF_UNSET (one relaxed
 * 8-byte store per value, single-copy atomic; the value arrives with the poll that sees it,
 * and the writer needs no fence). A signalling NaN: arithmetic never produces one (it quiets
 * NaNs), and every value a sweep writes comes out of an addition, so no written value can
 * look unset. */
#define SF_UNSET 0x7ff4deadbeefcafeLL
/* The longest pause between two polls of the values, ns. */
#define SF_BACKOFF_NS 64

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

/* Wait until *flag carries this epoch (acquire, lane 0 of each warp): a split row's running sum
 * (row_chunk) before its last item goes on from it. */
__device__ __forceinline__ void sf_wait_ready(const int *flag, int epoch)
{
    if ((threadIdx.x & 31) == 0) acquire_until(flag, epoch, 256);
    __syncwarp(); /* the lanes' loads of the running sum come after lane 0's acquire */
}

/* Load a dependency's x: in the sync-free schedule bypass L1 (written by another SM). */
template <bool SF> __device__ __forceinline__ double ld_dep(const double *p)
{
    return SF ? __ldcg(p) : *p;
}

#ifdef ILDL_SOLVE_TRACE
__shared__ int s_trace_spun; /* the no-staging path: this tile's first poll found a value unset */
#endif
/* Lane c < m returns p[c] once it is set (all lanes wait for all m values). */
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
        if (ns < SF_BACKOFF_NS) ns *= 2;
    }
    return c < m ? v : 0.0;
}

/* A dependency's m values p[0..m) for lane c < m (0 beyond): polled in the sync-free
 * schedule, final already in the level schedule. */
template <bool SF>
__device__ __forceinline__ double dep_values(const double *p, int m)
{
    int c = threadIdx.x & 31;
    if (SF) return sf_poll_values(p, m);
    return c < m ? ld_dep<SF>(p + c) : 0.0;
}

/* Store a row's value: relaxed in the sync-free schedule (others poll it). */
template <bool SF> __device__ __forceinline__ void st_row(double *p, double v)
{
    if (SF)
        asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(__double_as_longlong(v)) : "memory");
    else
        *p = v;
}

#ifdef ILDL_SOLVE_TRACE
/* A diagnostic build (-DILDL_SOLVE_TRACE): per ticket and direction, the claim time, the last
 * dependency wait (time << 24 | row), the publish time, in globaltimer ns (solve_set_trace). */
static __device__ unsigned long long *g_sf_trace; /* one per .cu file of sync-free kernels */
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

#endif
