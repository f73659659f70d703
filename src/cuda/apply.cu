/* apply.cu -- the preconditioner on the device: z = M^{-1} r, the gather into the factored
 * order, the two sweeps and D^-1 of the schedule chosen, the scatter back (capturable, so that
 * SQMR's graphs hold it), and the host-vector entry points. */
#include <stdio.h>
#include <stdlib.h>
#include "cuda/context.cuh"
extern "C" {
#include "cuda/cuda_backend.h"
}

#ifdef ILDL_SOLVE_TRACE
/* A trace build's diagnostic: write nb, nlevels, level_ptr, level_rows and the sweeps' records
 * to path (bench/solve_trace.py reads it); the last traced solve wins. */
static void trace_dump(ildl_cuda_ctx *c, const char *path)
{
    size_t nrec = (size_t)20 * c->nb;
    unsigned long long *rec = (unsigned long long *)malloc(nrec * sizeof *rec);
    int32_t *rows = (int32_t *)malloc(sizeof(int32_t) * (size_t)c->nb);
    FILE *f = fopen(path, "wb");
    if (rec && rows && f && cudaMemcpy(rec, c->sol.d_trace, nrec * sizeof *rec, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cudaMemcpy(rows, c->d_level_rows, sizeof(int32_t) * (size_t)c->nb, cudaMemcpyDeviceToHost) == cudaSuccess) {
        int32_t hdr[2] = {c->nb, c->sol.nlevels};
        fwrite(hdr, sizeof hdr, 1, f);
        fwrite(c->sol.level_ptr, sizeof(int32_t), (size_t)c->sol.nlevels + 1, f);
        fwrite(rows, sizeof(int32_t), (size_t)c->nb, f);
        fwrite(rec, sizeof *rec, nrec, f);
    }
    if (f) fclose(f);
    free(rec);
    free(rows);
}
#endif

__global__ void k_gather(int32_t n, const int32_t *q, const double *qs, const double *r, double *w, const int *skip)
{
    if (*skip) return;
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) w[k] = qs[k] * r[q[k]];
}

/* x (device, factored order) <- (U^T D U)^{-1} x (abs_d: (U^T |D| U)^{-1} x) on stream s; when r is not NULL, x is first
 * set to qs .* r[q] (the gather of a preconditioner application, fused with the sync-free
 * sweeps' first launch where there is one). */
