/* factorize.cu -- a factorization on the device and what goes with it: the statistics, the map
 * from factored positions to the user's rows, the single-precision copy of mixed precision,
 * the factor's download, the page-locked host arrays it copies from. The kernels of the
 * factorization itself are in factor.cu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cub/block/block_reduce.cuh>
#include "cuda/context.cuh"
extern "C" {
#include "cpu/fixed_point.h"
#include "cuda/cuda_backend.h"
}

#define STATS_THREADS 256
typedef cub::BlockReduce<unsigned long long, STATS_THREADS> stats_reduce_t;

/* The statistics of ildl_factor_final_stats (src/cpu/factor.c) in parallel: a row whose
 * predecessor opens a 2x2 pivot is that pivot's second row (a factor never has two 2x2 openings
 * in a row), the classification is the reference's, and integer sums do not depend on the
 * order. */
__global__ void __launch_bounds__(STATS_THREADS) k_factor_stats(dev_tiles T, const int32_t *block_perturbed,
                                                                factor_totals *out)
{
    __shared__ typename stats_reduce_t::TempStorage tmp;
    unsigned long long v[6] = {0, 0, 0, 0, 0, 0}; /* nnz, n2x2, pos, neg, zero, perturbed */
    int64_t stride = (int64_t)gridDim.x * blockDim.x, g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t t = g; t < T.ntiles; t += stride) {
        int32_t i = T.row[t];
        int64_t mi = dev_bsize(T, i);
        v[0] += T.col[t] == i ? (unsigned long long)(mi * (mi - 1) / 2) : (unsigned long long)T.nnz[t];
    }
    for (int64_t k = g; k < T.n; k += stride) {
        int8_t ty = T.piv_type[k];
        double a = T.d_diag[k];
        v[1] += ty == 2;
        if (ty == 2 && k + 1 < T.n) {
            double b = T.d_off[k], c = T.d_diag[k + 1];
            double det = a * c - b * b, tr = a + c;
            if (det < 0.0) {
                v[2]++;
                v[3]++;
            } else {
                int other = tr > 0.0 ? 2 : (tr < 0.0 ? 3 : 4);
                v[other]++;
                if (det > 0.0) v[other]++;
                else v[4]++;
            }
        } else if (k > 0 && T.piv_type[k - 1] == 2) {
            /* second row of the pivot above */
        } else if (a > 0.0) {
            v[2]++;
        } else if (a < 0.0) {
            v[3]++;
        } else {
            v[4]++;
        }
    }
    for (int64_t b = g; b < T.nb; b += stride) v[5] += (unsigned long long)block_perturbed[b];
    for (int q = 0; q < 6; q++) {
        unsigned long long sum = stats_reduce_t(tmp).Sum(v[q]);
        __syncthreads();
        if (threadIdx.x == 0 && sum) atomicAdd(&((unsigned long long *)out)[q], sum);
    }
}

/* Factored position -> user row and its scale: block b's factored row r is analysed row
 * bstart[b] + piv[r] (build_factored_map in src/api.c, for the CPU backend). One warp per block. */
__global__ void k_build_map(dev_tiles T, const int32_t *perm, const double *scale, int32_t *q, double *qs,
                            int32_t *qinv)
{
    int32_t b = blockIdx.x, k = T.bstart[b] + threadIdx.x;
    if (k < T.bstart[b + 1]) {
        int32_t orig = perm[T.bstart[b] + T.piv[k]];
        q[k] = orig;
        qs[k] = scale[orig];
        qinv[orig] = k;
    }
}

