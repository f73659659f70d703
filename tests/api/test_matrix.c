/* test_matrix.c -- the matrix descriptor: every layout (CSR/COO, 32/64-bit, base 0/1,
 * FULL/LOWER/UPPER, duplicates summed) gives the full-pattern run's bits; refactorization in the
 * descriptor's entry order and on a sub-pattern (explicit zeros dropped) likewise; bad
 * descriptors are refused with a status and a message naming the entry, caller data untouched. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "io/mmio.h"
#include "support/testutil.h"

/* Entries of a layout under construction: (i, j, v) 0-based, in the order given. */
typedef struct {
    int64_t n, ne;
    int64_t *i, *j;
    double *v;
} triples;

static void triples_free(triples *t) { free(t->i); free(t->j); free(t->v); }

/* The entries of A in the view (FULL: all; LOWER i >= j; UPPER i <= j); every third kept
 * entry split into halves (exact) when split; shuffled when seed != 0. */
static void view_of(const ildl_csr *A, int view, int split, uint64_t seed, triples *t)
{
    int64_t nnz = A->rowptr[A->n], cap = 2 * nnz;
    t->n = A->n;
    t->i = malloc(sizeof(int64_t) * cap);
    t->j = malloc(sizeof(int64_t) * cap);
    t->v = malloc(sizeof(double) * cap);
    t->ne = 0;
    int64_t kept = 0;
    for (int32_t i = 0; i < A->n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = A->col[p];
            if ((view == ILDL_VIEW_LOWER && i < j) || (view == ILDL_VIEW_UPPER && i > j)) continue;
            int halves = split && kept++ % 3 == 0;
            for (int h = 0; h <= halves; h++) {
                t->i[t->ne] = i;
                t->j[t->ne] = j;
                t->v[t->ne++] = halves ? 0.5 * A->val[p] : A->val[p];
            }
        }
    for (int64_t k = t->ne - 1; seed && k > 0; k--) {
        int64_t r = (int64_t)(ildl_test_rand(&seed) * (double)(k + 1));
        int64_t ti = t->i[k], tj = t->j[k];
        double tv = t->v[k];
        t->i[k] = t->i[r]; t->j[k] = t->j[r]; t->v[k] = t->v[r];
        t->i[r] = ti; t->j[r] = tj; t->v[r] = tv;
    }
}

/* Storage for a descriptor of t: index arrays in the widths asked for, base added; CSR
 * requires t sorted by row (shuffle 0). */
typedef struct {
    void *rows, *cols;
} arrays;

static void describe(const triples *t, int format, int base, int view, int dup, int otype, int itype,
                     ildl_matrix *m, arrays *a)
{
    ildl_matrix_init(m);
    m->n = t->n;
    m->nnz = t->ne;
    m->format = format;
    m->base = base;
    m->view = view;
    m->duplicates = dup;
    m->offset_type = otype;
    m->index_type = itype;
    size_t iw = itype == ILDL_INDEX_64 ? 8 : 4, ow = otype == ILDL_INDEX_64 ? 8 : 4;
    a->cols = malloc(iw * (size_t)(t->ne + 1));
    for (int64_t k = 0; k < t->ne; k++) {
        if (iw == 8) ((int64_t *)a->cols)[k] = t->j[k] + base;
        else ((int32_t *)a->cols)[k] = (int32_t)(t->j[k] + base);
    }
    if (format == ILDL_FORMAT_COO) {
        a->rows = malloc(iw * (size_t)(t->ne + 1));
        for (int64_t k = 0; k < t->ne; k++) {
            if (iw == 8) ((int64_t *)a->rows)[k] = t->i[k] + base;
            else ((int32_t *)a->rows)[k] = (int32_t)(t->i[k] + base);
        }
    } else {
        a->rows = calloc((size_t)t->n + 1, ow);
        int64_t *cnt = calloc((size_t)t->n + 1, sizeof(int64_t));
        for (int64_t k = 0; k < t->ne; k++) {
            assert_true(k == 0 || t->i[k] >= t->i[k - 1]);
            cnt[t->i[k] + 1]++;
        }
        for (int64_t i = 0; i <= t->n; i++) {
            if (i) cnt[i] += cnt[i - 1];
            if (ow == 8) ((int64_t *)a->rows)[i] = cnt[i] + base;
            else ((int32_t *)a->rows)[i] = (int32_t)(cnt[i] + base);
        }
        free(cnt);
    }
    m->rows = a->rows;
    m->cols = a->cols;
    m->values = t->v;
}