static int solve_device(ildl_cuda_ctx *c, double *x, const double *r, cudaStream_t s, int abs_d)
{
    int status = ILDL_SUCCESS;
    const int WF = c->sol.solve_warps_f, WB = c->sol.solve_warps_b;
    const unsigned nblk = (unsigned)((c->n + 255) / 256);
    if (c->bj.on) { /* block-Jacobi (gje.cu): gather, the inverses in place; abs_d refused at setup */
        if (r) {
            k_gather<<<nblk, 256, 0, s>>>(c->n, c->d_q, c->d_qs, r, x, c->d_skip);
            CU_LAUNCH();
        }
        return ildl_cuda_bj_apply_device(c, x, s);
    }
    if (r && c->sol.schedule != ILDL_SCHEDULE_SYNCFREE) {
        k_gather<<<nblk, 256, 0, s>>>(c->n, c->d_q, c->d_qs, r, x, c->d_skip);
        CU_LAUNCH();
    }
    if (c->sol.schedule == ILDL_SCHEDULE_SYNCFREE) {
        /* ILDL_CUDA_PROFILE: time the two sweeps of a solve that is not being captured */
        cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        int prof = c->prof_solve && cudaStreamIsCapturing(s, &cap) == cudaSuccess &&
                   cap == cudaStreamCaptureStatusNone;
        /* x -> (forward) d_sweep -> (D) d_sweep -> (backward) x, each sweep writing into a
         * vector set to "unset" just before */
        double *y = c->sol.d_sweep;
        if (prof) CU(cudaEventRecord(c->ev[0], s));
        /* also a new epoch, the tickets reset, and the gather */
        k_sf_unset<<<nblk, 256, 0, s>>>(y, c->n, c->sol.d_epoch, c->d_tickets, c->d_skip, c->d_q, c->d_qs, r, x);
        CU_LAUNCH();
        const int kf = c->sol.sf_nostage ? (c->sol.sf_vglobal ? SOLVE_FORWARD_SYNCFREE_VG_NS : SOLVE_FORWARD_SYNCFREE_NS)
                                         : (c->sol.sf_vglobal ? SOLVE_FORWARD_SYNCFREE_VG : SOLVE_FORWARD_SYNCFREE);
        solve_launch(WF, kf, c->sol.sf_blocks_f, s, c->T, NULL, x, y, c->d_tickets, c->sol.d_epoch, c->d_skip);
        CU_LAUNCH();
        if (prof) CU(cudaEventRecord(c->ev[1], s));
        k_dsolve<<<nblk, 256, 0, s>>>(c->T, y, x, c->d_skip, abs_d); /* and unsets x */
        CU_LAUNCH();
        if (prof) CU(cudaEventRecord(c->ev[2], s));
        solve_launch(WB, c->sol.sf_nostage ? SOLVE_BACKWARD_SYNCFREE_NS : SOLVE_BACKWARD_SYNCFREE, c->sol.sf_blocks_b, s,
                     c->T, NULL, y, x, c->d_tickets + 1, c->sol.d_epoch, c->d_skip);
        CU_LAUNCH();
        if (prof) {
            float ms[3];
            CU(cudaEventRecord(c->ev[3], s));
            CU(cudaEventSynchronize(c->ev[3]));
            for (int k = 0; k < 3; k++) CU(cudaEventElapsedTime(&ms[k], c->ev[k], c->ev[k + 1]));
            fprintf(stderr, "ILDL_CUDA_PROFILE solve (warps %d+%d, blocks %d+%d%s%s): forward %.3f ms, "
                    "D %.3f ms, backward %.3f ms\n", WF, WB, c->sol.sf_blocks_f, c->sol.sf_blocks_b,
                    c->sol.sf_vglobal ? ", V_ii from global" : "", c->sol.sf_nostage ? ", no staging tiles" : "", ms[0],
                    ms[1], ms[2]);
#ifdef ILDL_SOLVE_TRACE
            if (c->sol.d_trace)
                trace_dump(c, c->tune.solve_trace_file ? c->tune.solve_trace_file : ILDL_SOLVE_TRACE_FILE);
#endif
        }
        return ILDL_SUCCESS;
    }
    for (int32_t lev = 0; lev < c->sol.nlevels; lev++) {
        int32_t r0 = c->sol.level_ptr[lev], nr = c->sol.level_ptr[lev + 1] - r0;
        solve_launch(WF, SOLVE_FORWARD_LEVEL, nr, s, c->T, c->d_level_rows + r0, x, x, NULL, NULL, c->d_skip);
        CU_LAUNCH();
    }
    k_dsolve<<<(c->n + 255) / 256, 256, 0, s>>>(c->T, x, NULL, c->d_skip, abs_d);
    CU_LAUNCH();
    for (int32_t lev = c->sol.nlevels - 1; lev >= 0; lev--) {
        int32_t r0 = c->sol.level_ptr[lev], nr = c->sol.level_ptr[lev + 1] - r0;
        solve_launch(WB, SOLVE_BACKWARD_LEVEL, nr, s, c->T, c->d_level_rows + r0, x, x, NULL, NULL, c->d_skip);
        CU_LAUNCH();
    }
cleanup:
    return status;
}

extern "C" int ildl_cuda_solve_factored(ildl_cuda_ctx *c, double *x)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    if (!c->factored) return ILDL_ERR_CALL_ORDER;
    CU(cudaSetDevice(c->device));
    CU(cudaMemcpy(c->d_w, x, sizeof(double) * (size_t)c->n, cudaMemcpyHostToDevice));
    status = solve_device(c, c->d_w, NULL, 0, 0);
    if (status) goto cleanup;
    CU(cudaMemcpy(x, c->d_w, sizeof(double) * (size_t)c->n, cudaMemcpyDeviceToHost));
cleanup:
    return status;
}

