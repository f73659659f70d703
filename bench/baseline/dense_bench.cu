/* dense_bench.cu -- ildl-dense: the dense factorization of one diagonal tile on the device
 * (dd_factor, src/cuda/dense_factor.cuh: the step that dominates a chain level of the complete
 * factorization, perf-notes §89) in cycles per elimination step, for none/BK/rook pivoting on
 * three kinds of 32 x 32 tiles (diagonally dominant: every pivot on the diagonal; saddle point
 * with a zero block: rook walks and 2x2 pivots; random symmetric). One block factors one tile and
 * times dd_factor with clock64 (the median of --repeat launches); a batch of --count tiles per
 * kind gives the throughput (device events) and a hash of every factored tile and pivot record,
 * so that two builds of a kernel change can be compared for speed and for the same bits.
 *   ildl-dense [--repeat R (7)] [--count N (1024)] [--device D]
 * Compiled with --fmad=false like the library (the same bits). */
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "errors.h"
#include "cuda/dense_factor.cuh"

/* Tile b's factorization; block 0 also times dd_factor (cycles into *cyc). */
__global__ void __launch_bounds__(1024) k_dense(int pivoting, int m, const double *tiles, double *out,
                                                ildl_dense_result *res_out, long long *cyc)
{
    __shared__ double W[TILE], scratch[DTILE];
    __shared__ ildl_dense_result res;
    int tid = threadIdx.y * LD + threadIdx.x;
    int64_t b = blockIdx.x;
    W[tid] = tiles[b * TILE + tid];
    __syncthreads();
    ildl_dense_params p;
    p.pivot_tol = 1e-14;
    p.perturb = 1e-10;
    p.pair_hint = NULL;
    long long t0 = clock64();
    dd_factor(pivoting, m, W, scratch, &p, &res);
    long long t1 = clock64();
    out[b * TILE + tid] = W[tid];
    dd_result_store(tid, res, res_out + b);
    if (b == 0 && tid == 0) *cyc = t1 - t0;
}

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000 * 2.0 - 1.0;
}

/* kind 0: diagonally dominant; 1: saddle point [H B^T; B 0] (H 20 x 20, weak off-diagonal);
 * 2: random symmetric. */
