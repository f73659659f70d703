/* cuda_backend.h -- C entry points of the CUDA backend (implemented in the .cu files of
 * src/cuda; a build without CUDA links stub_nocuda.c, whose functions report no device). */
#ifndef ILDL_CUDA_BACKEND_H
#define ILDL_CUDA_BACKEND_H
#include <stddef.h>
#include <stdint.h>
#include "analyse/tiles.h"
#include "core/csr.h"
#include "cpu/factor.h"
#include "krylov/sqmr.h"

typedef struct ildl_cuda_ctx ildl_cuda_ctx;

/* What the calling thread's last failed CUDA call was ("cudaMalloc(...) failed: out of memory
 * (file:line)"), or "" (without CUDA: always ""). */
const char *ildl_cuda_last_message(void);

/* Number of usable CUDA devices (0 without CUDA, driver or GPU). Never fails. */
int ildl_cuda_device_count(void);

/* CUDA's first calls in a process (driver start, the device's primary context: 0.1-0.3 s) on a
 * helper thread, so that they overlap the host's analysis: start, then finish before the first
 * other CUDA call. finish joins the thread, frees w and returns ildl_cuda_device_count();
 * finish(NULL) just returns the count. start returns NULL where no thread could be made,
 * where an earlier warm-up of this process already started device_id, or without CUDA;
 * nothing else can fail. */
typedef struct ildl_cuda_warmup ildl_cuda_warmup;
ildl_cuda_warmup *ildl_cuda_warmup_start(int device_id);
int ildl_cuda_warmup_finish(ildl_cuda_warmup *w);

/* Select device_id, upload the tile store pattern and A (for SpMV), allocate all device
 * memory a factorization and a solve need: a single-precision context when T holds val32
 * (ildl_tiles_set_precision; then the double factor is never allocated). Returns
 * ILDL_SUCCESS, ILDL_ERR_NO_DEVICE, ILDL_ERR_OUT_OF_MEMORY (device memory) or
 * ILDL_ERR_DEVICE; msg says what failed. solve_kernels: ildl_solve_kernels (STAGED: the
 * lanes of the kernels without staging tiles are never allocated); l2_persist:
 * ildl_l2_persist (OFF: no L2 window, the device's persisting-L2 size left alone). */
int ildl_cuda_create(const ildl_tiles *T, const ildl_csr *A, int device_id, int solve_kernels, int l2_persist,
                     ildl_cuda_ctx **out, char *msg, size_t msglen);

/* The device bytes the backend's state for T and A will hold once factored (ildl_cuda_create's
 * allocations, counted by running its plan without allocating; SQMR's vectors; mixed: the float
 * copy of U; pair_hint: the first factorization's hints), into *bytes; nothing is allocated on
 * the device. The statuses of ildl_cuda_create. */
int ildl_cuda_estimate(const ildl_tiles *T, const ildl_csr *A, int device_id, int solve_kernels, int mixed,
                       int pair_hint, size_t *bytes, char *msg, size_t msglen);

/* Factor on the device from T->a_val (host, loaded), invert the diagonal tiles for the solves
 * (tiles.h) and, once ildl_cuda_set_map was called, build the map from factored positions to
 * the user's rows. It first waits for all work queued on the device (a pending ildl_apply on
 * any stream reads the factor it replaces), then runs on streams of its own and returns when
 * done. The statistics (inertia, nnz, 2x2 count) are computed on the device; the host T's
 * factor arrays are left as they were (ildl_cuda_download_factor).
 * Returns ILDL_SUCCESS, ILDL_ERR_DEVICE, ILDL_ERR_OUT_OF_MEMORY or ILDL_ERR_INTERNAL. */
int ildl_cuda_factor(ildl_cuda_ctx *c, ildl_tiles *T, const ildl_factor_params *p,
                     ildl_factor_stats *st, char *msg, size_t msglen);

/* Allocate the buffer of the factorizations' static 2x2 pivot hints now (else the first
 * factorization with hints does): the context's device memory is then complete after setup. */
int ildl_cuda_reserve_pair_hint(ildl_cuda_ctx *c);

/* Mixed precision: keep a single-precision copy of U that the solves read (call once after
 * create, before the first solve). ILDL_ERR_INVALID_OPTION on a single-precision context. */
int ildl_cuda_set_mixed(ildl_cuda_ctx *c);

/* After a factorization: fill the single-precision copy of U and round D to single. */
int ildl_cuda_round_single(ildl_cuda_ctx *c);

/* Copy the factor into the host T too (for comparisons): val, or val32 in precision single
 * (ILDL_ERR_SIZE_MISMATCH when T holds the other precision), idx, off, nnz, piv, piv_type,
 * d_diag, d_off. The diagonal tiles come inverted, as the device factorization leaves them
 * (T->diag_inverted = 1). */
