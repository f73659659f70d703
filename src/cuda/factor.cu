/* factor.cu -- the block-iLDL^T factorization on the GPU, its driver: per level (in chunks of
 * rows whose in-flight tiles fit the buffer) the kernels of the three phases of the CPU
 * reference (src/cpu/factor.c), with the same floating-point order, so factors agree with the
 * CPU bit for bit:
 *   phase A (factor_phase_a.cu)  in a narrow chunk, k_pull_products first computes the updates
 *            of the tiles with long chains apart (the split pulls, plan.cu); k_phase_a_pull
 *            pulls (or subtracts those products of) the updates of the off-diagonal tiles
 *            on a second stream while k_phase_a_diag does so for the diagonal tiles and
 *            factors them (none/BK/Rook); k_phase_a_solve (a warp per tile; in a narrow chunk
 *            k_phase_a_solve_block, a block per tile) then solves the off-diagonal tiles
 *            with U_ii and D_i, and k_phase_a_drop takes the row norms and tau-drops (a
 *            store of dense tiles with tau = 0 has nothing to drop or grant: it skips the
 *            drop and phase B, factor_dense_path);
 *   phase B (factor_phase_b.cu)  k_phase_b: deterministic leftover grants and storage offsets
 *            (prefix sums in storage order), or k_phase_b_atomic: the paper's racing protocol
 *            (option ILDL_LEFTOVER_ATOMIC);
 *   phase C (factor_phase_c.cu)  k_phase_c: keep-largest, compress and store, column
 *            permutation (in a narrow chunk one block per tile of the rows' block columns; a
 *            narrow chunk on the dense path has it done by its off-diagonal solve kernel,
 *            which stores the solved tiles directly: phase_a_solve_store_launch);
 * (the sync-free schedule, factor_syncfree.cu: where every tile is dense and tau = 0, one
 * persistent launch of the same operations instead of the chunks, ildl_options.factor_schedule)
 * (the fixed-point method, fixed_point.cu: its sweeps first, then per chunk k_fp_load instead
 * of phase A's pulls and solves), and after all levels k_invert_diagonal: every diagonal tile
 * U_ii becomes U_ii^{-1} (solves).
 * What follows a factorization (statistics, map, download) is factorize.cu's. */
#include "cuda/context.cuh"
extern "C" {
#include "core/util.h"
}
#include "cuda/factor_phases.cuh"

/* The chunks of a factorization with value type R (double, or float for precision single):
 * per chunk the phase kernels in order. ILDL_CUDA_PROFILE=1 synchronises after
 * every kernel and prints the wall time per kernel kind (diagnostic only: the synchronisation
 * itself slows the factorization down). */
