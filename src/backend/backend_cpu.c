/* backend_cpu.c -- the CPU backend, the reference: the factorization and triangular solves of
 * src/cpu in the precision the options ask for, and SQMR (src/krylov) on host vectors. */
#include <stdlib.h>
#include <string.h>
#include "backend/backend.h"
#include "core/util.h"
#include "cpu/block_jacobi.h"
#include "cpu/fixed_point.h"

typedef struct cpu_state {
    const ildl_backend_env *env;
    int32_t *q;   /* [n] factored position -> original row */
    double *qs;   /* [n] scale of original row q[k] */
    double *work; /* [n] */
    double *work_multi; /* [n * ILDL_SOLVE_MULTI_MAX], made by the first apply_multi */
    int bj_on;          /* options.method BLOCK_JACOBI: bj is the preconditioner, not the tiles */
    ildl_block_jacobi bj;
} cpu_state;

static void cpu_destroy(void *state)
{
    cpu_state *s = state;
    if (!s) return;
    free(s->q);
    free(s->qs);
    free(s->work);
    free(s->work_multi);
    if (s->bj_on) ildl_block_jacobi_free(&s->bj);
    free(s);
}

static int cpu_create(const ildl_backend_env *env, void **state, char *msg, size_t msglen)
{
    int32_t n = env->A->n;
    cpu_state *s = calloc(1, sizeof *s);
    *state = NULL;
    if (s) {
        s->env = env;
        s->q = ildl_malloc(sizeof(int32_t) * (size_t)n);
        s->qs = ildl_malloc(sizeof(double) * (size_t)n);
        s->work = ildl_malloc(sizeof(double) * (size_t)n);
    }
    if (!s || !s->q || !s->qs || !s->work) {
        cpu_destroy(s);
        ildl_msg(msg, msglen, "out of memory");
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    if (env->opt->method == ILDL_METHOD_BLOCK_JACOBI) {
        int st = ildl_block_jacobi_create(&env->an->blk, env->an->scale, &s->bj);
        if (st) {
            cpu_destroy(s);
            ildl_msg(msg, msglen, st == ILDL_ERR_OUT_OF_MEMORY ? "out of memory (block-Jacobi's blocks)"
                                                                 : "block-Jacobi: a block of more than 32 rows");
            return st;
        }
        s->bj_on = 1;
    }
    *state = s;
    return ILDL_SUCCESS;
}

/* Composite map from factored position to original row: block b's factored row r is analysed
 * row bstart[b] + piv[bstart[b]+r], which is original row perm[that]. (The CUDA backend builds
 * it on the device: k_build_map.) */
static void build_factored_map(cpu_state *s)
{
    const ildl_analysis *an = s->env->an;
    const ildl_tiles *T = &an->tiles;
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t b = 0; b < T->nb; b++)
        for (int32_t k = T->bstart[b]; k < T->bstart[b + 1]; k++) {
            int32_t orig = an->blk.perm[T->bstart[b] + T->piv[k]];
            s->q[k] = orig;
            s->qs[k] = an->scale[orig];
        }
}

static int cpu_factor(void *state, const ildl_factor_params *p, int rescaled, ildl_factor_stats *fs, char *msg,
                      size_t msglen)
{
    cpu_state *s = state;
    ildl_tiles *T = &s->env->an->tiles;
    int precision = s->env->opt->precision;
    (void)rescaled; /* the map is built anew after every factorization */
    if (s->bj_on) { /* the analysis' order and scaling (new values may have rescaled) */
        s->bj.perm = s->env->an->blk.perm;
        s->bj.scale = s->env->an->scale;
        ildl_block_jacobi_factor(&s->bj, s->env->A, p->pivot_tol, p->perturb);
        ildl_block_jacobi_stats(&s->bj, fs);
        return ILDL_SUCCESS;
    }
    int st = s->env->opt->method == ILDL_METHOD_FIXED_POINT ? ildl_cpu_factor_fixed_point(T, p, fs)
             : precision == ILDL_PREC_SINGLE                  ? ildl_cpu_factor_s(T, p, fs)
                                                              : ildl_cpu_factor(T, p, fs);
    if (st) {
        ildl_msg(msg, msglen, "CPU factorization failed: %s", ildl_strerror(st));
        return st;
    }
    if (precision == ILDL_PREC_SINGLE) ildl_cpu_invert_diagonal_s(T);
    else ildl_cpu_invert_diagonal(T);
    if (precision == ILDL_PREC_MIXED) {
        /* single-precision factor, double-precision SQMR: round the stored factor */
        for (int64_t k = 0; k < T->total_cap; k++) T->val[k] = (double)(float)T->val[k];
        for (int32_t k = 0; k < T->n; k++) {
            T->d_diag[k] = (double)(float)T->d_diag[k];
            T->d_off[k] = (double)(float)T->d_off[k];
        }
    }
    build_factored_map(s);
    return ILDL_SUCCESS;
}

