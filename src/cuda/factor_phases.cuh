/* factor_phases.cuh -- the launches of the factorization's kernels, for the driver (factor.cu):
 * each function launches its kernel (the kernels and their launches live in the phase's file)
 * on stream s; the caller then checks the launch with cudaGetLastError (CU_LAUNCH). R is the
 * value type of the factor: double, or float for precision single.
 * A chunk is nrows block rows of one level, rows[0..nrows), and its nofd off-diagonal tiles:
 * tile q is tile tile_s[q] of block row rows[tile_rr[q]]. Row rows[rr] holds the in-flight slots
 * rowbase[rr] (its diagonal tile) and rowbase[rr] + s (its tile s), TILE values each, in
 * inflight; need[rowbase[rr] + s] is what tile s keeps after dropping. */
#ifndef ILDL_CUDA_FACTOR_PHASES_CUH
#define ILDL_CUDA_FACTOR_PHASES_CUH
#include "cuda/context.cuh"

/* ---- phase A (factor_phase_a.cu) */

/* k_pull_products, one block per job: the products of the chunk's split tiles' updates into
 * prod (TILE values per job; before the two kernels below). */
template <typename R>
void pull_products_launch(int64_t njobs, cudaStream_t s, const dev_tiles &T, const int64_t *job_ti,
                          const int64_t *job_tj, R *prod);
/* k_phase_a_diag, one block per row: A_ii minus its updates, factored; U_ii into the row's
 * first slot, P_i and D_i into T and into res[rr] (for the off-diagonal solves and phase B).
 * split[rr]: {first product in prod, count} of a split row's updates, or count -1. */
template <typename R>
void phase_a_diag_launch(int32_t nrows, cudaStream_t s, const dev_tiles &T, const factor_params_d &prm,
                         const int32_t *rows, const int32_t *rowbase, const int2 *split, const R *prod, R *inflight,
                         ildl_dense_result *res);
/* k_phase_a_pull, one block per off-diagonal tile: A_ij minus its updates into the tile's slot
 * (reads nothing of phase A's diagonal factors: may run beside k_phase_a_diag); split[q] as
 * above, per off-diagonal tile of the chunk. */
template <typename R>
void phase_a_pull_launch(int64_t nofd, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                         const int32_t *rowbase, const int32_t *tile_rr, const int32_t *tile_s, const int2 *split,
                         const R *prod, R *inflight);
/* k_phase_a_solve (a warp per tile), or in a narrow chunk k_phase_a_solve_block (a block per
 * tile; the same bits), after both: each off-diagonal slot B becomes D_i^-1 U_ii^-T P_i B. */
template <typename R>
void phase_a_solve_launch(int64_t nofd, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                          const int32_t *rowbase, const int32_t *tile_rr, const int32_t *tile_s, R *inflight,
                          const ildl_dense_result *res, bool narrow);
/* A narrow chunk on the dense path (factor_dense_path): k_phase_a_solve_block on its nofd
 * off-diagonal tiles, each result stored in its tile (no in-flight copy), and also the chunk's
 * phase C (its nrows diagonal tiles, the column permutations of its ncol column tiles coltile):
 * phase_c_launch is then not called for the chunk. */
template <typename R>
void phase_a_solve_store_launch(int32_t nrows, int64_t nofd, int64_t ncol, cudaStream_t s, const dev_tiles &T,
                                const int32_t *rows, const int32_t *rowbase, const int32_t *tile_rr,
                                const int32_t *tile_s, const int64_t *coltile, R *inflight,
                                const ildl_dense_result *res);
/* k_phase_a_drop, one block per row: the row norms (into rownorm, LD per row), tau-dropping
 * of the off-diagonal slots, and need[] of the row's slots. */
template <typename R>
void phase_a_drop_launch(int32_t nrows, cudaStream_t s, const dev_tiles &T, const factor_params_d &prm,
                         const int32_t *rows, const int32_t *rowbase, R *inflight, int64_t *need, R *rownorm);

/* ---- phase B (factor_phase_b.cu): the chunk's nslots storage slots (in storage order from
 * st->so; slot_size: the static slot table ildl_cuda_ctx::fac.d_slot_size) get their leftover
 * grants and offsets (T.off, T.nnz), st its running totals; end_of_level: the chunk ends its
 * level (the credits become leftover). */

/* k_phase_b: one block, deterministic (the CPU reference's rule). */
void phase_b_launch(cudaStream_t s, const dev_tiles &T, int32_t nrows, int64_t nslots, const int64_t *slot_size,
                    const int64_t *need, const ildl_dense_result *res, factor_state *st, int end_of_level);
/* ILDL_LEFTOVER_ATOMIC: k_phase_b_atomic (the racing protocol), then, checked apart,
 * k_phase_b_atomic_end. */
void phase_b_atomic_launch(cudaStream_t s, const dev_tiles &T, int32_t nrows, int64_t nslots,
                           const int64_t *slot_size, const int64_t *need, const ildl_dense_result *res, factor_state *st);
void phase_b_atomic_end_launch(cudaStream_t s, const dev_tiles &T, int64_t nslots, factor_state *st,
                               int end_of_level);

/* ---- phase C and the solves' diagonal tiles (factor_phase_c.cu) */

/* k_phase_c, one block per row, then one per off-diagonal tile, then one per tile of the
 * chunk's block columns (coltile[0..ncol), the tiles (k,i), k < i, of its rows i): the slots
 * stored in T (kept, compressed), the columns of the tiles (k, i) put in block i's pivot order. */
template <typename R>
void phase_c_launch(int32_t nrows, int64_t nofd, int64_t ncol, cudaStream_t s, const dev_tiles &T,
                    const int32_t *rows, const int32_t *rowbase, const int32_t *tile_rr, const int32_t *tile_s,
                    const int64_t *coltile, R *inflight, const int64_t *need, factor_state *st);
/* k_invert_diagonal, one warp per block row of the nb: every U_ii becomes V_ii = U_ii^{-1}. */
template <typename R> void invert_diagonal_launch(int32_t nb, cudaStream_t s, const dev_tiles &T);

#endif