template <typename R>
static int factor_chunks(ildl_cuda_ctx *c, const factor_params_d &prm, int leftover, int32_t ch_end)
{
    int status = ILDL_SUCCESS;
    R *inflight = reinterpret_cast<R *>(c->fac.d_inflight), *rownorm = reinterpret_cast<R *>(c->fac.d_rownorm);
    R *prod = reinterpret_cast<R *>(c->fac.d_prod);
    int prof = ildl_cuda_profiling();
    double prof_t[7] = {0, 0, 0, 0, 0, 0, 0}, prof_last = ildl_wtime();
#define PROFILE_POINT(k)                                                                  \
    do {                                                                                  \
        if (prof) {                                                                       \
            CU(cudaDeviceSynchronize());                                                  \
            double now_ = ildl_wtime();                                                   \
            prof_t[k] += now_ - prof_last;                                                \
            prof_last = now_;                                                             \
        }                                                                                 \
    } while (0)
    /* per chunk, the pulls of its off-diagonal tiles (s1) run beside its diagonal tiles (s0):
     * both only read what earlier chunks stored, and s1 starts after everything before it on s0
     * (the in-flight buffer is reused); the solves of the off-diagonal tiles join the two.
     * Profiling runs the two one after the other, to time each. */
    cudaStream_t s0 = c->fac.fstream[0], s1 = prof ? c->fac.fstream[0] : c->fac.fstream[1];
    /* a store of dense tiles only, tau = 0: the drop would only count (tau = 0 keeps every
     * dense entry, src/cpu/factor.c) and phase B would only give every tile its capacity at
     * its capacity offset (uploaded at setup); the pivots perturbed are then counted from
     * d_block_perturbed (factorize.cu) */
    const bool dense_path = factor_dense_path(c, prm);
    for (int32_t ch = 0; ch < ch_end; ch++) {
        int32_t r0 = c->fac.chunk_r0[ch], nrows = c->fac.chunk_n[ch];
        const int32_t *rows = c->d_level_rows + r0, *rb = c->fac.d_rowbase + r0;
        const int32_t *tile_rr = c->fac.d_tile_rr, *tile_s = c->fac.d_tile_s;
        int64_t toff = c->fac.chunk_toff[ch], nofd = c->fac.chunk_toff[ch + 1] - toff;
        /* a narrow chunk of dense tiles: the off-diagonal solves store their tiles and do phase C
         * (phase_a_solve_store_launch), one launch fewer */
        const bool fused = dense_path && chunk_narrow(c, ch);
        if (c->fp.on) { /* the fixed-point method: the tiles come from its last sweep */
            fp_load_launch(nrows, s0, c, rows, rb, reinterpret_cast<double *>(inflight));
            CU_LAUNCH();
            PROFILE_POINT(0);
        } else {
            int64_t j0 = c->fac.chunk_job[ch], njobs = c->fac.chunk_job[ch + 1] - j0;
            if (njobs > 0) { /* the split tiles' products, for both kernels below */
                pull_products_launch<R>(njobs, s0, c->T, c->fac.d_job_ti + j0, c->fac.d_job_tj + j0, prod);
                CU_LAUNCH();
                PROFILE_POINT(6);
            }
            if (nofd > 0) {
                CU(cudaEventRecord(c->fac.ev_fork, s0));
                CU(cudaStreamWaitEvent(s1, c->fac.ev_fork, 0));
                phase_a_pull_launch<R>(nofd, s1, c->T, rows, rb, tile_rr + toff, tile_s + toff,
                                       c->fac.d_split_ofd + toff, prod, inflight);
                CU_LAUNCH();
                PROFILE_POINT(1);
                CU(cudaEventRecord(c->fac.ev_join, s1));
            }
            phase_a_diag_launch<R>(nrows, s0, c->T, prm, rows, rb, c->fac.d_split_row + r0, prod, inflight,
                                   c->fac.d_res);
            CU_LAUNCH();
            PROFILE_POINT(0);
            if (nofd > 0) CU(cudaStreamWaitEvent(s0, c->fac.ev_join, 0));
            if (fused) { /* the solves store their tiles, and phase C rides along */
                int64_t c0 = c->fac.chunk_col[ch];
                phase_a_solve_store_launch<R>(nrows, nofd, c->fac.chunk_col[ch + 1] - c0, s0, c->T, rows, rb,
                                              tile_rr + toff, tile_s + toff, c->fac.d_coltile + c0, inflight,
                                              c->fac.d_res);
                CU_LAUNCH();
                PROFILE_POINT(5);
                continue;
            }
            if (nofd > 0) {
                phase_a_solve_launch<R>(nofd, s0, c->T, rows, rb, tile_rr + toff, tile_s + toff, inflight, c->fac.d_res,
                                        chunk_narrow(c, ch));
                CU_LAUNCH();
                PROFILE_POINT(5);
            }
        }
        if (!dense_path) {
            phase_a_drop_launch<R>(nrows, s0, c->T, prm, rows, rb, inflight, c->fac.d_need, rownorm);
            CU_LAUNCH();
            PROFILE_POINT(2);
            int64_t nslots = c->fac.chunk_slots[ch];
            if (leftover == ILDL_LEFTOVER_ATOMIC) {
                phase_b_atomic_launch(s0, c->T, nrows, nslots, c->fac.d_slot_size, c->fac.d_need, c->fac.d_res,
                                      c->fac.d_state);
                CU_LAUNCH();
                phase_b_atomic_end_launch(s0, c->T, nslots, c->fac.d_state, c->fac.chunk_last[ch]);
            } else {
                phase_b_launch(s0, c->T, nrows, nslots, c->fac.d_slot_size, c->fac.d_need, c->fac.d_res,
                               c->fac.d_state, c->fac.chunk_last[ch]);
            }
            CU_LAUNCH();
            PROFILE_POINT(3);
        }
        int64_t c0 = c->fac.chunk_col[ch];
        phase_c_launch<R>(nrows, nofd, c->fac.chunk_col[ch + 1] - c0, s0, c->T, rows, rb, tile_rr + toff,
                          tile_s + toff, c->fac.d_coltile + c0, inflight, c->fac.d_need, c->fac.d_state);
        CU_LAUNCH();
        PROFILE_POINT(4);
    }
    if (prof) {
        CU(cudaDeviceSynchronize());
        fprintf(stderr, "ILDL_CUDA_PROFILE factor (%d chunks, %s): products %.4f s, diag %.4f s, pull %.4f s, "
                "offdiag solve %.4f s, drop %.4f s, scan %.4f s, store %.4f s\n", c->fac.nchunks,
                sizeof(R) == 4 ? "single" : "double", prof_t[6], prof_t[0], prof_t[1], prof_t[5], prof_t[2],
                prof_t[3], prof_t[4]);
    }
#undef PROFILE_POINT
cleanup:
    return status;
}