/* z = M^{-1} r on the user's system: gather, scale, block solves, scale, scatter; abs_d: with
 * |D| (the SPD preconditioner of apply_mode SPD). */
static int apply_mode(cpu_state *s, const double *r, double *z, int abs_d)
{
    const ildl_tiles *T = &s->env->an->tiles;
    int32_t n = s->env->A->n;
    double *w = s->work;
    if (s->bj_on) { /* abs_d: refused with this method at setup */
        ildl_block_jacobi_apply(&s->bj, r, z);
        return ILDL_SUCCESS;
    }
    for (int32_t k = 0; k < n; k++) w[k] = s->qs[k] * r[s->q[k]];
    if (s->env->opt->precision == ILDL_PREC_SINGLE) { /* the float factor */
        if (abs_d) ildl_cpu_solve_abs_s(T, w);
        else ildl_cpu_solve_s(T, w);
    } else {
        if (abs_d) ildl_cpu_solve_abs(T, w);
        else ildl_cpu_solve(T, w);
    }
    for (int32_t k = 0; k < n; k++) z[s->q[k]] = s->qs[k] * w[k];
    return ILDL_SUCCESS;
}

/* SQMR's preconditioner: always M = the block LDL^T. */
static int apply_host(void *ctx, const double *r, double *z) { return apply_mode(ctx, r, z, 0); }

/* z[j] = M^{-1} r[j] for m columns (1..ILDL_SOLVE_MULTI_MAX), the factor read once (abs_d as
 * apply_mode). */
static int apply_ptrs(cpu_state *s, int m, const double *const *r, double *const *z, int abs_d)
{
    const ildl_tiles *T = &s->env->an->tiles;
    int32_t n = s->env->A->n;
    if (s->bj_on) { /* each column alone: the same bits */
        for (int j = 0; j < m; j++) ildl_block_jacobi_apply(&s->bj, r[j], z[j]);
        return ILDL_SUCCESS;
    }
    if (!s->work_multi) {
        s->work_multi = ildl_malloc(sizeof(double) * (size_t)n * ILDL_SOLVE_MULTI_MAX);
        if (!s->work_multi) return ILDL_ERR_OUT_OF_MEMORY;
    }
    double *w = s->work_multi;
    for (int32_t i = 0; i < n; i++)
        for (int j = 0; j < m; j++) w[(int64_t)i * m + j] = s->qs[i] * r[j][s->q[i]];
    if (s->env->opt->precision == ILDL_PREC_SINGLE) ildl_cpu_solve_multi_s(T, w, m, abs_d);
    else ildl_cpu_solve_multi(T, w, m, abs_d);
    for (int32_t i = 0; i < n; i++)
        for (int j = 0; j < m; j++) z[j][s->q[i]] = s->qs[i] * w[(int64_t)i * m + j];
    return ILDL_SUCCESS;
}

