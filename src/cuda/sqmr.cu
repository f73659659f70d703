/* sqmr.cu -- SQMR entirely on the device: vectors and the recurrence's scalars live in device
 * memory; one iteration (SpMV, fixed-order inner products, the level-scheduled preconditioner
 * and the scalar updates) is captured once as a CUDA graph and replayed in batches, and the
 * host reads one small status struct per batch instead of one per iteration.
 *
 * It is the same algorithm, step for step and bit for bit, as src/krylov/sqmr.c: the inner
 * products use the fixed order of src/krylov/reduce.h, the SpMV and the preconditioner are
 * the CPU's orders, so both backends take the same number of iterations. A kernel that would
 * advance the recurrence does nothing once the device has raised `halt` (a true-residual
 * check is due, a breakdown, or the iteration limit); the host then acts as sqmr.c does. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/context.cuh"
extern "C" {
#include "core/csr.h"
#include "core/util.h"
#include "krylov/reduce.h"
#include "cuda/cuda_backend.h"
}

enum { HALT_NONE = 0, HALT_CHECK = 1, HALT_BREAKDOWN = 2, HALT_MAXIT = 3, HALT_STAGNATED = 4 };
/* Iterations launched between two reads of the status: 1 after each (re)start and true-residual
 * check, doubling up to SQMR_BATCH. The launches of a batch after its halt are empty but not
 * free (a whole captured iteration each): a solve that converges in its first iteration (a
 * complete factor's) paid for seven of them (perf-notes §86). */
#define SQMR_BATCH 8

/* halt: what stops the iteration's path; hx: what k_step_x (beside the sweeps) found, moved
 * to halt by k_direction or the host; xgo: k_step_r took a step, so k_step_x updates d and x. */
struct sqmr_scalars {
    double tau, theta, rho, beta, dcoef, qcoef, bnorm, tol, est; /* alpha stays in k_step_r */
    double mark_est; /* the stall window's start: its estimate and iteration (sqmr.h) */
    int iter, k, last_check, check_every, max_iter, halt, xbad, hx, xgo, stall_window, mark_iter, pad;
};

/* ------------------------------------------------------------ kernels */

/* The block's share of a fixed-order inner product (reduce.h): its ILDL_DOT_THREADS lane
 * sums combined by halving, written to part[blockIdx.x]. Every thread of the block calls it. */
__device__ __forceinline__ void block_part(double s, double *part)
{
    __shared__ double v[ILDL_DOT_THREADS];
    int t = threadIdx.x;
    v[t] = s;
    __syncthreads();
    for (int st = ILDL_DOT_THREADS / 2; st > 0; st >>= 1) {
        if (t < st) v[t] += v[t + st];
        __syncthreads();
    }
    if (t == 0) part[blockIdx.x] = v[0];
}

/* The first index of this thread's lane in reduce.h's order (kernels of ILDL_DOT_BLOCKS x
 * ILDL_DOT_THREADS threads visit i = lane, lane + ILDL_DOT_LANES, ...). */
__device__ __forceinline__ int64_t dot_lane(void)
{
    return (int64_t)blockIdx.x * ILDL_DOT_THREADS + threadIdx.x;
}

__global__ void k_dot_part(int32_t n, const double *x, const double *y, double *part)
{
    double s = 0.0;
    for (int64_t i = dot_lane(); i < n; i += ILDL_DOT_LANES) s += x[i] * y[i];
    block_part(s, part);
}

/* 1 in every thread of the block that arrives last at *count, 0 in the others; the earlier
 * blocks' writes (each thread fences its own) are visible to the last one, and the count is 0
 * again for the next kernel. Every thread of every block calls it. */
__device__ __forceinline__ int last_block(int *count)
{
    __shared__ int last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(count, 1) == (int)gridDim.x - 1;
        if (last) {
            atomicExch(count, 0);
            __threadfence();
        }
    }
    __syncthreads();
    return last;
}

/* The partial sums added in order (reduce.h) by thread 0 of a block that arrived last: read
 * past L1 (other blocks wrote them in this kernel). */
__device__ double d_sum_parts(const double *part)
{
    double s = 0.0;
    for (int g = 0; g < ILDL_DOT_BLOCKS; g++) s += __ldcg(part + g);
    return s;
}

/* ||x||_2 by reduce.h's rule for a sum of squares that is not ildl_nrm2_plain_ok: max |x_i|,
 * then the squares of x scaled by 2^-e in reduce.h's lane order (lane g*THREADS + t in thread t
 * for g = 0, ..., BLOCKS-1, each block's lanes halved and added in g order), the root scaled
 * back: ildl_nrm2_fixed's fallback, bit for bit. One block of ILDL_DOT_THREADS threads, all
 * of which call it; x is read past L1 (other blocks of the kernel may have just written it).
 * The result is valid in every thread. Slow (one block), and only taken when the plain sum
 * over- or underflowed. */
__device__ double block_nrm2_fallback(int32_t n, const double *x)
{
    __shared__ double v[ILDL_DOT_THREADS];
    __shared__ double total;
    int t = threadIdx.x;
    double m = 0.0;
    for (int64_t i = t; i < n; i += ILDL_DOT_THREADS) {
        double a = fabs(__ldcg(x + i));
        if (a > m || a != a) m = a; /* a NaN stays */
    }
    v[t] = m;
    __syncthreads();
    for (int st = ILDL_DOT_THREADS / 2; st > 0; st >>= 1) {
        if (t < st && (v[t + st] > v[t] || v[t + st] != v[t + st])) v[t] = v[t + st];
        __syncthreads();
    }
    m = v[0];
    __syncthreads();
    if (m == 0.0 || !(m <= DBL_MAX)) return m; /* zero, an Inf or a NaN */
    int e = ildl_nrm2_exponent(m);
    if (t == 0) total = 0.0;
    for (int g = 0; g < ILDL_DOT_BLOCKS; g++) {
        double s = 0.0;
        for (int64_t i = (int64_t)g * ILDL_DOT_THREADS + t; i < n; i += ILDL_DOT_LANES) {
            double y = ildl_scale_pow2(__ldcg(x + i), -e);
            s += y * y;
        }
        v[t] = s;
        __syncthreads();
        for (int st = ILDL_DOT_THREADS / 2; st > 0; st >>= 1) {
            if (t < st) v[t] += v[t + st];
            __syncthreads();
        }
        if (t == 0) total += v[0];
        __syncthreads();
    }
    return ildl_scale_pow2(sqrt(total), e);
}