static void arrays_free(arrays *a) { free(a->rows); free(a->cols); }

static void cpu_options(ildl_options *o)
{
    ildl_options_default(o);
    o->backend = ILDL_BACKEND_CPU;
    o->num_threads = 2;
}

/* Factor and solve on h; x and info out. */
static void factor_solve(ildl_handle *h, const double *values, const double *b, double *x, ildl_info *info)
{
    assert_int_equal(ildl_factor(h, values), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    assert_int_equal(ildl_get_info(h, info), ILDL_SUCCESS);
}

/* The tests' system: a shifted 2D Laplacian (20^2 rows, indefinite), b = 1 + (i mod 7); x and xr
 * room for solutions. */
static void problem(ildl_csr *A, double **b, double **x, double **xr)
{
    ildl_test_laplace2d(20, 0.3, A);
    *b = malloc(sizeof(double) * A->n);
    *x = malloc(sizeof(double) * A->n);
    *xr = malloc(sizeof(double) * A->n);
    for (int32_t i = 0; i < A->n; i++) (*b)[i] = 1.0 + (i % 7);
}

static void test_layouts(void **state)
{
    (void)state;
    ildl_csr A;
    double *b, *x, *xr;
    problem(&A, &b, &x, &xr);
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    double *v2 = malloc(sizeof(double) * nnz), *xr2 = malloc(sizeof(double) * n);
    /* new values, symmetric: entries coupling row 0 with another row tripled, the rest doubled */
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
            v2[p] = A.val[p] * ((i == 0) != (A.col[p] == 0) ? 3.0 : 2.0);
    ildl_options o;
    cpu_options(&o);
    ildl_info ir, ir2, info;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    factor_solve(h, NULL, b, xr, &ir);
    factor_solve(h, v2, b, xr2, &ir2);
    ildl_destroy(h);
    struct { int format, base, view, dup, otype, itype, split, shuffle; const char *what; } cases[] = {
        {ILDL_FORMAT_COO, 1, ILDL_VIEW_LOWER, ILDL_DUPLICATES_SUM, ILDL_INDEX_32, ILDL_INDEX_32, 1, 1, "COO lower 1-based, duplicates"},
        {ILDL_FORMAT_CSR, 1, ILDL_VIEW_UPPER, ILDL_DUPLICATES_REFUSE, ILDL_INDEX_32, ILDL_INDEX_32, 0, 0, "CSR upper 1-based 32/32"},
        {ILDL_FORMAT_COO, 0, ILDL_VIEW_FULL, ILDL_DUPLICATES_REFUSE, ILDL_INDEX_64, ILDL_INDEX_64, 0, 1, "COO full 64-bit"},
        {ILDL_FORMAT_CSR, 0, ILDL_VIEW_LOWER, ILDL_DUPLICATES_SUM, ILDL_INDEX_64, ILDL_INDEX_64, 1, 0, "CSR lower 64/64, duplicates"},
        {ILDL_FORMAT_CSR, 0, ILDL_VIEW_FULL, ILDL_DUPLICATES_REFUSE, ILDL_INDEX_64, ILDL_INDEX_32, 0, 0, "ildl_setup's layout"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        triples t;
        view_of(&A, cases[c].view, cases[c].split, cases[c].shuffle ? 17 + c : 0, &t);
        ildl_matrix m;
        arrays a;
        describe(&t, cases[c].format, cases[c].base, cases[c].view, cases[c].dup, cases[c].otype, cases[c].itype, &m, &a);
        /* the caller's arrays stay as they are */
        size_t iw = cases[c].itype == ILDL_INDEX_64 ? 8 : 4;
        void *cols_copy = malloc(iw * (size_t)(t.ne + 1));
        memcpy(cols_copy, a.cols, iw * (size_t)t.ne);
        double *v_copy = malloc(sizeof(double) * (size_t)(t.ne + 1));
        memcpy(v_copy, t.v, sizeof(double) * (size_t)t.ne);
        assert_int_equal(ildl_setup_matrix(&m, &o, &h), ILDL_SUCCESS);
        factor_solve(h, NULL, b, x, &info);
        printf("%s: %lld entries, %d iterations, x %s\n", cases[c].what, (long long)t.ne, info.iterations,
               memcmp(x, xr, sizeof(double) * n) ? "DIFFERS" : "bitwise equal");
        assert_memory_equal(x, xr, sizeof(double) * n);
        assert_int_equal(info.iterations, ir.iterations);
        assert_int_equal(info.nnz, ir.nnz);
        assert_int_equal(info.factor_nnz, ir.factor_nnz);
        /* new values in the descriptor's entry order */
        double *tv2 = malloc(sizeof(double) * (size_t)(t.ne + 1));
        for (int64_t k = 0; k < t.ne; k++)
            tv2[k] = t.v[k] * ((t.i[k] == 0) != (t.j[k] == 0) ? 3.0 : 2.0);
        factor_solve(h, tv2, b, x, &info);
        assert_memory_equal(x, xr2, sizeof(double) * n);
        assert_int_equal(info.iterations, ir2.iterations);
        assert_memory_equal(cols_copy, a.cols, iw * (size_t)t.ne);
        assert_memory_equal(v_copy, t.v, sizeof(double) * (size_t)t.ne);
        ildl_destroy(h);
        free(tv2); free(cols_copy); free(v_copy);
        arrays_free(&a);
        triples_free(&t);
    }
    free(b); free(xr); free(x); free(v2); free(xr2);
    ildl_csr_free(&A);
}

/* Values on a sub-pattern: the explicit zeros of the full run dropped, in any layout. */
/* ildl_analyse_matrix: the analysis alone (no backend state: solve and apply refused), the
 * estimate (0 on the CPU), then ildl_factor makes the state: the same factor and solve, bit for
 * bit, as ildl_setup_matrix; with backend AUTO too (the CPU's without a GPU; on a GPU the
 * estimate equals what the factorization allocated). */
static void test_analyse(void **state)
{
    (void)state;
    ildl_csr A;
    double *b, *x, *xr;
    problem(&A, &b, &x, &xr);
    int32_t n = A.n;
    ildl_matrix m;
    ildl_matrix_init(&m);
    m.n = n;
    m.nnz = A.rowptr[n];
    m.rows = A.rowptr;
    m.cols = A.col;
    m.values = A.val;
    for (int backend = ILDL_BACKEND_AUTO; backend <= ILDL_BACKEND_CPU; backend++) {
        ildl_options o;
        cpu_options(&o);
        o.backend = backend;
        ildl_info ir, info;
        ildl_handle *h = NULL;
        assert_int_equal(ildl_setup_matrix(&m, &o, &h), ILDL_SUCCESS);
        factor_solve(h, NULL, b, xr, &ir);
        int64_t setup_estimate = ir.device_bytes_estimate;
        ildl_destroy(h);
        h = NULL;
        assert_int_equal(ildl_analyse_matrix(&m, &o, &h), ILDL_SUCCESS);
        assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
        assert_int_equal(info.backend, ir.backend);
        assert_true(info.device_bytes == 0);
        assert_true(info.device_bytes_estimate == setup_estimate);
        assert_true(info.factor_capacity == ir.factor_capacity && info.num_blocks == ir.num_blocks);
        if (info.backend == ILDL_BACKEND_CPU) assert_true(info.device_bytes_estimate == 0);
        assert_int_equal(ildl_solve(h, b, x), ILDL_ERR_CALL_ORDER);
        assert_int_equal(ildl_apply(h, b, x, ILDL_MEMORY_HOST, NULL), ILDL_ERR_CALL_ORDER);
        factor_solve(h, NULL, b, x, &info);
        assert_memory_equal(x, xr, sizeof(double) * n);
        assert_int_equal(info.iterations, ir.iterations);
        assert_true(info.device_bytes == (size_t)info.device_bytes_estimate);
        printf("ildl_analyse_matrix, backend %s: estimate %lld device bytes, %zu allocated; x bitwise equal\n",
               info.backend == ILDL_BACKEND_CUDA ? "cuda" : "cpu", (long long)info.device_bytes_estimate,
               info.device_bytes);
        ildl_destroy(h);
    }
    ildl_handle *h = (ildl_handle *)&m; /* overwritten with NULL on failure */
    assert_int_equal(ildl_analyse_matrix(NULL, NULL, &h), ILDL_ERR_NULL_ARGUMENT);
    assert_null(h);
    assert_int_equal(ildl_analyse_matrix(&m, NULL, NULL), ILDL_ERR_NULL_ARGUMENT);
    free(b); free(xr); free(x);
    ildl_csr_free(&A);
}

static void test_sub_pattern(void **state)
{
    (void)state;
    ildl_csr A;
    double *b, *x, *xr;
    problem(&A, &b, &x, &xr);
    int32_t n = A.n;
    int64_t nnz = A.rowptr[n];
    double *vz = malloc(sizeof(double) * nnz);
    /* zero the couplings (i, i+1) for i % 5 == 0, both mirrors */
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) {
            int32_t j = A.col[p], lo = i < j ? i : j, hi = i < j ? j : i;
            vz[p] = (hi == lo + 1 && lo % 5 == 0) ? 0.0 : 1.5 * A.val[p];
        }
    ildl_options o;
    cpu_options(&o);
    ildl_info ir, info;
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A.rowptr, A.col, A.val, &o, &h), ILDL_SUCCESS);
    factor_solve(h, vz, b, xr, &ir);
    ildl_csr Z = A;
    Z.val = vz;
    for (int view = ILDL_VIEW_FULL; view <= ILDL_VIEW_UPPER; view++) {
        triples t, s;
        view_of(&Z, view, 0, 5, &t);
        s = t; /* the same arrays, the zeros left out */
        int64_t keep = 0;
        for (int64_t k = 0; k < t.ne; k++)
            if (t.v[k] != 0.0) { s.i[keep] = t.i[k]; s.j[keep] = t.j[k]; s.v[keep++] = t.v[k]; }
        s.ne = keep;
        ildl_matrix m;
        arrays a;
        describe(&s, ILDL_FORMAT_COO, 1, view, ILDL_DUPLICATES_REFUSE, ILDL_INDEX_64, ILDL_INDEX_32, &m, &a);
        assert_int_equal(ildl_factor_matrix(h, &m), ILDL_SUCCESS);
        assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
        assert_int_equal(ildl_get_info(h, &info), ILDL_SUCCESS);
        assert_memory_equal(x, xr, sizeof(double) * n);
        assert_int_equal(info.iterations, ir.iterations);
        /* an entry outside the pattern: refused, named, the factor invalidated */
        if (view == ILDL_VIEW_LOWER) {
            int32_t *ri = a.rows, *cj = a.cols;
            int32_t save_r = ri[0], save_c = cj[0];
            ri[0] = n; cj[0] = 1; /* (n, 1) 1-based: rows n-1 and 0 are not coupled */
            assert_int_equal(ildl_factor_matrix(h, &m), ILDL_ERR_PATTERN);
            assert_non_null(strstr(ildl_last_error(h), "not in the setup's pattern"));
            assert_int_equal(ildl_solve(h, b, x), ILDL_ERR_CALL_ORDER);
            ri[0] = save_r; cj[0] = save_c;
            m.n = n + 1;
            assert_int_equal(ildl_factor_matrix(h, &m), ILDL_ERR_SIZE_MISMATCH);
            m.n = n;
            /* one entry given twice, refused */
            ri[1] = ri[0]; cj[1] = cj[0];
            assert_int_equal(ildl_factor_matrix(h, &m), ILDL_ERR_DUPLICATE);
        }
        arrays_free(&a);
        triples_free(&t);
    }
    assert_int_equal(ildl_factor_matrix(h, NULL), ILDL_ERR_NULL_ARGUMENT);
    ildl_destroy(h);
    free(b); free(xr); free(x); free(vz);
    ildl_csr_free(&A);
}