extern "C" int ildl_cuda_factor(ildl_cuda_ctx *c, ildl_tiles *T, const ildl_factor_params *p,
                                ildl_factor_stats *st, char *msg, size_t msglen)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    factor_state hs;
    factor_totals tot;
    memset(&hs, 0, sizeof hs);
    memset(&tot, 0, sizeof tot);
    factor_params_d prm;
    c->factored = 0;
    c->aval_current = 0; /* the values may be new: the next solve copies them */
    ildl_cuda_clear_message();
    double t0 = ildl_wtime(), t1, t2, tl = t0;
    CU(cudaSetDevice(c->device));
    /* the factorization overwrites what pending solves read (the factor, the map, the solve
     * records), and its streams are non-blocking: first let every queued device-pointer
     * ildl_apply, on any stream, finish */
    CU(device_sync_locked());
    ildl_profile_lap(&tl, "cuda factor: drained");
    /* everything of the factorization is ordered on its stream fstream[0] (factor_run) */
    CU(cudaMemcpyAsync(c->T.a_val, T->a_val, sizeof(double) * (size_t)T->a_ptr[T->ntiles],
                       cudaMemcpyHostToDevice, c->fac.fstream[0]));
    if (p->pair_hint && !c->fac.d_pair_hint) CU(alloc(&c->fac.d_pair_hint, (size_t)T->n, c)); /* or reserved */
    if (p->pair_hint)
        CU(cudaMemcpyAsync(c->fac.d_pair_hint, p->pair_hint, (size_t)T->n, cudaMemcpyHostToDevice, c->fac.fstream[0]));
    CU(cudaMemcpyAsync(c->fac.d_state, &hs, sizeof hs, cudaMemcpyHostToDevice, c->fac.fstream[0]));
    prm.pivoting = p->pivoting;
    prm.drop_tol = p->drop_tol;
    prm.pivot_tol = p->pivot_tol;
    prm.perturb = p->perturb;
    prm.pair_hint = p->pair_hint ? c->fac.d_pair_hint : NULL;
    prm.block_perturbed = c->fac.d_block_perturbed;
    if (c->fp.on) { /* the fixed-point method's schedule (cpu/fixed_point.h), from the host's A */
        if (p->fp_sweeps < 1 || p->fp_sweeps > ILDL_MAX_FP_SWEEPS) {
            status = ILDL_ERR_INTERNAL;
            goto cleanup;
        }
        double nrm = ildl_fp_norm_inf(T);
        c->fp.sweeps = p->fp_sweeps;
        for (int s = 1; s <= p->fp_sweeps; s++)
            ildl_fp_schedule(s, p->fp_eps, p->fp_delta, nrm, p->pivot_tol, p->perturb, &c->fp.tol[s - 1],
                             &c->fp.perturb[s - 1]);
    }
    ildl_profile_lap(&tl, "cuda factor: uploads queued");
    t1 = ildl_wtime();
    status = factor_run(c, prm, p->leftover);
    if (status) goto cleanup;
    ildl_profile_lap(&tl, "cuda factor: launched");
    if (c->pinned[0] && c->stream) {
        /* SQMR's copy of A's values, beside the factorization (page-locked: the host thread
         * goes on at once); on SQMR's stream, which its products follow */
        CU(cudaMemcpyAsync(c->d_aval, c->hostA->val, sizeof(double) * (size_t)c->hostA->rowptr[c->n],
                           cudaMemcpyHostToDevice, c->stream));
        c->aval_current = 1;
    }
    CU(cudaMemcpyAsync(&hs, c->fac.d_state, sizeof hs, cudaMemcpyDeviceToHost, c->fac.fstream[0]));
    if (st) { /* the statistics with the state, one wait for both (read only; unused on an error) */
        int grid = 4 * c->sm_count;
        CU(cudaMemsetAsync(c->fac.d_totals, 0, sizeof tot, c->fac.fstream[0]));
        k_factor_stats<<<grid, STATS_THREADS, 0, c->fac.fstream[0]>>>(c->T, c->fac.d_block_perturbed, c->fac.d_totals);
        CU_LAUNCH();
        CU(cudaMemcpyAsync(&tot, c->fac.d_totals, sizeof tot, cudaMemcpyDeviceToHost, c->fac.fstream[0]));
    }
    CU(cudaStreamSynchronize(c->fac.fstream[0]));
    t2 = ildl_wtime();
    ildl_profile_lap(&tl, "cuda factor: device done");
    if (hs.err) {
        status = hs.err;
        ildl_cuda_set_message("device factorization reported internal error %d", hs.err);
        goto cleanup;
    }
    solve_meta_launch(c->T, c->fac.fstream[0]);
    CU_LAUNCH();
    if (!c->T.val32 || c->single) /* mixed: after the rounding (ildl_cuda_round_single) */
        CU(solve_lanes_launch(c->T, c->fac.fstream[0]));
    if (c->have_map) {
        k_build_map<<<c->nb, 32, 0, c->fac.fstream[0]>>>(c->T, c->d_perm, c->d_scale, c->d_q, c->d_qs, c->d_qinv);
        CU_LAUNCH();
    }
    c->map_built = c->have_map;
    ildl_profile_lap(&tl, "cuda factor: solve records queued");
    if (p->block_perturbed)
        CU(cudaMemcpyAsync(p->block_perturbed, c->fac.d_block_perturbed, sizeof(int32_t) * (size_t)T->nb,
                           cudaMemcpyDeviceToHost, c->fac.fstream[0]));
    if (st) {
        memset(st, 0, sizeof *st);
        /* without phase B (factor_dense_path), from the diagonal kernels' per-row counts */
        st->nperturbed = factor_dense_path(c, prm) ? (int32_t)tot.perturbed : hs.nperturbed;
        st->leftover_granted = hs.granted;
        st->n2x2 = (int32_t)tot.n2x2;
        st->factor_nnz = (int64_t)(T->n + tot.n2x2 + tot.nnz);
        st->inertia_pos = (int32_t)tot.pos;
        st->inertia_neg = (int32_t)tot.neg;
        st->inertia_zero = (int32_t)tot.zero;
        st->schedule = c->fac.last_schedule;
        st->t_upload = t1 - t0;
        st->t_device = t2 - t1;
        st->t_stats = ildl_wtime() - t2;
        ildl_profile_lap(&tl, "cuda factor: statistics");
        if (c->fp.on) { /* the residual from the device's per-tile sums, summed as the reference */
            double *tile_sq = (double *)malloc(sizeof(double) * (size_t)(T->ntiles > 0 ? T->ntiles : 1));
            if (!tile_sq) {
                status = ILDL_ERR_OUT_OF_MEMORY;
                goto cleanup;
            }
            status = fp_residual_download(c, tile_sq, c->fac.fstream[0]);
            if (!status && cudaStreamSynchronize(c->fac.fstream[0]) != cudaSuccess) status = ILDL_ERR_DEVICE;
            if (!status) st->fp_residual = ildl_fp_residual(T, tile_sq);
            free(tile_sq);
            if (status) goto cleanup;
        }
    }
    CU(cudaStreamSynchronize(c->fac.fstream[0]));
    /* the caller may rewrite A's values (the next refactorization) once this returns */
    if (c->aval_current && c->stream) CU(cudaStreamSynchronize(c->stream));
    ildl_profile_lap(&tl, "cuda factor: final waits");
    c->factored = 1;
