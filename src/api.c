/* api.c -- the public entry points: validation at the boundary, the analysis, phase timing,
 * the choice of a backend (backend/backend.h: every backend- or precision-specific step is
 * behind its table), and the right-hand side's scaling. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "analyse/analyse.h"
#include "analyse/scale.h"
#include "backend/backend.h"
#include "core/csr.h"
#include "core/util.h"
#include "krylov/reduce.h"
#include "krylov/sqmr.h"
#include "api_internal.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#define ILDL_SYM_TOL 1e-10
/* take_values runs its pass on one thread below this many entries (waking the team costs more) */
#define TAKE_VALUES_PARALLEL_MIN ((int64_t)1 << 15)


/* ------------------------------------------------------------------ small helpers */

/* options.num_threads for the duration of one call: OpenMP regions inside (factor, solves,
 * SpMV) then use it; the caller's setting is restored afterwards. */
static int threads_push(const ildl_handle *h)
{
#ifdef _OPENMP
    int prev = omp_get_max_threads();
    if (h->opt.num_threads > 0) omp_set_num_threads(h->opt.num_threads);
    return prev;
#else
    (void)h;
    return 0;
#endif
}

static void threads_pop(int prev)
{
#ifdef _OPENMP
    omp_set_num_threads(prev);
#else
    (void)prev;
#endif
}

int ildl_api_fail(ildl_handle *h, int st, const char *fmt, ...)
{
    if (h) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(h->err, sizeof h->err, fmt, ap);
        va_end(ap);
    }
    return st;
}

void ildl_api_log(const ildl_handle *h, int level, const char *fmt, ...)
{
    if (!h || h->opt.verbosity < level) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (h->opt.log_fn) h->opt.log_fn(h->opt.log_ctx, line);
    else fprintf(stderr, "[blockildl] %s\n", line);
}

ILDL_API int ildl_options_default(ildl_options *o)
{
    if (!o) return ILDL_ERR_NULL_ARGUMENT;
    memset(o, 0, sizeof *o);
    o->backend = ILDL_BACKEND_AUTO;
    o->ordering = ILDL_ORDER_AUTO;
    o->blocking = ILDL_BLOCKING_BR;
    o->scaling = ILDL_SCALING_MATCHING;
    o->pivoting = ILDL_PIVOT_ROOK;
    o->precision = ILDL_PREC_DOUBLE;
    o->fill_level = 1;
    o->fill_factor = 8.0;
    o->drop_tol = 1e-4;
    o->max_block_size = ILDL_TILE;
    o->block_threshold = 0.0;
    o->block_decay = 0.9;
    o->pivot_tol = 1e-10;
    o->pivot_perturb = 1e-6;
    o->leftover = ILDL_LEFTOVER_SCAN;
    o->solve_schedule = ILDL_SCHEDULE_SYNCFREE;
    o->solve_kernels = ILDL_SOLVE_KERNELS_AUTO;
    o->l2_persist = ILDL_L2_PERSIST_AUTO;
    o->tol = 1e-6;
    o->max_iter = 1000;
    o->use_initial_guess = 0;
    o->check_every = 1;
    o->num_threads = 0;
    o->verbosity = 0;
    o->device_id = 0;
    o->escalation = ILDL_ESCALATE_COMPLETE;
    o->escalation_max_bytes = 0.0;
    o->escalation_max_seconds = 0.0;
    o->pushback_rounds = 0;
    o->apply_mode = ILDL_APPLY_LDLT;
    o->refactor_scaling = ILDL_REFACTOR_SCALING_KEEP;
    o->method = ILDL_METHOD_ILDL;
    o->fp_sweeps = 4;
    o->rung_choice = ILDL_RUNG_CHOICE_COST;
    o->factor_schedule = ILDL_SCHEDULE_LEVELS;
    o->fp_eps = 0.1;
    o->fp_delta = 0.95;
    return ILDL_SUCCESS;
}

ILDL_API const char *ildl_strerror(int st)
{
    switch (st) {
    case ILDL_SUCCESS: return "success";
    case ILDL_ERR_NULL_ARGUMENT: return "a required pointer argument is NULL";
    case ILDL_ERR_INVALID_OPTION: return "an option is out of range";
    case ILDL_ERR_NOT_SQUARE: return "the matrix is not square";
    case ILDL_ERR_NOT_SYMMETRIC: return "the matrix is not symmetric";
    case ILDL_ERR_NAN_INF: return "a value is NaN or infinite";
    case ILDL_ERR_INDEX_RANGE: return "an index is out of range";
    case ILDL_ERR_EMPTY: return "the matrix is empty (n = 0)";
    case ILDL_ERR_SINGULAR: return "the matrix is structurally singular (empty row)";
    case ILDL_ERR_OUT_OF_MEMORY: return "out of memory";
    case ILDL_ERR_IO: return "file could not be read or written";
    case ILDL_ERR_FORMAT: return "malformed file";
    case ILDL_ERR_CALL_ORDER: return "functions called in the wrong order";
    case ILDL_ERR_SIZE_MISMATCH: return "size does not match the handle";
    case ILDL_ERR_NOT_SUPPORTED: return "not supported (yet) in this build";
    case ILDL_ERR_NO_DEVICE: return "no usable CUDA device";
    case ILDL_ERR_DEVICE: return "a CUDA call failed";
    case ILDL_ERR_NOT_CONVERGED: return "SQMR did not reach the tolerance";
    case ILDL_ERR_BREAKDOWN: return "SQMR broke down";
    case ILDL_ERR_DUPLICATE: return "duplicate matrix entries";
    case ILDL_ERR_INTERNAL: return "internal error";
    case ILDL_ERR_PATTERN: return "an entry is not in the setup's pattern";
    default: return "unknown status code";
    }
}

