#include "core/csr.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"

int ildl_csr_alloc(int32_t n, int64_t nnz, ildl_csr *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    out->rowptr = ildl_calloc((size_t)n + 1, sizeof(int64_t));
    out->col = ildl_malloc(sizeof(int32_t) * (size_t)nnz);
    out->val = ildl_malloc(sizeof(double) * (size_t)nnz);
    if (!out->rowptr || !out->col || !out->val) {
        ildl_csr_free(out);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    return ILDL_SUCCESS;
}

void ildl_csr_free(ildl_csr *A)
{
    if (!A) return;
    free(A->rowptr);
    free(A->col);
    free(A->val);
    memset(A, 0, sizeof *A);
}

int ildl_csr_copy(const ildl_csr *src, ildl_csr *dst)
{
    int64_t nnz = src->rowptr[src->n];
    int st = ildl_csr_alloc(src->n, nnz, dst);
    if (st) return st;
    memcpy(dst->rowptr, src->rowptr, sizeof(int64_t) * ((size_t)src->n + 1));
    memcpy(dst->col, src->col, sizeof(int32_t) * (size_t)nnz);
    memcpy(dst->val, src->val, sizeof(double) * (size_t)nnz);
    return ILDL_SUCCESS;
}

/* Sort the entries of one row by column (insertion sort for short rows, else qsort on pairs).
 * Ties (duplicates, which validation then rejects) are ordered by source position, a total
 * order, so both sorts give the same result. */
typedef struct { int32_t c; int32_t pad; int64_t src; } colsrc;
static int colsrc_cmp(const void *a, const void *b)
{
    const colsrc *x = a, *y = b;
    if (x->c != y->c) return (x->c > y->c) - (x->c < y->c);
    return (x->src > y->src) - (x->src < y->src);
}

/* buf[0..len) (in source order) sorted by (column, source). */
static void sort_row(colsrc *buf, int64_t len)
{
    int64_t k = 1;
    while (k < len && buf[k - 1].c <= buf[k].c) k++;
    if (k >= len) return; /* already sorted: the usual case */
    if (len > 32) {
        qsort(buf, (size_t)len, sizeof(colsrc), colsrc_cmp);
        return;
    }
    for (; k < len; k++) { /* stable, so equal columns stay in source order */
        colsrc x = buf[k];
        int64_t j = k - 1;
        for (; j >= 0 && buf[j].c > x.c; j--) buf[j + 1] = buf[j];
        buf[j + 1] = x;
    }
}

/* Find entry (i,j) in a row sorted by column; returns position or -1. */
static int64_t find_sorted(const int32_t *col, int64_t lo, int64_t hi, int32_t j)
{
    int64_t end = hi; /* search [lo, hi) */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (col[mid] < j) lo = mid + 1;
        else hi = mid;
    }
    return (lo < end && col[lo] == j) ? lo : -1;
}