cleanup:
    if (status) {
        /* a failed launch can leave the pulls of a chunk unjoined: nothing may still run on
         * the factorization's streams when the caller retries (errors here are the same) */
        cudaStreamSynchronize(c->fac.fstream[0]);
        cudaStreamSynchronize(c->fac.fstream[1]);
        if (c->stream) cudaStreamSynchronize(c->stream); /* A's values (page-locked copy) */
        ildl_msg(msg, msglen, "%s", ildl_cuda_status_message(status));
    }
    return status;
}

__global__ void k_round_single(int64_t m, double *v)
{
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m) v[k] = (double)(float)v[k];
}

__global__ void k_to_single(int64_t m, const double *v, float *w)
{
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m) w[k] = (float)v[k];
}

/* Mixed precision: the solves read a single-precision copy of U; D is rounded in place. */
extern "C" int ildl_cuda_round_single(ildl_cuda_ctx *c)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    if (!c->T.val32 || c->single) return ILDL_ERR_CALL_ORDER;
    /* on the factorization's stream, and finished before ildl_factor returns (a following
     * ildl_apply may run on any stream) */
    k_to_single<<<(unsigned)((c->T.total_cap + 255) / 256), 256, 0, c->fac.fstream[0]>>>(c->T.total_cap, c->T.val,
                                                                                    c->T.val32);
    CU_LAUNCH();
    k_round_single<<<(c->n + 255) / 256, 256, 0, c->fac.fstream[0]>>>(c->n, c->T.d_diag);
    CU_LAUNCH();
    k_round_single<<<(c->n + 255) / 256, 256, 0, c->fac.fstream[0]>>>(c->n, c->T.d_off);
    CU_LAUNCH();
    CU(solve_lanes_launch(c->T, c->fac.fstream[0])); /* their values from the rounded copy */
    CU(cudaStreamSynchronize(c->fac.fstream[0]));
