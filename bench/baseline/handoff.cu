/* ildl-handoff -- the latency of one dependency handoff between SMs, with the wait/publish
 * protocol of the sync-free triangular solve (src/cuda/solve.cu): a chain of L steps where
 * step s runs on block s mod G (G = number of SMs, one warp each, all resident), waits for
 * step s-1's flag, reads its 32 values, and publishes its own values and flag. One level of a
 * block triangular solve can never be faster than one such step, so levels x 2 directions x
 * this latency is a lower bound on one SQMR iteration, whatever the bytes.
 *   variant "bare":  wait, read 32 values, write 32 values, publish
 *   variant "trsv":  the same plus a 32-step dependent warp substitution (a diagonal-tile solve)
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

__global__ void k_chain(int *flags, double *x, int L, int epoch, int trsv)
{
    int lane = threadIdx.x & 31;
    for (int s = blockIdx.x; s < L; s += gridDim.x) {
        double v = 1.0;
        if (s > 0) {
            wait_flag(flags, s - 1, epoch);
            v = __ldcg(x + (size_t)(s - 1) * 32 + lane);
        }
        if (trsv) {
            /* forward substitution with a unit lower triangle of 0.5: 32 dependent steps */
            for (int k = 0; k < 32; k++) {
                double p = __shfl_sync(0xffffffffu, v, k);
                if (lane > k) v -= 0.5 * p;
            }
        }
        x[(size_t)s * 32 + lane] = v * 0.5;
        __threadfence();
        __syncwarp();
        if (lane == 0) atomicExch(flags + s, epoch);
    }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median microseconds per step of REPS chains; epochs continue from *epoch. -1 on failure. */
static double time_chain(int *flags, double *x, int L, int G, int trsv, int *epoch)
{
    cudaEvent_t e0 = NULL, e1 = NULL;
    float ms[REPS];
    double us = -1.0;
    if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) goto cleanup;
    k_chain<<<G, 32>>>(flags, x, L, ++*epoch, trsv); /* warm-up */
    if (cudaDeviceSynchronize() != cudaSuccess) goto cleanup;
    for (int r = 0; r < REPS; r++) {
        cudaEventRecord(e0, 0);
        k_chain<<<G, 32>>>(flags, x, L, ++*epoch, trsv);
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
        double bare = time_chain(flags, x, L, G, 0, &epoch);
        double trsv = time_chain(flags, x, L, G, 1, &epoch);
        if (bare < 0 || trsv < 0) {
            fprintf(stderr, "ildl-handoff: %s\n", cudaGetErrorString(cudaGetLastError()));
            goto cleanup;
        }
        printf("{\"device\":\"%s\",\"sms\":%d,\"steps\":%d,\"handoff_us\":%.3f,\"handoff_trsv_us\":%.3f}\n",
               prop.name, G, L, bare, trsv);
        rc = 0;
    }
cleanup:
    if (flags) cudaFree(flags);
    if (x) cudaFree(x);
    return rc;
}
