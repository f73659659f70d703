/*
 * blockildl.h -- public C API of libblockildl.
 *
 * libblockildl builds a block-incomplete LDL^T (block-iLDL^T) preconditioner for a
 * sparse symmetric indefinite matrix A and solves A x = b with SQMR, on the CPU or on
 * an NVIDIA GPU. The method follows Thuerck et al., "A block-oriented, parallel and
 * collective approach to sparse indefinite preconditioning on GPUs" (2018).
 *
 * Typical use:
 *
 *     ildl_options opt;
 *     ildl_options_default(&opt);
 *     ildl_handle *h = NULL;
 *     int st = ildl_setup(n, rowptr, colind, values, &opt, &h);   // analyse
 *     if (st == ILDL_SUCCESS) st = ildl_factor(h, NULL);           // numeric factor
 *     if (st == ILDL_SUCCESS) st = ildl_solve(h, b, x);            // SQMR
 *     ildl_info info; ildl_get_info(h, &info);
 *     ildl_destroy(h);
 *
 * The matrix is given in CSR form with the FULL symmetric pattern (both triangles),
 * 0-based indices. The library copies what it needs: the caller's arrays are never
 * modified and may be freed after ildl_setup returns.
 *
 * Every function returns an ILDL_* status code; ildl_strerror() explains it, and
 * ildl_last_error() gives a message with details about the most recent failure on a
 * handle. The library never prints unless options.verbosity > 0, and never exits.
 *
 * Threads: different handles may be used on different threads at the same time, with
 * either backend (results are bitwise those of one thread alone); one handle must not be
 * used by two threads at once. With the CUDA backend, handles on different threads share
 * the device and take turns only for the brief steps that CUDA requires to run alone.
 */
#ifndef BLOCKILDL_H
#define BLOCKILDL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ILDL_VERSION_MAJOR 0
#define ILDL_VERSION_MINOR 2
#define ILDL_VERSION_PATCH 0
#define ILDL_VERSION_STRING "0.2.0"

/* ---------------------------------------------------------------- status codes */
typedef enum ildl_status {
    ILDL_SUCCESS = 0,
    ILDL_ERR_NULL_ARGUMENT = 1,    /* a required pointer argument is NULL */
    ILDL_ERR_INVALID_OPTION = 2,   /* an option is out of its documented range */
    ILDL_ERR_NOT_SQUARE = 3,       /* the matrix is not square */
    ILDL_ERR_NOT_SYMMETRIC = 4,    /* pattern or values are not symmetric */
    ILDL_ERR_NAN_INF = 5,          /* a value is NaN or infinite */
    ILDL_ERR_INDEX_RANGE = 6,      /* an index is out of range, or row pointers decrease */
    ILDL_ERR_EMPTY = 7,            /* n == 0 */
    ILDL_ERR_SINGULAR = 8,         /* structurally singular: an empty row/column */
    ILDL_ERR_OUT_OF_MEMORY = 9,    /* host or device allocation failed */
    ILDL_ERR_IO = 10,              /* a file could not be opened or read/written */
    ILDL_ERR_FORMAT = 11,          /* a file is malformed */
    ILDL_ERR_CALL_ORDER = 12,      /* e.g. ildl_solve before ildl_factor */
    ILDL_ERR_SIZE_MISMATCH = 13,   /* a size does not match the handle */
    ILDL_ERR_NOT_SUPPORTED = 14,   /* option or feature not (yet) supported in this build */
    ILDL_ERR_NO_DEVICE = 15,       /* the CUDA backend was requested but no GPU is usable */
    ILDL_ERR_DEVICE = 16,          /* a CUDA runtime/library call failed */
    ILDL_ERR_NOT_CONVERGED = 17,   /* SQMR stopped before the true residual met tol */
    ILDL_ERR_BREAKDOWN = 18,       /* SQMR broke down (zero inner product); x is the best iterate */
    ILDL_ERR_DUPLICATE = 19,       /* duplicate (i,j) entries in the CSR input */
    ILDL_ERR_INTERNAL = 20,        /* an internal invariant failed: please report */
    ILDL_ERR_PATTERN = 21          /* an entry is not in the pattern given to setup */
} ildl_status;

/* ---------------------------------------------------------------- limits */
#define ILDL_MAX_THREADS 1024        /* ildl_options.num_threads is 0..ILDL_MAX_THREADS */
#define ILDL_MAX_FILL_LEVEL 1000000  /* ildl_options.fill_level is 0..ILDL_MAX_FILL_LEVEL (a level
                                        beyond the number of blocks adds nothing) */

/* ---------------------------------------------------------------- option enums */
typedef enum { ILDL_BACKEND_AUTO = 0, ILDL_BACKEND_CPU = 1, ILDL_BACKEND_CUDA = 2 } ildl_backend;
typedef enum {
    ILDL_ORDER_AMD = 0,
    ILDL_ORDER_RCM = 1,
    ILDL_ORDER_GMC = 2,
    ILDL_ORDER_METIS = 3,
    ILDL_ORDER_NATURAL = 4,
    ILDL_ORDER_AUTO = 5, /* AMD, or METIS when AMD leaves the block graph nearly a path (depth >= 3/4
                            of its vertices); then, with BR blocking on a block graph of >= 1000 blocks,
                            GMC_FILL when its levels are at most a quarter of that order's after the
                            fill: docs/ordering.md; ildl_info.ordering_used says which */
    ILDL_ORDER_GMC_FILL = 6 /* greedy multicolouring at distance fill_level + 1 of the block graph:
                               the colour classes stay level sets after the fill, so the solves and
                               the factorization have at most (colours + hubs) levels (hubs: blocks
                               of very high degree, ordered last); ILDL_ERR_NOT_SUPPORTED when the
                               distance-(fill_level+1) neighbourhoods are too large to search
                               (docs/ordering.md) */
} ildl_ordering;
/* How rows are grouped into diagonal blocks of at most max_block_size rows: RB cuts the order
 * into runs of similar rows, BR clusters rows of similar pattern and then orders the blocks
 * (docs/blocking-notes.md), SN cuts the order, postordered, into chains of its elimination
 * tree where the factor's columns change little: the blocks of a complete factor (the ladder's
 * rung 2 compares SN of METIS's and AMD's orders; docs/robustness.md); where those chains
 * average fewer than 6 rows they are then merged up to max_block_size rows along the tree
 * (fewer, larger blocks with explicit zeros: what the GPU's kernels need). */
