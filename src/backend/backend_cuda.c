/* backend_cuda.c -- the CUDA backend's table over src/cuda (cuda_backend.h): setup of the device
 * context, factorization, applies and SQMR on the GPU, with messages that name the CUDA call
 * that failed. In a build without CUDA the calls are those of src/cuda/stub_nocuda.c, which
 * find no device. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "core/util.h"
#include "cpu/block_jacobi.h"
#include "cuda/cuda_backend.h"

/* Columns of ildl_solve_multi solved at once, each by a solver of its own (clone.cu) on a host
 * thread of its own: the calling thread's on the handle's context, the others' on solvers made
 * by the first call that needs them and kept until the state goes. */
#define CUDA_MULTI_STREAMS 8

typedef struct cuda_state {
    const ildl_backend_env *env;
    ildl_cuda_ctx *c;
    ildl_cuda_ctx *solvers[CUDA_MULTI_STREAMS - 1];
    int nsolvers;
    /* options.method BLOCK_JACOBI: the blocks are taken here and inverted on the device */
    int bj_on;
    ildl_block_jacobi bj;
    double *qs;      /* [n] the map's scales (its rows: bj.perm, bj.iperm, uploaded once) */
    int order_sent;  /* bj.perm and bj.iperm are on the device */
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
    for (int k = 0; k < s->nsolvers; k++) ildl_cuda_destroy(s->solvers[k]);
    ildl_cuda_destroy(s->c);
    if (s->bj_on) ildl_block_jacobi_free(&s->bj);
    free(s->qs);
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
    /* block-Jacobi before SQMR's graphs are captured (set_schedule): they capture its apply */
    if (!st && o->method == ILDL_METHOD_BLOCK_JACOBI) {
        int32_t n = env->A->n;
        st = ildl_block_jacobi_create(&env->an->blk, env->an->scale, &s->bj);
        if (st) {
            ildl_msg(msg, msglen, st == ILDL_ERR_OUT_OF_MEMORY ? "out of memory (block-Jacobi's blocks)"
                                                               : "block-Jacobi: a block of more than 32 rows");
        } else {
            s->bj_on = 1;
            s->qs = malloc(sizeof(double) * (size_t)(n ? n : 1));
            if (!s->qs) {
                st = ILDL_ERR_OUT_OF_MEMORY;
                ildl_msg(msg, msglen, "out of memory");
            } else if ((st = ildl_cuda_bj_setup(s->c, s->bj.count, s->bj.size, s->bj.offset, s->bj.rowptr)) != 0) {
                cuda_msg(st, "CUDA setup (block-Jacobi's blocks)", msg, msglen);
            }
        }
    }
    if (!st && o->method == ILDL_METHOD_FIXED_POINT && (st = ildl_cuda_fp_setup(s->c, &env->an->tiles)) != 0)
        cuda_msg(st, "CUDA setup (the fixed-point sweeps' state)", msg, msglen);
    if (!st && o->precision == ILDL_PREC_MIXED && (st = ildl_cuda_set_mixed(s->c)) != 0)
        cuda_msg(st, "CUDA setup (single-precision factor storage)", msg, msglen);
    if (!st && (st = ildl_cuda_set_factor_schedule(s->c, o->factor_schedule)) != 0)
        cuda_msg(st, "CUDA setup (factorization schedule)", msg, msglen);
    if (!st && (st = ildl_cuda_set_schedule(s->c, o->solve_schedule)) != 0)
        cuda_msg(st, "CUDA setup (SQMR's graphs)", msg, msglen);
    if (!st && (st = ildl_cuda_set_map(s->c, env->an->blk.perm, env->an->scale)) != 0)
        cuda_msg(st, "CUDA setup (upload of the order and scaling)", msg, msglen);
    if (!st && env->an->pair_hint && (st = ildl_cuda_reserve_pair_hint(s->c)) != 0)
        cuda_msg(st, "CUDA setup (the 2x2 pivot hints' buffer)", msg, msglen);
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
    if (s->bj_on) { /* the blocks of the current values and scaling, inverted on the device */
        s->bj.perm = an->blk.perm;
        s->bj.scale = an->scale;
        double t0 = ildl_wtime();
        ildl_block_jacobi_extract(&s->bj, s->env->A);
        ildl_block_jacobi_row_scale(&s->bj, s->qs);
        double t1 = ildl_wtime();
        /* the order is the analysis' (fixed for this state): its rows go up with the first call */
        st = ildl_cuda_bj_factor(s->c, s->bj.blocks, s->order_sent ? NULL : s->bj.perm, s->qs,
                                 s->order_sent ? NULL : s->bj.iperm, p->pivot_tol, p->perturb, s->bj.perturbed);
        if (st) return cuda_msg(st, "CUDA block-Jacobi inversion", msg, msglen);
        s->order_sent = 1;
        ildl_block_jacobi_stats(&s->bj, fs);
        fs->t_upload = t1 - t0;
        fs->t_device = ildl_wtime() - t1;
        return ILDL_SUCCESS;
    }
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

/* Make up to want solvers (fewer where the device has no room); ILDL_SUCCESS or the error. */
static int ensure_solvers(cuda_state *s, int want, char *msg, size_t msglen)
{
    if (want > CUDA_MULTI_STREAMS - 1) want = CUDA_MULTI_STREAMS - 1;
    while (s->nsolvers < want) {
        ildl_cuda_ctx *w = NULL;
        int st = ildl_cuda_solver_create(s->c, &w);
        if (st == ILDL_ERR_OUT_OF_MEMORY) break; /* fewer at once */
        if (st) return cuda_msg(st, "CUDA solver for several right-hand sides", msg, msglen);
        s->solvers[s->nsolvers++] = w;
    }
    return ILDL_SUCCESS;
}

/* Device vectors: one apply per column on the caller's stream (the factor read once per column).
 * Host vectors: the columns spread over the handle's context and its solvers, each queued on a
 * stream of its own, up to CUDA_MULTI_STREAMS at once (the latency-bound sweeps overlap). */
static int cuda_apply_multi(void *state, int k, const double *R, int64_t ldr, double *Z, int64_t ldz, int where,
                            void *stream, char *msg, size_t msglen)
{
    cuda_state *s = state;
    int nw = 1;
    if (where == ILDL_MEMORY_HOST && k > 1) {
        int st = ensure_solvers(s, k - 1, msg, msglen);
        if (st) return st;
        nw = 1 + (k - 1 < s->nsolvers ? k - 1 : s->nsolvers);
    }
    if (nw == 1) {
        for (int j = 0; j < k; j++) {
            int st = cuda_apply(state, R + (int64_t)j * ldr, Z + (int64_t)j * ldz, where, stream, msg, msglen);
            if (st) return st;
        }
        return ILDL_SUCCESS;
    }
    int abs_d = s->env->opt->apply_mode == ILDL_APPLY_SPD;
    /* what the caller queued on its stream (NULL: the legacy stream, which waits for all
     * blocking streams) is done before other streams use the work space */
    int st = ildl_cuda_apply_wait(s->c, 0, stream);
    /* in waves of nw columns: every solver started (the copies in, the sweeps), then each one's
     * result copied out (a copy to pageable memory waits for its stream) */
    for (int j0 = 0; j0 < k && !st; j0 += nw) {
        int m = k - j0 < nw ? k - j0 : nw, started = 0;
        for (int w = 0; w < m && !st; w++, started++)
            st = ildl_cuda_apply_start(w == 0 ? s->c : s->solvers[w - 1], R + (int64_t)(j0 + w) * ldr, abs_d);
        for (int w = 0; w < started; w++) { /* every started stream drained, also after an error */
            int s2 = st ? ildl_cuda_apply_wait(w == 0 ? s->c : s->solvers[w - 1], 1, NULL)
                        : ildl_cuda_apply_finish(w == 0 ? s->c : s->solvers[w - 1], Z + (int64_t)(j0 + w) * ldz);
            if (!st) st = s2;
        }
    }
    return st ? cuda_msg(st, "CUDA apply", msg, msglen) : ILDL_SUCCESS;
}

static int cuda_sqmr(void *state, const double *b, double *x, const ildl_sqmr_params *prm, ildl_sqmr_result *res,
                     char *msg, size_t msglen)
{
    cuda_state *s = state;
    int st = ildl_cuda_sqmr(s->c, b, x, prm, res);
    if (st && st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN) cuda_msg(st, "CUDA solve", msg, msglen);
    return st;
}

/* ildl_solve_multi's columns on several solvers at once: the columns are taken in order by
 * whichever worker is free; every column's SQMR is the same computation on any solver, so the
 * results do not depend on who took what. progress_fn is passed on one call at a time, only for
 * an iteration number above all those passed on before (monotone). */
typedef struct multi_job {
    pthread_mutex_t lock;
    int next, k, err;
    const double *const *b;
    double *const *x;
    ildl_sqmr_params prm;
    ildl_sqmr_result *res;
    int *status;
    char *ran;
    void (*progress)(void *ctx, int iter, double est);
    void *progress_ctx;
    int last_iter;
} multi_job;

typedef struct multi_worker {
    multi_job *J;
    ildl_cuda_ctx *c;
} multi_worker;

static void multi_progress(void *ctx, int iter, double est)
{
    multi_job *J = ctx;
    pthread_mutex_lock(&J->lock);
    if (iter > J->last_iter) {
        J->last_iter = iter;
        J->progress(J->progress_ctx, iter, est);
    }
    pthread_mutex_unlock(&J->lock);
}

static void *multi_run(void *arg)
{
    multi_worker *W = arg;
    multi_job *J = W->J;
    for (;;) {
        pthread_mutex_lock(&J->lock);
        int j = J->err ? J->k : J->next++;
        pthread_mutex_unlock(&J->lock);
        if (j >= J->k) break;
        int st = ildl_cuda_sqmr(W->c, J->b[j], J->x[j], &J->prm, &J->res[j]);
        J->status[j] = st;
        J->ran[j] = 1;
        if (st && st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN) {
            pthread_mutex_lock(&J->lock);
            if (!J->err) J->err = st;
            pthread_mutex_unlock(&J->lock);
        }
    }
    return NULL;
}

static int cuda_sqmr_multi(void *state, int k, const double *const *b, double *const *x, const ildl_sqmr_params *prm,
                           ildl_sqmr_result *res, int *status, char *msg, size_t msglen)
{
    cuda_state *s = state;
    if (k == 1) {
        int st = cuda_sqmr(state, b[0], x[0], prm, &res[0], msg, msglen);
        status[0] = st;
        return st && st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN ? st : ILDL_SUCCESS;
    }
    int st = ildl_cuda_upload_values(s->c); /* the solvers read A's values: there before they start */
    if (st) return cuda_msg(st, "CUDA upload of A's values", msg, msglen);
    int want = (k < CUDA_MULTI_STREAMS ? k : CUDA_MULTI_STREAMS) - 1;
    st = ensure_solvers(s, want, msg, msglen);
    if (st) return st;
    int nw = 1 + (want < s->nsolvers ? want : s->nsolvers);
    multi_job J;
    char ran[ILDL_SQMR_MULTI_MAX] = {0};
    multi_worker W[CUDA_MULTI_STREAMS];
    pthread_t tid[CUDA_MULTI_STREAMS];
    int started[CUDA_MULTI_STREAMS] = {0};
    memset(&J, 0, sizeof J);
    if (pthread_mutex_init(&J.lock, NULL) != 0) nw = 1;
    J.k = k;
    J.b = b;
    J.x = x;
    J.prm = *prm;
    J.res = res;
    J.status = status;
    J.ran = ran;
    if (prm->progress) {
        J.progress = prm->progress;
        J.progress_ctx = prm->progress_ctx;
        J.prm.progress = multi_progress;
        J.prm.progress_ctx = &J;
    }
    if (nw == 1) { /* one after the other on the handle's context */
        for (int j = 0; j < k; j++) {
            int c = cuda_sqmr(state, b[j], x[j], prm, &res[j], msg, msglen);
            status[j] = c;
            if (c && c != ILDL_ERR_NOT_CONVERGED && c != ILDL_ERR_BREAKDOWN) {
                for (int i = j + 1; i < k; i++) status[i] = c;
                return c;
            }
        }
        return ILDL_SUCCESS;
    }
    for (int w = 0; w < nw; w++) {
        W[w].J = &J;
        W[w].c = w == 0 ? s->c : s->solvers[w - 1];
    }
    for (int w = 1; w < nw; w++) started[w] = pthread_create(&tid[w], NULL, multi_run, &W[w]) == 0;
    multi_run(&W[0]); /* the calling thread takes columns too */
    for (int w = 1; w < nw; w++)
        if (started[w]) pthread_join(tid[w], NULL);
    pthread_mutex_destroy(&J.lock);
    if (J.err) {
        for (int j = 0; j < k; j++)
            if (!ran[j]) status[j] = J.err;
        return cuda_msg(J.err, "CUDA solve", msg, msglen);
    }
    return ILDL_SUCCESS;
}

static int cuda_estimate(const ildl_backend_env *env, size_t *bytes, char *msg, size_t msglen)
{
    const ildl_options *o = env->opt;
    char m[512] = "";
    int st = ildl_cuda_estimate(&env->an->tiles, env->A, o->device_id, o->solve_kernels,
                                o->precision == ILDL_PREC_MIXED, env->an->pair_hint != NULL, bytes, m, sizeof m);
    if (st) ildl_msg(msg, msglen, "CUDA memory estimate failed: %s", m);
    if (!st && o->method == ILDL_METHOD_BLOCK_JACOBI) { /* ildl_cuda_bj_setup's allocations */
        const ildl_blocking *blk = &env->an->blk;
        int64_t entries = 0;
        for (int32_t b = 0; b < blk->nb; b++) {
            int64_t m = blk->bstart[b + 1] - blk->bstart[b];
            entries += m * m;
        }
        *bytes += ildl_cuda_bj_bytes(blk->nb, entries);
    }
    if (!st && o->method == ILDL_METHOD_FIXED_POINT) *bytes += ildl_cuda_fp_bytes(&env->an->tiles);
    return st;
}

/* the handle's context and its solvers (ildl_solve_multi's) */
static size_t cuda_device_bytes(const void *state)
{
    const cuda_state *s = state;
    size_t b = ildl_cuda_bytes(s->c);
    for (int k = 0; k < s->nsolvers; k++) b += ildl_cuda_bytes(s->solvers[k]);
    return b;
}

static const char *cuda_device_name(const void *state)
{
    return ildl_cuda_device_name(((const cuda_state *)state)->c);
}

const ildl_backend_ops ildl_backend_cuda = {
    ILDL_BACKEND_CUDA, cuda_create, cuda_factor, cuda_apply, cuda_apply_multi, cuda_sqmr, cuda_sqmr_multi, cuda_estimate, cuda_device_bytes, cuda_device_name,
    cuda_destroy,
};

void *ildl_backend_probe_start(const ildl_options *opt)
{
    return opt->backend == ILDL_BACKEND_CPU ? NULL : ildl_cuda_warmup_start(opt->device_id);
}

int ildl_backend_device_count(void) { return ildl_cuda_device_count(); }

int ildl_backend_probe_finish(const ildl_options *opt, void *probe)
{
    return opt->backend == ILDL_BACKEND_CPU ? 0 : ildl_cuda_warmup_finish(probe); /* NULL: counts at once */
}
