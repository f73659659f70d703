/* context.cuh -- the CUDA backend's context (private to src/cuda): the device memory and state
 * of one handle, grouped by phase where sqmr.cu does not read the fields, and the functions
 * the backend's .cu files share about it. */
#ifndef ILDL_CUDA_CONTEXT_CUH
#define ILDL_CUDA_CONTEXT_CUH
#include "cuda/factor_kernels.cuh"
#include "cuda/tuning.h"
extern "C" {
#include "core/util.h"
}

/* What a factorization reports, summed on the device (k_factor_stats in factorize.cu): the
 * host T keeps no copy of D. */
struct factor_totals {
    unsigned long long nnz;
    unsigned long long n2x2, pos, neg, zero;
    unsigned long long perturbed; /* pivots perturbed, from d_block_perturbed */
};

/* The sync-free factorization (factor_syncfree.cu; plan.cu, factor_sf_plan). A task: kr = kind <<
 * FSF_KIND_SHIFT | the row's level position r; a, b, c by kind (k_factor_sf). */
enum { FSF_JOB = 0, FSF_DIAG = 1, FSF_PULL = 2, FSF_SOLVE = 3, FSF_COLS = 4 };
#define FSF_KIND_SHIFT 28
struct fsf_task {
    int32_t kr, a, b, c;
};
/* Per level position r: its dependencies (block rows k < i with a tile (k,i)), its split products,
 * the units that finish it (its diagonal, off-diagonal solves and column permutations); and per
 * block row i (a second index into the same array): pos, its level position. */
struct fsf_row {
    int32_t ndeps, njobs, total, pos;
};
/* What k_factor_sf reads: the tasks in ticket order, the counters (sync: a ticket, then
 * per position dep, jobs, diag, pulls, done, per tile its pull done, per ring slot its uses
 * consumed; zeroed before each launch), the rows, the split products' tiles. */
struct fsf_params {
    const fsf_task *tasks;
    int32_t ntasks, nb;
    int64_t ntiles;
    int *sync;
    const fsf_row *row;
    const int64_t *job_ti, *job_tj;
    const int32_t *job_use; /* per job: the earlier uses of its ring slot (it waits for them) */
};

/* The factorization's plan (plan.cu), its work space and its streams (factor.cu, factorize.cu). */
struct cuda_factor_work {
    /* chunk schedule (host) */
    int32_t nchunks;
    int32_t *chunk_r0, *chunk_n;
    int8_t *chunk_last;    /* chunk ends its level */
    int32_t *d_rowbase;    /* [nb] offset of each row's tiles inside its chunk (level_rows order) */
    int64_t *chunk_toff;   /* [nchunks+1] first entry of each chunk in the off-diagonal tile list */
    int64_t *chunk_slots;  /* [nchunks] tiles (all, in storage order) of each chunk */
    int64_t *d_slot_size;  /* [ntiles] per storage slot: the stored size of a dense tile (>= 0),
                              or -(capacity + 1) for a sparse off-diagonal one (factor_phase_b.cu) */
    int32_t *d_tile_rr, *d_tile_s; /* off-diagonal tiles of each chunk: (row in chunk, slot) */
    int64_t budget;        /* in-flight tiles */
    int all_dense;         /* no sparse tile: T.off and T.nnz are the static capacity offsets and
                              capacities, uploaded at setup; with tau = 0 a factorization skips
                              the drop and phase B (factor.cu) */
    double *d_inflight;    /* float in precision single (allocated at that size) */
    int64_t *d_need;
    ildl_dense_result *d_res;
    double *d_rownorm;     /* float in precision single (allocated at that size) */
    factor_state *d_state;
    int32_t *d_block_perturbed; /* [nb] pivots perturbed per block row (the push-back's record) */
    cudaStream_t fstream[2]; /* the factorization's streams (non-blocking): 0 main, 1 the pulls */
    cudaEvent_t ev_fork, ev_join; /* per chunk: s1 after s0's earlier work; s0 after the pulls */
    int8_t *d_pair_hint;
    factor_totals *d_totals; /* statistics of the last factorization (factorize.cu) */
    /* split pulls (plan.cu, pull_split_plan): per chunk, its updates computed apart */
    int64_t *chunk_job;    /* [nchunks+1] the chunk's first job in d_job_ti/tj */
    int64_t *d_job_ti, *d_job_tj; /* per job (one update), its tiles (k,i) and (k,j) */
    int2 *d_split_row;     /* [nb] per level position, of the diagonal tile: {first product in */
    int2 *d_split_ofd;     /* [chunk_toff[nchunks]] ... d_prod, count}; count -1: pulled in place */
    int64_t prod_cap;      /* products of d_prod (the largest chunk's jobs) */
    int64_t *chunk_col;    /* [nchunks+1] phase C: the chunk's first entry of d_coltile */
    int64_t *d_coltile;    /* per chunk, the tiles (k,i), k < i, of its rows i (column permutations) */
    double *d_prod;        /* float in precision single (allocated at that size) */
    /* the sync-free schedule (factor_sf_plan; only where every tile is dense) */
    int schedule;          /* ildl_schedule asked for (ildl_cuda_set_factor_schedule) */
    int last_schedule;     /* the schedule the last factorization ran */
    int32_t sf_ntasks;     /* 0: no plan (the level schedule runs) */
    int32_t sf_ch0;        /* the chunks before it run in the level schedule, the rest sync-free */
    int32_t sf_ring;       /* products in the ring (d_prod holds at least as many) */
    int sf_blocks;         /* k_factor_sf's grid: as many blocks as fit at once */
    int64_t sf_sync_len;   /* ints of d_sf_sync */
    fsf_task *d_sf_tasks;
    fsf_row *d_sf_row;
    int32_t *d_sf_job_use;
    int *d_sf_sync;
};