typedef enum { ILDL_BLOCKING_RB = 0, ILDL_BLOCKING_BR = 1, ILDL_BLOCKING_SN = 2 } ildl_blocking_strategy;
typedef enum {
    ILDL_SCALING_NONE = 0,
    ILDL_SCALING_EQUILIBRATE = 1, /* symmetric Ruiz equilibration: max |entry| per row = 1 */
    ILDL_SCALING_MATCHING = 2     /* symmetrized max-product matching (MC64-like) */
} ildl_scaling;
/* The scaling a refactorization with new values (ildl_factor, ildl_factor_matrix) uses. */
typedef enum {
    ILDL_REFACTOR_SCALING_RECOMPUTE = 0, /* options.scaling computed again on the new values (a
                                            matching costs about as much as at setup) */
    ILDL_REFACTOR_SCALING_KEEP = 1,      /* the scaling of the analysis (ildl_setup's values, or the
                                            ladder's latest rung) kept: no host work, what a direct
                                            solver's refactorization does (default) */
    ILDL_REFACTOR_SCALING_EQUILIBRATE = 2 /* symmetric Ruiz equilibration of the new values (cheap,
                                             parallel; max |entry| per row = 1 without a matching) */
} ildl_refactor_scaling;
typedef enum { ILDL_PIVOT_NONE = 0, ILDL_PIVOT_BK = 1, ILDL_PIVOT_ROOK = 2 } ildl_pivoting;
typedef enum {
    ILDL_PREC_DOUBLE = 0, /* factor and SQMR in double */
    ILDL_PREC_SINGLE = 1, /* the factorization computes in single precision and keeps only a
                             single-precision factor (half the factor's memory); the triangular
                             solves read it in double arithmetic and SQMR runs in double, so the
                             true residual still reaches tol (docs/precision.md) */
    ILDL_PREC_MIXED = 2   /* factor computed in double, then rounded to single precision (the GPU
                             solves read a float copy, kept beside the double factor); SQMR in double */
} ildl_precision;
typedef enum {
    ILDL_LEFTOVER_SCAN = 0,  /* leftover capacity granted in block order: bitwise reproducible */
    ILDL_LEFTOVER_ATOMIC = 1 /* the paper's conservative racing-atomic protocol (Alg. 2) on the
                                CUDA backend: grants depend on the race, so factors are not
                                reproducible; the CPU backend (the reference) uses the scan */
} ildl_leftover;

typedef enum {
    ILDL_SCHEDULE_LEVELS = 0,  /* GPU solves and factorization: launches per level (the reference
                                  schedule) */
    ILDL_SCHEDULE_SYNCFREE = 1 /* GPU solves: one persistent launch per direction, rows poll
                                  the values they depend on (default; bit-identical to LEVELS, faster on
                                  deep block graphs). GPU factorization: one persistent launch
                                  whose tasks wait on counters (options.factor_schedule) */
} ildl_schedule;

typedef enum {
    ILDL_SOLVE_KERNELS_AUTO = 0,  /* GPU sync-free solves: on wide levels (256+ block rows per
                                     level on average) the kernels that sum sparse tiles by lanes,
                                     which keep a column-by-column copy of the sparse tiles'
                                     entries (~9 bytes per entry of capacity, 5 in single
                                     precision, and 80 per tile) and of the diagonal blocks'
                                     inverses' upper triangles (~4 bytes per entry of a
                                     diagonal block, 2 in single); the staged kernels otherwise
                                     (default; docs/gpu.md) */
    ILDL_SOLVE_KERNELS_STAGED = 1 /* always the staged kernels: no copy, less device memory,
                                     slower on wide levels (same results, bit for bit) */
} ildl_solve_kernels;

typedef enum {
    ILDL_L2_PERSIST_AUTO = 0, /* GPU, n large enough for it to matter: the sync-free sweeps' output
                                 vector and SQMR's q are launched with an L2 access policy window
                                 (persisting), and setup raises the device's persisting-L2 size
                                 (cudaLimitPersistingL2CacheSize, a setting of the whole device
                                 for the process) to the vector's bytes, at most the device's
                                 maximum; it never lowers it (default; docs/gpu.md) */
    ILDL_L2_PERSIST_OFF = 1   /* no window, and the device's persisting-L2 size is left alone
                                 (same results, bit for bit; ~2% slower per iteration at n >= 1M) */
} ildl_l2_persist;

/* The ladder of ildl_solve (docs/robustness.md): when SQMR does not reach tol with the factor
 * of the options as given (rung 0), ildl_solve analyses and factors A again with more fill
 * (rung 1: fill_level >= 3, fill_factor >= 16 unless unlimited, drop_tol <= 1e-6), then
 * completely (rung 2: the complete block fill, no dropping: an LDL^T whose only inexactness is
 * the pivots perturbed below pivot_tol), and solves again from the same start, until a rung
 * solves, the highest rung allowed has failed, or a budget is spent. Deterministic; the rung
 * reached stays for the following ildl_factor and ildl_solve calls. */