/* *out = block_nrm2_fallback(n, x): one block of ILDL_DOT_THREADS threads. */
__global__ void __launch_bounds__(ILDL_DOT_THREADS) k_nrm2_fallback(int32_t n, const double *x, double *out)
{
    double r = block_nrm2_fallback(n, x);
    if (threadIdx.x == 0) *out = r;
}

/* The same sum of a previous kernel's partial sums, valid in thread 0: the block loads them into
 * shared memory at once, then thread 0 adds them in order (not 128 loads one after another).
 * Every thread of the block calls it. */
__device__ double block_sum_parts(const double *part)
{
    __shared__ double sp[ILDL_DOT_BLOCKS];
    for (int g = threadIdx.x; g < ILDL_DOT_BLOCKS; g += blockDim.x) sp[g] = part[g];
    __syncthreads();
    double s = 0.0;
    if (threadIdx.x == 0)
        for (int g = 0; g < ILDL_DOT_BLOCKS; g++) s += sp[g];
    return s;
}

/* y = A x in the order of ildl_csr_matvec (core/csr.h): the first spmv_short_blocks(n) blocks
 * take one row per thread, rows of at most ILDL_SPMV_LONG_ROW entries; the blocks after them
 * one long row per warp (longrows[0 .. nlong)): lane l sums the entries l, l + 32, ... in
 * order, the shuffles halve (lane l += lane l + h, h = 16 .. 1), lane 0 writes. */
#define SPMV_THREADS 256
static_assert(ILDL_SPMV_LANES == 32, "a long row is summed by one warp");
static inline __host__ __device__ unsigned spmv_short_blocks(int32_t n) { return (unsigned)((n + SPMV_THREADS - 1) / SPMV_THREADS); }
static inline unsigned spmv_blocks(int32_t n, int32_t nlong)
{
    return spmv_short_blocks(n) + (unsigned)((nlong + SPMV_THREADS / 32 - 1) / (SPMV_THREADS / 32));
}

__global__ void k_spmv(int32_t n, const int64_t *rp, const int32_t *ci, const double *v,
                       const double *x, double *y, int32_t nlong, const int32_t *longrows)
{
    const unsigned nshort = spmv_short_blocks(n);
    if (blockIdx.x < nshort) {
        int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        int64_t p0 = rp[i], p1 = rp[i + 1];
        if (p1 - p0 > ILDL_SPMV_LONG_ROW) return; /* a warp's below */
        double s = 0.0;
        for (int64_t p = p0; p < p1; p++) s += v[p] * x[ci[p]];
        y[i] = s;
        return;
    }
    int32_t w = (int32_t)(((blockIdx.x - nshort) * blockDim.x + threadIdx.x) >> 5);
    if (w >= nlong) return; /* the whole warp */
    int lane = threadIdx.x & 31;
    int32_t i = longrows[w];
    int64_t p1 = rp[i + 1];
    double s = 0.0;
    for (int64_t p = rp[i] + lane; p < p1; p += ILDL_SPMV_LANES) s += v[p] * x[ci[p]];
    for (int h = ILDL_SPMV_LANES / 2; h > 0; h >>= 1) s = s + __shfl_down_sync(0xffffffffu, s, h);
    if (lane == 0) y[i] = s;
}

/* w = b - w (w holds A x) */
__global__ void k_residual(int32_t n, const double *b, double *w)
{
    int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] = b[i] - w[i];
}

/* A lane's indices are visited VEC_BATCH at a time, every load of a batch issued before the
 * batch is used: with reduce.h's 128 x 256 threads (8 warps per SM) a loop of one index per
 * step kept too few loads in flight to stream the vectors (control70: 0.7-1.0 TB/s; batched,
 * an iteration at n >= 1M is 1.5-3% faster). The sums still add the lane's indices in order:
 * the same bits. */
#define VEC_BATCH 8
#define FOR_BATCH(i) for (int64_t i = dot_lane(); i < n; i += (int64_t)VEC_BATCH * ILDL_DOT_LANES)
#define AT(i, b) ((i) + (int64_t)(b) * ILDL_DOT_LANES)

/* u[AT(i, b)] and v[AT(i, b)] for the batch's indices below n (0 past it), every load issued
 * before any is used. */
__device__ __forceinline__ void load_batch2(const double *__restrict__ u, const double *__restrict__ v, int64_t i,
                                            int32_t n, double uv[VEC_BATCH], double vv[VEC_BATCH])
{
#pragma unroll
    for (int b = 0; b < VEC_BATCH; b++) {
        uv[b] = AT(i, b) < n ? u[AT(i, b)] : 0.0;
        vv[b] = AT(i, b) < n ? v[AT(i, b)] : 0.0;
    }
}

/* The step kernels below (ILDL_DOT_BLOCKS x ILDL_DOT_THREADS threads, reduce.h's lanes) fuse
 * what were one-thread scalar kernels, vector updates and inner products (launches were much of
 * a small problem's iteration: 18 became 10, up to 14% faster on small shared matrices), with
 * the same operations in the same order: the same bits. Each block's thread 0 derives the
 * step's scalar from the partial sums itself (every block finds the same value and the same
 * breakdown); the scalars that the kernel's blocks read are stored by the block that finishes
 * last (last_block), so no block sees them change. The halt flag is the one field that one
 * block may store (a breakdown) while another reads it: both go through halt_of / halt_set. */