/* Which solve kernels run and their state (solve_select.cu, apply.cu). */
struct cuda_solve_setup {
    int32_t nlevels;
    int32_t *level_ptr;    /* host copy */
    int schedule;          /* ILDL_SCHEDULE_SYNCFREE or ILDL_SCHEDULE_LEVELS */
    int solve_warps_f, solve_warps_b; /* warps per block of the forward/backward solve kernels */
    int sf_blocks_f, sf_blocks_b; /* grids of the sync-free solve kernels: as many blocks as fit */
    int sf_vglobal;        /* the forward sync-free kernel reads V_ii from global memory (wide levels) */
    int sf_nostage;        /* the sync-free kernels without staging tiles (wider levels: SOLVE_*_NS) */
    int lanes_failed;      /* the lanes of those kernels did not fit in device memory: staged kernels */
    int staged_only;       /* ILDL_SOLVE_KERNELS_STAGED: never those kernels (nor their lanes) */
    int *d_epoch;          /* the sync-free sweeps' epoch (k_sf_unset starts a new one) */
    int64_t sf_scratch_len; /* doubles of T.sf_scratch (sf_split_plan) */
    double *d_sweep;       /* [n] the sync-free forward sweep's result (filled unset first) */
#ifdef ILDL_SOLVE_TRACE
    unsigned long long *d_trace; /* the trace build's per-ticket records, [2][nb][10] (solve_sync.cuh) */
#endif
};