typedef enum {
    ILDL_ESCALATE_NONE = 0,    /* no ladder: ildl_solve returns what rung 0 gives */
    ILDL_ESCALATE_FILL = 1,    /* up to rung 1 */
    ILDL_ESCALATE_COMPLETE = 2 /* up to rung 2 (default) */
} ildl_escalation;
#define ILDL_MAX_RUNGS 3 /* rungs 0, 1, 2 */

/* When ildl_solve's ladder climbs (options.rung_choice; docs/robustness.md, "The rung by cost"). */
typedef enum {
    ILDL_RUNG_CHOICE_COST = 0,   /* where SQMR fails, and also where a solve converged on rung 0 or 1
                                    but the complete rung's step (one factorization and its ~2
                                    iterations) costs less than half of the current one's (its
                                    factorization and the iterations it took), by a deterministic
                                    model of the backend's time from the two analyses (sizes,
                                    levels, flops): the next ildl_factor or ildl_solve on the
                                    handle then analyses and factors the complete rung first.
                                    A solve that converged never pays for it; the complete
                                    rung's analysis is made only where it costs less than 20
                                    of the current steps. ILDL method, escalation COMPLETE
                                    (default) */
    ILDL_RUNG_CHOICE_FAILURE = 1 /* only where SQMR fails */
} ildl_rung_choice;
#define ILDL_MAX_PUSHBACK_ROUNDS 16 /* ildl_options.pushback_rounds at most */
#define ILDL_MAX_FP_SWEEPS 1000 /* ildl_options.fp_sweeps at most */

/* What ildl_apply applies (options.apply_mode). */
typedef enum {
    ILDL_APPLY_LDLT = 0, /* z = M^{-1} r, M = the scaled, permuted block L D L^T: indefinite like
                            A; for SQMR, GMRES, BiCGStab (default) */
    ILDL_APPLY_SPD = 1   /* M = L |D| L^T, |D| = each 1x1 and 2x2 pivot with its eigenvalues by
                            magnitude: symmetric positive definite, for MINRES (SciPy's minres,
                            PETSc's KSPMINRES), which refuses an indefinite preconditioner. A
                            weaker preconditioner than LDLT for A (M^{-1} A is no longer close to
                            I where D has negative pivots: its eigenvalues cluster at +1 and -1);
                            use it where the method needs SPD. Both backends, the same bits */
} ildl_apply_mode;

/* The preconditioner built from the blocks (options.method; docs/methods.md). */
typedef enum {
    ILDL_METHOD_ILDL = 0,        /* the block-incomplete LDL^T (default) */
    ILDL_METHOD_BLOCK_JACOBI = 1, /* block-Jacobi: the diagonal blocks of the scaled, permuted A (the
                                    analysis' blocks, at most 32 rows) inverted by Gauss-Jordan
                                    elimination with implicit pivoting (pivots below pivot_tol
                                    perturbed), applied as a batched product; both backends, the
                                    same bits. Cheap to build, more iterations where the blocks
                                    couple. Double precision and apply_mode LDLT only; no
                                    push-back. The ladder's rungs 1 and 2 are block-iLDL^T
                                    factors. ildl_info: factor_nnz counts the inverses' entries,
                                    num_perturbed the perturbed pivots, inertia is 0 */
    ILDL_METHOD_FIXED_POINT = 2  /* the fixed-point (Jacobi-sweep) block factorization: U^T D U on
                                    the same block pattern, every block recomputed from the
                                    previous sweep's factor (fp_sweeps sweeps, no order among
                                    block rows), pivots below eps delta^(s-1) ||A||_inf
                                    perturbed in sweep s (fp_eps, fp_delta), then tau-dropped
                                    into the same store; both backends, the same bits. An
                                    approximation of the block-iLDL^T's factor (ildl_info
                                    fp_residual says how close): fewer sweeps than levels cost
                                    iterations. Double precision only; the ladder's rungs 1 and
                                    2 are block-iLDL^T factors */
} ildl_method;

/* Log callback: receives one line (no trailing newline) when verbosity > 0. */
typedef void (*ildl_log_fn)(void *ctx, const char *line);
/* Progress callback: called by ildl_solve after every SQMR iteration with the iteration
 * number and SQMR's estimate of the relative residual (not the true one). */
typedef void (*ildl_progress_fn)(void *ctx, int iteration, double estimated_residual);