/* setup_matrix(m) is refused with st and a message containing what. */
static void refused(const ildl_matrix *m, int st, const char *what)
{
    ildl_handle *h = (ildl_handle *)0x1;
    assert_int_equal(ildl_setup_matrix(m, NULL, &h), st);
    assert_null(h);
    if (!strstr(ildl_last_error(NULL), what)) printf("message: %s (wanted %s)\n", ildl_last_error(NULL), what);
    assert_non_null(strstr(ildl_last_error(NULL), what));
}

static void test_bad_descriptors(void **state)
{
    (void)state;
    /* [[2, 1], [1, -3]], lower triangle, COO, 1-based */
    int32_t r[3] = {1, 2, 2}, c[3] = {1, 1, 2};
    double v[3] = {2, 1, -3};
    ildl_matrix m, g;
    ildl_matrix_init(&g);
    g.n = 2; g.nnz = 3; g.format = ILDL_FORMAT_COO; g.base = 1; g.view = ILDL_VIEW_LOWER;
    g.index_type = ILDL_INDEX_32; g.rows = r; g.cols = c; g.values = v;
    ildl_handle *h = NULL;
    ildl_options o;
    cpu_options(&o);
    assert_int_equal(ildl_setup_matrix(&g, &o, &h), ILDL_SUCCESS);
    ildl_destroy(h);
    assert_int_equal(ildl_matrix_init(NULL), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_setup_matrix(NULL, NULL, &h), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_setup_matrix(&g, NULL, NULL), ILDL_ERR_NULL_ARGUMENT);
    m = g; m.base = 0; refused(&m, ILDL_ERR_INDEX_RANGE, "1-based data?");
    r[0] = 0;
    m = g; refused(&m, ILDL_ERR_INDEX_RANGE, "0-based data?");
    r[0] = 1;
    m = g; m.view = ILDL_VIEW_UPPER; refused(&m, ILDL_ERR_INDEX_RANGE, "below the diagonal, but the view is UPPER");
    r[1] = 1; c[1] = 2;
    m = g; refused(&m, ILDL_ERR_INDEX_RANGE, "above the diagonal, but the view is LOWER");
    r[1] = 2; c[1] = 1;
    r[2] = 2; c[2] = 1; /* (2,1) twice */
    m = g; refused(&m, ILDL_ERR_DUPLICATE, "entries 1 and 2 are both at (2,1)");
    r[2] = 2; c[2] = 2;
    v[2] = NAN;
    m = g; refused(&m, ILDL_ERR_NAN_INF, "value 2 at (2,2)");
    v[2] = -3;
    m = g; m.n = (int64_t)INT32_MAX + 1; refused(&m, ILDL_ERR_NOT_SUPPORTED, "2^31 - 1");
    m = g; m.n = 0; refused(&m, ILDL_ERR_EMPTY, "empty");
    m = g; m.nnz = -1; refused(&m, ILDL_ERR_INDEX_RANGE, "nnz");
    m = g; m.format = 7; refused(&m, ILDL_ERR_INVALID_OPTION, "format");
    m = g; m.view = -1; refused(&m, ILDL_ERR_INVALID_OPTION, "view");
    m = g; m.base = 2; refused(&m, ILDL_ERR_INVALID_OPTION, "base");
    m = g; m.duplicates = 5; refused(&m, ILDL_ERR_INVALID_OPTION, "duplicates");
    m = g; m.index_type = 3; refused(&m, ILDL_ERR_INVALID_OPTION, "index type");
    m = g; m.values = NULL; refused(&m, ILDL_ERR_NULL_ARGUMENT, "NULL");
    /* CSR row pointers: not starting at the base, decreasing, not ending at base + nnz */
    int32_t rp[3] = {1, 2, 4}, cc[3] = {1, 1, 2};
    ildl_matrix s = g;
    s.format = ILDL_FORMAT_CSR; s.offset_type = ILDL_INDEX_32; s.rows = rp; s.cols = cc;
    assert_int_equal(ildl_setup_matrix(&s, &o, &h), ILDL_SUCCESS);
    ildl_destroy(h);
    rp[0] = 0; m = s; refused(&m, ILDL_ERR_INDEX_RANGE, "rowptr[0]");
    rp[0] = 1; rp[1] = 5; m = s; refused(&m, ILDL_ERR_INDEX_RANGE, "decrease");
    rp[1] = 2; rp[2] = 3; m = s; refused(&m, ILDL_ERR_INDEX_RANGE, "rowptr[n]");
    /* unsymmetric values in a FULL view: the analysis's own check */
    int32_t fr[4] = {0, 0, 1, 1}, fc[4] = {0, 1, 0, 1};
    double fv[4] = {2, 1, 1.5, -3};
    ildl_matrix_init(&m);
    m.n = 2; m.nnz = 4; m.format = ILDL_FORMAT_COO; m.index_type = ILDL_INDEX_32; m.rows = fr; m.cols = fc; m.values = fv;
    refused(&m, ILDL_ERR_NOT_SYMMETRIC, "a(");
}

