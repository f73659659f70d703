/* stub_nocuda.c -- the CUDA backend entry points of a build without CUDA: they report that no
 * device is available, so the API falls back to (or refuses) the CUDA backend cleanly; and the
 * tests' tuning hook (tuning.h), which has nothing to tune here. */
#include "cuda/cuda_backend.h"
#include "cuda/tuning.h"
#include "blockildl.h"
#include "core/util.h"

int ildl_cuda_device_count(void) { return 0; }
const char *ildl_cuda_last_message(void) { return ""; }
ildl_cuda_warmup *ildl_cuda_warmup_start(int device_id) { (void)device_id; return NULL; }
int ildl_cuda_warmup_finish(ildl_cuda_warmup *w) { (void)w; return 0; }

int ildl_cuda_create(const ildl_tiles *T, const ildl_csr *A, int device_id, int solve_kernels, int l2_persist,
                     ildl_cuda_ctx **out, char *msg, size_t msglen)
{
    (void)T; (void)A; (void)device_id; (void)solve_kernels; (void)l2_persist;
    if (out) *out = NULL;
    ildl_msg(msg, msglen, "this build of libblockildl has no CUDA backend");
    return ILDL_ERR_NO_DEVICE;
}
int ildl_cuda_estimate(const ildl_tiles *T, const ildl_csr *A, int device_id, int solve_kernels, int mixed,
                       int pair_hint, size_t *bytes, char *msg, size_t msglen)
{
    (void)T; (void)A; (void)device_id; (void)solve_kernels; (void)mixed; (void)pair_hint;
    *bytes = 0;
    ildl_msg(msg, msglen, "this build has no CUDA backend");
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_factor(ildl_cuda_ctx *c, ildl_tiles *T, const ildl_factor_params *p,
                     ildl_factor_stats *st, char *msg, size_t msglen)
{
    (void)c; (void)T; (void)p; (void)st;
    ildl_msg(msg, msglen, "no CUDA backend");
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_download_factor(ildl_cuda_ctx *c, ildl_tiles *T) { (void)c; (void)T; return ILDL_ERR_NO_DEVICE; }
int ildl_cuda_set_map(ildl_cuda_ctx *c, const int32_t *perm, const double *scale) { (void)c; (void)perm; (void)scale; return ILDL_ERR_NO_DEVICE; }
int ildl_cuda_pin_host(ildl_cuda_ctx *c, ildl_tiles *T) { (void)c; (void)T; return ILDL_ERR_NO_DEVICE; }
int ildl_cuda_solve_factored(ildl_cuda_ctx *c, double *x) { (void)c; (void)x; return ILDL_ERR_NO_DEVICE; }
int ildl_cuda_apply(ildl_cuda_ctx *c, const double *r, double *z, int where, void *stream, int abs_d)
{
    (void)c; (void)r; (void)z; (void)where; (void)stream; (void)abs_d;
    return ILDL_ERR_NO_DEVICE;
}
int ildl_cuda_sqmr(ildl_cuda_ctx *c, const double *b, double *x, const ildl_sqmr_params *prm,
                   ildl_sqmr_result *res)
{
    (void)c; (void)b; (void)x; (void)prm; (void)res;
    return ILDL_ERR_NO_DEVICE;
}
int ildl_cuda_nrm2_test(int device, int32_t n, const double *x, double *host_path, double *fallback)
{
    (void)device; (void)n; (void)x; (void)host_path; (void)fallback;
    return ILDL_ERR_NO_DEVICE;
}
size_t ildl_cuda_bytes(const ildl_cuda_ctx *c) { (void)c; return 0; }
const char *ildl_cuda_device_name(const ildl_cuda_ctx *c) { (void)c; return ""; }
void ildl_cuda_destroy(ildl_cuda_ctx *c) { (void)c; }
int ildl_cuda_round_single(ildl_cuda_ctx *c) { (void)c; return ILDL_ERR_NO_DEVICE; }
int ildl_cuda_set_schedule(ildl_cuda_ctx *c, int schedule) { (void)c; (void)schedule; return ILDL_ERR_NO_DEVICE; }
int ildl_cuda_set_factor_schedule(ildl_cuda_ctx *c, int schedule) { (void)c; (void)schedule; return ILDL_ERR_NO_DEVICE; }
int ildl_cuda_last_factor_schedule(const ildl_cuda_ctx *c) { (void)c; return ILDL_SCHEDULE_LEVELS; }
int ildl_cuda_set_solve_warps(ildl_cuda_ctx *c, int warps_forward, int warps_backward)
{
    (void)c; (void)warps_forward; (void)warps_backward;
    return ILDL_ERR_NO_DEVICE;
}
int ildl_cuda_set_mixed(ildl_cuda_ctx *c) { (void)c; return ILDL_ERR_NO_DEVICE; }

/* The tests' settings of the CUDA backend (tuning.h): kept, and without CUDA never used. */
static ildl_cuda_tuning g_tuning = ILDL_CUDA_TUNING_DEFAULT;
void ildl_cuda_tuning_get(ildl_cuda_tuning *t) { *t = g_tuning; }
void ildl_cuda_tuning_set(const ildl_cuda_tuning *t)
{
    static const ildl_cuda_tuning defaults = ILDL_CUDA_TUNING_DEFAULT;
    g_tuning = t ? *t : defaults;
}

int ildl_cuda_reserve_pair_hint(ildl_cuda_ctx *c)
{
    (void)c;
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_solver_create(ildl_cuda_ctx *c, ildl_cuda_ctx **out)
{
    (void)c;
    *out = NULL;
    return ILDL_ERR_NO_DEVICE;
}

void ildl_cuda_solver_destroy(ildl_cuda_ctx *w) { (void)w; }

int ildl_cuda_upload_values(ildl_cuda_ctx *c)
{
    (void)c;
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_apply_start(ildl_cuda_ctx *c, const double *r, int abs_d)
{
    (void)c; (void)r; (void)abs_d;
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_apply_finish(ildl_cuda_ctx *c, double *z)
{
    (void)c; (void)z;
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_apply_wait(ildl_cuda_ctx *c, int own, void *stream)
{
    (void)c; (void)own; (void)stream;
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_gje_invert_async(int64_t count, const int32_t *size, const int64_t *offset, const double *A,
                               double tol, double perturb, double *inv, int32_t *perturbed, void *stream)
{
    (void)count; (void)size; (void)offset; (void)A; (void)tol; (void)perturb; (void)inv; (void)perturbed;
    (void)stream;
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_gje_apply_async(int64_t count, const int32_t *size, const int64_t *offset, const int64_t *rowptr,
                              const double *inv, const double *x, double *z, void *stream)
{
    (void)count; (void)size; (void)offset; (void)rowptr; (void)inv; (void)x; (void)z; (void)stream;
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_gje_host(int device_id, int64_t count, const int32_t *size, const int64_t *offset,
                       const int64_t *rowptr, const double *A, double tol, double perturb, double *inv,
                       int32_t *perturbed, const double *x, double *z, char *msg, size_t msglen)
{
    (void)device_id; (void)count; (void)size; (void)offset; (void)rowptr; (void)A; (void)tol; (void)perturb;
    (void)inv; (void)perturbed; (void)x; (void)z;
    ildl_msg(msg, msglen, "block-Jacobi on the device: this build has no CUDA backend");
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_dense_factor_host(int device_id, int pivoting, int single, int64_t count, const int32_t *m,
                                const double *tiles, const int8_t *pair_hint, double pivot_tol, double perturb,
                                double *out, ildl_dense_result *res, char *msg, size_t msglen)
{
    (void)device_id; (void)pivoting; (void)single; (void)count; (void)m; (void)tiles; (void)pair_hint;
    (void)pivot_tol; (void)perturb; (void)out; (void)res;
    ildl_msg(msg, msglen, "dense tiles on the device: this build has no CUDA backend");
    return ILDL_ERR_NO_DEVICE;
}

size_t ildl_cuda_bj_bytes(int64_t count, int64_t entries)
{
    (void)count; (void)entries;
    return 0;
}

int ildl_cuda_bj_setup(ildl_cuda_ctx *c, int64_t count, const int32_t *size, const int64_t *offset,
                       const int64_t *rowptr)
{
    (void)c; (void)count; (void)size; (void)offset; (void)rowptr;
    return ILDL_ERR_NO_DEVICE;
}

int ildl_cuda_bj_factor(ildl_cuda_ctx *c, const double *blocks, const int32_t *q, const double *qs,
                        const int32_t *qinv, double tol, double perturb, int32_t *perturbed)
{
    (void)c; (void)blocks; (void)q; (void)qs; (void)qinv; (void)tol; (void)perturb; (void)perturbed;
    return ILDL_ERR_NO_DEVICE;
}

size_t ildl_cuda_fp_bytes(const ildl_tiles *T)
{
    (void)T;
    return 0;
}

int ildl_cuda_fp_setup(ildl_cuda_ctx *c, const ildl_tiles *T)
{
    (void)c; (void)T;
    return ILDL_ERR_NO_DEVICE;
}
