/* setup.cu -- a context's creation (device, upload of the tile store and of A, all the device
 * memory a factorization and a solve need, the L2 policy) and its destruction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/context.cuh"
extern "C" {
#include "core/csr.h"
#include "cuda/cuda_backend.h"
}

/* The sync-free sweeps' output vector as persisting lines in L2 (common.cuh, launch_l2_window): a
 * tile reads its dependency's values (256 bytes) long after they were written, by when the factor
 * streaming through L2 has pushed them out to memory, so that a sweep read about as many bytes of
 * x again as it wrote (the window: per iteration -1.5 to -2.6% at n >= 1M). Raises the
 * device's persisting L2 size (cudaLimitPersistingL2CacheSize, a setting of the whole device in
 * this process) to the window's bytes if it is smaller, at most the device's maximum; never
 * lowers it. on = 0 (ildl_options.l2_persist OFF) leaves the limit alone and launches without the
 * window. */
static void l2_window_setup(const cudaDeviceProp *prop, int32_t n, int on, dev_tiles *D)
{
    size_t bytes = sizeof(double) * (size_t)n, win = bytes, lim, cur = 0;
    D->l2_window = 0;
    D->l2_ratio = 0.0f;
    if (!on || prop->persistingL2CacheMaxSize <= 0 || prop->accessPolicyMaxWindowSize <= 0 ||
        bytes == 0)
        return;
    if (win > (size_t)prop->accessPolicyMaxWindowSize) win = (size_t)prop->accessPolicyMaxWindowSize;
    lim = win < (size_t)prop->persistingL2CacheMaxSize ? win : (size_t)prop->persistingL2CacheMaxSize;
    if (cudaDeviceGetLimit(&cur, cudaLimitPersistingL2CacheSize) != cudaSuccess ||
        (cur < lim && cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, lim) != cudaSuccess)) {
        (void)cudaGetLastError(); /* not sticky: run without the window */
        return;
    }
    if (cur > lim) lim = cur < win ? cur : win;
    D->l2_window = win;
    D->l2_ratio = (float)((double)lim / (double)win);
}

/* The tile store on the device: its pattern uploaded, the factor's storage allocated (zeroed:
 * a download must not show another handle's data in the unused capacity), the sync-free
 * solves' work items planned. */
