/* ildl-bandwidth -- the device-to-device copy bandwidth that the benchmark's "bandwidth floor"
 * column divides by: the median of 11 cudaMemcpy copies of a buffer (default 1 GiB), counting
 * read + write bytes. Prints one JSON object; exit 2 without a usable GPU.
 *   usage: ildl-bandwidth [MiB] */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS 11

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 1024;
    size_t bytes = mib << 20;
    void *src = NULL, *dst = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float ms[REPS];
    cudaDeviceProp prop;
    int rc = 2;
    if (mib == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        fprintf(stderr, "ildl-bandwidth: no usable CUDA device or bad size\n");
        return 2;
    }
    if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess ||
        cudaMemset(src, 1, bytes) != cudaSuccess || cudaEventCreate(&e0) != cudaSuccess ||
        cudaEventCreate(&e1) != cudaSuccess) {
        fprintf(stderr, "ildl-bandwidth: %s\n", cudaGetErrorString(cudaGetLastError()));
        goto cleanup;
    }
    if (cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice) != cudaSuccess) goto cleanup; /* warm-up */
    for (int r = 0; r < REPS; r++) {
        if (cudaEventRecord(e0, 0) != cudaSuccess ||
            cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0) != cudaSuccess ||
            cudaEventRecord(e1, 0) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
            cudaEventElapsedTime(&ms[r], e0, e1) != cudaSuccess)
            goto cleanup;
    }
    qsort(ms, REPS, sizeof ms[0], cmp_float);
    printf("{\"device\":\"%s\",\"copy_bytes\":%zu,\"median_ms\":%.4f,\"d2d_GBps\":%.1f}\n", prop.name,
           bytes, ms[REPS / 2], 2.0 * (double)bytes / (ms[REPS / 2] * 1e-3) / 1e9);
    rc = 0;
cleanup:
    if (rc) fprintf(stderr, "ildl-bandwidth: CUDA error: %s\n", cudaGetErrorString(cudaGetLastError()));
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(src);
    cudaFree(dst);
    return rc;
}