/* A failed ildl_setup returns no handle: its message is kept per thread. */
static _Thread_local char setup_error[512];

ILDL_API const char *ildl_last_error(const ildl_handle *h) { return h ? h->err : setup_error; }

int ildl_api_setup_fail(int st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(setup_error, sizeof setup_error, fmt, ap);
    va_end(ap);
    return st;
}

ILDL_API const char *ildl_version(void) { return ILDL_VERSION_STRING; }

ILDL_API int ildl_device_count(void) { return ildl_backend_device_count(); }

static int check_options(const ildl_options *o, char *msg, size_t len)
{
    if (o->backend < ILDL_BACKEND_AUTO || o->backend > ILDL_BACKEND_CUDA)
        return ildl_msg(msg, len, "unknown backend %d", o->backend), ILDL_ERR_INVALID_OPTION;
    if (o->pivoting < ILDL_PIVOT_NONE || o->pivoting > ILDL_PIVOT_ROOK)
        return ildl_msg(msg, len, "unknown pivoting %d", o->pivoting), ILDL_ERR_INVALID_OPTION;
    if (o->precision < ILDL_PREC_DOUBLE || o->precision > ILDL_PREC_MIXED)
        return ildl_msg(msg, len, "unknown precision %d", o->precision), ILDL_ERR_INVALID_OPTION;
    if (o->leftover != ILDL_LEFTOVER_SCAN && o->leftover != ILDL_LEFTOVER_ATOMIC)
        return ildl_msg(msg, len, "unknown leftover protocol %d", o->leftover), ILDL_ERR_INVALID_OPTION;
    if (!(o->drop_tol >= 0.0) || !isfinite(o->drop_tol))
        return ildl_msg(msg, len, "drop_tol must be finite and >= 0"), ILDL_ERR_INVALID_OPTION;
    if (!(o->fill_factor <= 1e6) || isnan(o->fill_factor) || (o->fill_factor > 0 && o->fill_factor < 1.0))
        return ildl_msg(msg, len, "fill_factor must be >= 1 (or <= 0 for unlimited)"), ILDL_ERR_INVALID_OPTION;
    if (!(o->tol > 0.0 && o->tol < 1.0))
        return ildl_msg(msg, len, "tol must be in (0,1)"), ILDL_ERR_INVALID_OPTION;
    if (o->max_iter < 0)
        return ildl_msg(msg, len, "max_iter must be >= 0"), ILDL_ERR_INVALID_OPTION;
    if (!(o->pivot_tol >= 0.0) || !isfinite(o->pivot_tol) || !(o->pivot_perturb > 0.0) || !isfinite(o->pivot_perturb))
        return ildl_msg(msg, len, "pivot_tol must be finite and >= 0, pivot_perturb finite and > 0"),
               ILDL_ERR_INVALID_OPTION;
    /* the single-precision factorization rounds them to float: they must stay usable there */
    if (o->precision == ILDL_PREC_SINGLE &&
        (!((float)o->pivot_perturb > 0.0f) || !isfinite((float)o->pivot_perturb) || !isfinite((float)o->pivot_tol)))
        return ildl_msg(msg, len, "with precision single, pivot_perturb must be > 0 and both it and pivot_tol "
                                  "finite in single precision (about 1.4e-45 .. 3.4e38)"), ILDL_ERR_INVALID_OPTION;
    if (o->solve_schedule != ILDL_SCHEDULE_SYNCFREE && o->solve_schedule != ILDL_SCHEDULE_LEVELS)
        return ildl_msg(msg, len, "unknown solve_schedule %d", o->solve_schedule), ILDL_ERR_INVALID_OPTION;
    if (o->solve_kernels != ILDL_SOLVE_KERNELS_AUTO && o->solve_kernels != ILDL_SOLVE_KERNELS_STAGED)
        return ildl_msg(msg, len, "unknown solve_kernels %d", o->solve_kernels), ILDL_ERR_INVALID_OPTION;
    if (o->l2_persist != ILDL_L2_PERSIST_AUTO && o->l2_persist != ILDL_L2_PERSIST_OFF)
        return ildl_msg(msg, len, "unknown l2_persist %d", o->l2_persist), ILDL_ERR_INVALID_OPTION;
    if (o->check_every < 1)
        return ildl_msg(msg, len, "check_every must be >= 1"), ILDL_ERR_INVALID_OPTION;
    if (o->num_threads < 0 || o->num_threads > ILDL_MAX_THREADS)
        return ildl_msg(msg, len, "num_threads = %d, must be in 0..%d (0: the OpenMP default)", o->num_threads,
                        ILDL_MAX_THREADS), ILDL_ERR_INVALID_OPTION;
    if (o->fill_level < 0 || o->fill_level > ILDL_MAX_FILL_LEVEL)
        return ildl_msg(msg, len, "fill_level = %d, must be in 0..%d", o->fill_level, ILDL_MAX_FILL_LEVEL),
               ILDL_ERR_INVALID_OPTION;
    if (o->device_id < 0)
        return ildl_msg(msg, len, "device_id = %d, must be >= 0", o->device_id), ILDL_ERR_INVALID_OPTION;
    if (o->escalation < ILDL_ESCALATE_NONE || o->escalation > ILDL_ESCALATE_COMPLETE)
        return ildl_msg(msg, len, "unknown escalation %d", o->escalation), ILDL_ERR_INVALID_OPTION;
    if (!(o->escalation_max_bytes >= 0.0) || !isfinite(o->escalation_max_bytes))
        return ildl_msg(msg, len, "escalation_max_bytes = %g, must be finite and >= 0", o->escalation_max_bytes),
               ILDL_ERR_INVALID_OPTION;
    if (!(o->escalation_max_seconds >= 0.0) || !isfinite(o->escalation_max_seconds))
        return ildl_msg(msg, len, "escalation_max_seconds = %g, must be finite and >= 0",
                        o->escalation_max_seconds), ILDL_ERR_INVALID_OPTION;
    if (o->factor_schedule != ILDL_SCHEDULE_SYNCFREE && o->factor_schedule != ILDL_SCHEDULE_LEVELS)
        return ildl_msg(msg, len, "unknown factor_schedule %d", o->factor_schedule), ILDL_ERR_INVALID_OPTION;
    if (o->rung_choice != ILDL_RUNG_CHOICE_COST && o->rung_choice != ILDL_RUNG_CHOICE_FAILURE)
        return ildl_msg(msg, len, "unknown rung_choice %d", o->rung_choice), ILDL_ERR_INVALID_OPTION;
    if (o->apply_mode != ILDL_APPLY_LDLT && o->apply_mode != ILDL_APPLY_SPD)
        return ildl_msg(msg, len, "unknown apply_mode %d", o->apply_mode), ILDL_ERR_INVALID_OPTION;
    if (o->refactor_scaling < ILDL_REFACTOR_SCALING_RECOMPUTE || o->refactor_scaling > ILDL_REFACTOR_SCALING_EQUILIBRATE)
        return ildl_msg(msg, len, "unknown refactor_scaling %d", o->refactor_scaling), ILDL_ERR_INVALID_OPTION;
    if (o->pushback_rounds < 0 || o->pushback_rounds > ILDL_MAX_PUSHBACK_ROUNDS)
        return ildl_msg(msg, len, "pushback_rounds = %d, must be in 0..%d", o->pushback_rounds,
                        ILDL_MAX_PUSHBACK_ROUNDS), ILDL_ERR_INVALID_OPTION;
    if (o->method != ILDL_METHOD_ILDL && o->method != ILDL_METHOD_BLOCK_JACOBI &&
        o->method != ILDL_METHOD_FIXED_POINT)
        return ildl_msg(msg, len, "unknown method %d", o->method), ILDL_ERR_INVALID_OPTION;
    if (o->fp_sweeps < 1 || o->fp_sweeps > ILDL_MAX_FP_SWEEPS)
        return ildl_msg(msg, len, "fp_sweeps = %d, must be in 1..%d", o->fp_sweeps, ILDL_MAX_FP_SWEEPS),
               ILDL_ERR_INVALID_OPTION;
    if (!(o->fp_eps >= 0.0) || !isfinite(o->fp_eps))
        return ildl_msg(msg, len, "fp_eps = %g, must be finite and >= 0", o->fp_eps), ILDL_ERR_INVALID_OPTION;
    if (!(o->fp_delta > 0.0 && o->fp_delta <= 1.0))
        return ildl_msg(msg, len, "fp_delta = %g, must be in (0, 1]", o->fp_delta), ILDL_ERR_INVALID_OPTION;
    if (o->method == ILDL_METHOD_FIXED_POINT && o->precision != ILDL_PREC_DOUBLE)
        return ildl_msg(msg, len, "method fixed-point computes in double precision: precision must be DOUBLE"),
               ILDL_ERR_INVALID_OPTION;
    if (o->method == ILDL_METHOD_BLOCK_JACOBI) {
        if (o->precision != ILDL_PREC_DOUBLE)
            return ildl_msg(msg, len, "method block-Jacobi computes in double precision: precision must be DOUBLE"),
                   ILDL_ERR_INVALID_OPTION;
        if (o->apply_mode != ILDL_APPLY_LDLT)
            return ildl_msg(msg, len, "apply_mode SPD needs method ILDL (block-Jacobi has no |D|)"),
                   ILDL_ERR_INVALID_OPTION;
        if (o->pushback_rounds > 0)
            return ildl_msg(msg, len, "pushback_rounds needs method ILDL (block-Jacobi has no pivots to push back)"),
                   ILDL_ERR_INVALID_OPTION;
    }
    return ILDL_SUCCESS;
}