__device__ __forceinline__ int halt_of(const sqmr_scalars *S) { return *(const volatile int *)&S->halt; }
__device__ __forceinline__ void halt_set(sqmr_scalars *S, int h) { *(volatile int *)&S->halt = h; }

__device__ __forceinline__ void hx_set(sqmr_scalars *S, int h) { *(volatile int *)&S->hx = h; }

/* sigma = q^T t (part_in), alpha = rho / sigma, r -= alpha t, r^T r's block sums into part_out;
 * the block that finishes last takes theta, the Givens coefficients, tau and the convergence
 * trigger (k_sigma, k_axpy_r, an inner product, k_theta and k_check), so that the iteration's
 * path knows of a check before the preconditioner (which then skips) and only d and x are left
 * to k_step_x beside the sweeps. */
__global__ void __launch_bounds__(ILDL_DOT_THREADS)
k_step_r(sqmr_scalars *S, int32_t n, double *__restrict__ r, const double *__restrict__ t,
         const double *part_in, double *part_out, int *count)
{
    __shared__ double sh_alpha;
    __shared__ int sh_go;
    double sigma = block_sum_parts(part_in);
    if (threadIdx.x == 0) {
        int go = !halt_of(S);
        double alpha = 0.0;
        if (go) {
            go = !(sigma == 0.0 || !isfinite(sigma));
            if (go) {
                alpha = S->rho / sigma;
                go = isfinite(alpha);
            }
            if (!go) halt_set(S, HALT_BREAKDOWN);
        }
        sh_alpha = alpha;
        sh_go = go;
    }
    __syncthreads();
    if (!sh_go) return;
    double alpha = sh_alpha, s = 0.0;
    FOR_BATCH(i) {
        double rv[VEC_BATCH], tv[VEC_BATCH];
        load_batch2(r, t, i, n, rv, tv);
#pragma unroll
        for (int b = 0; b < VEC_BATCH; b++)
            if (AT(i, b) < n) {
                double ri = rv[b] - alpha * tv[b];
                r[AT(i, b)] = ri;
                s += ri * ri;
            }
    }
    block_part(s, part_out);
    if (!last_block(count)) return;
    __shared__ double sh_rr;
    if (threadIdx.x == 0) sh_rr = d_sum_parts(part_out);
    __syncthreads();
    double rr = sh_rr; /* the same in every thread: all of them take the same branch */
    double rnorm = ildl_nrm2_plain_ok(rr) ? sqrt(rr) : block_nrm2_fallback(n, r);
    if (threadIdx.x != 0) return;
    double theta_old = S->theta;
    double theta = rnorm / S->tau;
    if (!isfinite(theta)) { halt_set(S, HALT_BREAKDOWN); return; }
    double c = ildl_givens_c(theta);
    double c2 = c * c;
    S->dcoef = c2 * theta_old * theta_old;
    S->qcoef = c2 * alpha;
    S->xgo = 1;
    S->theta = theta;
    S->tau = S->tau * theta * c;
    S->k++;
    S->iter++;
    if (!isfinite(S->tau)) { halt_set(S, HALT_BREAKDOWN); return; }
    double est = S->tau / S->bnorm;
    S->est = est;
    if (est <= S->tol && (S->last_check < 0 || S->iter - S->last_check >= S->check_every)) {
        S->last_check = S->iter;
        halt_set(S, HALT_CHECK);
    } else if (S->stall_window > 0 && S->iter - S->mark_iter >= S->stall_window) { /* as sqmr.c */
        if (!(est <= ILDL_SQMR_STALL_DROP * S->mark_est)) {
            halt_set(S, HALT_STAGNATED);
        } else {
            S->mark_iter = S->iter;
            S->mark_est = est;
        }
    }
}

/* d = dcoef d + qcoef q, x += d (k_update_dx), when k_step_r took a step. Beside the sweeps on
 * a second stream: nothing on the iteration's path reads d or x, and k_direction, which
 * overwrites q, waits for it. A non-finite x goes to S->hx (the preconditioner's kernels read
 * S->halt meanwhile). */
__global__ void __launch_bounds__(ILDL_DOT_THREADS)
k_step_x(sqmr_scalars *S, int32_t n, double *__restrict__ d, const double *__restrict__ q,
         double *__restrict__ x, int *count)
{
    if (!*(const volatile int *)&S->xgo) return; /* cleared only by this kernel's last block */
    const double dcoef = S->dcoef, qcoef = S->qcoef;
    int bad = 0;
    FOR_BATCH(i) {
        double dv[VEC_BATCH], qv[VEC_BATCH], xv[VEC_BATCH];
#pragma unroll
        for (int b = 0; b < VEC_BATCH; b++) {
            bool in = AT(i, b) < n;
            dv[b] = in ? d[AT(i, b)] : 0.0;
            qv[b] = in ? q[AT(i, b)] : 0.0;
            xv[b] = in ? x[AT(i, b)] : 0.0;
        }
#pragma unroll
        for (int b = 0; b < VEC_BATCH; b++)
            if (AT(i, b) < n) {
                double di = dcoef * dv[b] + qcoef * qv[b];
                d[AT(i, b)] = di;
                double xi = xv[b] + di;
                x[AT(i, b)] = xi;
                bad |= !isfinite(xi);
            }
    }
    if (bad) S->xbad = 1;
    if (!last_block(count) || threadIdx.x != 0) return;
    S->xgo = 0;
    if (*(volatile int *)&S->xbad) hx_set(S, HALT_BREAKDOWN);
}