/* One handle through an interior-point run whose explicit zeros come and go: the ACOPF KKT
 * matrices of iterations 0 and 10 (14,078 and 12,196 stored entries). */
static void test_acopf_iterations(void **state)
{
    (void)state;
    const char *p0 = ildl_test_shared_matrix("acopf_ACTIVSg200_it00_kkt.mtx.gz");
    if (!p0) { skip(); return; }
    char path0[1024];
    snprintf(path0, sizeof path0, "%s", p0);
    const char *p10 = ildl_test_shared_matrix("acopf_ACTIVSg200_it10_kkt.mtx.gz");
    if (!p10) { skip(); return; }
    ildl_csr A0, A10;
    char msg[256];
    assert_int_equal(ildl_mm_read(path0, &A0, msg, sizeof msg), ILDL_SUCCESS);
    assert_int_equal(ildl_mm_read(p10, &A10, msg, sizeof msg), ILDL_SUCCESS);
    assert_int_equal(A0.n, A10.n);
    int32_t n = A0.n;
    ildl_options o;
    cpu_options(&o);
    ildl_handle *h = NULL;
    assert_int_equal(ildl_setup(n, A0.rowptr, A0.col, A0.val, &o, &h), ILDL_SUCCESS);
    /* iteration 0 refactored with its own values as a LOWER COO, then iteration 10 */
    const ildl_csr *seq[2] = {&A0, &A10};
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    for (int32_t i = 0; i < n; i++) b[i] = 1.0;
    for (int it = 0; it < 2; it++) {
        triples t;
        view_of(seq[it], ILDL_VIEW_LOWER, 0, 3, &t);
        ildl_matrix m;
        arrays a;
        describe(&t, ILDL_FORMAT_COO, 1, ILDL_VIEW_LOWER, ILDL_DUPLICATES_REFUSE, ILDL_INDEX_32, ILDL_INDEX_32, &m, &a);
        int st = ildl_factor_matrix(h, &m);
        if (st) printf("%s\n", ildl_last_error(h));
        assert_int_equal(st, ILDL_SUCCESS);
        st = ildl_solve(h, b, x);
        ildl_info info;
        ildl_get_info(h, &info);
        double res = ildl_test_residual_ld(seq[it], x, b);
        printf("acopf iteration %d: %lld entries given of %lld, status %d, %d iterations, residual %.2e\n",
               it ? 10 : 0, (long long)seq[it]->rowptr[n], (long long)A0.rowptr[n], st, info.iterations, res);
        assert_int_equal(st, ILDL_SUCCESS);
        assert_true(res <= o.tol);
        arrays_free(&a);
        triples_free(&t);
    }
    ildl_destroy(h);
    free(b); free(x);
    ildl_csr_free(&A0);
    ildl_csr_free(&A10);
}