/* The info fields that describe the analysis and the backend's state (setup's, and each rung's). */
void ildl_api_info_from_analysis(ildl_handle *h)
{
    ildl_info *I = &h->info;
    const ildl_analysis *an = &h->an;
    I->t_scale = an->t_scale;
    I->t_order = an->t_order_block;
    I->t_block = 0.0;
    I->t_fill = an->t_fill;
    I->t_levels = an->t_levels;
    I->t_tiles = an->t_tiles;
    I->num_blocks = an->blk.nb;
    I->ordering_used = an->blk.ordering_used;
    I->num_tiles = an->tiles.ntiles;
    int64_t nfill = 0;
    for (int64_t t = 0; t < an->tiles.ntiles; t++) nfill += an->tiles.fill_lvl[t] > 0;
    I->num_fill_tiles = nfill;
    I->num_levels = an->levels.nlevels;
    I->mean_block_size = (double)h->A.n / (double)an->blk.nb;
    I->factor_capacity = an->tiles.total_cap;
    I->rung = h->rung;
    size_t value_bytes = an->tiles.val32 ? sizeof(float) : sizeof(double);
    int64_t nnz = h->A.rowptr[h->A.n];
    I->host_bytes = sizeof(*h) + (size_t)nnz * (8 * 3 + 4 + 8) + (size_t)h->A.n * 64 +
                    (h->memo.scale ? (size_t)h->A.n * (sizeof(double) + sizeof(int32_t)) : 0) +
                    (size_t)an->tiles.total_cap * (value_bytes + 2) + (size_t)an->tiles.ntiles * 64;
    I->device_bytes = h->bstate ? h->ops->device_bytes(h->bstate) : 0;
    snprintf(I->device_name, sizeof I->device_name, "%s", h->bstate ? h->ops->device_name(h->bstate) : "");
}