cleanup:
    return status;
}

extern "C" int ildl_cuda_download_factor(ildl_cuda_ctx *c, ildl_tiles *T)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    if (c->single ? !T->val32 : !T->val) return ILDL_ERR_SIZE_MISMATCH; /* host storage of the other precision */
    if (c->single)
        CU(cudaMemcpy(T->val32, c->T.val32, sizeof(float) * (size_t)T->total_cap, cudaMemcpyDeviceToHost));
    else
        CU(cudaMemcpy(T->val, c->T.val, sizeof(double) * (size_t)T->total_cap, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->idx, c->T.idx, sizeof(uint16_t) * (size_t)T->total_cap, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->piv, c->T.piv, sizeof(int32_t) * (size_t)T->n, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->d_diag, c->T.d_diag, sizeof(double) * (size_t)T->n, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->d_off, c->T.d_off, sizeof(double) * (size_t)T->n, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->piv_type, c->T.piv_type, (size_t)T->n, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->off, c->T.off, sizeof(int64_t) * (size_t)T->ntiles, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->nnz, c->T.nnz, sizeof(int64_t) * (size_t)T->ntiles, cudaMemcpyDeviceToHost));
    T->diag_inverted = 1; /* the device factor is prepared for the solves */
cleanup:
    return status;
}

extern "C" int ildl_cuda_pin_host(ildl_cuda_ctx *c, ildl_tiles *T)
{
    device_scope scope; /* the caller's context back on return */
    if (!c->tune.pin_host || !c->hostA || c->pinned[0] || cudaSetDevice(c->device) != cudaSuccess) {
        (void)cudaGetLastError();
        return ILDL_SUCCESS;
    }
    double t0 = ildl_wtime();
    void *a[2] = {c->hostA->val, T->a_val};
    size_t b[2] = {sizeof(double) * (size_t)c->hostA->rowptr[c->n], sizeof(double) * (size_t)T->a_ptr[T->ntiles]};
    for (int k = 0; k < 2; k++) {
        if (!a[k] || !b[k]) continue;
        if (cudaHostRegister(a[k], b[k], cudaHostRegisterDefault) == cudaSuccess) c->pinned[k] = a[k];
        else (void)cudaGetLastError(); /* not fatal: the copies stay pageable */
    }
    if (ildl_profiling())
        fprintf(stderr, "ildl profile: %-32s %.4f s (%s, %s)\n", "cuda: host arrays page-locked", ildl_wtime() - t0,
                c->pinned[0] ? "A" : "not A", c->pinned[1] ? "tiles" : "not tiles");
    return ILDL_SUCCESS;
}

extern "C" int ildl_cuda_set_map(ildl_cuda_ctx *c, const int32_t *perm, const double *scale)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    /* ordered before the factorization that reads them, on its stream */
    CU(cudaMemcpyAsync(c->d_perm, perm, sizeof(int32_t) * (size_t)c->n, cudaMemcpyHostToDevice, c->fac.fstream[0]));
    CU(cudaMemcpyAsync(c->d_scale, scale, sizeof(double) * (size_t)c->n, cudaMemcpyHostToDevice, c->fac.fstream[0]));
    c->have_map = 1;
cleanup:
    return status;
}

extern "C" int ildl_cuda_reserve_pair_hint(ildl_cuda_ctx *c)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    if (c->fac.d_pair_hint) return ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    CU(alloc(&c->fac.d_pair_hint, (size_t)c->n, c));
cleanup:
    return status;
}