/* u = M^{-1} r in the user's order from the sweeps' w (k_scatter's values, taken through the
 * inverse map so that each lane owns its u[i]) and r^T u's block sums into part. */
__global__ void __launch_bounds__(ILDL_DOT_THREADS)
k_scatter_dot(int32_t n, const int32_t *__restrict__ qinv, const double *__restrict__ qs,
              const double *__restrict__ w, const double *__restrict__ r, double *__restrict__ u,
              double *part, const int *skip)
{
    if (*skip) return; /* nothing in this kernel writes it: the same in every thread */
    double s = 0.0;
    FOR_BATCH(i) {
        int32_t k[VEC_BATCH];
        double sv[VEC_BATCH], wv[VEC_BATCH], rv[VEC_BATCH];
#pragma unroll
        for (int b = 0; b < VEC_BATCH; b++) {
            k[b] = AT(i, b) < n ? qinv[AT(i, b)] : 0;
            rv[b] = AT(i, b) < n ? r[AT(i, b)] : 0.0;
        }
#pragma unroll
        for (int b = 0; b < VEC_BATCH; b++) {
            sv[b] = AT(i, b) < n ? qs[k[b]] : 0.0;
            wv[b] = AT(i, b) < n ? w[k[b]] : 0.0;
        }
#pragma unroll
        for (int b = 0; b < VEC_BATCH; b++)
            if (AT(i, b) < n) {
                double ui = sv[b] * wv[b];
                u[AT(i, b)] = ui;
                s += rv[b] * ui;
            }
    }
    block_part(s, part);
}

/* rho = r^T u (part), beta = rho / rho_old, q = u + beta q; the last block stores rho and
 * beta and stops at the iteration limit: k_rho, k_qupdate and k_end. */
__global__ void __launch_bounds__(ILDL_DOT_THREADS)
k_direction(sqmr_scalars *S, int32_t n, double *__restrict__ q, const double *__restrict__ u,
            const double *part, int *count)
{
    __shared__ double sh_rho, sh_beta;
    __shared__ int sh_go;
    double rho = block_sum_parts(part);
    if (threadIdx.x == 0) {
        int go = !halt_of(S), hx = *(const volatile int *)&S->hx;
        if (go && hx) { /* k_step_x's breakdown (joined before this kernel): every block stores it */
            halt_set(S, hx);
            go = 0;
        }
        if (go) {
            double beta = 0.0;
            go = !(rho == 0.0 || !isfinite(rho));
            if (go) {
                beta = rho / S->rho;
                go = isfinite(beta);
            }
            if (!go) halt_set(S, HALT_BREAKDOWN);
            sh_rho = rho;
            sh_beta = beta;
        }
        sh_go = go;
    }
    __syncthreads();
    if (!sh_go) return;
    const double beta = sh_beta;
    FOR_BATCH(i) {
        double uv[VEC_BATCH], qv[VEC_BATCH];
        load_batch2(u, q, i, n, uv, qv);
#pragma unroll
        for (int b = 0; b < VEC_BATCH; b++)
            if (AT(i, b) < n) q[AT(i, b)] = uv[b] + beta * qv[b];
    }
    if (!last_block(count) || threadIdx.x != 0) return;
    S->beta = beta;
    S->rho = sh_rho;
    if (S->iter >= S->max_iter) S->halt = HALT_MAXIT;
}

/* ------------------------------------------------------------ host helpers */

#define GRID(n) (((n) + 255) / 256), 256, 0, c->stream

void ildl_cuda_sqmr_free(ildl_cuda_ctx *c)
{
    ildl_cuda_capture_lock(); /* cudaFree synchronises the device */
    void *p[] = {c->d_b, c->d_x, c->d_t, c->d_qv, c->d_d, c->d_u, c->d_xbest, c->d_part, c->d_S, c->d_count};
    for (size_t k = 0; k < sizeof p / sizeof p[0]; k++)
        if (p[k]) cudaFree(p[k]);
    if (c->g_full) cudaGraphExecDestroy(c->g_full);
    if (c->g_dir) cudaGraphExecDestroy(c->g_dir);
    if (c->stream) cudaStreamDestroy(c->stream);
    if (c->side) cudaStreamDestroy(c->side);
    if (c->sq_fork) cudaEventDestroy(c->sq_fork);
    if (c->sq_join) cudaEventDestroy(c->sq_join);
    c->d_b = c->d_x = c->d_t = c->d_qv = c->d_d = c->d_u = c->d_xbest = c->d_part = NULL;
    c->d_S = NULL;
    c->d_count = NULL;
    c->g_full = c->g_dir = NULL;
    c->stream = c->side = NULL;
    c->sq_fork = c->sq_join = NULL;
    ildl_cuda_capture_unlock();
}