/* Make h's backend state (h->ops's; with backend AUTO the CPU's where the CUDA backend's cannot
 * be made), and the info fields that name it. */
static int create_state(ildl_handle *h, char *msg, size_t msglen)
{
    int st = h->ops->create(&h->env, &h->bstate, msg, msglen);
    if (st && h->ops != &ildl_backend_cpu && h->opt.backend == ILDL_BACKEND_AUTO) {
        ildl_api_log(h, 1, "CUDA backend unavailable (%s); using the CPU backend", msg);
        msg[0] = 0;
        h->ops = &ildl_backend_cpu;
        st = h->ops->create(&h->env, &h->bstate, msg, msglen);
    }
    if (st) return st;
    h->backend = h->ops->kind;
    h->info.backend = h->backend;
    h->info.device_bytes = h->ops->device_bytes(h->bstate);
    snprintf(h->info.device_name, sizeof h->info.device_name, "%s", h->ops->device_name(h->bstate));
    return ILDL_SUCCESS;
}

/* ildl_analyse_matrix's estimate of the backend's device memory (info.device_bytes_estimate);
 * with backend AUTO the CPU backend where the CUDA backend could not take the analysis. */
static int estimate_state(ildl_handle *h, char *msg, size_t msglen)
{
    size_t bytes = 0;
    int st = h->ops->estimate(&h->env, &bytes, msg, msglen);
    if (st && h->ops != &ildl_backend_cpu && h->opt.backend == ILDL_BACKEND_AUTO) {
        ildl_api_log(h, 1, "CUDA backend unavailable (%s); using the CPU backend", msg);
        msg[0] = 0;
        h->ops = &ildl_backend_cpu;
        st = h->ops->estimate(&h->env, &bytes, msg, msglen);
    }
    if (st) return st;
    h->backend = h->ops->kind;
    h->info.device_bytes_estimate = (int64_t)bytes;
    return ILDL_SUCCESS;
}