static int upload_tile_store(ildl_cuda_ctx *c, const ildl_tiles *T)
{
    int status = ILDL_SUCCESS;
    {
        dev_tiles &D = c->T;
        D.n = T->n;
        D.nb = T->nb;
        D.ntiles = T->ntiles;
        D.total_cap = T->total_cap;
        int64_t na = T->a_ptr[T->ntiles];
        CU(upload((int32_t **)&D.bstart, T->bstart, (size_t)T->nb + 1, c));
        CU(upload((int64_t **)&D.row_ptr, T->row_ptr, (size_t)T->nb + 1, c));
        CU(upload((int32_t **)&D.row, T->row, (size_t)T->ntiles, c));
        CU(upload((int32_t **)&D.col, T->col, (size_t)T->ntiles, c));
        CU(upload((int64_t **)&D.col_ptr, T->col_ptr, (size_t)T->nb + 1, c));
        CU(upload((int64_t **)&D.col_tiles, T->col_tiles, (size_t)T->ntiles, c));
        CU(upload((int64_t **)&D.fwd_seq0, T->fwd_seq, (size_t)T->ntiles, c));
        CU(upload((int64_t **)&D.bwd_seq0, T->bwd_seq, (size_t)T->ntiles, c));
        CU(upload(&D.fwd_seq, T->fwd_seq, (size_t)T->ntiles, c)); /* k_skip_empty rewrites row ranges */
        CU(upload(&D.bwd_seq, T->bwd_seq, (size_t)T->ntiles, c));
        CU(alloc(&D.fwd_end, (size_t)T->nb, c));
        CU(alloc(&D.bwd_end, (size_t)T->nb, c));
        CU(alloc(&D.fwd_meta, (size_t)T->ntiles, c));
        CU(alloc(&D.bwd_meta, (size_t)T->ntiles, c));
        if (T->total_cap >= (1LL << SOLVE_META_OFF_BITS)) {
            ildl_cuda_set_message("factor capacity %lld entries exceeds the CUDA backend's 2^%d",
                                  (long long)T->total_cap, SOLVE_META_OFF_BITS);
            status = ILDL_ERR_NOT_SUPPORTED;
            goto cleanup;
        }
        {
            int64_t *cd = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->nb + 1));
            if (!cd) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
            for (int32_t i = 0; i < T->nb; i++) cd[i] = ildl_tiles_col_diag(T, i);
            cudaError_t e = upload((int64_t **)&D.col_diag, cd, (size_t)T->nb, c);
            if (e == cudaSuccess) e = sf_split_plan(c, T, cd);
            free(cd);
            CU(e);
        }
        {
            /* the leftover scan's static view of every storage slot (factor_phase_b.cu, slot_get) */
            int64_t *ss = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->ntiles + 1));
            if (!ss) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
            for (int64_t g = 0; g < T->ntiles; g++) {
                int64_t t = T->tile_order[g];
                int32_t i = T->row[t];
                int sparse = t != T->row_ptr[i] && T->format[t] == ILDL_TILE_SPARSE;
                ss[g] = sparse ? -T->cap[t] - 1
                               : (int64_t)ildl_tiles_block_size(T, i) * ildl_tiles_block_size(T, T->col[t]);
            }
            cudaError_t e = upload(&c->fac.d_slot_size, ss, (size_t)T->ntiles, c);
            free(ss);
            CU(e);
        }
        CU(upload((int32_t **)&D.level_rows, T->level_rows, (size_t)T->nb, c));
        CU(upload((int64_t **)&D.a_ptr, T->a_ptr, (size_t)T->ntiles + 1, c));
        CU(upload((uint16_t **)&D.a_idx, T->a_idx, (size_t)na, c));
        CU(alloc(&D.a_val, (size_t)na, c));
        CU(upload((uint8_t **)&D.format, T->format, (size_t)T->ntiles, c));
        CU(upload((int64_t **)&D.cap, T->cap, (size_t)T->ntiles, c));
        CU(upload((int64_t **)&D.tile_order, T->tile_order, (size_t)T->ntiles, c));
        {
            /* every tile dense: phase B would always give each tile its capacity at its
             * capacity offset, so they are the store's offsets and counts from the start */
            c->fac.all_dense = ildl_tiles_all_dense(T);
            if (c->fac.all_dense) {
                CU(upload((int64_t **)&D.off, T->cap_off, (size_t)T->ntiles, c));
                CU(upload((int64_t **)&D.nnz, T->cap, (size_t)T->ntiles, c));
            } else {
                CU(alloc(&D.off, (size_t)T->ntiles, c));
                CU(alloc(&D.nnz, (size_t)T->ntiles, c));
            }
        }
        if (T->val32) {
            /* precision single: the factorization computes in float and writes val32 only (the
             * double factor is never allocated); the solves read it in double arithmetic */
            CU(alloc_zeroed(&D.val32, (size_t)T->total_cap, c));
            c->single = 1;
        } else {
            CU(alloc_zeroed(&D.val, (size_t)T->total_cap, c));
        }
        CU(alloc_zeroed(&D.idx, (size_t)T->total_cap, c));
        CU(alloc(&D.piv, (size_t)T->n, c));
        CU(alloc(&D.d_diag, (size_t)T->n, c));
        CU(alloc(&D.d_off, (size_t)T->n, c));
        CU(alloc(&D.piv_type, (size_t)T->n, c));
        c->d_level_rows = (int32_t *)D.level_rows;
    }
cleanup:
    return status;
}

/* The factorization's work space (the chunk plan's tables, the in-flight tiles of a chunk and
 * their results), its streams and events, and its kernels' shared-memory limits. */