bool factor_dense_path(const ildl_cuda_ctx *c, const factor_params_d &prm)
{
    return c->fac.all_dense && prm.drop_tol == 0.0 && !c->fp.on;
}

int factor_run(ildl_cuda_ctx *c, const factor_params_d &prm, int leftover)
{
    if (c->fp.on) {
        if (c->single) return ILDL_ERR_INTERNAL; /* double precision only */
        int st = fp_sweeps_run(c, prm, c->fac.fstream[0]);
        if (st) return st;
    }
    int status;
    /* the sync-free schedule where it has a plan (every tile dense) and the path is dense */
    if (c->fac.schedule == ILDL_SCHEDULE_SYNCFREE && c->fac.sf_ntasks > 0 && factor_dense_path(c, prm)) {
        int prof = ildl_cuda_profiling();
        double t0 = prof ? ildl_wtime() : 0.0;
        int32_t ch0 = c->fac.sf_ch0;
        status = c->single ? factor_chunks<float>(c, prm, leftover, ch0) : factor_chunks<double>(c, prm, leftover, ch0);
        if (status) return status;
        status = c->single ? factor_sf_launch<float>(c, prm, c->fac.fstream[0])
                           : factor_sf_launch<double>(c, prm, c->fac.fstream[0]);
        if (status) return status;
        c->fac.last_schedule = ILDL_SCHEDULE_SYNCFREE;
        if (prof) {
            CU(cudaStreamSynchronize(c->fac.fstream[0]));
            fprintf(stderr, "ILDL_CUDA_PROFILE factor (sync-free, %d tasks, %d blocks, %s): %.4f s\n",
                    c->fac.sf_ntasks, c->fac.sf_blocks, c->single ? "single" : "double", ildl_wtime() - t0);
        }
    } else {
        int32_t nch = c->fac.nchunks;
        status = c->single ? factor_chunks<float>(c, prm, leftover, nch) : factor_chunks<double>(c, prm, leftover, nch);
        if (status) return status;
        c->fac.last_schedule = ILDL_SCHEDULE_LEVELS;
    }
    if (c->single) invert_diagonal_launch<float>(c->nb, c->fac.fstream[0], c->T);
    else invert_diagonal_launch<double>(c->nb, c->fac.fstream[0], c->T);
    CU_LAUNCH();
cleanup:
    return status;
}

extern "C" int ildl_cuda_set_factor_schedule(ildl_cuda_ctx *c, int schedule)
{
    if (schedule != ILDL_SCHEDULE_SYNCFREE && schedule != ILDL_SCHEDULE_LEVELS) return ILDL_ERR_INVALID_OPTION;
    c->fac.schedule = schedule;
    return ILDL_SUCCESS;
}

extern "C" int ildl_cuda_last_factor_schedule(const ildl_cuda_ctx *c)
{
    return c->fac.last_schedule;
}
