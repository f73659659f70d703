/* cost.c -- ildl_cost_model: the ladder's model of a step's time (cost.h). Linear in five
 * features of an analysis, fitted by non-negative least squares on relative errors to the
 * factorization and iteration times of the 21 shared matrices with n >= 10k, each analysed four
 * ways (rung 0, and the complete rung's SN + METIS, SN + AMD and BR), on one H200 (CUDA) and on 2
 * cores (CPU); perf-notes §84 has the fits and their errors. The CUDA factorization of a store of
 * dense tiles with tau = 0 skips two passes per level since s46: its per-level cost refitted
 * on the complete SN factors of 15 of those matrices (perf-notes §87). */
#include "analyse/cost.h"

/* Seconds per feature. Factorization: constant, per level, per block row, per 1e9 block
 * products (sum over block rows k of b_k W_k^2, W_k the rows of k's tiles: every pair of tiles
 * in a row is multiplied whole, whatever the tiles keep), per tile of the longest block column
 * (the diagonal tile's chain of updates). Iteration: constant, per level, per 1e6 entries of
 * capacity, per tile of the longest block column. */
typedef struct cost_coef {
    double f0, f_level, f_block, f_gprod, f_chain;
    double i0, i_level, i_mentry, i_chain;
} cost_coef;

/* CUDA, H200: the factorization within 30 % on 72 of the 84 analyses (sqd_hues-mod's SN, a block
 * column of 20 000 tiles, is 7.5x its model), the iteration within 17 % on the 19 that iterate */
static const cost_coef CUDA_COEF = {8.5e-5, 8.6e-5, 1.7e-7, 6.2e-4, 1.0e-6, 8.6e-6, 3.3e-6, 3.9e-5, 7.1e-8};
/* CUDA, a store of dense tiles (no sparse tile) factored with tau = 0: neither the drop nor the
 * leftover scan runs (src/cuda/factor.cu, factor_dense_path), and a level costs this instead of
 * f_level (the model within 30 % on 13 of the 15 complete SN factors measured, median 0.98 of
 * the measured time; cvxqp3 and bratu3d 0.55 and 0.61, as far below as before) */
#define CUDA_F_LEVEL_DENSE 4.0e-5
/* CPU, 2 threads (the products and entries scale with 2 / threads): within a factor of 2 on most,
 * the complete factors' factorization up to 2.4x above its model */
static const cost_coef CPU_COEF = {1.06e-2, 2.3e-5, 7.4e-7, 3.57e-2, 0.0, 0.0, 5.7e-6, 1.06e-3, 2.0e-6};

void ildl_cost_model(const ildl_analysis *an, double drop_tol, int backend, int threads, ildl_step_cost *c)
{
    const ildl_tiles *T = &an->tiles;
    double prod = 0.0, chain = 0.0;
    int dense = drop_tol == 0.0 && ildl_tiles_all_dense(T); /* the CUDA backend's dense path */
    for (int32_t k = 0; k < T->nb; k++) {
        double w = 0.0, bk = (double)(T->bstart[k + 1] - T->bstart[k]);
        for (int64_t t = T->row_ptr[k]; t < T->row_ptr[k + 1]; t++)
            w += (double)(T->bstart[T->col[t] + 1] - T->bstart[T->col[t]]);
        prod += bk * w * w;
        double col = (double)(T->col_ptr[k + 1] - T->col_ptr[k]);
        if (col > chain) chain = col;
    }
    const cost_coef *k = backend == ILDL_BACKEND_CUDA ? &CUDA_COEF : &CPU_COEF;
    double par = backend == ILDL_BACKEND_CUDA ? 1.0 : 2.0 / (double)(threads < 1 ? 1 : threads);
    double lev = (double)T->nlevels, nb = (double)T->nb, mentry = (double)T->total_cap * 1e-6;
    double f_level = backend == ILDL_BACKEND_CUDA && dense ? CUDA_F_LEVEL_DENSE : k->f_level;
    c->factor = k->f0 + f_level * lev + k->f_block * nb + k->f_gprod * prod * 1e-9 * par + k->f_chain * chain;
    c->iteration = k->i0 + k->i_level * lev + k->i_mentry * mentry * par + k->i_chain * chain;
}

/* SN + METIS, SN + AMD and the options' own analysis, each with its matching reused: about
 * 1.2 us per entry of A on the host (their orderings and blocking on the H200's host: METIS
 * 0.5-0.9 us per entry, AMD 0.1-0.2, BR's complete analysis 0.1-0.3, on the shared matrices of
 * 4e4 to 1.3e5 entries) */
double ildl_cost_analysis(int64_t nnz) { return 1.2e-6 * (double)nnz; }