static int alloc_factor_work(ildl_cuda_ctx *c, const ildl_tiles *T, const int32_t *rowbase, const int32_t *tile_rr,
                             const int32_t *tile_s)
{
    int status = ILDL_SUCCESS;
    {
        CU(upload(&c->fac.d_rowbase, rowbase, (size_t)T->nb, c));
        CU(upload(&c->fac.d_tile_rr, tile_rr, (size_t)c->fac.chunk_toff[c->fac.nchunks], c));
        CU(upload(&c->fac.d_tile_s, tile_s, (size_t)c->fac.chunk_toff[c->fac.nchunks], c));
        CU(pull_split_plan(c, T, tile_rr, tile_s));
        CU(colperm_plan(c, T));
        /* the in-flight tiles and row norms hold the factorization's value type: float in
         * precision single, so half as many doubles' worth */
        size_t vals = (size_t)c->fac.budget * TILE, norms = (size_t)c->fac.budget * LD;
        if (c->single) {
            vals = (vals + 1) / 2;
            norms = (norms + 1) / 2;
        }
        CU(alloc(&c->fac.d_inflight, vals, c));
        CU(alloc(&c->fac.d_need, (size_t)c->fac.budget, c));
        CU(alloc(&c->fac.d_res, (size_t)c->fac.budget, c));
        CU(alloc(&c->fac.d_rownorm, norms, c));
        CU(alloc(&c->fac.d_state, 1, c));
        CU(alloc(&c->fac.d_block_perturbed, (size_t)T->nb, c));
        if (!c->plan_only) {
            CU(factor_configure());
            if (c->fac.sf_ntasks > 0) { /* k_factor_sf's grid: every block resident */
                int per_sm = 0;
                CU(factor_sf_configure(&per_sm));
                c->fac.sf_blocks = per_sm * c->sm_count;
                if (c->fac.sf_blocks < 1) c->fac.sf_ntasks = 0; /* cannot run here: the levels */
            }
            CU(fp_configure());
            for (int k = 0; k < 2; k++) CU(cudaStreamCreateWithFlags(&c->fac.fstream[k], cudaStreamNonBlocking));
            CU(cudaEventCreateWithFlags(&c->fac.ev_fork, cudaEventDisableTiming));
            CU(cudaEventCreateWithFlags(&c->fac.ev_join, cudaEventDisableTiming));
        }
    }
cleanup:
    return status;
}

/* The solves' state (the sync-free sweeps' output, epoch and tickets; the levels), the
 * profile's events (and the trace build's records), the packed V_ii's offsets, and the solve
 * kernels chosen and configured. */
static int alloc_solve_work(ildl_cuda_ctx *c, const ildl_tiles *T)
{
    int status = ILDL_SUCCESS;
    {
        dev_tiles &D = c->T;
        CU(alloc(&c->sol.d_sweep, (size_t)T->n, c));
        CU(alloc_zeroed(&c->sol.d_epoch, 1, c));
        CU(alloc_zeroed(&c->d_tickets, 3, c));
        c->d_skip = c->d_tickets + 2; /* never written: the solves never skip */
        c->sol.nlevels = T->nlevels;
        c->sol.level_ptr = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->nlevels + 1));
        if (!c->sol.level_ptr) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
        memcpy(c->sol.level_ptr, T->level_ptr, sizeof(int32_t) * ((size_t)T->nlevels + 1));
        c->nb = T->nb;
        if (ildl_cuda_profiling() && !c->plan_only) {
            for (int k = 0; k < 4; k++) CU(cudaEventCreate(&c->ev[k]));
            c->prof_solve = 1;
#ifdef ILDL_SOLVE_TRACE
            CU(alloc(&c->sol.d_trace, (size_t)20 * T->nb, c));
            CU(solve_set_trace(c->sol.d_trace));
            /* written through the legacy stream; the solves run on non-blocking ones */
            CU(device_sync_locked());
#endif
        }
        {
            /* where each row's packed V_ii starts in vii_pk (lanes_alloc allocates it) */
            int64_t *vo = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->nb + 1));
            if (!vo) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
            int64_t at = 0;
            for (int32_t i = 0; i < T->nb; i++) {
                vo[i] = at;
                at += vii_packed_size(ildl_tiles_block_size(T, i));
            }
            vo[T->nb] = at;
            D.vii_cap = at;
            cudaError_t e = upload((int64_t **)&D.vii_off, vo, (size_t)T->nb + 1, c);
            free(vo);
            CU(e);
        }
        D.lane_cap = T->total_cap; /* the lanes hold the sparse tiles' entries (lanes_alloc) */
        for (int64_t t = 0; t < T->ntiles; t++)
            if (T->format[t] != ILDL_TILE_SPARSE) D.lane_cap -= T->cap[t];
        status = set_solve_warps(c, 0, 0); /* the default warps for the kernels chosen */
    }