/* Options. Always initialise with ildl_options_default(); then change fields. */
typedef struct ildl_options {
    int backend;            /* ildl_backend; default AUTO (CUDA if a GPU is usable, else CPU) */
    int ordering;           /* ildl_ordering; default AUTO */
    int blocking;           /* ildl_blocking_strategy; default BR (docs/blocking-notes.md) */
    int scaling;            /* ildl_scaling; default MATCHING */
    int pivoting;           /* ildl_pivoting; default ROOK */
    int precision;          /* ildl_precision; default DOUBLE */
    int fill_level;         /* l_f in 0..ILDL_MAX_FILL_LEVEL: block level of fill; default 1 */
    double fill_factor;     /* r_f >= 1: capacity per block = r_f * nnz(A_ij); default 8; <=0 = unlimited */
    double drop_tol;        /* tau >= 0: drop |u| <= tau*||u_row||_2; default 1e-4 */
    int max_block_size;     /* 1..32; default 32 */
    double block_threshold; /* cosine similarity threshold for blocking; default 0 (BR: merge
                               by similarity down to any overlap; RB: plain runs of
                               max_block_size rows of the ordering) */
    double block_decay;     /* BR: threshold factor per coarsening level; default 0.9 */
    double pivot_tol;       /* finite, >= 0: |pivot| below this (after scaling) is perturbed;
                               default 1e-10 */
    double pivot_perturb;   /* finite, > 0: magnitude a perturbed pivot gets; default 1e-6 */
    int leftover;           /* ildl_leftover; default SCAN (deterministic) */
    double tol;             /* SQMR: true ||b-Ax||/||b|| target, in (0,1); default 1e-6 */
    int max_iter;           /* SQMR iteration limit, >= 0; default 1000 */
    int use_initial_guess;  /* nonzero: ildl_solve starts from x as given; default 0 (x0 = 0) */
    int check_every;        /* SQMR: true residual checked at most every this many iterations; default 1 */
    int num_threads;        /* CPU threads, 0..ILDL_MAX_THREADS; 0 = OpenMP default (with OpenMP's
                               default busy-waiting, more threads than free cores slow every
                               parallel region down: on a shared machine set it, or
                               OMP_WAIT_POLICY=passive) */
    int verbosity;          /* 0 silent, 1 phases, 2 iterations */
    ildl_log_fn log_fn;     /* NULL: lines go to stderr when verbosity > 0 */
    void *log_ctx;
    int device_id;          /* CUDA device ordinal (>= 0); default 0. Calls switch to it and back:
                               the calling thread's current device (context) is unchanged */
    int solve_schedule;     /* ildl_schedule of the GPU triangular solves; default SYNCFREE */
    ildl_progress_fn progress_fn; /* optional, default NULL; with the CUDA backend it is
                                     called once per batch of iterations */
    void *progress_ctx;
    int solve_kernels;      /* ildl_solve_kernels of the GPU sync-free solves; default AUTO */
    int l2_persist;         /* ildl_l2_persist: GPU vectors kept in L2; default AUTO */
    int escalation;         /* ildl_escalation: the highest rung ildl_solve may climb; default COMPLETE */
    int pushback_rounds;    /* 0..ILDL_MAX_PUSHBACK_ROUNDS: outer pivoting by push-back, the most
                               rounds per factorization; default 0 (none). A round moves the
                               diagonal blocks with a perturbed pivot, rows and columns, to the
                               end of the order (their relative order kept), analyses the fill
                               for that order again and refactors; it stops when no pivot is
                               perturbed or the order would not change (docs/robustness.md:
                               it can remove the perturbations of a complete factor; on
                               incomplete ones it helps or hurts, so the ladder leaves it off) */
    int apply_mode;         /* ildl_apply_mode: what ildl_apply applies; default LDLT (ildl_solve's
                               SQMR always uses LDLT) */
    int refactor_scaling;   /* ildl_refactor_scaling: the scaling of a refactorization with new
                               values; default KEEP (docs/robustness.md, "Refactorizations") */
    int method;             /* ildl_method: the preconditioner; default ILDL */
    int fp_sweeps;          /* method FIXED_POINT: sweeps, 1..ILDL_MAX_FP_SWEEPS; default 4 */
    int rung_choice;        /* ildl_rung_choice: when the ladder climbs; default COST */
    int factor_schedule;    /* ildl_schedule of the GPU factorization; default LEVELS. SYNCFREE:
                               where every tile is dense and drop_tol is 0 (complete factors:
                               the ladder's complete rung, fill_factor <= 0 with drop_tol 0),
                               the last levels of at most 4 block rows run as one persistent
                               launch, the levels before them as LEVELS; elsewhere LEVELS
                               (ildl_info factor_schedule says which ran). The same bits either
                               way; not faster yet (docs/gpu.md) */
    int reserved_int[5];
    double escalation_max_bytes;   /* >= 0, finite: a rung whose factor would need more bytes (its
                                      entries, 10 bytes each in double precision, 6 in single) is
                                      not taken; 0 = the host's physical memory / 2; default 0.
                                      A rung whose device allocation fails is not taken either */
    double escalation_max_seconds; /* >= 0, finite: no rung starts once ildl_solve has run this long
                                      (seconds); 0 = no limit; default 0 */
    double fp_eps;          /* method FIXED_POINT: sweep s perturbs pivots below
                               max(fp_eps fp_delta^(s-1) ||A||_inf, pivot_tol) to that
                               magnitude (at least pivot_perturb); finite, >= 0; default 0.1 */
    double fp_delta;        /* in (0, 1]; default 0.95 */
    double reserved_double[12];
    void *reserved_ptr[4];
} ildl_options;