/* Z = M^{-1} R for k columns, in chunks of ILDL_SOLVE_MULTI_MAX (the factor read once per chunk). */
static int cpu_apply_multi(void *state, int k, const double *R, int64_t ldr, double *Z, int64_t ldz, int where,
                           void *stream, char *msg, size_t msglen)
{
    (void)stream;
    cpu_state *s = state;
    if (where == ILDL_MEMORY_DEVICE) {
        ildl_msg(msg, msglen, "device pointers need the CUDA backend");
        return ILDL_ERR_NOT_SUPPORTED;
    }
    int abs_d = s->env->opt->apply_mode == ILDL_APPLY_SPD;
    const double *r[ILDL_SOLVE_MULTI_MAX];
    double *z[ILDL_SOLVE_MULTI_MAX];
    for (int j0 = 0; j0 < k; j0 += ILDL_SOLVE_MULTI_MAX) {
        int nc = k - j0 < ILDL_SOLVE_MULTI_MAX ? k - j0 : ILDL_SOLVE_MULTI_MAX;
        for (int j = 0; j < nc; j++) {
            r[j] = R + (int64_t)(j0 + j) * ldr;
            z[j] = Z + (int64_t)(j0 + j) * ldz;
        }
        if (apply_ptrs(s, nc, r, z, abs_d)) {
            ildl_msg(msg, msglen, "out of memory");
            return ILDL_ERR_OUT_OF_MEMORY;
        }
    }
    return ILDL_SUCCESS;
}

/* SQMR's preconditioner for several columns: always M = the block LDL^T. */
static int apply_host_multi(void *ctx, int m, const double *const *r, double *const *z)
{
    return apply_ptrs(ctx, m, r, z, 0);
}

static void matvec_host_multi(void *ctx, int m, const double *const *x, double *const *y)
{
    const cpu_state *s = ctx;
    ildl_csr_matvec_multi(s->env->A, m, x, y);
}

static void matvec_host(void *ctx, const double *x, double *y)
{
    const cpu_state *s = ctx;
    ildl_csr_matvec(s->env->A, x, y);
}

static int cpu_apply(void *state, const double *r, double *z, int where, void *stream, char *msg, size_t msglen)
{
    (void)stream;
    if (where == ILDL_MEMORY_DEVICE) {
        ildl_msg(msg, msglen, "device pointers need the CUDA backend");
        return ILDL_ERR_NOT_SUPPORTED;
    }
    cpu_state *s = state;
    return apply_mode(s, r, z, s->env->opt->apply_mode == ILDL_APPLY_SPD);
}

static int cpu_sqmr(void *state, const double *b, double *x, const ildl_sqmr_params *prm, ildl_sqmr_result *res,
                    char *msg, size_t msglen)
{
    cpu_state *s = state;
    int st = ildl_sqmr(s->env->A->n, matvec_host, s, apply_host, s, b, x, prm, res);
    if (st && st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN)
        ildl_msg(msg, msglen, "solve failed: %s", ildl_strerror(st));
    return st;
}

static int cpu_sqmr_multi(void *state, int k, const double *const *b, double *const *x, const ildl_sqmr_params *prm,
                          ildl_sqmr_result *res, int *status, char *msg, size_t msglen)
{
    cpu_state *s = state;
    int st = ildl_sqmr_multi(s->env->A->n, k, matvec_host_multi, s, apply_host_multi, s, b, x, prm, res, status);
    if (st) ildl_msg(msg, msglen, "solve failed: %s", ildl_strerror(st));
    return st;
}

static int cpu_estimate(const ildl_backend_env *env, size_t *bytes, char *msg, size_t msglen)
{
    (void)env; (void)msg; (void)msglen;
    *bytes = 0;
    return ILDL_SUCCESS;
}

static size_t cpu_device_bytes(const void *state)
{
    (void)state;
    return 0;
}

static const char *cpu_device_name(const void *state)
{
    (void)state;
    return "";
}

const ildl_backend_ops ildl_backend_cpu = {
    ILDL_BACKEND_CPU, cpu_create, cpu_factor, cpu_apply, cpu_apply_multi, cpu_sqmr, cpu_sqmr_multi, cpu_estimate, cpu_device_bytes, cpu_device_name, cpu_destroy,
};