struct ildl_cuda_ctx {
    /* the device, the tile store and the settings */
    int device;
    char name[256];
    int sm_count;
    size_t bytes;
    ildl_cuda_ctx *parent; /* a solver (clone.cu): the context whose tile store, factor and A it reads;
                              it owns only its solves' work space */
    int plan_only;         /* ildl_cuda_estimate's context: upload/alloc only count bytes (no memory,
                              no copies, NULL pointers), nothing else touches the device */
    double t_malloc, t_copy; /* seconds in cudaMalloc / cudaMemcpy during setup (ILDL_SETUP_PROFILE) */
    ildl_cuda_tuning tune; /* the settings in force at creation (tuning.h) */
    dev_tiles T;           /* device pointers */
    int32_t *d_level_rows; /* == T.level_rows */
    int nb;                /* block rows */
    int single;            /* precision single: float factorization, only val32 (val NULL) */
    cuda_factor_work fac;
    cuda_solve_setup sol;
    /* The rest is read by sqmr.cu too (flat until it moves there). The map from factored
     * positions to user rows: */
    int32_t *d_q;
    double *d_qs;
    int32_t *d_qinv;       /* q's inverse: user row -> factored position (SQMR's fused scatter) */
    int32_t *d_perm;       /* analysed position -> user row (ildl_cuda_set_map) */
    double *d_scale;       /* per user row */
    int have_map;          /* d_perm and d_scale hold the analysis: factorizations build d_q, d_qs */
    int map_built;         /* the last factorization built d_q, d_qs, d_qinv: applications may gather */
    int factored;
    /* options.method BLOCK_JACOBI (gje.cu): the preconditioner is the inverses of the blocks,
     * not the tile store's factor; applications gather, apply them in place, scatter */
    struct {
        int on;
        int64_t count;
        int32_t *d_size, *d_pert;
        int64_t *d_off, *d_row;
        double *d_inv; /* the blocks, inverted in place */
    } bj;
    /* options.method FIXED_POINT (fixed_point.cu): the sweeps' state (cpu/fixed_point.h), two
     * copies; the factorization's chunks then load the last one instead of pulling */
    struct {
        int on;
        int64_t nofd;          /* off-diagonal tiles */
        int64_t *d_soff, *d_offd; /* [ntiles] each tile's first value; [nofd] the off-diagonal tiles */
        double *d_u[2];
        int32_t *d_perm[2];
        double *d_dd[2], *d_de[2];
        int8_t *d_ty[2];
        int32_t *d_q, *d_npert, *d_n2x2;
        double *d_tile_sq;     /* [ntiles] the residual's sums */
        uint8_t *d_dense;      /* [ntiles] ILDL_TILE_DENSE: the format of the state's tiles */
        int sweeps, cur;       /* this factorization's sweeps; the copy of the last */
        double tol[ILDL_MAX_FP_SWEEPS], perturb[ILDL_MAX_FP_SWEEPS]; /* the schedule */
    } fp;
    double *d_w, *d_r, *d_z; /* [n] work vectors */
    int *d_tickets;        /* the sync-free sweeps' tickets: [0] forward, [1] backward, [2] = 0 */
    const int *d_skip;     /* what the solve kernels read to skip: d_tickets + 2, or SQMR's halt
                              flag while its iteration is captured */
    int prof_solve;        /* ILDL_CUDA_PROFILE set: time the sweeps of uncaptured solves */
    cudaEvent_t ev[4];
    /* A for SpMV (user ordering) */
    int32_t n;
    int64_t *d_arow;
    int32_t *d_acol;
    double *d_aval;
    int32_t n_along;       /* A's rows of more than ILDL_SPMV_LONG_ROW entries (a warp each) */
    int32_t *d_along;      /* [n_along] their indices, ascending */
    const ildl_csr *hostA;
    void *pinned[2];       /* host arrays page-locked by ildl_cuda_pin_host (A's values, T->a_val) */
    int aval_current;      /* d_aval holds the values of the last factorization (SQMR's products) */
    /* SQMR (sqmr.cu): device vectors, scalars, partial sums and the captured iteration */
    double *d_b, *d_x, *d_t, *d_qv, *d_d, *d_u, *d_xbest, *d_part; /* d_part: 2 x ILDL_DOT_BLOCKS */
    int *d_count;          /* [2] blocks arrived at the end of a fused SQMR kernel (last_block): [0] the
                              iteration's path, [1] k_step_x beside it */
    struct sqmr_scalars *d_S;
    cudaStream_t stream;
    cudaStream_t side;     /* SQMR's k_step_x beside the preconditioner, forked and joined by: */
    cudaEvent_t sq_fork, sq_join;
    cudaGraphExec_t g_full, g_dir;
};

/* Allocate count elements on the device (c->bytes counts them) and copy src there if given;
 * the time spent in each call kind adds to c->t_malloc / c->t_copy (ILDL_SETUP_PROFILE). */
template <typename Tp>
static cudaError_t upload(Tp **dst, const Tp *src, size_t count, ildl_cuda_ctx *c)
{
    size_t b = sizeof(Tp) * (count ? count : 1);
    if (c->plan_only) { /* ildl_cuda_estimate: count, allocate nothing */
        *dst = NULL;
        c->bytes += b;
        return cudaSuccess;
    }
    double t0 = ildl_wtime();
    cudaError_t e = cudaMalloc((void **)dst, b);
    double t1 = ildl_wtime();
    c->t_malloc += t1 - t0;
    if (e != cudaSuccess) return e;
    c->bytes += b;
    if (src && count) {
        e = cudaMemcpy(*dst, src, sizeof(Tp) * count, cudaMemcpyHostToDevice);
        c->t_copy += ildl_wtime() - t1;
    }
    return e;
}

template <typename Tp>
static cudaError_t alloc(Tp **dst, size_t count, ildl_cuda_ctx *c)
{
    return upload<Tp>(dst, NULL, count, c);
}

/* alloc, then zero the bytes (on the legacy stream; ildl_cuda_factor synchronizes the device
 * before its first kernel): the solves' flags and counters, and the factor's storage, of which
 * the factorization writes only each tile's stored entries (a download of the unused capacity
 * must not copy another handle's old data, nor differ from the CPU reference's zeros). */
template <typename Tp>
static cudaError_t alloc_zeroed(Tp **dst, size_t count, ildl_cuda_ctx *c)
{
    cudaError_t e = alloc<Tp>(dst, count, c);
    if (e == cudaSuccess && !c->plan_only) e = cudaMemset(*dst, 0, sizeof(Tp) * (count ? count : 1));
    return e;
}

/* The factorization's chunks and the slots of their off-diagonal tiles (plan.cu): per level
 * position its tiles' offset in its chunk (rowbase), per off-diagonal tile its row in the chunk
 * and its slot (tile_rr, tile_s); ILDL_SUCCESS, ILDL_ERR_OUT_OF_MEMORY or ILDL_ERR_INTERNAL. */
