/* ildl-handoff -- the latency of one dependency handoff between SMs, with the wait/publish
 * protocol of the sync-free triangular solve (src/cuda/solve.cu): a chain of L steps where
 * step s runs on block s mod G (G = number of SMs, one warp each, all resident), waits for
 * step s-1's flag, reads its 32 values, and publishes its own values and flag. One level of a
 * block triangular solve can never be faster than one such step, so levels x 2 directions x
 * this latency is a lower bound on one SQMR iteration, whatever the bytes.
 *   variant "bare":  wait, read 32 values, write 32 values, publish
 *   variant "trsv":  the same plus a 32-step dependent warp substitution (a diagonal-tile solve)
 *   variant "acqrel": bare, with an acquire-load poll and a release store of the flag instead of
 *                     volatile poll + fence and fence + atomicExch ("spin": without back-off)
 *   variant "values": no flags (the solves' default protocol 2): the 32 values start as a
 *                     signalling NaN, step s polls step s-1's values until none is, and writes
 *                     its own with relaxed stores
 * Prints one JSON object with the median microseconds per step of 7 runs; exit 2 without a GPU.
 *   usage: ildl-handoff [L] */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS 7

__device__ __forceinline__ void wait_flag(const int *flags, int s, int epoch)
{
    if ((threadIdx.x & 31) == 0) {
        unsigned ns = 8;
        while (*(volatile const int *)(flags + s) != epoch) {
            __nanosleep(ns);
            if (ns < 64) ns *= 2;
        }
        __threadfence();
    }
    __syncwarp();
}

/* The same wait with an acquire load instead of volatile load + fence; `sleep` 0: spin. */
__device__ __forceinline__ void wait_flag_acquire(const int *flags, int s, int epoch, int sleep)
{
    if ((threadIdx.x & 31) == 0) {
        unsigned ns = 8;
        int v;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(flags + s) : "memory");
            if (v == epoch) break;
            if (sleep) {
                __nanosleep(ns);
                if (ns < 64) ns *= 2;
            }
        }
    }
    __syncwarp();
}

#define UNSET 0x7ff4deadbeefcafeLL

/* Step s-1's value for this lane once it is no longer UNSET (all lanes wait for all 32). */
__device__ __forceinline__ double poll_values(const double *p)
{
    int lane = threadIdx.x & 31;
    unsigned ns = 8;
    long long b;
    for (;;) {
        asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(b) : "l"(p + lane) : "memory");
        if (__all_sync(0xffffffffu, b != UNSET)) break;
        __nanosleep(ns);
        if (ns < 64) ns *= 2;
    }
    return __longlong_as_double(b);
}

__global__ void k_unset(double *x, size_t n)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) x[k] = __longlong_as_double(UNSET);
}

/* protocol 0: the sync-free solve's (volatile poll + fence; fence + atomicExch);
 * 1: acquire load / release store; 2: as 1 without the sleep back-off; 3: values polled */
__global__ void k_chain(int *flags, double *x, int L, int epoch, int trsv, int protocol)
{
    int lane = threadIdx.x & 31;
    for (int s = blockIdx.x; s < L; s += gridDim.x) {
        double v = 1.0;
        if (s > 0 && protocol == 3) {
            v = poll_values(x + (size_t)(s - 1) * 32);
        } else if (s > 0) {
            if (protocol == 0) wait_flag(flags, s - 1, epoch);
            else wait_flag_acquire(flags, s - 1, epoch, protocol == 1);
            v = __ldcg(x + (size_t)(s - 1) * 32 + lane);
        }
        if (trsv) {
            /* forward substitution with a unit lower triangle of 0.5: 32 dependent steps */
            for (int k = 0; k < 32; k++) {
                double p = __shfl_sync(0xffffffffu, v, k);
                if (lane > k) v -= 0.5 * p;
            }
        }
        if (protocol == 3) {
            double o = v * 0.5;
            asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(x + (size_t)s * 32 + lane),
                         "l"(__double_as_longlong(o)) : "memory");
            continue;
        }
        x[(size_t)s * 32 + lane] = v * 0.5;
        if (protocol == 0) {
            __threadfence();
            __syncwarp();
            if (lane == 0) atomicExch(flags + s, epoch);
        } else {
            __syncwarp(); /* orders the lanes' writes before lane 0's release (cumulative) */
            if (lane == 0) asm volatile("st.release.gpu.global.s32 [%0], %1;" :: "l"(flags + s), "r"(epoch) : "memory");
        }
    }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median microseconds per step of REPS chains; epochs continue from *epoch. -1 on failure. */
