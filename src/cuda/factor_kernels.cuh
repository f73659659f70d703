/* factor_kernels.cuh -- the kernels' types and entry points that the factorization (factor*.cu),
 * the solves (solve*.cu) and the host side (context.cuh's files) share. */
#ifndef ILDL_CUDA_FACTOR_KERNELS_CUH
#define ILDL_CUDA_FACTOR_KERNELS_CUH
#include "cuda/dense_common.cuh"

struct factor_params_d {
    int pivoting;
    double drop_tol, pivot_tol, perturb;
    const int8_t *pair_hint; /* device, [n], or NULL */
    int32_t *block_perturbed; /* device, [nb]: pivots perturbed per block row (k_phase_a_diag) */
};

/* Device-resident running state of one factorization (phase B is its only writer). */
struct factor_state {
    int64_t so, used, leftover, credit, granted;
    int n2x2, nperturbed, err;
};

/* The factorization's kernels (factor_phase_a.cu, factor_phase_b.cu, factor_phase_c.cu) are
 * launched through factor_phases.cuh by the driver in factor.cu only (factor_run, context.cuh). */

/* Block triangular solves (solve*.cu). A block of `warps` warps (1, 2, 4 or 8, per direction) takes a
 * block row; its off-diagonal tiles are spread over the warps and their sums combined in tile
 * order, so the count changes the speed, not the result. Every solve kernel returns at once
 * when *skip is set: SQMR's captured iteration points it at its halt flag, so the iterations of
 * a batch that follow a halt cost nothing; other solves point it at a zero. */
/* x <- D^-1 x; when unset is not NULL also unset[0..n) <- "not written yet" (the sync-free
 * backward sweep's output, set here instead of by a launch of its own). */
__global__ void k_dsolve(dev_tiles T, double *x, double *unset, const int *skip, int abs_d);
/* SOLVE_FORWARD_SYNCFREE_VG: the sync-free forward kernel that reads V_ii from global memory
 * instead of staging it (less shared memory: more rows in flight, for wide levels) */
/* *_NS: the sync-free kernels without staging tiles (wide levels: more blocks per SM) */
enum { SOLVE_FORWARD_LEVEL, SOLVE_BACKWARD_LEVEL, SOLVE_FORWARD_SYNCFREE, SOLVE_BACKWARD_SYNCFREE,
       SOLVE_FORWARD_SYNCFREE_VG, SOLVE_FORWARD_SYNCFREE_NS, SOLVE_FORWARD_SYNCFREE_VG_NS,
       SOLVE_BACKWARD_SYNCFREE_NS };
/* Warps per solve block of the staged kernels by default (those of levels narrower than 256
 * block rows since the wide ones run without staging tiles): 4 forward and 2 backward, the
 * fastest on the shared suite (perf-notes §88; at n = 1M, before the kernels without staging
 * tiles, 2 and 2 were). */
#define ILDL_SOLVE_WARPS_FORWARD 4
#define ILDL_SOLVE_WARPS_BACKWARD 2
/* The kernels without staging tiles: one warp per block row (no barriers, as many rows in
 * flight as warps fit). */
#define ILDL_SOLVE_WARPS_NS 1
int solve_warps_valid(int warps);
/* Pack T.fwd_meta and T.bwd_meta from the factor just computed, on stream s (solve_prepare.cu). */
void solve_meta_launch(const dev_tiles &T, cudaStream_t s);
/* The lanes of the solves without staging tiles (dev_tiles.lane_*), from the factor just
 * computed, on stream s; their scan's scratch bytes for n tiles (solve_prepare.cu). */
cudaError_t solve_lanes_launch(const dev_tiles &T, cudaStream_t s);
size_t solve_lanes_tmp_bytes(int64_t n);
#ifdef ILDL_SOLVE_TRACE
cudaError_t solve_set_trace(unsigned long long *buf);
#endif
/* Raise the solve kernels' shared-memory limits for warps_f (forward) and warps_b (backward)
 * warps per block, staging float tiles when float_tiles (the factor is stored in float: T.val32)
 * else double; how many blocks of the sync-free kernels (vg: the forward one reading V_ii from
 * global memory; ns: those without staging tiles) fit on one SM. */
cudaError_t solve_configure(int warps_f, int warps_b, bool float_tiles, bool vg, bool ns, int *fwd_per_sm,
                            int *bwd_per_sm);
/* Launch solve kernel `kind` (SOLVE_*) of `warps` warps on `grid` blocks (level kinds: one
 * block per entry of rows, in place on x; sync-free kinds: rows unused, right-hand side xin,
 * result x, a vector other than xin set to "not written yet" before). Check with
 * cudaGetLastError. */
void solve_launch(int warps, int kind, unsigned grid, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                  const double *xin, double *x, int *ticket, const int *epoch, const int *skip);
/* Before a sync-free forward sweep: v[0..n) <- the "not written yet" value, and (one thread) a
 * new epoch and both tickets back to zero; with r not NULL also the gather w[k] = qs[k] r[q[k]]
 * (k_gather's). */
__global__ void k_sf_unset(double *v, int32_t n, int *epoch, int *tickets, const int *skip, const int32_t *q,
                           const double *qs, const double *r, double *w);

#endif