/* The Matrix Market functions: a descriptor (lower COO, 1-based, duplicates) written, read back
 * as the full pattern with the same values' bits; a shipped file read and solved; vectors;
 * failures with a status and a message naming the file. */
static void test_matrix_io(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(9, 0.3, &A);
    int32_t n = A.n;
    triples t;
    view_of(&A, ILDL_VIEW_LOWER, 1, 4, &t);
    ildl_matrix m, r;
    arrays a;
    describe(&t, ILDL_FORMAT_COO, 1, ILDL_VIEW_LOWER, ILDL_DUPLICATES_SUM, ILDL_INDEX_64, ILDL_INDEX_64, &m, &a);
    char path[] = "/tmp/ildl_test_matrix_io.mtx.gz";
    assert_int_equal(ildl_matrix_write(path, &m), ILDL_SUCCESS);
    assert_int_equal(ildl_matrix_read(path, &r), ILDL_SUCCESS);
    assert_int_equal(r.n, n);
    assert_int_equal(r.nnz, A.rowptr[n]);
    assert_int_equal(r.format, ILDL_FORMAT_CSR);
    assert_memory_equal(r.rows, A.rowptr, sizeof(int64_t) * (size_t)(n + 1));
    assert_memory_equal(r.cols, A.col, sizeof(int32_t) * (size_t)A.rowptr[n]);
    assert_memory_equal(r.values, A.val, sizeof(double) * (size_t)A.rowptr[n]);
    ildl_handle *h = NULL;
    ildl_options o;
    cpu_options(&o);
    assert_int_equal(ildl_setup_matrix(&r, &o, &h), ILDL_SUCCESS);
    ildl_destroy(h);
    assert_int_equal(ildl_matrix_free(&r), ILDL_SUCCESS);
    assert_null(r.values);
    assert_int_equal(ildl_matrix_free(NULL), ILDL_SUCCESS);
    /* the caller's own arrays are not freed by ildl_matrix_free */
    ildl_matrix own = m;
    assert_int_equal(ildl_matrix_free(&own), ILDL_SUCCESS);
    assert_true(((int64_t *)a.cols)[0] >= 1); /* still readable */
    remove(path);
    /* a shipped file, and a vector */
    assert_int_equal(ildl_matrix_read(ildl_test_data_file("sqd_genhs28_2x2_it0.mtx.gz"), &r), ILDL_SUCCESS);
    assert_true(r.n > 0 && r.nnz > 0);
    double *b = malloc(sizeof(double) * (size_t)r.n), *x = malloc(sizeof(double) * (size_t)r.n);
    for (int64_t i = 0; i < r.n; i++) b[i] = 1.0;
    assert_int_equal(ildl_setup_matrix(&r, &o, &h), ILDL_SUCCESS);
    assert_int_equal(ildl_factor(h, NULL), ILDL_SUCCESS);
    assert_int_equal(ildl_solve(h, b, x), ILDL_SUCCESS);
    ildl_destroy(h);
    char vpath[] = "/tmp/ildl_test_vector.txt";
    FILE *f = fopen(vpath, "w");
    assert_non_null(f);
    for (int64_t i = 0; i < r.n; i++) fprintf(f, "%.17g\n", 0.5 + (double)i);
    fclose(f);
    double *v = NULL;
    int64_t len = 0;
    assert_int_equal(ildl_vector_read(vpath, r.n, &v, &len), ILDL_SUCCESS);
    assert_int_equal(len, r.n);
    assert_true(v[1] == 1.5);
    ildl_vector_free(v);
    assert_int_equal(ildl_vector_read(vpath, r.n + 1, &v, &len), ILDL_ERR_SIZE_MISMATCH);
    assert_null(v);
    assert_int_equal(ildl_vector_read(vpath, -1, &v, &len), ILDL_ERR_SIZE_MISMATCH);
    remove(vpath);
    ildl_matrix_free(&r);
    /* failures */
    assert_int_equal(ildl_matrix_read("/nonexistent/a.mtx", &r), ILDL_ERR_IO);
    assert_non_null(strstr(ildl_last_error(NULL), "/nonexistent/a.mtx"));
    assert_int_equal(r.nnz, 0);
    assert_int_equal(ildl_matrix_read(NULL, &r), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_matrix_read(path, NULL), ILDL_ERR_NULL_ARGUMENT);
    assert_int_equal(ildl_matrix_write("/nonexistent/dir/a.mtx", &m), ILDL_ERR_IO);
    m.base = 0; /* an index n: refused before the file is opened */
    assert_int_equal(ildl_matrix_write(path, &m), ILDL_ERR_INDEX_RANGE);
    assert_int_equal(ildl_vector_read("/nonexistent/v.txt", 0, &v, &len), ILDL_ERR_IO);
    free(b); free(x);
    arrays_free(&a);
    triples_free(&t);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_analyse),
        cmocka_unit_test(test_sub_pattern),
        cmocka_unit_test(test_bad_descriptors),
        cmocka_unit_test(test_acopf_iterations),
        cmocka_unit_test(test_matrix_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