static double time_chain(int *flags, double *x, int L, int G, int trsv, int protocol, int *epoch)
{
    cudaEvent_t e0 = NULL, e1 = NULL;
    float ms[REPS];
    double us = -1.0;
    const size_t nx = (size_t)32 * L;
    const unsigned fill = (unsigned)((nx + 255) / 256);
    if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) goto cleanup;
    if (protocol == 3) k_unset<<<fill, 256>>>(x, nx);
    k_chain<<<G, 32>>>(flags, x, L, ++*epoch, trsv, protocol); /* warm-up */
    if (cudaDeviceSynchronize() != cudaSuccess) goto cleanup;
    for (int r = 0; r < REPS; r++) {
        if (protocol == 3) k_unset<<<fill, 256>>>(x, nx); /* not timed */
        cudaEventRecord(e0, 0);
        k_chain<<<G, 32>>>(flags, x, L, ++*epoch, trsv, protocol);
        cudaEventRecord(e1, 0);
        if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&ms[r], e0, e1) != cudaSuccess)
            goto cleanup;
    }
    qsort(ms, REPS, sizeof ms[0], cmp_float);
    us = 1e3 * ms[REPS / 2] / L;
cleanup:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return us;
}

int main(int argc, char **argv)
{
    int L = argc > 1 ? atoi(argv[1]) : 20000;
    int *flags = NULL, epoch = 0;
    double *x = NULL;
    cudaDeviceProp prop;
    int rc = 2;
    if (L < 2 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        fprintf(stderr, "ildl-handoff: no usable CUDA device or bad chain length\n");
        return 2;
    }
    int G = prop.multiProcessorCount;
    if (cudaMalloc(&flags, sizeof(int) * (size_t)L) != cudaSuccess ||
        cudaMemset(flags, 0, sizeof(int) * (size_t)L) != cudaSuccess ||
        cudaMalloc(&x, sizeof(double) * 32 * (size_t)L) != cudaSuccess) {
        fprintf(stderr, "ildl-handoff: %s\n", cudaGetErrorString(cudaGetLastError()));
        goto cleanup;
    }
    {
        double bare = time_chain(flags, x, L, G, 0, 0, &epoch);
        double trsv = time_chain(flags, x, L, G, 1, 0, &epoch);
        double acq = time_chain(flags, x, L, G, 0, 1, &epoch);
        double spin = time_chain(flags, x, L, G, 0, 2, &epoch);
        double values = time_chain(flags, x, L, G, 0, 3, &epoch);
        if (bare < 0 || trsv < 0 || acq < 0 || spin < 0 || values < 0) {
            fprintf(stderr, "ildl-handoff: %s\n", cudaGetErrorString(cudaGetLastError()));
            goto cleanup;
        }
        printf("{\"device\":\"%s\",\"sms\":%d,\"steps\":%d,\"handoff_us\":%.3f,\"handoff_trsv_us\":%.3f,"
               "\"handoff_acqrel_us\":%.3f,\"handoff_acqrel_spin_us\":%.3f,\"handoff_values_us\":%.3f}\n",
               prop.name, G, L, bare, trsv, acq, spin, values);
        rc = 0;
    }
cleanup:
    if (flags) cudaFree(flags);
    if (x) cudaFree(x);
    return rc;
}