int ildl_api_setup_csr(int32_t n, const int64_t *rowptr, const int32_t *colind, const double *values,
                       const ildl_options *opts, int defer, ildl_handle **out)
{
    setup_error[0] = 0;
    if (!out) return snprintf(setup_error, sizeof setup_error, "out is NULL"), ILDL_ERR_NULL_ARGUMENT;
    *out = NULL;
    if (!rowptr || !colind || !values)
        return snprintf(setup_error, sizeof setup_error, "rowptr, colind and values must not be NULL"),
               ILDL_ERR_NULL_ARGUMENT;
    double t0 = ildl_wtime();
    int threads = 0, pushed = 0;
    ildl_handle *h = calloc(1, sizeof *h);
    if (!h) return snprintf(setup_error, sizeof setup_error, "out of memory"), ILDL_ERR_OUT_OF_MEMORY;
    if (opts) h->opt = *opts; else ildl_options_default(&h->opt);
    int st = check_options(&h->opt, h->err, sizeof h->err);
    if (st) goto fail;
    h->user_opt = h->opt;
    threads = threads_push(h); /* validation, copies and permutations run in parallel */
    pushed = 1;
    if (n <= 0) { st = ildl_api_fail(h, ILDL_ERR_EMPTY, "n = %d: the matrix is empty", (int)n); goto fail; }
    st = ildl_csr_validate_entries(n, rowptr, colind, values, h->err, sizeof h->err);
    if (st) goto fail;
    double t_entries = ildl_wtime();

    int64_t nnz = rowptr[n];
    h->src = ildl_malloc(sizeof(int64_t) * (size_t)nnz);
    h->tmap = ildl_malloc(sizeof(int64_t) * (size_t)nnz);
    h->user_values = ildl_malloc(sizeof(double) * (size_t)nnz);
    if (!h->src || !h->tmap || !h->user_values) { st = ILDL_ERR_OUT_OF_MEMORY; goto fail; }
    ildl_copy_parallel(h->user_values, values, sizeof(double) * (size_t)nnz);
    st = ildl_csr_from_user(n, rowptr, colind, values, &h->A, h->src);
    if (st) goto fail;
    double t_sorted = ildl_wtime();
    /* duplicates and symmetry on the sorted copy the library keeps (sorted once, not twice);
     * the check finds every transposed entry, so it fills tmap on the way */
    st = ildl_csr_validate_sorted_tmap(&h->A, ILDL_SYM_TOL, h->tmap, h->err, sizeof h->err);
    if (st) goto fail;
    double t_sym = ildl_wtime();

    /* CUDA's start in a process (driver, the device's context: 0.1-0.3 s) runs on a helper
     * thread beside the analysis, which does not depend on the backend */
    void *probe = ildl_backend_probe_start(&h->opt);
    /* while that thread starts CUDA it takes a core: on a full machine the analysis leaves it
     * one (control70 on a 16-core host, fresh process: setup 0.36-0.46 s with 16 threads,
     * 0.27-0.34 s with 15) */
    int threads_before = ildl_set_threads(probe ? ildl_threads_beside_helper() : 0);
    h->err[0] = 0;
    st = ildl_analyse_within(&h->A, h->src, &h->opt, 0, NULL, &h->memo, &h->an, h->err, sizeof h->err);
    ildl_set_threads(threads_before);
    int ndev = ildl_backend_probe_finish(&h->opt, probe); /* joined on every path */
    if (st) goto fail;
    if (h->opt.backend == ILDL_BACKEND_CUDA && ndev <= 0) {
        st = ildl_api_fail(h, ILDL_ERR_NO_DEVICE, "backend cuda requested but no usable CUDA device was found");
        goto fail;
    }
    /* the factor's storage: float only with precision single, on the host and on the device */
    st = ildl_tiles_set_precision(&h->an.tiles, h->opt.precision == ILDL_PREC_SINGLE);
    if (st) goto fail;
    h->env = (ildl_backend_env){&h->opt, &h->A, &h->an};
    h->ops = (h->opt.backend == ILDL_BACKEND_CPU || ndev <= 0) ? &ildl_backend_cpu : &ildl_backend_cuda;
    double tu = ildl_wtime();
    /* deferred (ildl_analyse_matrix): the device memory estimated, allocated by ildl_factor */
    st = defer ? estimate_state(h, h->err, sizeof h->err) : create_state(h, h->err, sizeof h->err);
    if (st) goto fail;
    h->info.t_upload = ildl_wtime() - tu;

    if (h->an.n_unmatched > 0)
        ildl_api_log(h, 1, "matching: %d rows structurally unmatched (treated as 1x1 pivots)", (int)h->an.n_unmatched);
    ildl_info *I = &h->info;
    I->backend = h->backend;
    I->n = n;
    I->nnz = nnz;
    ildl_api_info_from_analysis(h);
    if (!defer) I->device_bytes_estimate = (int64_t)I->device_bytes; /* allocated: all of it */
    for (int r = 0; r < ILDL_MAX_RUNGS; r++) {
        I->rung_iterations[r] = -1;
        I->rung_factor_nnz[r] = -1;
    }
    I->setup_seconds = ildl_wtime() - t0;
    ildl_api_log(h, 1, "setup: n=%d nnz=%lld blocks=%d tiles=%lld levels=%d capacity=%lld (%.3f s)",
            (int)n, (long long)nnz, (int)I->num_blocks, (long long)I->num_tiles,
            (int)I->num_levels, (long long)I->factor_capacity, I->setup_seconds);
    ildl_api_log(h, 2, "setup phases (s): entries %.3f copy+sort %.3f symmetry %.3f scale %.3f order+block %.3f "
            "permute %.3f fill %.3f levels %.3f tiles %.3f upload %.3f", t_entries - t0, t_sorted - t_entries,
            t_sym - t_sorted, h->an.t_scale, h->an.t_order_block, h->an.t_permute, h->an.t_fill,
            h->an.t_levels, h->an.t_tiles, h->info.t_upload);
    *out = h;
    threads_pop(threads);
    return ILDL_SUCCESS;
fail:
    if (pushed) threads_pop(threads);
    if (st == ILDL_ERR_OUT_OF_MEMORY && !h->err[0]) snprintf(h->err, sizeof h->err, "out of memory");
    if (!h->err[0]) snprintf(h->err, sizeof h->err, "%s", ildl_strerror(st));
    snprintf(setup_error, sizeof setup_error, "%s", h->err);
    ildl_api_log(h, 1, "setup failed: %s", h->err);
    ildl_destroy(h);
    return st;
}