/* Information about the last setup/factor/solve on a handle. */
typedef struct ildl_info {
    int backend;              /* backend actually used (ildl_backend, never AUTO) */
    int32_t n;                /* order of A */
    int64_t nnz;              /* stored entries of A (full pattern) */
    double setup_seconds;     /* ildl_setup wall time */
    double factor_seconds;    /* last ildl_factor wall time */
    double solve_seconds;     /* last ildl_solve wall time */
    double t_scale, t_order, t_block, t_fill, t_levels, t_tiles, t_upload; /* setup phases (s) */
    int32_t num_blocks;       /* block rows */
    int64_t num_tiles;        /* stored blocks of U (incl. diagonal and fill blocks) */
    int64_t num_fill_tiles;   /* blocks added by the level of fill */
    int32_t num_levels;       /* level sets of the coarse graph */
    double mean_block_size;   /* n / num_blocks */
    int64_t factor_nnz;       /* entries kept in U (incl. unit diagonal) plus D */
    int64_t factor_capacity;  /* entries reserved for U */
    double fill;              /* factor_nnz / nnz(upper triangle of A) */
    int32_t num_2x2_pivots;   /* 2x2 pivots in D */
    int32_t num_perturbed;    /* pivots perturbed because they were near zero */
    int32_t inertia_pos, inertia_neg, inertia_zero; /* of D */
    int iterations;           /* SQMR iterations of the last solve (over all its rungs) */
    int converged;            /* 1 if the true relative residual met tol */
    double true_residual;     /* ||b - A x|| / ||b|| of the returned x, original system */
    double estimated_residual;/* SQMR's own estimate at exit */
    size_t host_bytes;        /* host memory held by the handle */
    size_t device_bytes;      /* device memory held by the handle */
    int32_t ordering_used;    /* ildl_ordering that ordered the blocks (AUTO resolved) */
    int32_t rung;             /* the ladder's rung of the current analysis and factor (0: the
                                 options as given; ildl_escalation) */
    char device_name[64];     /* the GPU of the CUDA backend ("NVIDIA H200"), "" on the CPU */
    int64_t rung_iterations[ILDL_MAX_RUNGS]; /* last ildl_solve: SQMR iterations on each rung, -1
                                                where the rung was not tried */
    int64_t rung_factor_nnz[ILDL_MAX_RUNGS]; /* last ildl_solve: each tried rung's factor_nnz, or
                                                the entries it would have needed where it was
                                                refused for memory (-1: not tried) */
    int32_t pushback_rounds;  /* last factorization: push-back rounds done (options.pushback_rounds) */
    int32_t pushback_blocks;  /* last factorization: blocks pushed to the end, summed over its rounds */
    double iterate_seconds;   /* the part of solve_seconds spent in SQMR's iterations (their
                                 true-residual checks, restarts and progress_fn calls
                                 included); the rest is the solve's fixed cost: the copies of
                                 b and x, the initial residual and preconditioner application,
                                 the final true residual (and with the CUDA backend, where A's
                                 values could not be page-locked, their upload on the first
                                 solve after a factorization) */
    double rung_seconds[ILDL_MAX_RUNGS]; /* last ildl_solve: each tried rung's time (its analysis,
                                            factorization and SQMR; 0 where not tried) */
    int64_t device_bytes_estimate; /* the device memory the backend's state takes for the current
                                      analysis (0 on the CPU backend): after ildl_analyse_matrix
                                      computed before anything is allocated, exactly what
                                      ildl_factor then allocates (device_bytes); after
                                      ildl_setup, device_bytes. A push-back round or a rung of the
                                      ladder analyses again and allocates anew */
    double fp_residual;       /* method FIXED_POINT, last factorization: ||A - U^T D U||_F / ||A||_F
                                 over the analysis' block pattern after the last sweep (before
                                 tau-dropping; A scaled and permuted); 0 with other methods */
    int32_t factor_schedule;  /* ildl_schedule the last factorization ran (CUDA backend; LEVELS on
                                 the CPU's) */
    int32_t reserved_int32;
    double reserved_double[9];
} ildl_info;

typedef struct ildl_handle ildl_handle;

/* ---------------------------------------------------------------- functions */

/* Fill opts with the defaults listed in ildl_options. Returns ILDL_ERR_NULL_ARGUMENT if
 * opts is NULL, else ILDL_SUCCESS. */
int ildl_options_default(ildl_options *opts);

/* A one-line English description of a status code (never NULL). */
const char *ildl_strerror(int status);

/* The detailed message of the last failing call on h (never NULL; "" if none). With
 * h == NULL: the message of the last failed call without a handle in the calling thread
 * (ildl_setup, ildl_setup_matrix, the Matrix Market functions). The string
 * belongs to h (or to the thread) and changes with its next call. */
const char *ildl_last_error(const ildl_handle *h);

/* Library version as "MAJOR.MINOR.PATCH" (never NULL). */
const char *ildl_version(void);

/* The CUDA devices the CUDA backend can use (options.device_id 0 .. this - 1): 0 without a GPU
 * or in a build without CUDA. Starts CUDA in the process if nothing has yet. */
int ildl_device_count(void);

/* Analyse A and create a handle: validate, scale, order, block, compute the symbolic
 * block fill and level sets, lay out the tile store and (CUDA backend) allocate device
 * memory. The matrix is n x n in 0-based CSR with the full symmetric pattern: rowptr[n+1],
 * colind[rowptr[n]], values[rowptr[n]]; columns in a row need not be sorted. Unless the
 * backend is CPU, one helper thread starts CUDA (driver, the device's context) while the
 * analysis runs; it has ended when ildl_setup returns. With ordering AUTO, BR blocking, a
 * block graph of 1000+ blocks and 8+ threads, another helper thread runs AMD on it while the
 * others analyse the colouring's order (the result is the same as with one thread); it too
 * has ended when ildl_setup returns. While a helper runs, the analysis uses one thread fewer
 * if its threads would take every processor. With the CUDA backend the handle page-locks its
 * own two copies of A's values (8 bytes per stored entry of A and per stored entry of its
 * upper triangle) until ildl_destroy, so that each factorization's copies to the device are
 * fast and asynchronous; where that fails they stay pageable. The caller's arrays never are.
 *   n        order of A (> 0)
 *   rowptr, colind, values   CSR arrays (not modified; may be freed after return)
 *   opts     options, or NULL for the defaults
 *   out      receives the new handle; *out is set to NULL on failure
 * Returns ILDL_SUCCESS, ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_EMPTY (n <= 0), ILDL_ERR_INDEX_RANGE,
 * ILDL_ERR_DUPLICATE, ILDL_ERR_NAN_INF, ILDL_ERR_NOT_SYMMETRIC, ILDL_ERR_SINGULAR,
 * ILDL_ERR_INVALID_OPTION (an option outside its documented range), ILDL_ERR_NOT_SUPPORTED,
 * ILDL_ERR_NO_DEVICE (backend CUDA forced without a GPU), ILDL_ERR_DEVICE,
 * ILDL_ERR_OUT_OF_MEMORY, ILDL_ERR_INTERNAL (an internal invariant failed: please report). */
int ildl_setup(int32_t n, const int64_t *rowptr, const int32_t *colind, const double *values,
               const ildl_options *opts, ildl_handle **out);

/* ---------------------------------------------------------------- matrix descriptor */

/* How a matrix is stored (ildl_matrix). */
typedef enum { ILDL_FORMAT_CSR = 0, ILDL_FORMAT_COO = 1 } ildl_matrix_format;
/* Which entries are given: FULL both triangles (the pattern and values must be symmetric);
 * LOWER only entries with row >= column, UPPER only row <= column (each off-diagonal entry
 * stands for itself and its mirror). */