int plan_chunks(ildl_cuda_ctx *c, const ildl_tiles *T, int32_t *rowbase, int32_t *tile_rr, int32_t *tile_s);
/* The sync-free solves' work items and the split rows' scratch, uploaded (plan.cu; col_diag:
 * the host's ildl_tiles_col_diag of every block row). */
cudaError_t sf_split_plan(ildl_cuda_ctx *c, const ildl_tiles *T, const int64_t *col_diag);
cudaError_t colperm_plan(ildl_cuda_ctx *c, const ildl_tiles *T);
bool chunk_narrow(const ildl_cuda_ctx *c, int32_t ch);
/* The sync-free factorization's tasks (factor_syncfree.cu) from the chunks' split pulls (srow,
 * sofd: pull_split_plan's host tables, jobs per chunk from chunk_job), uploaded; only where every
 * tile is dense. */
cudaError_t factor_sf_plan(ildl_cuda_ctx *c, const ildl_tiles *T, const int2 *srow, const int2 *sofd);
/* k_factor_sf on stream s after its counters are zeroed (factor_syncfree.cu); ILDL_SUCCESS or
 * ILDL_ERR_DEVICE. */
template <typename R> int factor_sf_launch(ildl_cuda_ctx *c, const factor_params_d &prm, cudaStream_t s);
/* k_factor_sf's shared memory, and how many of its blocks fit on one SM. */
cudaError_t factor_sf_configure(int *blocks_per_sm);
cudaError_t pull_split_plan(ildl_cuda_ctx *c, const ildl_tiles *T, const int32_t *tile_rr, const int32_t *tile_s);
/* Choose and configure the solve kernels for wf / wb warps per block (0: the defaults of the
 * kernels chosen), allocating their lanes if needed (solve_select.cu). */
int set_solve_warps(ildl_cuda_ctx *c, int wf, int wb);
/* Free the lanes of the kernels without staging tiles (all, or only the double values). */
void lanes_free(ildl_cuda_ctx *c, int values_only);

/* 1 if ILDL_CUDA_PROFILE is set (read at each call): time the factorization's kernel kinds and
 * the solves' sweeps, and print them to stderr (a diagnostic). */
int ildl_cuda_profiling(void);

/* The factorization's kernels over all chunks (factor.cu), in double or, when c->single, in
 * float, then the inversion of the diagonal tiles for the solves (tiles.h); ILDL_SUCCESS or
 * the status of a failed CUDA call. */
int factor_run(ildl_cuda_ctx *c, const factor_params_d &prm, int leftover);
/* Whether factor_run skips the drop and phase B: a store of dense tiles only (all_dense),
 * tau = 0, not the fixed-point method. */
bool factor_dense_path(const ildl_cuda_ctx *c, const factor_params_d &prm);
/* Shared-memory limits of the factorization kernels (once per context). */
cudaError_t factor_configure(void);
cudaError_t fp_configure(void); /* fixed_point.cu: the sweeps' kernels' shared memory */

/* z = M^{-1} r for device vectors in the user's ordering, on stream s (capturable). */
int ildl_cuda_apply_device(ildl_cuda_ctx *c, const double *r, double *z, cudaStream_t s);
/* The same up to the scatter: c->d_w = (U^T D U)^{-1} (qs .* r[q]) in the factored order. */
int ildl_cuda_apply_to_w(ildl_cuda_ctx *c, const double *r, cudaStream_t s);
/* method BLOCK_JACOBI: x (analysed order) <- the blocks' inverses times x, in place (gje.cu) */
int ildl_cuda_bj_apply_device(ildl_cuda_ctx *c, double *x, cudaStream_t s);
/* The fixed-point method (fixed_point.cu): its sweeps and residual sums on stream s (the schedule
 * in c->fp), the last state into a chunk's in-flight slots (phase A's place), the sums down. */
int fp_sweeps_run(ildl_cuda_ctx *c, const factor_params_d &prm, cudaStream_t s);
void fp_load_launch(int32_t nrows, cudaStream_t s, ildl_cuda_ctx *c, const int32_t *rows, const int32_t *rowbase,
                    double *inflight);
int fp_residual_download(ildl_cuda_ctx *c, double *tile_sq, cudaStream_t s);

/* The device bytes ildl_cuda_sqmr_prepare allocates for order n (its vectors, partial sums and
 * scalars). */
size_t ildl_cuda_sqmr_bytes(int32_t n);
/* Allocate SQMR's vectors and capture its iteration graphs (idempotent). */
int ildl_cuda_sqmr_prepare(ildl_cuda_ctx *c);

/* Release what sqmr.cu allocated in c (safe when nothing was). */
void ildl_cuda_sqmr_free(ildl_cuda_ctx *c);

#endif
