/* context.cuh -- the CUDA backend's context (private to src/cuda). */
#ifndef ILDL_CUDA_CONTEXT_CUH
#define ILDL_CUDA_CONTEXT_CUH
#include "cuda/factor_kernels.cuh"

/* What a factorization reports, summed on the device (k_factor_stats in backend.cu): the
 * host T keeps no copy of D. */
struct factor_totals {
    unsigned long long nnz;
    unsigned long long n2x2, pos, neg, zero;
};

struct ildl_cuda_ctx {
    int device;
    char name[256];
    size_t bytes;
    double t_malloc, t_copy; /* seconds in cudaMalloc / cudaMemcpy during setup (ILDL_SETUP_PROFILE) */
    dev_tiles T;           /* device pointers */
    int32_t *d_level_rows; /* == T.level_rows */
    /* chunk schedule of the factorization (host) */
    int32_t nchunks;
    int32_t *chunk_r0, *chunk_n;
    int8_t *chunk_last;    /* chunk ends its level */
    int32_t *d_rowbase;    /* [nb] offset of each row's tiles inside its chunk (level_rows order) */
    int64_t *chunk_toff;   /* [nchunks+1] first entry of each chunk in the off-diagonal tile list */
    int64_t *chunk_slots;  /* [nchunks] tiles (all, in storage order) of each chunk */
    int64_t *d_slot_size;  /* [ntiles] per storage slot: the stored size of a dense tile (>= 0),
                              or -(capacity + 1) for a sparse off-diagonal one (factor.cu) */
    int32_t *d_tile_rr, *d_tile_s; /* off-diagonal tiles of each chunk: (row in chunk, slot) */
    int64_t budget;        /* in-flight tiles */
    double *d_inflight;    /* float in precision single (allocated at that size) */
    int64_t *d_need;
    dense_res *d_res;
    double *d_rownorm;     /* float in precision single (allocated at that size) */
    factor_state *d_state;
    cudaStream_t fstream[2]; /* the factorization's streams (non-blocking): 0 main, 1 the pulls */
    cudaEvent_t ev_fork, ev_join; /* per chunk: s1 after s0's earlier work; s0 after the pulls */
    int8_t *d_pair_hint;
    /* solve */
    int32_t nlevels;
    int32_t *level_ptr;    /* host copy */
    int32_t *d_q;
    double *d_qs;
    int32_t *d_qinv;       /* q's inverse: user row -> factored position (SQMR's fused scatter) */
    int32_t *d_perm;       /* analysed position -> user row (ildl_cuda_set_map) */
    double *d_scale;       /* per user row */
    int have_map;          /* d_perm and d_scale hold the analysis: factorizations build d_q, d_qs */
    int map_built;         /* the last factorization built d_q, d_qs, d_qinv: applications may gather */
    factor_totals *d_totals; /* statistics of the last factorization (backend.cu) */
    double *d_w, *d_r, *d_z; /* [n] work vectors */
    /* A for SpMV (user ordering) */
    int32_t n;
    int64_t *d_arow;
    int32_t *d_acol;
    double *d_aval;
    const ildl_csr *hostA;
    void *pinned[2];       /* host arrays page-locked by ildl_cuda_pin_host (A's values, T->a_val) */
    int factored;
    int aval_current;      /* d_aval holds the values of the last factorization (SQMR's products) */
    int single;            /* precision single: float factorization, only val32 (val NULL) */
    int schedule;          /* ILDL_SCHEDULE_SYNCFREE or ILDL_SCHEDULE_LEVELS */
    int sm_count;
    int nb;                /* block rows */
    int solve_warps_f, solve_warps_b; /* warps per block of the forward/backward solve kernels */
    int prof_solve;        /* ILDL_CUDA_PROFILE set: time the sweeps of uncaptured solves */
    cudaEvent_t ev[4];
#ifdef ILDL_SOLVE_TRACE
    unsigned long long *d_trace; /* experiments: solve.cu's per-ticket records, [2][nb][10] */
#endif
    int sf_blocks_f, sf_blocks_b; /* grids of the sync-free solve kernels: as many blocks as fit */
    int sf_vglobal;        /* the forward sync-free kernel reads V_ii from global memory (wide levels) */
    int sf_nostage;        /* the sync-free kernels without staging tiles (wider levels: SOLVE_*_NS) */
    int skip_empty;        /* the solves skip the tiles a factorization left empty (ILDL_SKIP_EMPTY=0: not) */
    int lanes_failed;      /* the lanes of those kernels did not fit in device memory: staged kernels */
    int staged_only;       /* ILDL_SOLVE_KERNELS_STAGED: never those kernels (nor their lanes) */
    int *d_done_f, *d_done_b, *d_epoch, *d_tickets; /* sync-free solve flags; d_tickets[2] = 0 */
    int sf_protocol;       /* solve.cu's c_sf_protocol */
    double *d_sweep;       /* [n] protocol 2: the forward sweep's result (filled unset first) */
    const int *d_skip;     /* what the solve kernels read to skip (solve.cu): d_tickets + 2, or
                              SQMR's halt flag while its iteration is captured */
    /* SQMR (sqmr.cu): device vectors, scalars, partial sums and the captured iteration */
    double *d_b, *d_x, *d_t, *d_qv, *d_d, *d_u, *d_xbest, *d_part; /* d_part: 2 x ILDL_DOT_BLOCKS */
    int *d_count;          /* [2] blocks arrived at the end of a fused SQMR kernel (last_block): [0] the
                              iteration's path, [1] k_step_x beside it */
    struct sqmr_scalars *d_S;
    cudaStream_t stream;
    cudaStream_t side;     /* SQMR's k_step_x beside the preconditioner, forked and joined by: */
    cudaEvent_t sq_fork, sq_join;
    int sqmr_serial;       /* ILDL_SQMR_SERIAL=1: k_step_x in line (experiments) */
    cudaGraphExec_t g_full, g_dir;
};

/* The factorization's kernels over all chunks (factor.cu), in double or, when c->single, in
 * float, then the inversion of the diagonal tiles for the solves (tiles.h); ILDL_SUCCESS or
 * the status of a failed CUDA call. */
int factor_run(ildl_cuda_ctx *c, const factor_params_d &prm, int leftover);
/* Shared-memory limits of the factorization kernels (once per context). */
cudaError_t factor_configure(void);

/* z = M^{-1} r for device vectors in the user's ordering, on stream s (capturable). */
int ildl_cuda_apply_device(ildl_cuda_ctx *c, const double *r, double *z, cudaStream_t s);
/* The same up to the scatter: c->d_w = (U^T D U)^{-1} (qs .* r[q]) in the factored order. */
int ildl_cuda_apply_to_w(ildl_cuda_ctx *c, const double *r, cudaStream_t s);

/* Allocate SQMR's vectors and capture its iteration graphs (idempotent). */
int ildl_cuda_sqmr_prepare(ildl_cuda_ctx *c);

/* Release what sqmr.cu allocated in c (safe when nothing was). */
void ildl_cuda_sqmr_free(ildl_cuda_ctx *c);

#endif