cleanup:
    return status;
}

/* The map to the user's ordering, the statistics, the preconditioner's work vectors, and A for
 * SQMR's products (its values come with each factorization). */
static int alloc_apply_work(ildl_cuda_ctx *c, const ildl_tiles *T, const ildl_csr *A)
{
    int status = ILDL_SUCCESS;
    {
        c->n = T->n;
        CU(alloc(&c->d_q, (size_t)T->n, c));
        CU(alloc(&c->d_qs, (size_t)T->n, c));
        CU(alloc(&c->d_qinv, (size_t)T->n, c));
        CU(alloc(&c->d_perm, (size_t)T->n, c));
        CU(alloc(&c->d_scale, (size_t)T->n, c));
        CU(alloc(&c->fac.d_totals, 1, c));
        CU(alloc(&c->d_w, (size_t)T->n, c));
        CU(alloc(&c->d_r, (size_t)T->n, c));
        CU(alloc(&c->d_z, (size_t)T->n, c));
        if (A) {
            CU(upload(&c->d_arow, A->rowptr, (size_t)A->n + 1, c));
            CU(upload(&c->d_acol, A->col, (size_t)A->rowptr[A->n], c));
            CU(alloc(&c->d_aval, (size_t)A->rowptr[A->n], c));
            c->hostA = A;
            int32_t nl = 0; /* the long rows of the SpMV (sqmr.cu), a warp each */
            for (int32_t i = 0; i < A->n; i++) nl += A->rowptr[i + 1] - A->rowptr[i] > ILDL_SPMV_LONG_ROW;
            if (nl > 0) {
                int32_t *lr = (int32_t *)malloc(sizeof(int32_t) * (size_t)nl);
                if (!lr) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
                nl = 0;
                for (int32_t i = 0; i < A->n; i++)
                    if (A->rowptr[i + 1] - A->rowptr[i] > ILDL_SPMV_LONG_ROW) lr[nl++] = i;
                cudaError_t e = upload(&c->d_along, lr, (size_t)nl, c);
                free(lr);
                CU(e);
                c->n_along = nl;
            }
        }
    }
cleanup:
    return status;
}

/* ildl_cuda_create's work; plan_only: ildl_cuda_estimate's pass, which counts the bytes of every
 * allocation (the same plan, the same sizes) and allocates nothing. */
static int create(const ildl_tiles *T, const ildl_csr *A, int device_id, int solve_kernels, int l2_persist,
                  int plan_only, ildl_cuda_ctx **out, char *msg, size_t msglen)
{
    device_scope scope;
    int status = ILDL_SUCCESS;
    int32_t *rowbase = NULL, *tile_rr = NULL, *tile_s = NULL;
    ildl_cuda_ctx *c = NULL;
    int ndev = ildl_cuda_device_count();
    *out = NULL;
    ildl_cuda_clear_message();
    if (ndev <= 0) {
        ildl_msg(msg, msglen, "no usable CUDA device");
        return ILDL_ERR_NO_DEVICE;
    }
    if (device_id < 0 || device_id >= ndev) {
        ildl_msg(msg, msglen, "device_id %d out of range (%d devices)", device_id, ndev);
        return ILDL_ERR_INVALID_OPTION;
    }
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    c = (ildl_cuda_ctx *)calloc(1, sizeof *c);
    rowbase = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->nb + 1));
    tile_rr = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->ntiles + 1));
    tile_s = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->ntiles + 1));
    if (!c || !rowbase || !tile_rr || !tile_s) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    c->plan_only = plan_only;
    c->device = device_id;
    ildl_cuda_tuning_get(&c->tune);
    c->sol.staged_only = solve_kernels == ILDL_SOLVE_KERNELS_STAGED;
    CU(cudaSetDevice(device_id));
    {
        cudaDeviceProp prop;
        CU(cudaGetDeviceProperties(&prop, device_id));
        snprintf(c->name, sizeof c->name, "%s", prop.name);
        c->sm_count = prop.multiProcessorCount;
        /* the estimate leaves the device's persisting-L2 size alone */
        l2_window_setup(&prop, T->n, l2_persist != ILDL_L2_PERSIST_OFF && !plan_only, &c->T);
    }
    ildl_profile_lap(&tp, "cuda: device and its properties");
    status = plan_chunks(c, T, rowbase, tile_rr, tile_s);
    if (status) goto cleanup;
    status = upload_tile_store(c, T);
    if (!status) status = alloc_factor_work(c, T, rowbase, tile_rr, tile_s);
    if (!status) status = alloc_solve_work(c, T);
    if (!status) status = alloc_apply_work(c, T, A);