typedef enum { ILDL_VIEW_FULL = 0, ILDL_VIEW_LOWER = 1, ILDL_VIEW_UPPER = 2 } ildl_view;
/* The width of an index array. */
typedef enum { ILDL_INDEX_32 = 0, ILDL_INDEX_64 = 1 } ildl_index_type;
/* Entries given more than once at one position (after the view's mirroring): refused with
 * ILDL_ERR_DUPLICATE, or summed in the order given. */
typedef enum { ILDL_DUPLICATES_REFUSE = 0, ILDL_DUPLICATES_SUM = 1 } ildl_duplicates;

/* A sparse symmetric matrix as the caller holds it: nothing is copied until a call reads it.
 * Initialise with ildl_matrix_init (CSR, 64-bit row pointers, 32-bit column indices, base 0,
 * FULL, duplicates refused: the layout of ildl_setup), then set the fields. */
typedef struct ildl_matrix {
    int64_t n;              /* order, 1 .. 2^31 - 1 */
    int64_t nnz;            /* entries given: the length of cols and values (and COO rows);
                               CSR: rowptr[n] - base */
    int format;             /* ildl_matrix_format */
    int base;               /* 0 or 1: the index of the first row and column (row pointers too) */
    int view;               /* ildl_view */
    int duplicates;         /* ildl_duplicates */
    int offset_type;        /* ildl_index_type of CSR row pointers (ignored for COO) */
    int index_type;         /* ildl_index_type of column indices and COO row indices */
    const void *rows;       /* CSR: row pointers [n + 1]; COO: row indices [nnz] */
    const void *cols;       /* column indices [nnz] */
    const double *values;   /* [nnz] */
    int reserved_int[8];
    void *reserved_ptr[4];
} ildl_matrix;

/* Set *m to the defaults above (n = nnz = 0, arrays NULL). Returns ILDL_SUCCESS or
 * ILDL_ERR_NULL_ARGUMENT. */
int ildl_matrix_init(ildl_matrix *m);

/* ildl_setup for a matrix in any layout of ildl_matrix: the entries (mirrored for LOWER and
 * UPPER, duplicates summed if asked) become the full pattern, which is analysed as ildl_setup
 * does; the same pattern and values give the same handle, factor and solves, bit for bit, in
 * any layout. ildl_factor(h, values) then takes values in the order of m's entries.
 * Returns the statuses of ildl_setup, and ILDL_ERR_INVALID_OPTION (an unknown format, view,
 * index type or duplicates rule, or base not 0 or 1), ILDL_ERR_INDEX_RANGE (an index outside
 * the base's range, an entry outside the view's triangle, row pointers that do not start at
 * base, decrease or do not end at base + nnz, nnz < 0), ILDL_ERR_DUPLICATE (duplicates refused),
 * ILDL_ERR_NOT_SUPPORTED (n > 2^31 - 1); the message names the entry. */
int ildl_setup_matrix(const ildl_matrix *m, const ildl_options *opts, ildl_handle **out);

/* ildl_setup_matrix in two phases, as direct solvers do (analysis, then factorization): the
 * analysis alone, with no backend memory allocated. ildl_get_info then reports the backend
 * (CUDA where AUTO finds a GPU that can take the analysis), host_bytes, and
 * device_bytes_estimate: the device memory the first ildl_factor will allocate (exactly: the
 * same plan, counted without allocating), so a caller can check it against the free memory of
 * the device (cudaMemGetInfo) first, or choose the CPU backend. ildl_factor allocates it (with
 * backend AUTO falling back to the CPU where that fails) and factors; ildl_solve and ildl_apply
 * before it return ILDL_ERR_CALL_ORDER. Then as ildl_setup_matrix: the same handle, factor and
 * solves, bit for bit. The statuses of ildl_setup_matrix (not those of the device allocation,
 * which ildl_factor returns: ILDL_ERR_OUT_OF_MEMORY, ILDL_ERR_DEVICE). */
int ildl_analyse_matrix(const ildl_matrix *m, const ildl_options *opts, ildl_handle **out);

/* Factor new values on a sub-pattern of the setup's: m (any layout, n as the handle's) gives
 * values at some positions of the full pattern the handle was set up with (after m's view's
 * mirroring); every position m does not give is 0. For a Jacobian or an interior-point matrix
 * whose explicit zeros come and go. Then as ildl_factor(h, values).
 * Returns the statuses of ildl_factor, and ILDL_ERR_SIZE_MISMATCH (m->n differs),
 * ILDL_ERR_PATTERN (an entry is not in the setup's pattern: the message names it; the last
 * accepted values stay), ILDL_ERR_INVALID_OPTION, ILDL_ERR_INDEX_RANGE, ILDL_ERR_DUPLICATE as
 * ildl_setup_matrix. */
int ildl_factor_matrix(ildl_handle *h, const ildl_matrix *m);

/* ---------------------------------------------------------------- Matrix Market files */

/* Read a Matrix Market file (plain, or gzip if it ends in .gz; "coordinate" real, integer or
 * pattern (values 1), symmetric or general) into *m: ildl_setup's layout (CSR, full symmetric
 * pattern, 0-based, sorted rows, duplicates summed), arrays allocated by the library: release
 * them with ildl_matrix_free. A general file must be symmetric (relative tolerance 1e-12); a
 * size line whose entry count cannot cover its rows is refused before anything of that size
 * is allocated. ildl_last_error(NULL) names the file line of a failure (*m then holds nothing).
 * Returns ILDL_SUCCESS, ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_IO, ILDL_ERR_FORMAT,
 * ILDL_ERR_NOT_SQUARE, ILDL_ERR_INDEX_RANGE, ILDL_ERR_NAN_INF, ILDL_ERR_NOT_SYMMETRIC,
 * ILDL_ERR_SINGULAR, ILDL_ERR_EMPTY, ILDL_ERR_OUT_OF_MEMORY. */