/* 1 if a and b, the values at (i,j) and (j,i), are symmetric within ILDL_SYM_TOL. */
static int pair_symmetric(double a, double b)
{
    return !(fabs(a - b) > ILDL_SYM_TOL * fmax(fabs(a), fabs(b)));
}

/* 1 if a and b are the same double bit for bit. */
static int same_bits(double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

/* A's values back from the accepted ones (user_values, in the user's order). */
static void restore_values(ildl_handle *h)
{
    int64_t nnz = h->A.rowptr[h->A.n];
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < nnz; p++) h->A.val[p] = h->user_values[h->src[p]];
}

/* New values into A (its order), checked finite and symmetric on the known pattern in one
 * parallel pass (an interior-point code refactors every iteration); the first bad entry in A's
 * order is reported, as a serial scan finds it (a pair (p, tmap[p]) is checked at its first
 * position, so the first asymmetric one is found there). *same: the values are bit for bit the
 * accepted ones. On failure A holds the accepted values again. */
static int take_values(ildl_handle *h, const double *values, int *same)
{
    ildl_csr *A = &h->A;
    const int64_t *src = h->src, *tmap = h->tmap;
    int64_t nnz = A->rowptr[A->n], bad = nnz, asym = nnz;
    int differs = 0;
#pragma omp parallel for schedule(static) reduction(min : bad, asym) reduction(| : differs) if (nnz >= TAKE_VALUES_PARALLEL_MIN)
    for (int64_t p = 0; p < nnz; p++) {
        int64_t q = src[p], t = tmap[p];
        double a = values[q];
        differs |= !same_bits(a, h->user_values[q]);
        if (!isfinite(a)) {
            if (p < bad) bad = p;
        } else if (t > p && p < asym && !pair_symmetric(a, values[src[t]])) {
            asym = p;
        }
        A->val[p] = a;
    }
    *same = !differs;
    if (!differs) return ILDL_SUCCESS;
    if (bad < nnz) {
        restore_values(h);
        return ildl_api_fail(h, ILDL_ERR_NAN_INF, "value %lld is %g", (long long)src[bad], values[src[bad]]);
    }
    if (asym < nnz) {
        int64_t p = asym;
        int32_t i = A->col[tmap[p]]; /* p's row: the column of its transposed entry */
        int st = ildl_api_fail(h, ILDL_ERR_NOT_SYMMETRIC, "a(%d,%d) = %.17g but a(%d,%d) = %.17g", (int)i,
                               (int)A->col[p], A->val[p], (int)A->col[p], (int)i, A->val[tmap[p]]);
        restore_values(h);
        return st;
    }
    return ILDL_SUCCESS;
}

/* The scaling of new values, as options.refactor_scaling says (KEEP: an.scale as it is). */
static int refactor_rescale(ildl_handle *h)
{
    switch (h->opt.refactor_scaling) {
    case ILDL_REFACTOR_SCALING_KEEP: return ILDL_SUCCESS;
    case ILDL_REFACTOR_SCALING_EQUILIBRATE: return ildl_scale_equilibrate(&h->A, 20, 1e-3, h->an.scale);
    default: return ildl_analyse_rescale(&h->A, &h->opt, &h->memo, h->an.scale);
    }
}

/* Take new values (NULL: none) into A, checked, and rescale as refactor_scaling says; *values
 * becomes NULL where they are the accepted ones again (ildl_setup's passed to the first
 * ildl_factor: A, its matching and, unless a rescaling failed, its scaling are already theirs;
 * RECOMPUTE would compute the same scaling again, KEEP keeps it anyway; EQUILIBRATE still
 * equilibrates). Times into *t_check and *t_scale. On failure h is not factored. */
static int accept_values(ildl_handle *h, const double **values, double *t_check, double *t_scale)
{
    int64_t nnz = h->A.rowptr[h->A.n];
    const double *v = *values;
    if (!v) return ILDL_SUCCESS;
    double t = ildl_wtime();
    int same = 0;
    int st = take_values(h, v, &same);
    if (st) { h->factored = 0; return st; }
    if (same && !h->scale_stale && h->opt.refactor_scaling != ILDL_REFACTOR_SCALING_EQUILIBRATE) {
        *values = NULL; /* the accepted values again: as NULL */
        return ILDL_SUCCESS;
    }
    ildl_match_memo_clear(&h->memo); /* A's values change */
    if (!same) ildl_copy_parallel(h->user_values, v, sizeof(double) * (size_t)nnz);
    *t_scale = ildl_wtime();
    *t_check = *t_scale - t;
    h->scale_stale = 1;
    st = refactor_rescale(h);
    if (st) { h->factored = 0; return ildl_api_fail(h, st, "rescaling failed"); }
    h->scale_stale = 0;
    *t_scale = ildl_wtime() - *t_scale;
    return ILDL_SUCCESS;
}

