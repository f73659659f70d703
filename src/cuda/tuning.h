/* tuning.h -- the CUDA backend's internal settings: alternatives that the tests and the device
 * scripts select to cover every kernel and setup path (they are never the user's: the user's
 * choices are the options in blockildl.h). Plain C, so that the C tests include it. Every
 * setting gives the same bits; only the kernels chosen, the work split and the speed change.
 *
 * The hook is private: declared here, hidden from the shared library (tests link the static
 * one). A context copies the settings in force when ildl_cuda_create makes it, so that a test
 * changes them between handles only. A build without CUDA (stub_nocuda.c) keeps them too, and
 * ignores them. */
#ifndef ILDL_CUDA_TUNING_H
#define ILDL_CUDA_TUNING_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ildl_cuda_tuning {
    /* The sync-free sweeps without staging tiles (SOLVE_*_NS): -1 by the rule (levels of 256+
     * block rows on average, solve_select.cu), 0 never, 1 always. Never where the user asked
     * for ILDL_SOLVE_KERNELS_STAGED or their lanes do not fit in device memory. */
    int sf_nostage;
    /* The forward sync-free sweep reading V_ii from global memory instead of staging it:
     * -1 by the rule (the same width, and only with staging tiles), 0 never, 1 always. */
    int sf_vglobal;
    /* Rows with more than sf_split tiles split into work items in both sync-free sweeps, items
     * of min(sf_split, 32) tiles; 0: the default thresholds (128, forward down to 64). */
    int sf_split;
    /* The sync-free sweeps' ticket order: 1 chains (ildl_sweep_ticket_orders), 0 level order. */
    int sf_chain_order;
    /* ildl_cuda_pin_host page-locks the host arrays (1), or leaves them pageable (0): SQMR then
     * copies A's values at the first solve after each factorization instead of during it. */
    int pin_host;
    /* A -DILDL_SOLVE_TRACE build run with ILDL_CUDA_PROFILE set: the file the last traced
     * solve's records go to (bench/solve_trace.py reads it); NULL: ILDL_SOLVE_TRACE_FILE
     * (common.cuh). Other builds ignore it. */
    const char *solve_trace_file;
    /* The factorization's per-tile work of narrow chunks (plan.cu, chunk_narrow): split pulls
     * (pull_split_plan), off-diagonal solves one block per tile (k_phase_a_solve_block) and
     * phase C's column permutations one block per tile. -1 by the rule (narrow chunks; split
     * pulls for tiles of ILDL_PULL_SPLIT_MIN updates or more), 0 never (a warp per off-diagonal
     * solve), N >= 1 in every chunk, split pulls for every tile of N or more updates. */
    int factor_split;
    /* The sync-free factorization's ring of split products (plan.cu, factor_sf_plan): 0 the
     * default size, N >= 1 N products (a row then splits at most N / 2 of its updates): small
     * rings reuse their slots, which the default size rarely does. */
    int factor_sf_ring;
    /* The levels the sync-free factorization takes (plan.cu, factor_sf_plan): 0 by the rule (the
     * last levels of at most ILDL_FSF_ROWS block rows), N >= 1 the last levels of at most N,
     * -1 all of them (one launch; the wide levels otherwise run in the level schedule). */
    int factor_sf_rows;
} ildl_cuda_tuning;

/* The defaults, what every context gets unless a test changed them. */
#define ILDL_CUDA_TUNING_DEFAULT {-1, -1, 0, 1, 1, 0, -1, 0, 0}

/* The settings that contexts created from now on copy (get), or change them (set; NULL: back
 * to the defaults). A test sets them before it creates its handles, from one thread. */
void ildl_cuda_tuning_get(ildl_cuda_tuning *t);
void ildl_cuda_tuning_set(const ildl_cuda_tuning *t);

#ifdef __cplusplus
}
#endif

#endif
