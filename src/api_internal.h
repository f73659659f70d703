/* api_internal.h -- the handle and what the API's two files share: api.c (options, setup,
 * factorization, apply, info) and api_solve.c (ildl_solve: the right-hand side's scaling and
 * the ladder of docs/robustness.md). Not installed. */
#ifndef ILDL_API_INTERNAL_H
#define ILDL_API_INTERNAL_H
#include "blockildl.h"
#include "analyse/analyse.h"
#include "backend/backend.h"
#include "core/csr.h"

#define ILDL_API __attribute__((visibility("default")))

struct ildl_handle {
    ildl_options opt;      /* the options of the current rung (rung 0: user_opt) */
    ildl_options user_opt; /* the options as given */
    int rung;              /* the ladder's rung of the analysis and factor (ildl_escalation) */
    int iter_base;         /* ildl_solve: iterations its earlier rungs reported (progress numbering) */
    int iter_last;         /* the last iteration the current rung reported */
    int cost_iters;        /* the rung by cost: iterations of the last converged solve, for the
                              next ildl_factor or ildl_solve to model (0: none pending) */
    double cost_breakeven; /* iterations from which the complete rung was modeled to pay
                              (cost_modeled), or from which its analysis is worth making (not
                              cost_modeled); 0: none yet on this rung; INFINITY: its analysis
                              failed or was refused */
    int cost_modeled;      /* cost_breakeven comes from a model of the complete rung's step */
    int backend;          /* resolved: CPU or CUDA */
    ildl_csr A;           /* user's matrix, sorted; values follow the last factor call */
    int64_t *src;         /* [nnz] sorted slot -> index in the user's arrays */
    int64_t *tmap;        /* [nnz] sorted slot -> slot of the transposed entry */
    ildl_analysis an;
    ildl_match_memo memo; /* the matching of A's current values (valid until new values come) */
    int scale_stale;      /* an.scale not that of A's current values: their rescaling failed */
    double *user_values;  /* [nnz] copy of the values in the user's order */
    int factored;
    ildl_backend_env env; /* what the backend sees of this handle */
    const ildl_backend_ops *ops; /* the backend's table */
    void *bstate;         /* its state, or NULL */
    ildl_info info;
    char err[512];
    /* set up from an ildl_matrix other than ildl_setup's layout: the full pattern's entry p
     * (A's user order) sums the caller's entries gidx[gptr[p] .. gptr[p+1]) (NULL otherwise) */
    int64_t *gptr, *gidx;
    int64_t desc_nnz;     /* the caller's entries */
};
/* ildl_setup's work for the full pattern in 0-based CSR (api.c); defer: ildl_analyse_matrix's, the
 * backend's state left to ildl_factor (its device memory estimated). */
int ildl_api_setup_csr(int32_t n, const int64_t *rowptr, const int32_t *colind, const double *values,
                       const ildl_options *opts, int defer, ildl_handle **out);
/* Set the message of a failed setup (ildl_last_error(NULL)) and return st. */
int ildl_api_setup_fail(int st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* options.num_threads around one call (push returns what pop restores). */
int ildl_api_threads_push(const ildl_handle *h);
void ildl_api_threads_pop(int prev);
/* The full pattern of m (any layout) as a sorted 0-based CSR of its own, duplicates summed
 * (refused if m says so); the statuses of ildl_setup_matrix, msg set (api_matrix.c). */
int ildl_api_matrix_to_csr(const ildl_matrix *m, ildl_csr *A, char *msg, size_t len);
/* full[p] = the sum of values[gidx[q]], q in gptr[p] .. gptr[p+1], in that order (api_matrix.c). */
void ildl_api_gather(const ildl_handle *h, const double *values, double *full);
/* Format the handle's message (h->err) and return st. */
int ildl_api_fail(ildl_handle *h, int st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* One line to the log callback (or stderr) when options.verbosity >= level. */
void ildl_api_log(const ildl_handle *h, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* ildl_factor's work on h (values: new values, or NULL for the last accepted ones): one
 * factorization, then up to opt.pushback_rounds rounds of push-back; info.factor_seconds. */
int ildl_api_factor(ildl_handle *h, const double *values);
/* One factorization of h's analysis (values: new values, or NULL), its statistics into h->info
 * (factor_seconds excepted); block_perturbed (optional, [nb]) gets each block row's perturbed
 * pivots. */
int ildl_api_factor_once(ildl_handle *h, const double *values, int32_t *block_perturbed);
/* The push-back rounds after a factorization whose per-block record is block_perturbed ([nb]:
 * push-back keeps the blocks, so nb stays), info.pushback_rounds/_blocks (api_pushback.c). */
int ildl_api_pushback(ildl_handle *h, int32_t *block_perturbed);
/* Replace h's analysis and options by *an and *o (taken over) and make the backend's state for
 * them; on failure h gets its old ones back (an freed), a backend state for them if it can be
 * made (else none), unfactored; msg says why. */
int ildl_api_install(ildl_handle *h, ildl_analysis *an, const ildl_options *o, char *msg, size_t msglen);
/* The memory budget of an analysis in bytes: escalation_max_bytes, or half the host's memory. */
double ildl_api_budget_bytes(const ildl_handle *h);
/* Bytes per factor entry: its value (8 or 4 bytes) and its 2-byte index. */
double ildl_api_entry_bytes(const ildl_options *o);
/* The most factor entries the budget allows for options o (0: no limit known). */
int64_t ildl_api_max_entries(const ildl_handle *h, const ildl_options *o);
/* The info fields that describe the current analysis and backend state. */
void ildl_api_info_from_analysis(ildl_handle *h);
/* The rung by cost (options.rung_choice; api_solve.c): where the last converged solve left
 * h->cost_iters, model a step of the current rung and of the complete rung (its analysis made
 * here, within the memory budget and where it costs less than 20 modeled steps) and, where the
 * complete one is below half, install it and factor h's current values: 1. Otherwise 0, h as it
 * was (where rung 2's factorization failed, rung r analysed and factored again; h unfactored
 * if that failed too). */
int ildl_api_cost_switch(ildl_handle *h);
/* ildl_solve's work on h (api_solve.c). */
int ildl_api_solve(ildl_handle *h, const double *b, double *x);
/* ildl_solve_multi's work on h (api_solve.c). */
int ildl_api_solve_multi(ildl_handle *h, int k, const double *B, int64_t ldb, double *X, int64_t ldx,
                         ildl_column_result *results);

#endif