int ildl_matrix_read(const char *path, ildl_matrix *m);

/* Release the arrays of a matrix that ildl_matrix_read filled (or of a copy of that descriptor:
 * free one of them only); a descriptor of the caller's own arrays is only reset, its arrays
 * are not freed. m may be NULL. Returns ILDL_SUCCESS. */
int ildl_matrix_free(ildl_matrix *m);

/* Write m (any layout) as "coordinate real symmetric": its full pattern's lower triangle,
 * 1-based, values as %.17g (read back to the same bits); gzip if path ends in .gz.
 * Returns ILDL_SUCCESS, ILDL_ERR_IO, or a status of ildl_setup_matrix for m itself. */
int ildl_matrix_write(const char *path, const ildl_matrix *m);

/* Read a dense vector: Matrix Market "array real general" or a "coordinate" n x 1 (or 1 x n)
 * column, or one number per line. want_n > 0: the length needed (another length is refused,
 * ILDL_ERR_SIZE_MISMATCH, before anything of its size is allocated); 0: any. *x (free with
 * ildl_vector_free) and *n receive it. Returns ILDL_SUCCESS, ILDL_ERR_NULL_ARGUMENT,
 * ILDL_ERR_IO, ILDL_ERR_FORMAT, ILDL_ERR_INDEX_RANGE, ILDL_ERR_NAN_INF, ILDL_ERR_EMPTY,
 * ILDL_ERR_SIZE_MISMATCH, ILDL_ERR_OUT_OF_MEMORY (ildl_last_error(NULL) says why). */
int ildl_vector_read(const char *path, int64_t want_n, double **x, int64_t *n);
void ildl_vector_free(double *x);

/* Compute the numeric block-iLDL^T factor. values: new values on the SAME pattern and in
 * the same order as given to ildl_setup (ildl_setup_matrix: m's entries, nnz of them), or NULL to factor the most recently accepted values
 * again: those of ildl_setup, or of the last ildl_factor call whose values passed its checks
 * (finite, symmetric), even if that factorization then failed. New values get the scaling
 * options.refactor_scaling says; values equal bit for bit to the accepted ones are factored as
 * NULL would be (unless refactor_scaling is EQUILIBRATE). May be called any number of
 * times (refactorisation reuses the analysis and all memory; on a handle of ildl_analyse_matrix
 * the first call allocates the backend's memory first). With the CUDA backend it first
 * waits for all work queued on the GPU (ildl_apply calls still running on any stream read the
 * factor it replaces) and returns when the new factor is complete.
 * Returns ILDL_SUCCESS, ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_NAN_INF, ILDL_ERR_NOT_SYMMETRIC
 * (values refused: the last accepted values stay), ILDL_ERR_OUT_OF_MEMORY, ILDL_ERR_DEVICE,
 * ILDL_ERR_NOT_SUPPORTED, ILDL_ERR_INTERNAL. On failure the previous factor is invalidated
 * (ildl_solve and ildl_apply return ILDL_ERR_CALL_ORDER until a factorization succeeds). */
int ildl_factor(ildl_handle *h, const double *values);

/* Solve A x = b by preconditioned SQMR. b[n] and x[n] are host arrays (x may not alias b).
 * x is the initial guess if options.use_initial_guess, else it is ignored on input.
 * On return x holds the iterate with the true residual reported in ildl_info. Any finite b
 * is solved: norms are computed without overflow or underflow, and a b whose largest entry is
 * outside [2^-256, 2^256] (about 1e-77 .. 1e77) is scaled by a power of two for the iteration,
 * x scaled back, and the true residual computed again on the given b.
 * Returns ILDL_SUCCESS (true residual <= tol), ILDL_ERR_NOT_CONVERGED (x is the best
 * iterate found), ILDL_ERR_BREAKDOWN (x is the best finite iterate found),
 * ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_INVALID_OPTION (x aliases b), ILDL_ERR_CALL_ORDER (no
 * factor), ILDL_ERR_NAN_INF (b or the initial guess has NaN/Inf; x is left as given),
 * ILDL_ERR_OUT_OF_MEMORY, ILDL_ERR_DEVICE. An initial guess whose residual b - A x0 overflows
 * is of no use, and the solve starts from x = 0 instead. The reported true
 * residual is always finite: where the iterate would exceed the largest double (A singular at
 * b's scale), x is the initial guess (or 0, where the initial guess's own residual overflows)
 * with its residual, and the status NOT_CONVERGED.
 * The ladder (options.escalation, default COMPLETE; see ildl_escalation): where SQMR fails on
 * the current factor (not converged, a breakdown, or, while a higher rung may follow, no 10x
 * fall of its estimate in ILDL_SQMR_STALL_WINDOW = 200 iterations), ildl_solve analyses and
 * factors A again on the next rung and solves again from the same start, within
 * options.escalation_max_bytes and escalation_max_seconds. info.rung, rung_iterations,
 * rung_factor_nnz and rung_seconds say what each rung did; info.iterations is their sum, and
 * progress_fn numbers the iterations across the rungs (1, 2, ... of the whole solve).
 * A rung that cannot be taken (memory, time, a failed factorization) ends the ladder with the
 * previous rung's result and factor, the message saying why. The rung reached stays for later
 * calls. ildl_apply does not climb: it applies the current factor. */
int ildl_solve(ildl_handle *h, const double *b, double *x);

