/* cost.h -- a deterministic model of a backend's time for one factorization and one SQMR
 * iteration of an analysis: what the ladder's rung by cost (options.rung_choice) compares. */
#ifndef ILDL_ANALYSE_COST_H
#define ILDL_ANALYSE_COST_H
#include "analyse/analyse.h"

typedef struct ildl_step_cost {
    double factor;    /* model seconds of one factorization */
    double iteration; /* model seconds of one SQMR iteration (SpMV, sweeps, vector work) */
} ildl_step_cost;

/* The model of analysis an's factorization with drop tolerance drop_tol and of an iteration on
 * backend (ILDL_BACKEND_CPU or _CUDA; threads: the CPU backend's threads, >= 1), from its
 * levels, block rows, block products (sum over block rows k of b_k W_k^2, W_k the rows of k's
 * tiles), capacity and longest block column of tiles; on CUDA a store of dense tiles factored
 * with drop_tol = 0 (no drop, no leftover scan) costs less per level. */
void ildl_cost_model(const ildl_analysis *an, double drop_tol, int backend, int threads, ildl_step_cost *c);

/* Model seconds of the complete rung's candidate analyses of A (nnz entries, full pattern) on
 * the host. */
double ildl_cost_analysis(int64_t nnz);

#endif