int ildl_api_factor_once(ildl_handle *h, const double *values, int32_t *block_perturbed)
{
    double t_check = 0.0, t_scale = 0.0, tl = ildl_wtime();
    int st = accept_values(h, &values, &t_check, &t_scale);
    if (st) return st;
    ildl_profile_lap(&tl, "factor: values accepted");
    h->factored = 0;
    if (!h->bstate) { /* ildl_analyse_matrix deferred it, or a failed change of rung left none */
        char m[sizeof h->err] = "";
        double tu = ildl_wtime();
        st = create_state(h, m, sizeof m);
        if (st) return ildl_api_fail(h, st, "%s", m);
        h->info.t_upload = ildl_wtime() - tu;
    }
    ildl_tiles *T = &h->an.tiles;
    double t_load = ildl_wtime();
    if (h->opt.method != ILDL_METHOD_BLOCK_JACOBI) /* block-Jacobi takes its blocks from A itself */
        ildl_tiles_load_values(T, h->user_values, h->an.scale);
    t_load = ildl_wtime() - t_load;
    ildl_factor_params fp = {
        .pivoting = h->opt.pivoting,
        .drop_tol = h->opt.drop_tol,
        .pivot_tol = h->opt.pivot_tol,
        .perturb = h->opt.pivot_perturb,
        .leftover = h->opt.leftover,
        .pair_hint = h->an.pair_hint, /* static 2x2 pivots from the matching, or NULL */
        .num_threads = h->opt.num_threads,
        .block_perturbed = block_perturbed,
        .fp_sweeps = h->opt.fp_sweeps,
        .fp_eps = h->opt.fp_eps,
        .fp_delta = h->opt.fp_delta,
    };
    ildl_factor_stats fs;
    memset(&fs, 0, sizeof fs);
    char msg[sizeof h->err]; /* not h->err itself: ildl_api_fail() formats into it */
    ildl_profile_lap(&tl, "factor: tiles loaded");
    st = h->ops->factor(h->bstate, &fp, values != NULL, &fs, msg, sizeof msg);
    if (st) return ildl_api_fail(h, st, "%s", msg);
    ildl_profile_lap(&tl, "factor: backend");
    ildl_info *I = &h->info;
    I->factor_nnz = fs.factor_nnz;
    int64_t nnz_upper = (h->A.rowptr[h->A.n] + h->A.n) / 2;
    I->fill = (double)fs.factor_nnz / (double)(nnz_upper > 0 ? nnz_upper : 1);
    I->num_2x2_pivots = fs.n2x2;
    I->num_perturbed = fs.nperturbed;
    I->factor_schedule = fs.schedule;
    I->inertia_pos = fs.inertia_pos;
    I->inertia_neg = fs.inertia_neg;
    I->inertia_zero = fs.inertia_zero;
    I->fp_residual = fs.fp_residual;
    h->factored = 1;
    if (fs.t_upload > 0.0 || fs.t_device > 0.0) /* a device's factorization */
        ildl_api_log(h, 2, "factor phases (s): check %.4f rescale %.4f load %.4f upload %.4f device %.4f statistics %.4f",
                t_check, t_scale, t_load, fs.t_upload, fs.t_device, fs.t_stats);
    else
        ildl_api_log(h, 2, "factor phases (s): check %.4f rescale %.4f load %.4f", t_check, t_scale, t_load);
    ildl_api_log(h, 1, "factor: nnz(U)+nnz(D)=%lld fill=%.2f 2x2=%d perturbed=%d inertia=(%d,%d,%d)",
            (long long)fs.factor_nnz, I->fill, fs.n2x2, fs.nperturbed, fs.inertia_pos,
            fs.inertia_neg, fs.inertia_zero);
    return ILDL_SUCCESS;
}

int ildl_api_factor(ildl_handle *h, const double *values)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    double t0 = ildl_wtime();
    h->err[0] = 0;
    h->info.pushback_rounds = 0;
    h->info.pushback_blocks = 0;
    if (h->cost_iters > 0) { /* the rung by cost: the complete rung, modeled on the new values */
        double tc = 0.0, ts = 0.0;
        int st = accept_values(h, &values, &tc, &ts);
        if (st) return st;
        values = NULL;
        if (ildl_api_cost_switch(h) == 1) {
            h->info.factor_seconds = ildl_wtime() - t0;
            ildl_api_log(h, 1, "factor: %.3f s", h->info.factor_seconds);
            return ILDL_SUCCESS;
        }
    }
    int32_t *bp = NULL;
    if (h->opt.pushback_rounds > 0) {
        bp = ildl_malloc(sizeof(int32_t) * (size_t)h->an.blk.nb);
        if (!bp) { h->factored = 0; return ildl_api_fail(h, ILDL_ERR_OUT_OF_MEMORY, "out of memory"); }
    }
    int st = ildl_api_factor_once(h, values, bp);
    if (!st && bp) st = ildl_api_pushback(h, bp);
    free(bp);
    h->info.factor_seconds = ildl_wtime() - t0;
    if (!st) ildl_api_log(h, 1, "factor: %.3f s", h->info.factor_seconds);
    return st;
}