__global__ void k_scatter(int32_t n, const int32_t *q, const double *qs, const double *w, double *z, const int *skip)
{
    if (*skip) return;
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) z[q[k]] = qs[k] * w[k];
}

/* c->d_w = (U^T D U)^{-1} (qs .* r[q]) (factored order) for a device vector r in the user's
 * ordering, on stream s (capturable): a preconditioner application up to its scatter. */
int ildl_cuda_apply_to_w(ildl_cuda_ctx *c, const double *r, cudaStream_t s)
{
    return solve_device(c, c->d_w, r, s, 0);
}

/* z = M^{-1} r (abs_d: M = L|D|L^T) with r, z device vectors in the user's ordering. */
static int apply_device_mode(ildl_cuda_ctx *c, const double *r, double *z, cudaStream_t s, int abs_d)
{
    int status = solve_device(c, c->d_w, r, s, abs_d);
    if (status) goto cleanup;
    k_scatter<<<(c->n + 255) / 256, 256, 0, s>>>(c->n, c->d_q, c->d_qs, c->d_w, z, c->d_skip);
    CU_LAUNCH();
cleanup:
    return status;
}

/* z = M^{-1} r with r, z device vectors in the user's ordering (SQMR's M: the block LDL^T). */
int ildl_cuda_apply_device(ildl_cuda_ctx *c, const double *r, double *z, cudaStream_t s)
{
    return apply_device_mode(c, r, z, s, 0);
}

extern "C" int ildl_cuda_apply(ildl_cuda_ctx *c, const double *r, double *z, int where, void *stream, int abs_d)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    cudaStream_t s = (cudaStream_t)stream;
    /* without the map (ildl_cuda_set_map before the factorization) the gather would read
     * through uninitialized indices */
    if (!c->factored || !c->map_built) return ILDL_ERR_CALL_ORDER;
    CU(cudaSetDevice(c->device));
    if (where == ILDL_MEMORY_DEVICE) {
        /* host pointers passed as device pointers would fault the context: refuse them */
        cudaPointerAttributes ar, az;
        CU(cudaPointerGetAttributes(&ar, r));
        CU(cudaPointerGetAttributes(&az, z));
        if (ar.type != cudaMemoryTypeDevice && ar.type != cudaMemoryTypeManaged) return ILDL_ERR_INVALID_OPTION;
        if (az.type != cudaMemoryTypeDevice && az.type != cudaMemoryTypeManaged) return ILDL_ERR_INVALID_OPTION;
        return apply_device_mode(c, r, z, s, abs_d);
    }
    CU(cudaMemcpyAsync(c->d_r, r, sizeof(double) * (size_t)c->n, cudaMemcpyHostToDevice, s));
    status = apply_device_mode(c, c->d_r, c->d_z, s, abs_d);
    if (status) goto cleanup;
    CU(cudaMemcpyAsync(z, c->d_z, sizeof(double) * (size_t)c->n, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
cleanup:
    return status;
}


extern "C" int ildl_cuda_apply_start(ildl_cuda_ctx *c, const double *r, int abs_d)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    if (!c->factored || !c->map_built) return ILDL_ERR_CALL_ORDER;
    CU(cudaSetDevice(c->device));
    status = ildl_cuda_sqmr_prepare(c); /* c->stream */
    if (status) goto cleanup;
    CU(cudaMemcpyAsync(c->d_r, r, sizeof(double) * (size_t)c->n, cudaMemcpyHostToDevice, c->stream));
    status = apply_device_mode(c, c->d_r, c->d_z, c->stream, abs_d);
cleanup:
    return status;
}

extern "C" int ildl_cuda_apply_finish(ildl_cuda_ctx *c, double *z)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    CU(cudaMemcpyAsync(z, c->d_z, sizeof(double) * (size_t)c->n, cudaMemcpyDeviceToHost, c->stream));
    CU(cudaStreamSynchronize(c->stream));
cleanup:
    return status;
}

extern "C" int ildl_cuda_apply_wait(ildl_cuda_ctx *c, int own, void *stream)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    if (!own) CU(cudaStreamSynchronize((cudaStream_t)stream));
    else if (c->stream) CU(cudaStreamSynchronize(c->stream));
cleanup:
    return status;
}
