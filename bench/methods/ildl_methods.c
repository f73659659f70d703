/* ildl_methods.c -- ildl-methods: SQMR with block-Jacobi (the analysis' scaling, order and
 * blocks; their diagonal blocks inverted by Gauss-Jordan: src/cpu/block_jacobi.c) against SQMR
 * with the block-iLDL^T of the same analysis (rung 0: the default options, no ladder), on the
 * CPU, for each matrix given: b = A * ones, tol 1e-6, at most --max-iter iterations (1000).
 * One markdown row per matrix (docs/methods.md).
 *   ildl-methods [--max-iter N] MATRIX.mtx[.gz]... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api_internal.h"
#include "core/util.h"
#include "cpu/block_jacobi.h"
#include "krylov/sqmr.h"

static void matvec(void *ctx, const double *x, double *y) { ildl_csr_matvec(ctx, x, y); }
static int precond(void *ctx, const double *r, double *z)
{
    ildl_block_jacobi_apply(ctx, r, z);
    return ILDL_SUCCESS;
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int one(const char *path, int max_iter)
{
    ildl_matrix m;
    ildl_handle *h = NULL;
    ildl_block_jacobi bj;
    memset(&bj, 0, sizeof bj);
    double *b = NULL, *x = NULL, *ones = NULL;
    int rc = 1;
    if (ildl_matrix_read(path, &m) != ILDL_SUCCESS) {
        fprintf(stderr, "ildl-methods: %s: %s\n", path, ildl_last_error(NULL));
        return 1;
    }
    ildl_options o;
    ildl_options_default(&o);
    o.backend = ILDL_BACKEND_CPU;
    o.escalation = ILDL_ESCALATE_NONE;
    o.max_iter = max_iter;
    if (ildl_setup_matrix(&m, &o, &h) != ILDL_SUCCESS) {
        fprintf(stderr, "ildl-methods: %s: setup: %s\n", path, ildl_last_error(NULL));
        goto done;
    }
    const int32_t n = h->A.n;
    b = malloc(sizeof(double) * (size_t)n);
    x = calloc((size_t)n, sizeof(double));
    ones = malloc(sizeof(double) * (size_t)n);
    if (!b || !x || !ones) goto done;
    for (int32_t i = 0; i < n; i++) ones[i] = 1.0;
    ildl_csr_matvec(&h->A, ones, b);
    int st = ildl_factor(h, NULL);
    if (st == ILDL_SUCCESS) st = ildl_solve(h, b, x);
    if (st != ILDL_SUCCESS && st != ILDL_ERR_NOT_CONVERGED) fprintf(stderr, "ildl-methods: %s: solve: %s\n", path, ildl_last_error(h));
    ildl_info info;
    ildl_get_info(h, &info);
    /* block-Jacobi on the same analysis */
    double t0 = ildl_wtime();
    if (ildl_block_jacobi_create(&h->an.blk, h->an.scale, &bj) != ILDL_SUCCESS) goto done;
    int64_t bad = ildl_block_jacobi_factor(&bj, &h->A, o.pivot_tol, o.pivot_perturb);
    double t_bj = ildl_wtime() - t0;
    ildl_sqmr_params prm = {.tol = o.tol, .max_iter = max_iter, .check_every = 1};
    ildl_sqmr_result res;
    memset(x, 0, sizeof(double) * (size_t)n);
    t0 = ildl_wtime();
    ildl_sqmr(n, matvec, &h->A, precond, &bj, b, x, &prm, &res);
    double t_solve = ildl_wtime() - t0;
    printf("| %s | %d | %d | %d%s | %.3f | %.3f | %.3f | %d%s | %.3f | %.3f | %lld |\n", base(path), (int)n,
           (int)info.num_blocks, info.iterations, st == ILDL_SUCCESS ? "" : " (not converged)", info.setup_seconds,
           info.factor_seconds, info.solve_seconds, res.iterations, res.converged ? "" : " (not converged)", t_bj,
           t_solve, (long long)bad);
    fflush(stdout);
    rc = 0;
done:
    ildl_block_jacobi_free(&bj);
    ildl_destroy(h);
    ildl_matrix_free(&m);
    free(b);
    free(x);
    free(ones);
    return rc;
}

int main(int argc, char **argv)
{
    int max_iter = 1000, first = 1, rc = 0;
    if (argc > 2 && strcmp(argv[1], "--max-iter") == 0) max_iter = atoi(argv[2]), first = 3;
    if (first >= argc || max_iter < 1) {
        fprintf(stderr, "usage: ildl-methods [--max-iter N] MATRIX.mtx[.gz]...\n");
        return 2;
    }
    printf("| matrix | n | blocks | iLDLT its | setup s | factor s | solve s | block-Jacobi its | BJ setup s | BJ solve s | "
           "BJ blocks perturbed |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = first; i < argc; i++) rc |= one(argv[i], max_iter);
    return rc;
}
