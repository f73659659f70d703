/* backend_cuda.c -- the CUDA backend's table over src/cuda (cuda_backend.h): setup of the device
 * context, factorization, applies and SQMR on the GPU, with messages that name the CUDA call
 * that failed. In a build without CUDA the calls are those of src/cuda/stub_nocuda.c, which
 * find no device. */
#include <stdlib.h>
#include "backend/backend.h"
#include "core/util.h"
#include "cuda/cuda_backend.h"

typedef struct cuda_state {
    const ildl_backend_env *env;
    ildl_cuda_ctx *c;
} cuda_state;

/* "<what> failed: <status>[: <the CUDA call that failed>]" into msg; returns st. */
static int cuda_msg(int st, const char *what, char *msg, size_t msglen)
{
    const char *m = ildl_cuda_last_message();
    ildl_msg(msg, msglen, "%s failed: %s%s%s", what, ildl_strerror(st), m[0] ? ": " : "", m);
    return st;
}

static void cuda_destroy(void *state)
{
    cuda_state *s = state;
    if (!s) return;
    ildl_cuda_destroy(s->c);
    free(s);
}

static int cuda_create(const ildl_backend_env *env, void **state, char *msg, size_t msglen)
{
    const ildl_options *o = env->opt;
    cuda_state *s = calloc(1, sizeof *s);
    int st;
    *state = NULL;
    if (!s) {
        ildl_msg(msg, msglen, "out of memory");
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    s->env = env;
    st = ildl_cuda_create(&env->an->tiles, env->A, o->device_id, o->solve_kernels, o->l2_persist, &s->c, msg, msglen);
    if (!st && o->precision == ILDL_PREC_MIXED && (st = ildl_cuda_set_mixed(s->c)) != 0)
        cuda_msg(st, "CUDA setup (single-precision factor storage)", msg, msglen);
    if (!st && (st = ildl_cuda_set_schedule(s->c, o->solve_schedule)) != 0)
        cuda_msg(st, "CUDA setup (SQMR's graphs)", msg, msglen);
    if (!st && (st = ildl_cuda_set_map(s->c, env->an->blk.perm, env->an->scale)) != 0)
        cuda_msg(st, "CUDA setup (upload of the order and scaling)", msg, msglen);
    if (st) {
        cuda_destroy(s);
        return st;
    }
    ildl_cuda_pin_host(s->c, &env->an->tiles); /* optional: faster copies */
    *state = s;
    return ILDL_SUCCESS;
}

static int cuda_factor(void *state, const ildl_factor_params *p, int rescaled, ildl_factor_stats *fs, char *msg,
                       size_t msglen)
{
    cuda_state *s = state;
    ildl_analysis *an = s->env->an;
    int st;
    /* the device builds the map from factored positions to the user's rows itself, from the
     * order and scaling uploaded at setup; new values may have changed the scaling */
    if (rescaled && (st = ildl_cuda_set_map(s->c, an->blk.perm, an->scale)) != 0)
        return cuda_msg(st, "CUDA upload of the order and scaling", msg, msglen);
    char m[512];
    st = ildl_cuda_factor(s->c, &an->tiles, p, fs, m, sizeof m);
    if (st) {
        ildl_msg(msg, msglen, "CUDA factorization failed: %s", m);
        return st;
    }
    if (s->env->opt->precision == ILDL_PREC_MIXED && (st = ildl_cuda_round_single(s->c)) != 0)
        return cuda_msg(st, "CUDA rounding of the factor", msg, msglen);
    return ILDL_SUCCESS;
}

static int cuda_apply(void *state, const double *r, double *z, int where, void *stream, char *msg, size_t msglen)
{
    cuda_state *s = state;
    int st = ildl_cuda_apply(s->c, r, z, where, stream, s->env->opt->apply_mode == ILDL_APPLY_SPD);
    return st ? cuda_msg(st, "CUDA apply", msg, msglen) : ILDL_SUCCESS;
}

/* One apply per column for now: the kernels read the factor once per column. */
static int cuda_apply_multi(void *state, int k, const double *R, int64_t ldr, double *Z, int64_t ldz, int where,
                            void *stream, char *msg, size_t msglen)
{
    for (int j = 0; j < k; j++) {
        int st = cuda_apply(state, R + (int64_t)j * ldr, Z + (int64_t)j * ldz, where, stream, msg, msglen);
        if (st) return st;
    }
    return ILDL_SUCCESS;
}

static int cuda_sqmr(void *state, const double *b, double *x, const ildl_sqmr_params *prm, ildl_sqmr_result *res,
                     char *msg, size_t msglen)
{
    cuda_state *s = state;
    int st = ildl_cuda_sqmr(s->c, b, x, prm, res);
    if (st && st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN) cuda_msg(st, "CUDA solve", msg, msglen);
    return st;
}

/* One device SQMR per column for now (each column the bits of cuda_sqmr on it). */
static int cuda_sqmr_multi(void *state, int k, const double *const *b, double *const *x, const ildl_sqmr_params *prm,
                           ildl_sqmr_result *res, int *status, char *msg, size_t msglen)
{
    for (int j = 0; j < k; j++) {
        int st = cuda_sqmr(state, b[j], x[j], prm, &res[j], msg, msglen);
        status[j] = st;
        if (st && st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN) {
            for (int i = j + 1; i < k; i++) status[i] = st;
            return st;
        }
    }
    return ILDL_SUCCESS;
}

static size_t cuda_device_bytes(const void *state) { return ildl_cuda_bytes(((const cuda_state *)state)->c); }

static const char *cuda_device_name(const void *state)
{
    return ildl_cuda_device_name(((const cuda_state *)state)->c);
}

const ildl_backend_ops ildl_backend_cuda = {
    ILDL_BACKEND_CUDA, cuda_create, cuda_factor, cuda_apply, cuda_apply_multi, cuda_sqmr, cuda_sqmr_multi, cuda_device_bytes, cuda_device_name,
    cuda_destroy,
};

void *ildl_backend_probe_start(const ildl_options *opt)
{
    return opt->backend == ILDL_BACKEND_CPU ? NULL : ildl_cuda_warmup_start(opt->device_id);
}

int ildl_backend_probe_finish(const ildl_options *opt, void *probe)
{
    return opt->backend == ILDL_BACKEND_CPU ? 0 : ildl_cuda_warmup_finish(probe); /* NULL: counts at once */
}