int ildl_csr_from_user(int32_t n, const int64_t *rowptr, const int32_t *col, const double *val,
                       ildl_csr *out, int64_t *perm_out)
{
    int64_t nnz = rowptr[n] - rowptr[0];
    int st = ildl_csr_alloc(n, nnz, out);
    if (st) return st;
    int64_t maxrow = 0;
    for (int32_t i = 0; i < n; i++) {
        out->rowptr[i] = rowptr[i] - rowptr[0];
        if (rowptr[i + 1] - rowptr[i] > maxrow) maxrow = rowptr[i + 1] - rowptr[i];
    }
    out->rowptr[n] = nnz;
    int oom = 0;
    /* rows are independent and keep their positions, so threads change nothing in the result */
#pragma omp parallel
    {
        colsrc *buf = ildl_malloc(sizeof(colsrc) * (size_t)(maxrow > 0 ? maxrow : 1));
        if (!buf) {
#pragma omp atomic write
            oom = 1;
        }
#pragma omp for schedule(dynamic, 4096)
        for (int32_t i = 0; i < n; i++) {
            if (!buf) continue;
            int64_t len = rowptr[i + 1] - rowptr[i], q = out->rowptr[i];
            for (int64_t k = 0; k < len; k++) {
                buf[k].c = col[rowptr[i] + k];
                buf[k].src = rowptr[i] + k;
            }
            sort_row(buf, len);
            for (int64_t k = 0; k < len; k++, q++) {
                out->col[q] = buf[k].c;
                out->val[q] = val ? val[buf[k].src] : 1.0;
                if (perm_out) perm_out[q] = buf[k].src;
            }
        }
        free(buf);
    }
    if (oom) {
        ildl_csr_free(out);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    return ILDL_SUCCESS;
}

/* Row i of the sorted copy S: no duplicates, every (i,j) has a (j,i) within sym_tol. */
static int check_sym_row(const ildl_csr *S, int32_t i, double sym_tol, char *msg, size_t msglen)
{
    for (int64_t p = S->rowptr[i]; p < S->rowptr[i + 1]; p++) {
        int32_t j = S->col[p];
        if (p > S->rowptr[i] && S->col[p - 1] == j) {
            ildl_msg(msg, msglen, "duplicate entry (%d,%d)", (int)i, (int)j);
            return ILDL_ERR_DUPLICATE;
        }
        if (j == i) continue;
        int64_t q = find_sorted(S->col, S->rowptr[j], S->rowptr[j + 1], i);
        if (q < 0) {
            ildl_msg(msg, msglen, "entry (%d,%d) present but (%d,%d) missing: pattern not symmetric",
                     (int)i, (int)j, (int)j, (int)i);
            return ILDL_ERR_NOT_SYMMETRIC;
        }
        double a = S->val[p], b = S->val[q];
        double m = fmax(fabs(a), fabs(b));
        if (fabs(a - b) > sym_tol * m) {
            ildl_msg(msg, msglen, "a(%d,%d) = %.17g but a(%d,%d) = %.17g: values not symmetric",
                     (int)i, (int)j, a, (int)j, (int)i, b);
            return ILDL_ERR_NOT_SYMMETRIC;
        }
    }
    return ILDL_SUCCESS;
}

int ildl_csr_validate_entries(int32_t n, const int64_t *rowptr, const int32_t *col, const double *val,
                              char *msg, size_t msglen)
{
    if (!rowptr || !col || !val) {
        ildl_msg(msg, msglen, "NULL CSR array");
        return ILDL_ERR_NULL_ARGUMENT;
    }
    if (n <= 0) {
        ildl_msg(msg, msglen, "matrix order n = %d: the matrix is empty", (int)n);
        return ILDL_ERR_EMPTY;
    }
    if (rowptr[0] != 0) {
        ildl_msg(msg, msglen, "rowptr[0] = %lld, expected 0", (long long)rowptr[0]);
        return ILDL_ERR_INDEX_RANGE;
    }
    for (int32_t i = 0; i < n; i++) {
        if (rowptr[i + 1] < rowptr[i]) {
            ildl_msg(msg, msglen, "rowptr decreases at row %d", (int)i);
            return ILDL_ERR_INDEX_RANGE;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        if (rowptr[i + 1] == rowptr[i]) {
            ildl_msg(msg, msglen, "row %d is empty: the matrix is structurally singular", (int)i);
            return ILDL_ERR_SINGULAR;
        }
        for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
            if (col[p] < 0 || col[p] >= n) {
                ildl_msg(msg, msglen, "entry %lld of row %d has column %d outside [0,%d)",
                         (long long)p, (int)i, (int)col[p], (int)n);
                return ILDL_ERR_INDEX_RANGE;
            }
            if (!ildl_isfinite(val[p])) {
                ildl_msg(msg, msglen, "entry (%d,%d) is %g", (int)i, (int)col[p], val[p]);
                return ILDL_ERR_NAN_INF;
            }
        }
    }
    return ILDL_SUCCESS;
}

int ildl_csr_validate_sorted(const ildl_csr *S, double sym_tol, char *msg, size_t msglen)
{
    /* rows in parallel; the message names the first bad row, as a serial scan would */
    int32_t n = S->n, bad = n;
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : bad)
    for (int32_t i = 0; i < n; i++)
        if (i < bad && check_sym_row(S, i, sym_tol, NULL, 0)) bad = i;
    return bad < n ? check_sym_row(S, bad, sym_tol, msg, msglen) : ILDL_SUCCESS;
}

int ildl_csr_validate(int32_t n, const int64_t *rowptr, const int32_t *col, const double *val,
                      double sym_tol, char *msg, size_t msglen)
{
    int st = ildl_csr_validate_entries(n, rowptr, col, val, msg, msglen);
    if (st) return st;
    /* sorted copy to check duplicates and symmetry in O(nnz log) */
    ildl_csr S;
    if (ildl_csr_from_user(n, rowptr, col, val, &S, NULL)) {
        ildl_msg(msg, msglen, "out of memory while validating");
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    st = ildl_csr_validate_sorted(&S, sym_tol, msg, msglen);
    ildl_csr_free(&S);
    return st;
}

void ildl_csr_matvec(const ildl_csr *A, const double *x, double *y)
{
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < A->n; i++) {
        double s = 0.0;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s += A->val[p] * x[A->col[p]];
        y[i] = s;
    }
}

int ildl_csr_permute(const ildl_csr *A, const int32_t *perm, ildl_csr *B)
{
    int32_t n = A->n;
    int64_t nnz = A->rowptr[n];
    int32_t *inv = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int64_t *rp = ildl_malloc(sizeof(int64_t) * ((size_t)n + 1));
    int32_t *cj = ildl_malloc(sizeof(int32_t) * (size_t)nnz);
    if (!inv || !rp || !cj) {
        free(inv); free(rp); free(cj);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    for (int32_t k = 0; k < n; k++) inv[perm[k]] = k;
    rp[0] = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t i = perm[k];
        rp[k + 1] = rp[k] + (A->rowptr[i + 1] - A->rowptr[i]);
        for (int64_t p = A->rowptr[i], q = rp[k]; p < A->rowptr[i + 1]; p++, q++) cj[q] = inv[A->col[p]];
    }
    /* values follow the unsorted permuted layout; from_user sorts them */
    double *vv = ildl_malloc(sizeof(double) * (size_t)nnz);
    if (!vv) {
        free(inv); free(rp); free(cj);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t i = perm[k];
        memcpy(vv + rp[k], A->val + A->rowptr[i], sizeof(double) * (size_t)(A->rowptr[i + 1] - A->rowptr[i]));
    }
    int st = ildl_csr_from_user(n, rp, cj, vv, B, NULL);
    free(inv); free(rp); free(cj); free(vv);
    return st;
}

double ildl_csr_max_abs(const ildl_csr *A)
{
    double m = 0.0;
    for (int64_t p = 0; p < A->rowptr[A->n]; p++) m = fmax(m, fabs(A->val[p]));
    return m;
}