static void make_tiles(int kind, int count, std::vector<double> &t)
{
    unsigned s = 17u + (unsigned)kind;
    t.assign((size_t)count * TILE, 0.0);
    for (int b = 0; b < count; b++) {
        double *a = &t[(size_t)b * TILE];
        for (int i = 0; i < LD; i++)
            for (int j = i; j < LD; j++) {
                double v = urand(&s);
                if (kind == 0 && i == j) v = 40.0 + i;
                if (kind == 1) {
                    if (i >= 20 && j >= 20) v = 0.0;
                    else if (j < 20 && i != j) v *= 0.01;
                }
                a[i * LD + j] = a[j * LD + i] = v;
            }
    }
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = (const unsigned char *)p;
    for (size_t k = 0; k < n; k++) h = (h ^ c[k]) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    int repeat = 7, count = 1024, device = 0;
    try {
        for (int a = 1; a < argc; a++) {
            std::string o = argv[a];
            if (a + 1 >= argc) throw Error(strf("%s: needs a value (usage: ildl-dense [--repeat R] [--count N] [--device D])", o.c_str()));
            int v = atoi(argv[++a]);
            if (o == "--repeat" && v >= 1) repeat = v;
            else if (o == "--count" && v >= 1 && v <= 1 << 20) count = v;
            else if (o == "--device" && v >= 0) device = v;
            else throw Error(strf("%s %s: unknown option or out of range", o.c_str(), argv[a]));
        }
        CUDA_CK(cudaSetDevice(device));
        cudaDeviceProp prop;
        CUDA_CK(cudaGetDeviceProperties(&prop, device));
        int clock_khz = 0;
        CUDA_CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
        printf("device %s, clock %d MHz; %d tiles of 32 per kind, %d repeats\n", prop.name, clock_khz / 1000, count,
               repeat);
        printf("%-10s %-5s %14s %12s %14s  %s\n", "tile", "pivot", "cycles/step", "one tile us", "batch us/tile",
               "hash (tiles and records)");
        const char *kinds[3] = {"dominant", "saddle", "random"}, *pivs[3] = {"none", "bk", "rook"};
        double *d_t = NULL, *d_o = NULL;
        ildl_dense_result *d_r = NULL;
        long long *d_c = NULL;
        CUDA_CK(cudaMalloc((void **)&d_t, sizeof(double) * TILE * (size_t)count));
        CUDA_CK(cudaMalloc((void **)&d_o, sizeof(double) * TILE * (size_t)count));
        CUDA_CK(cudaMalloc((void **)&d_r, sizeof(ildl_dense_result) * (size_t)count));
        CUDA_CK(cudaMalloc((void **)&d_c, sizeof(long long)));
        cudaEvent_t e0, e1;
        CUDA_CK(cudaEventCreate(&e0));
        CUDA_CK(cudaEventCreate(&e1));
        std::vector<double> t, o((size_t)TILE * count);
        std::vector<ildl_dense_result> r((size_t)count);
        for (int kind = 0; kind < 3; kind++) {
            make_tiles(kind, count, t);
            CUDA_CK(cudaMemcpy(d_t, t.data(), sizeof(double) * t.size(), cudaMemcpyHostToDevice));
            for (int piv = ILDL_PIVOT_NONE; piv <= ILDL_PIVOT_ROOK; piv++) {
                std::vector<double> cyc, one, batch;
                for (int q = 0; q < repeat; q++) {
                    float ms = 0;
                    long long c = 0;
                    CUDA_CK(cudaEventRecord(e0));
                    k_dense<<<1, dim3(LD, LD)>>>(piv, LD, d_t, d_o, d_r, d_c);
                    CUDA_CK(cudaEventRecord(e1));
                    CUDA_CK(cudaGetLastError());
                    CUDA_CK(cudaEventSynchronize(e1));
                    CUDA_CK(cudaEventElapsedTime(&ms, e0, e1));
                    CUDA_CK(cudaMemcpy(&c, d_c, sizeof c, cudaMemcpyDeviceToHost));
                    cyc.push_back((double)c / LD);
                    one.push_back(ms * 1e3);
                    CUDA_CK(cudaEventRecord(e0));
                    k_dense<<<count, dim3(LD, LD)>>>(piv, LD, d_t, d_o, d_r, d_c);
                    CUDA_CK(cudaEventRecord(e1));
                    CUDA_CK(cudaGetLastError());
                    CUDA_CK(cudaEventSynchronize(e1));
                    CUDA_CK(cudaEventElapsedTime(&ms, e0, e1));
                    batch.push_back(ms * 1e3 / count);
                }
                CUDA_CK(cudaMemcpy(o.data(), d_o, sizeof(double) * o.size(), cudaMemcpyDeviceToHost));
                CUDA_CK(cudaMemcpy(r.data(), d_r, sizeof(ildl_dense_result) * r.size(), cudaMemcpyDeviceToHost));
                uint64_t h = hash_bytes(1469598103934665603ull, o.data(), sizeof(double) * o.size());
                for (const ildl_dense_result &x : r) {
                    h = hash_bytes(h, x.perm, sizeof x.perm);
                    h = hash_bytes(h, x.d_diag, sizeof x.d_diag);
                    h = hash_bytes(h, x.d_off, sizeof x.d_off);
                    h = hash_bytes(h, x.type, sizeof x.type);
                    h = hash_bytes(h, &x.n2x2, sizeof x.n2x2);
                    h = hash_bytes(h, &x.nperturbed, sizeof x.nperturbed);
                }
                auto med = [](std::vector<double> v) {
                    std::sort(v.begin(), v.end());
                    return v[v.size() / 2];
                };
                printf("%-10s %-5s %14.1f %12.1f %14.3f  %016llx\n", kinds[kind], pivs[piv], med(cyc), med(one),
                       med(batch), (unsigned long long)h);
            }
        }
        cudaFree(d_t);
        cudaFree(d_o);
        cudaFree(d_r);
        cudaFree(d_c);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    } catch (const Error &e) {
        fprintf(stderr, "ildl-dense: %s\n", e.what());
        return 1;
    }
    return 0;
}