cleanup:
    free(rowbase);
    free(tile_rr);
    free(tile_s);
    if (c && ildl_profiling()) {
        double t_dev = c->t_malloc + c->t_copy;
        fprintf(stderr, "ildl profile: %-32s %.4f s\n", "cuda: cudaMalloc calls", c->t_malloc);
        fprintf(stderr, "ildl profile: %-32s %.4f s\n", "cuda: cudaMemcpy calls", c->t_copy);
        fprintf(stderr, "ildl profile: %-32s %.4f s\n", "cuda: the rest of the upload", ildl_wtime() - tp - t_dev);
    }
    if (status) {
        ildl_msg(msg, msglen, "CUDA setup failed: %s", ildl_cuda_status_message(status));
        ildl_cuda_destroy(c);
        return status;
    }
    *out = c;
    return ILDL_SUCCESS;
}

extern "C" int ildl_cuda_create(const ildl_tiles *T, const ildl_csr *A, int device_id, int solve_kernels,
                                int l2_persist, ildl_cuda_ctx **out, char *msg, size_t msglen)
{
    return create(T, A, device_id, solve_kernels, l2_persist, 0, out, msg, msglen);
}

extern "C" int ildl_cuda_estimate(const ildl_tiles *T, const ildl_csr *A, int device_id, int solve_kernels,
                                  int mixed, int pair_hint, size_t *bytes, char *msg, size_t msglen)
{
    ildl_cuda_ctx *c = NULL;
    *bytes = 0;
    int st = create(T, A, device_id, solve_kernels, ILDL_L2_PERSIST_OFF, 1, &c, msg, msglen);
    if (st) return st;
    size_t b = c->bytes;
    if (A) b += ildl_cuda_sqmr_bytes(T->n); /* the backend's create prepares SQMR */
    if (mixed) b += sizeof(float) * (size_t)T->total_cap; /* ildl_cuda_set_mixed */
    if (pair_hint) b += sizeof(int8_t) * (size_t)(T->n ? T->n : 1); /* the first factorization's */
    ildl_cuda_destroy(c);
    *bytes = b;
    return ILDL_SUCCESS;
}