/* What ildl_solve_multi returns for one column. */
typedef struct ildl_column_result {
    int status;                /* that column's ildl_solve status: ILDL_SUCCESS, ILDL_ERR_NOT_CONVERGED,
                                  ILDL_ERR_BREAKDOWN */
    int iterations;            /* its SQMR iterations, over the rungs it was solved on */
    double true_residual;      /* ||b_j - A x_j|| / ||b_j|| of the returned x_j (0 for b_j = 0) */
    double estimated_residual; /* SQMR's estimate at exit */
    int rung;                  /* the rung whose factor gave x_j */
    int reserved_int[3];
    double reserved_double[2];
} ildl_column_result;

/* ildl_solve for k right-hand sides: A X = B, B and X host arrays, column-major n x k with leading
 * dimensions ldb, ldx >= n (X must not overlap B; with options.use_initial_guess X holds the
 * initial guesses). The CPU backend iterates the columns in lockstep, up to 16 at a time: each
 * iteration applies A and M^{-1} to all the columns still iterating at once, so the matrix and
 * the factor are read once for them. The CUDA backend solves up to 8 columns at once, each on a
 * stream and host thread of its own (the calling thread's, and up to 7 solvers that share the
 * handle's factor and own a solve's work space, about 11 vectors of n doubles each: made by the
 * first call that needs them, kept until ildl_destroy, counted in info.device_bytes; where the
 * device has no room for them, fewer at once). Each column gets what ildl_solve would give it, bit for bit: the same iterations, x_j,
 * true residual and status, the ladder included (the columns that fail on a rung are solved
 * again, from their start, on the next one; the others keep their x_j). results (NULL, or k of
 * them) receives each column's outcome; ildl_info describes the whole call: iterations and
 * the residuals are the largest over the columns, converged is 1 when every column converged,
 * rung_iterations[r] the most any column took on rung r. progress_fn is called once per
 * lockstep iteration with the largest estimate among the columns that took it (CUDA backend:
 * from the solving threads, one call at a time, for increasing iteration numbers). k = 0 does
 * nothing.
 * Returns ILDL_SUCCESS (every column's true residual <= tol), ILDL_ERR_NOT_CONVERGED (some
 * column did not converge; each x_j is its best iterate), ILDL_ERR_BREAKDOWN (some column broke
 * down and none failed otherwise), ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_INVALID_OPTION (k < 0, ldb
 * or ldx < n, X overlapping B), ILDL_ERR_CALL_ORDER, ILDL_ERR_NAN_INF (a B or initial-guess
 * entry is NaN/Inf: nothing is solved, X is left as given; the message names the column and
 * row), ILDL_ERR_OUT_OF_MEMORY, ILDL_ERR_DEVICE; the message names the first failed column. */
int ildl_solve_multi(ildl_handle *h, int k, const double *B, int64_t ldb, double *X, int64_t ldx,
                     ildl_column_result *results);

/* Where the vectors of ildl_apply live. */
typedef enum { ILDL_MEMORY_HOST = 0, ILDL_MEMORY_DEVICE = 1 } ildl_memory;

/* Apply the preconditioner: z = M^{-1} r with M = the scaled/permuted block LDL^T,
 * for users who run their own Krylov loop. r[n], z[n] live in host or device memory as
 * `where` says (device memory only with the CUDA backend); stream is a cudaStream_t
 * passed as void* (NULL = default stream), ignored on the CPU. z may not alias r.
 * The applies of one handle share its device work space: applies queued on different streams
 * must not overlap (queue them on one stream, or order them with events); use one handle per
 * concurrent stream. With device vectors the call only queues kernels on `stream`, so it may
 * be captured into the caller's CUDA graph (any capture mode) and replayed; a replay uses the
 * factor current at that time.
 * Returns ILDL_SUCCESS, ILDL_ERR_NULL_ARGUMENT, ILDL_ERR_CALL_ORDER (no factor),
 * ILDL_ERR_NOT_SUPPORTED (device memory with the CPU backend), ILDL_ERR_INVALID_OPTION (z aliases r, or `where` is neither
 * ILDL_MEMORY_HOST nor ILDL_MEMORY_DEVICE), ILDL_ERR_DEVICE. With options.apply_mode =
 * ILDL_APPLY_SPD, M = L|D|L^T (ildl_apply_mode). */
int ildl_apply(ildl_handle *h, const double *r, double *z, int where, void *stream);

/* ildl_apply for k right-hand sides at once: Z = M^{-1} R, R and Z column-major n x k with
 * leading dimensions ldr, ldz >= n, in host or device memory as `where` says (the same contract
 * as ildl_apply, options.apply_mode included). Each column gets the bits ildl_apply gives it
 * (where a factor of precision single or mixed overflowed, its NaNs may differ in sign).
 * The CPU backend reads the factor once per 16 columns (a solve for several vectors costs
 * little more than for one: the factor's traffic dominates). The CUDA backend, host vectors:
 * waits for the work queued on `stream`, then applies up to 8 columns at once, each on a stream
 * of its own (the solvers of ildl_solve_multi); device vectors: column by column on `stream`.
 * k = 0 does nothing. Z must not overlap R.
 * Returns the statuses of ildl_apply, and ILDL_ERR_INVALID_OPTION (k < 0, ldr or ldz < n, Z
 * overlapping R). */
int ildl_apply_multi(ildl_handle *h, int k, const double *R, int64_t ldr, double *Z, int64_t ldz, int where,
                     void *stream);

/* Copy the information of the last setup/factor/solve into info.
 * Returns ILDL_SUCCESS or ILDL_ERR_NULL_ARGUMENT. */
int ildl_get_info(const ildl_handle *h, ildl_info *info);

/* Release everything held by h (NULL is allowed and does nothing). Returns ILDL_SUCCESS.
 * h must not be used afterwards, by any function (not even ildl_destroy again). */
int ildl_destroy(ildl_handle *h);

#ifdef __cplusplus
}
#endif
#endif /* BLOCKILDL_H */