int ildl_cuda_download_factor(ildl_cuda_ctx *c, ildl_tiles *T);

/* Install the analysis' row order and scaling (perm[n]: analysed position -> user row,
 * scale[n] per user row) before a factorization, which turns them into the map from factored
 * positions (after pivoting) to the user's rows that the solves use. */
int ildl_cuda_set_map(ildl_cuda_ctx *c, const int32_t *perm, const double *scale);

/* Page-lock the host arrays every factorization copies to the device: T->a_val and the
 * values of the A given to ildl_cuda_create (both must outlive the context, which unlocks
 * them). Their copies then run at full speed and asynchronously: A's values for SQMR go
 * during the factorization instead of at the first solve. Optional: where the memory cannot
 * be locked (or where the tests' tuning.h says not to) nothing changes. Always ILDL_SUCCESS. */
int ildl_cuda_pin_host(ildl_cuda_ctx *c, ildl_tiles *T);

/* x <- (U^T D U)^{-1} x for a host vector in factored order (test hook). */
int ildl_cuda_solve_factored(ildl_cuda_ctx *c, double *x);

/* z = M^{-1} r in the user's ordering; r, z host or device pointers (where), stream; abs_d: M =
 * L|D|L^T (apply_mode SPD), else the block LDL^T. */
int ildl_cuda_apply(ildl_cuda_ctx *c, const double *r, double *z, int where, void *stream, int abs_d);

/* SQMR entirely on the device (vectors and scalars stay there; b and x are host arrays).
 * Same contract and stopping rule as ildl_sqmr. */
int ildl_cuda_sqmr(ildl_cuda_ctx *c, const double *b, double *x, const ildl_sqmr_params *prm,
                   ildl_sqmr_result *res);

/* Tests: ||x||_2 of the host vector x[n] on the device `device`, by the two ways the CUDA
 * SQMR computes 2-norms: *host_path as its host-driven norms do (the fixed-order sum of
 * squares, scaled when that over- or underflows: ildl_nrm2_fixed's value), *fallback always by
 * the one-block scaled sum that the step kernel falls back on. ILDL_ERR_NO_DEVICE without a
 * GPU, ILDL_ERR_DEVICE or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_cuda_nrm2_test(int device, int32_t n, const double *x, double *host_path, double *fallback);

/* Choose the schedule of the factorizations from now on (ILDL_SCHEDULE_*: sync-free where every
 * tile is dense and tau = 0, factor_syncfree.cu; the levels elsewhere); ILDL_ERR_INVALID_OPTION
 * for another value. The schedule the last factorization ran (ILDL_SCHEDULE_*). */
int ildl_cuda_set_factor_schedule(ildl_cuda_ctx *c, int schedule);
int ildl_cuda_last_factor_schedule(const ildl_cuda_ctx *c);
/* Choose the schedule of the block triangular solves (ILDL_SCHEDULE_*). */
int ildl_cuda_set_schedule(ildl_cuda_ctx *c, int schedule);
/* Warps per block of the forward and backward triangular-solve kernels (1, 2, 4 or 8 each): speed
 * only, the results are bit for bit the same. Returns ILDL_ERR_INVALID_OPTION otherwise. */
int ildl_cuda_set_solve_warps(ildl_cuda_ctx *c, int warps_forward, int warps_backward);

/* A solver of c (ildl_solve_multi's columns on streams of their own): a context that reads c's
 * tile store, factor, map and A and owns only a solve's work space (the preconditioner's and
 * SQMR's vectors, the sync-free sweeps' tickets, epoch, split-row scratch and counters, its
 * streams and captured graphs: about 11 vectors of n doubles). ildl_cuda_sqmr on it gives the
 * bits ildl_cuda_sqmr on c gives; solvers of one context may run at once on different host
 * threads, beside nothing else of c (no factorization: free them, or let them be, across one -
 * they stay valid, as they hold no copy of the factor). c's A values must be on the device
 * (ildl_cuda_upload_values). ILDL_SUCCESS, ILDL_ERR_CALL_ORDER (c not factored),
 * ILDL_ERR_OUT_OF_MEMORY, ILDL_ERR_DEVICE. ildl_cuda_destroy frees a solver's own memory. */
int ildl_cuda_solver_create(ildl_cuda_ctx *c, ildl_cuda_ctx **out);
void ildl_cuda_solver_destroy(ildl_cuda_ctx *w);
/* A's values of the last factorization onto the device now (else the next solve does it). */
int ildl_cuda_upload_values(ildl_cuda_ctx *c);

/* ildl_apply_multi's columns on several solvers at once, in two halves: start queues the copy of
 * the host vector r and z = M^{-1} r (abs_d: M = L|D|L^T) on the context's own stream (a
 * solver's, or the handle's SQMR stream) and returns; finish copies z to the host vector z and
 * waits for the stream. The stream must be idle at start (r is pageable memory). */