static int apply_impl(ildl_handle *h, const double *r, double *z, int where, void *stream)
{
    (void)stream;
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    if (!r || !z) return ildl_api_fail(h, ILDL_ERR_NULL_ARGUMENT, "r and z must not be NULL");
    if (!h->factored) return ildl_api_fail(h, ILDL_ERR_CALL_ORDER, "ildl_apply called before a successful ildl_factor");
    if (where != ILDL_MEMORY_HOST && where != ILDL_MEMORY_DEVICE)
        return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "where must be ILDL_MEMORY_HOST or ILDL_MEMORY_DEVICE");
    if (r == z) return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "z must not alias r");
    char msg[sizeof h->err];
    int st = h->ops->apply(h->bstate, r, z, where, stream, msg, sizeof msg);
    return st ? ildl_api_fail(h, st, "%s", msg) : ILDL_SUCCESS;
}

ILDL_API int ildl_factor(ildl_handle *h, const double *values)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    int prev = threads_push(h), st;
    if (values && h->gptr) { /* a descriptor's entries: summed into the full pattern's order */
        h->err[0] = 0;
        double *full = ildl_malloc(sizeof(double) * (size_t)(h->A.rowptr[h->A.n] + 1));
        if (!full) {
            st = ildl_api_fail(h, ILDL_ERR_OUT_OF_MEMORY, "out of memory");
        } else {
            ildl_api_gather(h, values, full);
            st = ildl_api_factor(h, full);
            free(full);
        }
    } else {
        st = ildl_api_factor(h, values);
    }
    threads_pop(prev);
    return st;
}

int ildl_api_threads_push(const ildl_handle *h) { return threads_push(h); }
void ildl_api_threads_pop(int prev) { threads_pop(prev); }

ILDL_API int ildl_solve(ildl_handle *h, const double *b, double *x)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    int prev = threads_push(h), st = ildl_api_solve(h, b, x);
    threads_pop(prev);
    return st;
}

ILDL_API int ildl_solve_multi(ildl_handle *h, int k, const double *B, int64_t ldb, double *X, int64_t ldx,
                              ildl_column_result *results)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    int prev = threads_push(h), st = ildl_api_solve_multi(h, k, B, ldb, X, ldx, results);
    threads_pop(prev);
    return st;
}

ILDL_API int ildl_apply(ildl_handle *h, const double *r, double *z, int where, void *stream)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    int prev = threads_push(h), st = apply_impl(h, r, z, where, stream);
    threads_pop(prev);
    return st;
}

static int apply_multi_impl(ildl_handle *h, int k, const double *R, int64_t ldr, double *Z, int64_t ldz,
                            int where, void *stream)
{
    h->err[0] = 0;
    int32_t n = h->A.n;
    if (k < 0) return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "k = %d, must be >= 0", k);
    if (ldr < n || ldz < n)
        return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "ldr = %lld and ldz = %lld must be >= n = %d", (long long)ldr,
                             (long long)ldz, (int)n);
    if (k > 0 && (!R || !Z)) return ildl_api_fail(h, ILDL_ERR_NULL_ARGUMENT, "R and Z must not be NULL");
    if (!h->factored)
        return ildl_api_fail(h, ILDL_ERR_CALL_ORDER, "ildl_apply_multi called before a successful ildl_factor");
    if (where != ILDL_MEMORY_HOST && where != ILDL_MEMORY_DEVICE)
        return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "where must be ILDL_MEMORY_HOST or ILDL_MEMORY_DEVICE");
    if (k == 0) return ILDL_SUCCESS;
    /* the spans [R, R + (k-1) ldr + n) and Z's must not meet (compared as addresses) */
    uintptr_t r0 = (uintptr_t)R, r1 = (uintptr_t)(R + (int64_t)(k - 1) * ldr + n);
    uintptr_t z0 = (uintptr_t)Z, z1 = (uintptr_t)(Z + (int64_t)(k - 1) * ldz + n);
    if (r0 < z1 && z0 < r1) return ildl_api_fail(h, ILDL_ERR_INVALID_OPTION, "Z must not overlap R");
    char msg[sizeof h->err];
    int st = h->ops->apply_multi(h->bstate, k, R, ldr, Z, ldz, where, stream, msg, sizeof msg);
    return st ? ildl_api_fail(h, st, "%s", msg) : ILDL_SUCCESS;
}

ILDL_API int ildl_apply_multi(ildl_handle *h, int k, const double *R, int64_t ldr, double *Z, int64_t ldz,
                              int where, void *stream)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    int prev = threads_push(h), st = apply_multi_impl(h, k, R, ldr, Z, ldz, where, stream);
    threads_pop(prev);
    return st;
}

ILDL_API int ildl_get_info(const ildl_handle *h, ildl_info *info)
{
    if (!h || !info) return ILDL_ERR_NULL_ARGUMENT;
    *info = h->info;
    return ILDL_SUCCESS;
}

ILDL_API int ildl_destroy(ildl_handle *h)
{
    if (!h) return ILDL_SUCCESS;
    if (h->ops) h->ops->destroy(h->bstate);
    ildl_csr_free(&h->A);
    ildl_analysis_free(&h->an);
    ildl_match_memo_free(&h->memo);
    free(h->src);
    free(h->tmap);
    free(h->user_values);
    free(h->gptr);
    free(h->gidx);
    free(h);
    return ILDL_SUCCESS;
}
