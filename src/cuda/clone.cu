/* clone.cu -- solvers: contexts that share a context's tile store, factor, map and A and own
 * only the work space of one solve, so that ildl_solve_multi's columns run on streams (and host
 * threads) of their own at once. What a solve writes is theirs: the preconditioner's vectors
 * (d_w, d_r, d_z, the sweep's output), the sync-free sweeps' tickets and epoch, the split rows'
 * scratch, counters and ready flags, SQMR's vectors, scalars, streams and captured graphs.
 * Everything else (T's pattern, factor and plan, the lanes, the map, A) is read only. */
#include <stdlib.h>
#include <string.h>
#include "cuda/context.cuh"
extern "C" {
#include "cuda/cuda_backend.h"
}

/* A solver's own device pointers (freed by ildl_cuda_solver_destroy). */
#define SOLVER_OWNED(w) {(void *)(w)->d_w, (void *)(w)->d_r, (void *)(w)->d_z, (void *)(w)->sol.d_sweep, \
                         (void *)(w)->sol.d_epoch, (void *)(w)->d_tickets, (void *)(w)->T.sf_scratch,         \
                         (void *)(w)->T.sf_count, (void *)(w)->T.sf_ready}

extern "C" void ildl_cuda_solver_destroy(ildl_cuda_ctx *w)
{
    if (!w) return;
    device_scope scope;
    cudaSetDevice(w->device);
    ildl_cuda_sqmr_free(w);
    ildl_cuda_capture_lock(); /* cudaFree synchronises the device */
    void *ptrs[] = SOLVER_OWNED(w);
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++)
        if (ptrs[k]) cudaFree(ptrs[k]);
    ildl_cuda_capture_unlock();
    free(w);
}

extern "C" int ildl_cuda_upload_values(ildl_cuda_ctx *c)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    if (!c->hostA || c->aval_current) return ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    CU(cudaMemcpy(c->d_aval, c->hostA->val, sizeof(double) * (size_t)c->hostA->rowptr[c->n], cudaMemcpyHostToDevice));
    c->aval_current = 1;
cleanup:
    return status;
}

extern "C" int ildl_cuda_solver_create(ildl_cuda_ctx *c, ildl_cuda_ctx **out)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    *out = NULL;
    if (!c->factored || !c->map_built || !c->hostA || c->parent) return ILDL_ERR_CALL_ORDER;
    ildl_cuda_ctx *w = (ildl_cuda_ctx *)malloc(sizeof *w);
    if (!w) return ILDL_ERR_OUT_OF_MEMORY;
    *w = *c; /* the shared part: pointers into c's memory, the settings and the kernels chosen */
    w->parent = c;
    w->bytes = 0;
    w->prof_solve = 0; /* c's events are not the solver's */
    memset(w->ev, 0, sizeof w->ev);
    memset(w->pinned, 0, sizeof w->pinned);
    w->aval_current = 1; /* read from c, never uploaded by the solver (ildl_cuda_upload_values) */
    /* the solve's own: none yet (destroy frees only what was allocated) */
    w->d_w = w->d_r = w->d_z = w->sol.d_sweep = NULL;
    w->sol.d_epoch = w->d_tickets = NULL;
    w->T.sf_scratch = NULL;
    w->T.sf_count = w->T.sf_ready = NULL;
    w->d_b = w->d_x = w->d_t = w->d_qv = w->d_d = w->d_u = w->d_xbest = w->d_part = NULL;
    w->d_count = NULL;
    w->d_S = NULL;
    w->stream = w->side = NULL;
    w->sq_fork = w->sq_join = NULL;
    w->g_full = w->g_dir = NULL;
#ifdef ILDL_SOLVE_TRACE
    w->sol.d_trace = NULL;
#endif
    CU(cudaSetDevice(c->device));
    CU(alloc(&w->d_w, (size_t)c->n, w));
    CU(alloc(&w->d_r, (size_t)c->n, w));
    CU(alloc(&w->d_z, (size_t)c->n, w));
    CU(alloc(&w->sol.d_sweep, (size_t)c->n, w));
    CU(alloc_zeroed(&w->sol.d_epoch, 1, w));
    CU(alloc_zeroed(&w->d_tickets, 3, w));
    w->d_skip = w->d_tickets + 2;
    CU(alloc(&w->T.sf_scratch, (size_t)c->sol.sf_scratch_len, w));
    CU(alloc_zeroed(&w->T.sf_count, (size_t)c->nb, w));
    CU(alloc_zeroed(&w->T.sf_ready, (size_t)c->nb, w));
    CU(cudaDeviceSynchronize()); /* the zeroing (legacy stream) before the solver's streams use them */
    status = ildl_cuda_sqmr_prepare(w); /* its vectors, streams and graphs */
    if (status) goto cleanup;
    *out = w;
    return ILDL_SUCCESS;
cleanup:
    ildl_cuda_solver_destroy(w);
    return status;
}