extern "C" void ildl_cuda_destroy(ildl_cuda_ctx *c)
{
    if (!c) return;
    if (c->parent) { /* a solver: only its own work space (clone.cu) */
        ildl_cuda_solver_destroy(c);
        return;
    }
    device_scope scope;
    cudaSetDevice(c->device);
    ildl_cuda_sqmr_free(c);
    ildl_cuda_capture_lock(); /* cudaFree synchronises the device */
    lanes_free(c, 0);
    for (int k = 0; k < 2; k++)
        if (c->pinned[k]) cudaHostUnregister(c->pinned[k]);
    void *ptrs[] = {(void *)c->T.bstart, (void *)c->T.row_ptr, (void *)c->T.row, (void *)c->T.col,
                    (void *)c->T.col_ptr, (void *)c->T.col_tiles, (void *)c->T.col_diag, (void *)c->T.level_rows,
                    (void *)c->T.fwd_seq0, (void *)c->T.bwd_seq0, (void *)c->T.fwd_seq, (void *)c->T.bwd_seq,
                    (void *)c->T.fwd_end, (void *)c->T.bwd_end, (void *)c->T.fwd_meta, (void *)c->T.bwd_meta,
                    (void *)c->T.a_ptr, (void *)c->T.a_idx, (void *)c->T.a_val, (void *)c->T.format,
                    (void *)c->T.cap, (void *)c->T.tile_order, (void *)c->T.off, (void *)c->T.nnz,
                    (void *)c->T.val, (void *)c->T.idx, (void *)c->T.piv, (void *)c->T.d_diag,
                    (void *)c->T.d_off, (void *)c->T.piv_type, (void *)c->fac.d_rowbase,
                    (void *)c->fac.d_inflight, (void *)c->fac.d_need, (void *)c->fac.d_res, (void *)c->fac.d_rownorm,
                    (void *)c->fac.d_state, (void *)c->fac.d_block_perturbed, (void *)c->fac.d_pair_hint, (void *)c->d_q, (void *)c->d_qs,
                    (void *)c->d_qinv, (void *)c->d_w, (void *)c->d_r, (void *)c->d_z, (void *)c->d_arow,
                    (void *)c->d_acol, (void *)c->d_aval, (void *)c->d_along, (void *)c->sol.d_epoch, (void *)c->d_tickets, (void *)c->T.val32, (void *)c->fac.d_tile_rr,
                    (void *)c->fac.d_tile_s, (void *)c->fac.d_split_row, (void *)c->fac.d_split_ofd,
                    (void *)c->fac.d_job_ti, (void *)c->fac.d_job_tj, (void *)c->fac.d_prod, (void *)c->fac.d_coltile, (void *)c->sol.d_sweep, (void *)c->fac.d_slot_size, (void *)c->d_perm, (void *)c->d_scale,
                    (void *)c->fac.d_totals, (void *)c->T.sf_items_f, (void *)c->T.sf_items_b, (void *)c->T.sf_rec_f, (void *)c->T.sf_rec_b,
                    (void *)c->T.sf_scr_f, (void *)c->T.sf_scr_b, (void *)c->T.sf_scratch,
                    (void *)c->T.sf_count, (void *)c->T.sf_ready, (void *)c->T.vii_off,
                    (void *)c->bj.d_size, (void *)c->bj.d_pert, (void *)c->bj.d_off, (void *)c->bj.d_row,
                    (void *)c->bj.d_inv, (void *)c->fp.d_soff, (void *)c->fp.d_offd, (void *)c->fp.d_u[0],
                    (void *)c->fp.d_u[1], (void *)c->fp.d_perm[0], (void *)c->fp.d_perm[1], (void *)c->fp.d_dd[0],
                    (void *)c->fp.d_dd[1], (void *)c->fp.d_de[0], (void *)c->fp.d_de[1], (void *)c->fp.d_ty[0],
                    (void *)c->fp.d_ty[1], (void *)c->fp.d_q, (void *)c->fp.d_npert, (void *)c->fp.d_n2x2,
                    (void *)c->fp.d_tile_sq, (void *)c->fp.d_dense,
                    (void *)c->fac.d_sf_tasks, (void *)c->fac.d_sf_row, (void *)c->fac.d_sf_sync, (void *)c->fac.d_sf_job_use};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++)
        if (ptrs[k]) cudaFree(ptrs[k]);
    for (int k = 0; k < 4; k++)
        if (c->ev[k]) cudaEventDestroy(c->ev[k]);
    if (c->fac.ev_fork) cudaEventDestroy(c->fac.ev_fork);
    if (c->fac.ev_join) cudaEventDestroy(c->fac.ev_join);
    for (int k = 0; k < 2; k++)
        if (c->fac.fstream[k]) cudaStreamDestroy(c->fac.fstream[k]);
    free(c->fac.chunk_r0);
    free(c->fac.chunk_n);
    free(c->fac.chunk_slots);
    free(c->fac.chunk_last);
    free(c->fac.chunk_toff);
    free(c->fac.chunk_job);
    free(c->fac.chunk_col);
    free(c->sol.level_ptr);
#ifdef ILDL_SOLVE_TRACE
    if (c->sol.d_trace) cudaFree(c->sol.d_trace);
#endif
    ildl_cuda_capture_unlock();
    free(c);
}