/* x^T y (fixed order) read back to the host. */
static int dot_host(ildl_cuda_ctx *c, const double *x, const double *y, double *out)
{
    int status = ILDL_SUCCESS;
    double part[ILDL_DOT_BLOCKS];
    k_dot_part<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, c->stream>>>(c->n, x, y, c->d_part);
    CU_LAUNCH();
    CU(cudaMemcpyAsync(part, c->d_part, sizeof part, cudaMemcpyDeviceToHost, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    {
        double s = 0.0;
        for (int g = 0; g < ILDL_DOT_BLOCKS; g++) s += part[g];
        *out = s;
    }
cleanup:
    return status;
}

/* ||x||_2 (ildl_nrm2_fixed's value, bit for bit) from s, the plain sum of squares (k_dot_part's
 * partials summed in order), or the scaled one when that over- or underflowed (read back). */
static int nrm2_finish(ildl_cuda_ctx *c, const double *x, double s, double *out)
{
    int status = ILDL_SUCCESS;
    if (ildl_nrm2_plain_ok(s)) {
        *out = sqrt(s);
        return ILDL_SUCCESS;
    }
    k_nrm2_fallback<<<1, ILDL_DOT_THREADS, 0, c->stream>>>(c->n, x, c->d_part);
    CU_LAUNCH();
    CU(cudaMemcpyAsync(out, c->d_part, sizeof(double), cudaMemcpyDeviceToHost, c->stream));
    CU(cudaStreamSynchronize(c->stream));
cleanup:
    return status;
}

/* ||x||_2 read back to the host (nrm2_finish). */
static int nrm2_host(ildl_cuda_ctx *c, const double *x, double *out)
{
    double s;
    int status = dot_host(c, x, x, &s);
    return status ? status : nrm2_finish(c, x, s, out);
}

extern "C" int ildl_cuda_nrm2_test(int device, int32_t n, const double *x, double *host_path, double *fallback)
{
    device_scope scope;
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    ildl_cuda_ctx c;
    double *d_out = NULL;
    memset(&c, 0, sizeof c);
    c.n = n;
    if (ildl_cuda_device_count() <= device || device < 0) return ILDL_ERR_NO_DEVICE;
    CU(cudaSetDevice(device));
    CU(cudaMalloc((void **)&c.d_b, sizeof(double) * (size_t)n));
    CU(cudaMalloc((void **)&c.d_part, sizeof(double) * ILDL_DOT_BLOCKS));
    CU(cudaMalloc((void **)&d_out, sizeof(double)));
    CU(cudaMemcpy(c.d_b, x, sizeof(double) * (size_t)n, cudaMemcpyHostToDevice));
    if ((status = nrm2_host(&c, c.d_b, host_path))) goto cleanup;
    k_nrm2_fallback<<<1, ILDL_DOT_THREADS>>>(n, c.d_b, d_out);
    CU_LAUNCH();
    CU(cudaMemcpy(fallback, d_out, sizeof(double), cudaMemcpyDeviceToHost));
cleanup:
    if (c.d_b) cudaFree(c.d_b);
    if (c.d_part) cudaFree(c.d_part);
    if (d_out) cudaFree(d_out);
    return status;
}

/* w = b - A x on the device; *res = ||w|| / bnorm. */
static int true_residual(ildl_cuda_ctx *c, const double *x, double *w, double bnorm, double *res)
{
    int status = ILDL_SUCCESS;
    double s;
    k_spmv<<<spmv_blocks(c->n, c->n_along), SPMV_THREADS, 0, c->stream>>>(c->n, c->d_arow, c->d_acol, c->d_aval, x,
                                                                          w, c->n_along, c->d_along);
    CU_LAUNCH();
    k_residual<<<GRID(c->n)>>>(c->n, c->d_b, w);
    CU_LAUNCH();
    status = nrm2_host(c, w, &s);
    *res = s / bnorm;
cleanup:
    return status;
}

/* u = M^{-1} r with rho = r^T u, q = u + beta q, then the iteration limit; with join,
 * k_direction (which overwrites q) first waits for k_step_x (which reads it). */
static int launch_tail(ildl_cuda_ctx *c, int join)
{
    int status = ildl_cuda_apply_to_w(c, c->d_r, c->stream);
    if (status) return status;
    k_scatter_dot<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, c->stream>>>(c->n, c->d_qinv, c->d_qs, c->d_w, c->d_r,
                                                                       c->d_u, c->d_part, c->d_skip);
    CU_LAUNCH();
    if (join) CU(cudaStreamWaitEvent(c->stream, c->sq_join, 0));
    k_direction<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, c->stream>>>(c->d_S, c->n, c->d_qv, c->d_u, c->d_part,
                                                                     c->d_count);
    CU_LAUNCH();
cleanup:
    return status;
}

/* The second half of an iteration, for the host to take after a true-residual check that did
 * not stop it (the iteration's d and x are done). */
static int launch_direction(ildl_cuda_ctx *c) { return launch_tail(c, 0); }

/* One whole iteration: t = A q and sigma, the step of r with theta, tau and the convergence
 * trigger, then the preconditioner and the direction, with k_step_x (d, x) beside them on
 * c->side: 9 kernels on the path instead of 10 (nothing on the path reads d or x).
 * The two halves of d_part alternate, so that a kernel never overwrites the sums it reads, and
 * the counters of last_block are [0] the path's, [1] k_step_x's. */
static int launch_iteration(ildl_cuda_ctx *c)
{
    int status = ILDL_SUCCESS;
    double *part2 = c->d_part + ILDL_DOT_BLOCKS;
    cudaStream_t side = c->side;
    /* q persisting in L2 while A streams past: the rows sharing a column find it there */
    launch_l2_window(c->T, c->d_qv, c->n, k_spmv, dim3(spmv_blocks(c->n, c->n_along)), dim3(SPMV_THREADS), 0,
                     c->stream, c->n, (const int64_t *)c->d_arow, (const int32_t *)c->d_acol,
                     (const double *)c->d_aval, (const double *)c->d_qv, c->d_t, c->n_along,
                     (const int32_t *)c->d_along);
    CU_LAUNCH();
    k_dot_part<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, c->stream>>>(c->n, c->d_qv, c->d_t, c->d_part);
    CU_LAUNCH();
    k_step_r<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, c->stream>>>(c->d_S, c->n, c->d_r, c->d_t, c->d_part, part2,
                                                                  c->d_count);
    CU_LAUNCH();
    CU(cudaEventRecord(c->sq_fork, c->stream));
    CU(cudaStreamWaitEvent(side, c->sq_fork, 0));
    k_step_x<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, side>>>(c->d_S, c->n, c->d_d, c->d_qv, c->d_x, c->d_count + 1);
    CU_LAUNCH();
    CU(cudaEventRecord(c->sq_join, side));
    status = launch_tail(c, 1);
cleanup:
    return status;
}

/* Capture fn's launch sequence once into an executable graph. */
static int capture(ildl_cuda_ctx *c, int (*fn)(ildl_cuda_ctx *), cudaGraphExec_t *exec)
{
    int status = ILDL_SUCCESS;
    cudaGraph_t g = NULL;
    ildl_cuda_capture_lock();
    CU(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
    status = fn(c);
    {
        cudaError_t e = cudaStreamEndCapture(c->stream, &g);
        if (status) goto cleanup;
        CU(e);
    }
    CU(cudaGraphInstantiate(exec, g, 0));
cleanup:
    ildl_cuda_capture_unlock();
    if (g) cudaGraphDestroy(g);
    return status;
}

#define SQMR_VECTORS 7 /* d_b, d_x, d_t, d_qv, d_d, d_u, d_xbest */

size_t ildl_cuda_sqmr_bytes(int32_t n) { return SQMR_VECTORS * sizeof(double) * (size_t)n; }

int ildl_cuda_sqmr_prepare(ildl_cuda_ctx *c)
{
    int status = ILDL_SUCCESS;
    if (c->d_S) return ILDL_SUCCESS;
    size_t n = (size_t)c->n, *B = &c->bytes;
    double **v[SQMR_VECTORS] = {&c->d_b, &c->d_x, &c->d_t, &c->d_qv, &c->d_d, &c->d_u, &c->d_xbest};
    for (size_t k = 0; k < SQMR_VECTORS; k++) {
        CU(cudaMalloc((void **)v[k], sizeof(double) * n));
        *B += sizeof(double) * n;
    }
    CU(cudaMalloc((void **)&c->d_part, sizeof(double) * 2 * ILDL_DOT_BLOCKS)); /* two halves: launch_iteration */
    CU(cudaMalloc((void **)&c->d_count, 2 * sizeof(int)));
    CU(cudaMemset(c->d_count, 0, 2 * sizeof(int))); /* last_block leaves them at 0 after every kernel */
    CU(cudaMalloc((void **)&c->d_S, sizeof(sqmr_scalars)));
    /* non-blocking: while this thread captures the graphs below, another thread's handle may
     * use the legacy default stream (synchronous copies), which must not depend on a capturing
     * stream; ildl_cuda_factor waits for this stream's work (cudaDeviceSynchronize) */
    CU(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CU(cudaStreamCreateWithFlags(&c->side, cudaStreamNonBlocking));
    CU(cudaEventCreateWithFlags(&c->sq_fork, cudaEventDisableTiming));
    CU(cudaEventCreateWithFlags(&c->sq_join, cudaEventDisableTiming));
    /* the captured applications skip their work once the iteration has halted: the launches of
     * a batch after a halt (a true-residual check is due, a breakdown) are then empty */
    c->d_skip = (const int *)((const char *)c->d_S + offsetof(sqmr_scalars, halt));
    status = capture(c, launch_iteration, &c->g_full);
    if (!status) status = capture(c, launch_direction, &c->g_dir);
    c->d_skip = c->d_tickets + 2;
cleanup:
    if (status) ildl_cuda_sqmr_free(c);
    return status;
}

/* (Re)start from the residual in d_r (sqmr_start): q = M^{-1} r, tau, theta, rho, d = 0.
 * known >= 0: ||r|| already computed (r = b, x0 = 0: the same kernel on the same vector);
 * known_rq: q and r^T q already computed too (ildl_cuda_sqmr's first wait), or NULL. */
static int start(ildl_cuda_ctx *c, sqmr_scalars *h, double known, const double *known_rq)
{
    int status = ILDL_SUCCESS;
    double rnorm = known, rq = known_rq ? *known_rq : 0.0;
    if (!known_rq) { /* else u = M^{-1} r and rq came with ||b|| (ildl_cuda_sqmr's first wait) */
        if ((status = ildl_cuda_apply_device(c, c->d_r, c->d_qv, c->stream))) return status;
        if (known < 0.0 && (status = nrm2_host(c, c->d_r, &rnorm))) return status;
        if ((status = dot_host(c, c->d_r, c->d_qv, &rq))) return status;
    }
    CU(cudaMemsetAsync(c->d_d, 0, sizeof(double) * (size_t)c->n, c->stream));
    h->tau = rnorm;
    h->theta = 0.0;
    h->rho = rq;
    h->k = 0;
    h->mark_iter = h->iter; /* a (re)start starts a stall window (sqmr.c) */
    h->mark_est = rnorm / h->bnorm;
    h->halt = HALT_NONE;
    if (rq == 0.0 || !isfinite(rq)) return ILDL_ERR_BREAKDOWN;
cleanup:
    return status;
}

/* ILDL_CUDA_PROFILE: after a solve, the median time of the parts of an iteration that are not
 * the preconditioner's sweeps (SpMV, one inner product) and of one whole application (gather,
 * sweeps, scatter), each launched alone 21 times. The vectors are scratch by then. */
static int profile_parts(ildl_cuda_ctx *c, int starts, int checks)
{
    int status = ILDL_SUCCESS, prof = c->prof_solve;
    float ms[3][21];
    c->prof_solve = 0; /* no per-solve lines from the applications below */
    for (int part = 0; part < 3; part++)
        for (int r = 0; r < 21; r++) {
            CU(cudaEventRecord(c->ev[0], c->stream));
            if (part == 0)
                k_spmv<<<spmv_blocks(c->n, c->n_along), SPMV_THREADS, 0, c->stream>>>(
                    c->n, c->d_arow, c->d_acol, c->d_aval, c->d_qv, c->d_t, c->n_along, c->d_along);
            else if (part == 1)
                k_dot_part<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, c->stream>>>(c->n, c->d_qv, c->d_t, c->d_part);
            else if ((status = ildl_cuda_apply_device(c, c->d_r, c->d_u, c->stream))) goto cleanup;
            CU_LAUNCH();
            CU(cudaEventRecord(c->ev[1], c->stream));
            CU(cudaEventSynchronize(c->ev[1]));
            CU(cudaEventElapsedTime(&ms[part][r], c->ev[0], c->ev[1]));
        }
    for (int part = 0; part < 3; part++) /* sort the 21 values; the median is the middle one */
        for (int a = 0; a < 21; a++)
            for (int b2 = a + 1; b2 < 21; b2++)
                if (ms[part][b2] < ms[part][a]) { float t = ms[part][a]; ms[part][a] = ms[part][b2]; ms[part][b2] = t; }
    fprintf(stderr, "ILDL_CUDA_PROFILE sqmr: %d (re)starts, %d true-residual checks; parts (medians of 21): "
            "spmv %.3f ms, one inner product %.3f ms, apply (gather, sweeps, scatter) %.3f ms\n", starts, checks,
            ms[0][10], ms[1][10], ms[2][10]);
cleanup:
    c->prof_solve = prof;
    return status;
}

extern "C" int ildl_cuda_sqmr(ildl_cuda_ctx *c, const double *b, double *x,
                              const ildl_sqmr_params *prm, ildl_sqmr_result *res)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS, xbad = 0, stall = 0, starts = 0, checks = 0, use_b = 0, batch = 1;
    ildl_sqmr_result out = {0, 0, 0.0, 0.0, 0.0, 0};
    sqmr_scalars h;
    memset(&h, 0, sizeof h);
    double bnorm = 0, best = 0, xres = -1.0, final, t_iter = 0.0, tl = ildl_wtime(), rq0 = 0.0;
    int have_rq = 0; /* r = b, u = M^{-1} b and rq0 = r^T u from the first wait (x0 = 0) */
    size_t nb = sizeof(double) * (size_t)c->n;
    if (res) *res = out;
    if (!c->factored || !c->hostA || !c->map_built) return ILDL_ERR_CALL_ORDER;
    CU(cudaSetDevice(c->device));
    status = ildl_cuda_sqmr_prepare(c);
    if (status) goto cleanup;
    if (!c->aval_current) { /* once per factorization, not per solve (49 MB on control70) */
        CU(cudaMemcpyAsync(c->d_aval, c->hostA->val, sizeof(double) * (size_t)c->hostA->rowptr[c->n],
                           cudaMemcpyHostToDevice, c->stream));
        c->aval_current = 1;
    }
    ildl_profile_lap(&tl, "sqmr: prepared");
    CU(cudaMemcpyAsync(c->d_b, b, nb, cudaMemcpyHostToDevice, c->stream));
    if (prm->use_x0) {
        if ((status = nrm2_host(c, c->d_b, &bnorm))) goto cleanup;
    } else {
        /* from x0 = 0, r = b: ||b||'s partials, u = M^{-1} b and r^T u's partials, one wait for
         * both (the same kernels as nrm2_host and start's, so the same values) */
        double part[2 * ILDL_DOT_BLOCKS], sb = 0.0;
        k_dot_part<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, c->stream>>>(c->n, c->d_b, c->d_b, c->d_part);
        CU_LAUNCH();
        CU(cudaMemcpyAsync(c->d_r, c->d_b, nb, cudaMemcpyDeviceToDevice, c->stream));
        if ((status = ildl_cuda_apply_device(c, c->d_r, c->d_qv, c->stream))) goto cleanup;
        k_dot_part<<<ILDL_DOT_BLOCKS, ILDL_DOT_THREADS, 0, c->stream>>>(c->n, c->d_r, c->d_qv,
                                                                         c->d_part + ILDL_DOT_BLOCKS);
        CU_LAUNCH();
        CU(cudaMemcpyAsync(part, c->d_part, sizeof part, cudaMemcpyDeviceToHost, c->stream));
        CU(cudaStreamSynchronize(c->stream));
        for (int g = 0; g < ILDL_DOT_BLOCKS; g++) sb += part[g];
        for (int g = 0; g < ILDL_DOT_BLOCKS; g++) rq0 += part[ILDL_DOT_BLOCKS + g];
        if ((status = nrm2_finish(c, c->d_b, sb, &bnorm))) goto cleanup;
        have_rq = 1;
    }
    ildl_profile_lap(&tl, "sqmr: b uploaded, norm");
    if (!isfinite(bnorm)) { status = ILDL_ERR_NAN_INF; goto cleanup; }
    if (bnorm == 0.0) {
        memset(x, 0, nb);
        out.converged = 1;
        goto done;
    }
    if (prm->use_x0) { /* as sqmr.c: NaN/Inf in x0 is refused, an x0 whose residual overflows unused */
        for (int32_t i = 0; i < c->n; i++)
            if (!isfinite(x[i])) { status = ILDL_ERR_NAN_INF; goto done; }
        CU(cudaMemcpyAsync(c->d_x, x, nb, cudaMemcpyHostToDevice, c->stream));
        if ((status = true_residual(c, c->d_x, c->d_r, bnorm, &best))) goto cleanup;
    }
    if (!prm->use_x0 || !isfinite(best)) {
        use_b = 1;
        CU(cudaMemsetAsync(c->d_x, 0, nb, c->stream));
        if (!have_rq) CU(cudaMemcpyAsync(c->d_r, c->d_b, nb, cudaMemcpyDeviceToDevice, c->stream));
        best = 1.0;
    }
    CU(cudaMemcpyAsync(c->d_xbest, c->d_x, nb, cudaMemcpyDeviceToDevice, c->stream));
    xres = best;
    out.est_residual = best;
    if (best <= prm->tol) goto finish;

    h.bnorm = bnorm;
    h.tol = prm->tol;
    h.check_every = prm->check_every;
    h.max_iter = prm->max_iter;
    h.stall_window = prm->stall_window;
    h.last_check = -1;
    status = start(c, &h, use_b ? bnorm : -1.0, have_rq ? &rq0 : NULL);
    starts++;
    ildl_profile_lap(&tl, "sqmr: started");
    /* every batch ends in a stream synchronisation, so host time spans the device's work */
    t_iter = status == ILDL_SUCCESS ? ildl_wtime() : 0.0;
    while (status == ILDL_SUCCESS) {
        if (h.iter >= prm->max_iter) { status = ILDL_ERR_NOT_CONVERGED; break; }
        h.hx = h.xgo = 0;
        CU(cudaMemcpyAsync(c->d_S, &h, sizeof h, cudaMemcpyHostToDevice, c->stream));
        for (int k = 0; k < batch; k++) CU(cudaGraphLaunch(c->g_full, c->stream));
        int ran = batch;
        batch = batch * 2 < SQMR_BATCH ? batch * 2 : SQMR_BATCH;
        CU(cudaMemcpyAsync(&h, c->d_S, sizeof h, cudaMemcpyDeviceToHost, c->stream));
        CU(cudaStreamSynchronize(c->stream));
        ildl_profile_lap(&tl, "sqmr: batch of %d", ran);
        /* a non-finite x beside a check (which stopped k_direction first) is still a breakdown */
        if (h.hx == HALT_BREAKDOWN) h.halt = HALT_BREAKDOWN;
        xres = -1.0; /* x has moved */
        if (prm->progress) prm->progress(prm->progress_ctx, h.iter, h.tau / bnorm);
        if (h.halt == HALT_NONE) continue;
        if (h.halt == HALT_BREAKDOWN) { status = ILDL_ERR_BREAKDOWN; xbad = h.xbad; break; }
        if (h.halt == HALT_MAXIT) { status = ILDL_ERR_NOT_CONVERGED; break; }
        if (h.halt == HALT_STAGNATED) { status = ILDL_ERR_NOT_CONVERGED; out.stagnated = 1; break; }
        /* HALT_CHECK: the estimate says converged; confirm with the true residual */
        double prev_best = best, r;
        checks++;
        batch = 1;
        if ((status = true_residual(c, c->d_x, c->d_u, bnorm, &r))) break;
        xres = r;
        ildl_profile_lap(&tl, "sqmr: true residual");
        if (!isfinite(r)) { status = ILDL_ERR_BREAKDOWN; break; }
        if (r < best) {
            best = r;
            CU(cudaMemcpyAsync(c->d_xbest, c->d_x, nb, cudaMemcpyDeviceToDevice, c->stream));
        }
        if (r <= prm->tol) break;
        if (r > sqrt((double)h.k + 1.0) * h.est) {
            stall = (r < 0.5 * prev_best) ? 0 : stall + 1;
            if (stall >= ILDL_SQMR_MAX_STALL) { status = ILDL_ERR_NOT_CONVERGED; break; }
            CU(cudaMemcpyAsync(c->d_r, c->d_u, nb, cudaMemcpyDeviceToDevice, c->stream));
            status = start(c, &h, -1.0, NULL);
            starts++;
            continue;
        }
        /* continue the recurrence: the direction step of this iteration */
        h.halt = HALT_NONE;
        h.hx = h.xgo = 0;
        CU(cudaMemcpyAsync(c->d_S, &h, sizeof h, cudaMemcpyHostToDevice, c->stream));
        CU(cudaGraphLaunch(c->g_dir, c->stream));
        CU(cudaMemcpyAsync(&h, c->d_S, sizeof h, cudaMemcpyDeviceToHost, c->stream));
        CU(cudaStreamSynchronize(c->stream));
        if (h.halt == HALT_BREAKDOWN) { status = ILDL_ERR_BREAKDOWN; break; }
        if (h.halt == HALT_MAXIT) { status = ILDL_ERR_NOT_CONVERGED; break; }
    }
    if (t_iter > 0.0) out.iterate_seconds = ildl_wtime() - t_iter;
    if (status == ILDL_ERR_DEVICE || status == ILDL_ERR_OUT_OF_MEMORY) goto cleanup;
    out.est_residual = h.tau / bnorm;

finish:
    {
        int st2 = ILDL_SUCCESS;
        if (!xbad && xres < 0.0) st2 = true_residual(c, c->d_x, c->d_u, bnorm, &xres);
        if (st2) { status = st2; goto cleanup; }
        if (!xbad && isfinite(xres) && xres <= best) {
            final = xres;
            CU(cudaMemcpyAsync(x, c->d_x, nb, cudaMemcpyDeviceToHost, c->stream));
        } else {
            final = best;
            CU(cudaMemcpyAsync(x, c->d_xbest, nb, cudaMemcpyDeviceToHost, c->stream));
        }
        CU(cudaStreamSynchronize(c->stream));
        ildl_profile_lap(&tl, "sqmr: x downloaded");
    }
    out.iterations = h.iter;
    out.true_residual = final;
    out.converged = final <= prm->tol;
    if (c->prof_solve && (status = profile_parts(c, starts, checks)) != ILDL_SUCCESS) goto cleanup;
    if (out.converged && (status == ILDL_ERR_NOT_CONVERGED || status == ILDL_ERR_BREAKDOWN))
        status = ILDL_SUCCESS;
    if (!out.converged && status == ILDL_SUCCESS) status = ILDL_ERR_NOT_CONVERGED;
done:
    if (res) *res = out;
    return status;
cleanup:
    if (res) *res = out;
    return status;
}
