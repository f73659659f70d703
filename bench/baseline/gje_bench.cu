/* gje_bench.cu -- ildl-gje: block-Jacobi's batched Gauss-Jordan inversion (src/cuda/gje.cu)
 * against cuBLAS's batched LU and inverse (cublasDgetrfBatched + cublasDgetriBatched) on a batch
 * of random blocks of one size (sizes 8, 16, 32 by default; 10 000 blocks), and on a batch of
 * mixed sizes 1..32 (which cuBLAS's uniform batches cannot take). Per size: the median time of
 * --repeat runs (device events), GFLOPS at 2 m^3 flops per inversion, the batched apply's time
 * and bandwidth, the largest difference from cuBLAS's inverse relative to its largest entry,
 * and whether the device's inverses are the CPU reference's bits (ildl_gje_invert).
 *   ildl-gje [--count N] [--sizes 8,16,32] [--repeat R] [--device D]
 * docs/methods.md. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "errors.h"
extern "C" {
#include "cpu/gje.h"
#include "cuda/cuda_backend.h"
}

#define CUBLAS_CK(call)                                                                        \
    do {                                                                                       \
        cublasStatus_t s_ = (call);                                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) throw Error(strf("%s failed: status %d", #call, (int)s_)); \
    } while (0)

struct Timer {
    cudaEvent_t a, b;
    Timer() { CUDA_CK(cudaEventCreate(&a)); CUDA_CK(cudaEventCreate(&b)); }
    ~Timer() { cudaEventDestroy(a); cudaEventDestroy(b); }
    void start() { CUDA_CK(cudaEventRecord(a)); }
    double stop_ms()
    {
        float ms = 0;
        CUDA_CK(cudaEventRecord(b));
        CUDA_CK(cudaEventSynchronize(b));
        CUDA_CK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }
};

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t k = v.size() / 2;
    return v.size() % 2 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

template <class T> static T *dalloc(size_t n)
{
    T *p = nullptr;
    CUDA_CK(cudaMalloc((void **)&p, sizeof(T) * (n ? n : 1)));
    return p;
}

static void run(int64_t count, int msize /* 0: mixed 1..32 */, int repeat, cublasHandle_t cb)
{
    std::vector<int32_t> size(count);
    std::vector<int64_t> off(count + 1, 0), row(count + 1, 0);
    unsigned seed = 1234u + (unsigned)msize;
    for (int64_t b = 0; b < count; b++) {
        size[b] = msize ? msize : 1 + (int32_t)((b * 13) % 32);
        off[b + 1] = off[b] + (int64_t)size[b] * size[b];
        row[b + 1] = row[b] + size[b];
    }
    const int64_t E = off[count], N = row[count];
    std::vector<double> A(E), inv(E), ref(E), x(N);
    for (auto &a : A) {
        seed = seed * 1103515245u + 12345u;
        a = ((seed >> 8) & 0xffffff) / (double)0x1000000 * 2.0 - 1.0;
    }
    for (auto &v : x) v = 1.0;
    int32_t *d_size = dalloc<int32_t>(count), *d_pert = dalloc<int32_t>(count);
    int64_t *d_off = dalloc<int64_t>(count + 1), *d_row = dalloc<int64_t>(count + 1);
    double *d_A = dalloc<double>(E), *d_inv = dalloc<double>(E), *d_x = dalloc<double>(N), *d_z = dalloc<double>(N);
    CUDA_CK(cudaMemcpy(d_size, size.data(), sizeof(int32_t) * count, cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(d_off, off.data(), sizeof(int64_t) * (count + 1), cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(d_row, row.data(), sizeof(int64_t) * (count + 1), cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(d_A, A.data(), sizeof(double) * E, cudaMemcpyHostToDevice));
    CUDA_CK(cudaMemcpy(d_x, x.data(), sizeof(double) * N, cudaMemcpyHostToDevice));
    Timer t;
    std::vector<double> ours, apply, theirs;
    for (int r = 0; r < repeat + 1; r++) { /* the first run warms up */
        t.start();
        if (ildl_cuda_gje_invert_async(count, d_size, d_off, d_A, 1e-300, 1.0, d_inv, d_pert, NULL))
            throw Error(strf("the GJE kernel failed: %s", ildl_cuda_last_message()));
        double ms = t.stop_ms();
        t.start();
        if (ildl_cuda_gje_apply_async(count, d_size, d_off, d_row, d_inv, d_x, d_z, NULL))
            throw Error(strf("the apply kernel failed: %s", ildl_cuda_last_message()));
        double ams = t.stop_ms();
        if (r) ours.push_back(ms), apply.push_back(ams);
    }
    CUDA_CK(cudaMemcpy(inv.data(), d_inv, sizeof(double) * E, cudaMemcpyDeviceToHost));
    ildl_gje_invert(count, size.data(), off.data(), A.data(), 1e-300, 1.0, ref.data(), NULL);
    bool bits = std::memcmp(inv.data(), ref.data(), sizeof(double) * E) == 0;
    double flops = 0;
    for (int64_t b = 0; b < count; b++) flops += 2.0 * size[b] * (double)size[b] * size[b];
    double t_ours = median(ours), t_apply = median(apply);
    std::string cub = "(uniform sizes only)", cubg = "", ratio = "", diff = "";
    if (msize) {
        int m = msize;
        double *d_W = dalloc<double>(E), *d_C = dalloc<double>(E);
        int *d_piv = dalloc<int>((size_t)count * m), *d_info = dalloc<int>(count);
        std::vector<double *> pw(count), pc(count);
        for (int64_t b = 0; b < count; b++) pw[b] = d_W + off[b], pc[b] = d_C + off[b];
        double **d_pw = dalloc<double *>(count), **d_pc = dalloc<double *>(count);
        CUDA_CK(cudaMemcpy(d_pw, pw.data(), sizeof(double *) * count, cudaMemcpyHostToDevice));
        CUDA_CK(cudaMemcpy(d_pc, pc.data(), sizeof(double *) * count, cudaMemcpyHostToDevice));
        for (int r = 0; r < repeat + 1; r++) {
            CUDA_CK(cudaMemcpy(d_W, d_A, sizeof(double) * E, cudaMemcpyDeviceToDevice)); /* getrf overwrites */
            t.start();
            CUBLAS_CK(cublasDgetrfBatched(cb, m, d_pw, m, d_piv, d_info, (int)count));
            CUBLAS_CK(cublasDgetriBatched(cb, m, (const double *const *)d_pw, m, d_piv, d_pc, m, d_info, (int)count));
            double ms = t.stop_ms();
            if (r) theirs.push_back(ms);
        }
        std::vector<double> C(E);
        CUDA_CK(cudaMemcpy(C.data(), d_C, sizeof(double) * E, cudaMemcpyDeviceToHost));
        /* cuBLAS sees the row-major block as its transpose: C (column-major) = (A^T)^{-1}, so
         * C[i*m + j] = A^{-1}_ij, ours inv[j*m + i] */
        double dmax = 0, cmax = 0;
        for (int64_t b = 0; b < count; b++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++) {
                    double c = C[off[b] + i * m + j], o = inv[off[b] + j * m + i];
                    dmax = std::max(dmax, std::fabs(c - o));
                    cmax = std::max(cmax, std::fabs(c));
                }
        double t_cub = median(theirs);
        cub = strf("%.4f", t_cub);
        cubg = strf("%.1f", flops / (t_cub * 1e6));
        ratio = strf("%.2f", t_cub / t_ours);
        diff = strf("%.1e", dmax / cmax);
        cudaFree(d_W), cudaFree(d_C), cudaFree(d_piv), cudaFree(d_info), cudaFree(d_pw), cudaFree(d_pc);
    }
    double bytes = 8.0 * (double)E + 16.0 * (double)N;
    printf("| %s | %lld | %.4f | %.1f | %s | %s | %s | %.4f | %.0f | %s | %s |\n", msize ? strf("%d", msize).c_str() : "1..32",
           (long long)count, t_ours, flops / (t_ours * 1e6), cub.c_str(), cubg.c_str(), ratio.c_str(), t_apply,
           bytes / (t_apply * 1e6), diff.c_str(), bits ? "yes" : "NO");
    cudaFree(d_size), cudaFree(d_pert), cudaFree(d_off), cudaFree(d_row), cudaFree(d_A), cudaFree(d_inv);
    cudaFree(d_x), cudaFree(d_z);
}

int main(int argc, char **argv)
{
    int64_t count = 10000;
    int repeat = 20, device = 0;
    std::vector<int> sizes = {8, 16, 32, 0};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--count" && i + 1 < argc) count = atoll(argv[++i]);
        else if (a == "--repeat" && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (a == "--device" && i + 1 < argc) device = atoi(argv[++i]);
        else if (a == "--sizes" && i + 1 < argc) {
            sizes.clear();
            for (char *s = strtok(argv[++i], ","); s; s = strtok(NULL, ",")) sizes.push_back(atoi(s));
        } else {
            fprintf(stderr, "usage: ildl-gje [--count N] [--sizes 8,16,32,0 (0: mixed 1..32)] [--repeat R] [--device D]\n");
            return 2;
        }
    }
    if (count < 1 || repeat < 1) {
        fprintf(stderr, "ildl-gje: --count and --repeat must be >= 1\n");
        return 2;
    }
    for (int m : sizes)
        if (m < 0 || m > ILDL_GJE_MAX) {
            fprintf(stderr, "ildl-gje: sizes must be in 1..%d (0: mixed)\n", ILDL_GJE_MAX);
            return 2;
        }
    try {
        CUDA_CK(cudaSetDevice(device));
        cudaDeviceProp prop;
        CUDA_CK(cudaGetDeviceProperties(&prop, device));
        cublasHandle_t cb;
        CUBLAS_CK(cublasCreate(&cb));
        printf("ildl-gje on %s: medians of %d runs\n\n", prop.name, repeat);
        printf("| size | blocks | GJE ms | GJE GFLOPS | cuBLAS getrf+getri ms | cuBLAS GFLOPS | cuBLAS / GJE | apply ms | apply GB/s | "
               "max diff / max entry | CPU's bits |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int m : sizes) run(count, m, repeat, cb);
        cublasDestroy(cb);
    } catch (const Error &e) {
        fprintf(stderr, "ildl-gje: %s\n", e.what());
        return 1;
    }
    return 0;
}