int ildl_cuda_apply_start(ildl_cuda_ctx *c, const double *r, int abs_d);
int ildl_cuda_apply_finish(ildl_cuda_ctx *c, double *z);
/* Wait for the work queued on the context's own stream (own), or else on stream (a cudaStream_t;
 * NULL: the legacy default stream). */
int ildl_cuda_apply_wait(ildl_cuda_ctx *c, int own, void *stream);

/* Device bytes held by the context. */
size_t ildl_cuda_bytes(const ildl_cuda_ctx *c);

/* The device's name ("" without one). */
const char *ildl_cuda_device_name(const ildl_cuda_ctx *c);

void ildl_cuda_destroy(ildl_cuda_ctx *c);

/* Block-Jacobi's batch (src/cpu/gje.h: layouts, contracts, the order of operations) on the
 * device, the same bits as ildl_gje_invert and ildl_gje_apply. The _async functions take device
 * arrays and queue one kernel on stream (a cudaStream_t, NULL: the default stream; x may equal
 * z); ILDL_ERR_DEVICE if the launch failed. ildl_cuda_gje_host copies a host batch to device
 * device_id, inverts it, applies the inverses to x into z when both are given, copies inv (and
 * perturbed, where not NULL) back and frees what it allocated: the statuses of a CUDA call,
 * ILDL_ERR_NO_DEVICE without one, with msg set. */
int ildl_cuda_gje_invert_async(int64_t count, const int32_t *size, const int64_t *offset, const double *A,
                               double tol, double perturb, double *inv, int32_t *perturbed, void *stream);
int ildl_cuda_gje_apply_async(int64_t count, const int32_t *size, const int64_t *offset, const int64_t *rowptr,
                              const double *inv, const double *x, double *z, void *stream);
int ildl_cuda_gje_host(int device_id, int64_t count, const int32_t *size, const int64_t *offset,
                       const int64_t *rowptr, const double *A, double tol, double perturb, double *inv,
                       int32_t *perturbed, const double *x, double *z, char *msg, size_t msglen);

/* The dense step of the diagonal kernel (dense_factor.cuh) over a host batch of count tiles, for
 * the tests (dense_batch.cu): tile b is tiles[b * 1024 ..] (ld 32, zeros outside its m[b] x m[b]
 * part, 0 <= m[b] <= 32, else ILDL_ERR_INVALID_OPTION), factored alone with `pivoting` (ildl_pivoting) in double, or in float when single (the
 * values, which the caller makes representable, rounded once); the tiles into out (ld 32) and
 * the pivot records into res[count], as ildl_dense_factor (or ildl_dense_factor_s) leaves
 * them. pair_hint: NULL, or [count * 32], tile b's hints at b * 32. The statuses of a CUDA call,
 * ILDL_ERR_NO_DEVICE without one, with msg set. */
int ildl_cuda_dense_factor_host(int device_id, int pivoting, int single, int64_t count, const int32_t *m,
                                const double *tiles, const int8_t *pair_hint, double pivot_tol, double perturb,
                                double *out, ildl_dense_result *res, char *msg, size_t msglen);

/* options.method BLOCK_JACOBI on a context made by ildl_cuda_create (gje.cu): bj_setup uploads
 * the batch's layout (cpu/block_jacobi.h) and allocates the inverses' array (counted in
 * the context's bytes; ildl_cuda_bj_bytes says how many, for estimates); from then on the
 * context's applications and SQMR use block-Jacobi. bj_factor uploads the blocks (host, the
 * layout's order) into the inverses' array, inverts them there (perturbed[count] gets the counts back, host) and
 * installs the map q, qs, qinv (host, [n]: cpu/block_jacobi.h; q and qinv NULL: those of the
 * previous call kept). The statuses of a CUDA call. */
size_t ildl_cuda_bj_bytes(int64_t count, int64_t entries);
int ildl_cuda_bj_setup(ildl_cuda_ctx *c, int64_t count, const int32_t *size, const int64_t *offset,
                       const int64_t *rowptr);
int ildl_cuda_bj_factor(ildl_cuda_ctx *c, const double *blocks, const int32_t *q, const double *qs,
                        const int32_t *qinv, double tol, double perturb, int32_t *perturbed);

/* options.method FIXED_POINT on a context made by ildl_cuda_create (fixed_point.cu): fp_setup
 * allocates the sweeps' state for T's pattern (counted in the context's bytes; ildl_cuda_fp_bytes
 * says how many, for estimates); from then on ildl_cuda_factor runs p->fp_sweeps sweeps
 * (cpu/fixed_point.h, the same bits) and stores their factor, st->fp_residual their residual. */
size_t ildl_cuda_fp_bytes(const ildl_tiles *T);
int ildl_cuda_fp_setup(ildl_cuda_ctx *c, const ildl_tiles *T);

#endif
