/* example_descriptor.c -- a matrix as a solver user holds it: the lower triangle in 1-based
 * COO with duplicate entries (summed), described by an ildl_matrix; solved, and compared with
 * the same system given in ildl_setup's full-pattern CSR (the same bits), then again with
 * 64-bit indices. Also a test: it exits non-zero unless all three agree and converge. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"

enum { NH = 40, NB = 10, N = NH + NB, CAP = 4 * N + 2 * NB + 8 };

/* [[H, B^T], [B, -1e-8 I]], H = tridiag(-1, 4, -1), B(r, 4r..4r+3) = 1: the lower triangle as
 * 1-based triplets, H's diagonal given as two entries 2 + 2. Returns the entry count. */
static int lower_coo(int64_t *ri, int64_t *cj, double *v)
{
    int k = 0;
    for (int i = 1; i <= NH; i++) {
        ri[k] = i; cj[k] = i; v[k++] = 2.0;
        if (i > 1) { ri[k] = i; cj[k] = i - 1; v[k++] = -1.0; }
        ri[k] = i; cj[k] = i; v[k++] = 2.0; /* the duplicate */
    }
    for (int r = 0; r < NB; r++) {
        for (int c = 0; c < 4; c++) { ri[k] = NH + 1 + r; cj[k] = 4 * r + c + 1; v[k++] = 1.0; }
        ri[k] = NH + 1 + r; cj[k] = NH + 1 + r; v[k++] = -1e-8;
    }
    return k;
}

static int solve(ildl_handle *h, const char *what, const double *b, double *x)
{
    int st = ildl_factor(h, NULL);
    if (!st) st = ildl_solve(h, b, x);
    ildl_info info;
    ildl_get_info(h, &info);
    printf("%-34s %s, %d iterations, true relative residual %.2e\n", what, ildl_strerror(st), info.iterations,
           info.true_residual);
    return st;
}

int main(void)
{
    int64_t ri[CAP], cj[CAP];
    int32_t ri32[CAP], cj32[CAP];
    double v[CAP], b[N], x1[N], x2[N], x3[N];
    int nnz = lower_coo(ri, cj, v);
    for (int k = 0; k < nnz; k++) { ri32[k] = (int32_t)ri[k]; cj32[k] = (int32_t)cj[k]; }
    for (int i = 0; i < N; i++) b[i] = 1.0;
    ildl_options opt;
    ildl_options_default(&opt);
    ildl_handle *h = NULL;
    int fail = 0;

    /* 1. the lower triangle, 1-based COO, 32-bit indices, duplicates summed */
    ildl_matrix m;
    ildl_matrix_init(&m);
    m.n = N;
    m.nnz = nnz;
    m.format = ILDL_FORMAT_COO;
    m.base = 1;
    m.view = ILDL_VIEW_LOWER;
    m.duplicates = ILDL_DUPLICATES_SUM;
    m.index_type = ILDL_INDEX_32;
    m.rows = ri32;
    m.cols = cj32;
    m.values = v;
    int st = ildl_setup_matrix(&m, &opt, &h);
    if (st) { fprintf(stderr, "setup: %s (%s)\n", ildl_strerror(st), ildl_last_error(NULL)); return 1; }
    fail |= solve(h, "lower triangle, 1-based COO:", b, x1) != ILDL_SUCCESS;
    ildl_destroy(h);

    /* 2. the same matrix in ildl_setup's layout: full pattern, 0-based CSR, no duplicates */
    double dense[N][N];
    memset(dense, 0, sizeof dense);
    for (int k = 0; k < nnz; k++) {
        dense[ri[k] - 1][cj[k] - 1] += v[k];
        if (ri[k] != cj[k]) dense[cj[k] - 1][ri[k] - 1] += v[k];
    }
    int64_t rowptr[N + 1];
    int32_t col[2 * CAP];
    double val[2 * CAP];
    int64_t p = 0;
    for (int i = 0; i < N; i++) {
        rowptr[i] = p;
        for (int j = 0; j < N; j++)
            if (dense[i][j] != 0.0) { col[p] = j; val[p++] = dense[i][j]; }
    }
    rowptr[N] = p;
    st = ildl_setup(N, rowptr, col, val, &opt, &h);
    if (st) { fprintf(stderr, "setup: %s (%s)\n", ildl_strerror(st), ildl_last_error(NULL)); return 1; }
    fail |= solve(h, "full pattern, 0-based CSR:", b, x2) != ILDL_SUCCESS;
    ildl_destroy(h);

    /* 3. 64-bit indices */
    m.index_type = ILDL_INDEX_64;
    m.rows = ri;
    m.cols = cj;
    st = ildl_setup_matrix(&m, &opt, &h);
    if (st) { fprintf(stderr, "setup: %s (%s)\n", ildl_strerror(st), ildl_last_error(NULL)); return 1; }
    fail |= solve(h, "lower triangle, 64-bit indices:", b, x3) != ILDL_SUCCESS;
    ildl_destroy(h);

    int same = !memcmp(x1, x2, sizeof x1) && !memcmp(x1, x3, sizeof x1);
    printf("x: %s\n", same ? "the same bits in all three layouts" : "DIFFERS between layouts");
    return fail || !same;
}
