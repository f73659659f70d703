/* api_internal.h -- the handle and what the API's two files share: api.c (options, setup,
 * factorization, apply, info) and api_solve.c (ildl_solve: the right-hand side's scaling and
 * the ladder of docs/robustness.md). Not installed. */
#ifndef ILDL_API_INTERNAL_H
#define ILDL_API_INTERNAL_H
#include "blockildl.h"
#include "analyse/analyse.h"
#include "backend/backend.h"
#include "core/csr.h"

struct ildl_handle {
    ildl_options opt;      /* the options of the current rung (rung 0: user_opt) */
    ildl_options user_opt; /* the options as given */
    int rung;              /* the ladder's rung of the analysis and factor (ildl_escalation) */
    int iter_base;         /* ildl_solve: iterations its earlier rungs reported (progress numbering) */
    int iter_last;         /* the last iteration the current rung reported */
    int backend;          /* resolved: CPU or CUDA */
    ildl_csr A;           /* user's matrix, sorted; values follow the last factor call */
    int64_t *src;         /* [nnz] sorted slot -> index in the user's arrays */
    int64_t *tmap;        /* [nnz] sorted slot -> slot of the transposed entry */
    ildl_analysis an;
    double *user_values;  /* [nnz] copy of the values in the user's order */
    int factored;
    ildl_backend_env env; /* what the backend sees of this handle */
    const ildl_backend_ops *ops; /* the backend's table */
    void *bstate;         /* its state, or NULL */
    ildl_info info;
    char err[512];
};
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
/* ildl_factor's work on h (values: new values, or NULL for the last accepted ones). */
int ildl_api_factor(ildl_handle *h, const double *values);
/* The info fields that describe the current analysis and backend state. */
void ildl_api_info_from_analysis(ildl_handle *h);
/* ildl_solve's work on h (api_solve.c). */
int ildl_api_solve(ildl_handle *h, const double *b, double *x);

#endif
