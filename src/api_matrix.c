/* api_matrix.c -- the matrix descriptor (ildl_matrix): setup from any of its layouts (CSR or
 * COO, 32- or 64-bit indices, base 0 or 1, FULL / LOWER / UPPER, duplicates summed or refused)
 * through the full pattern that ildl_setup analyses, and refactorization on a sub-pattern.
 * ildl_setup is the descriptor of its own layout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "api_internal.h"
#include "core/util.h"
#ifdef _OPENMP
#include <omp.h>
#endif

ILDL_API int ildl_matrix_init(ildl_matrix *m)
{
    if (!m) return ILDL_ERR_NULL_ARGUMENT;
    memset(m, 0, sizeof *m);
    m->format = ILDL_FORMAT_CSR;
    m->base = 0;
    m->view = ILDL_VIEW_FULL;
    m->duplicates = ILDL_DUPLICATES_REFUSE;
    m->offset_type = ILDL_INDEX_64;
    m->index_type = ILDL_INDEX_32;
    return ILDL_SUCCESS;
}

/* 1 if m is ildl_setup's own layout: read as it is, nothing converted. */
static int plain_layout(const ildl_matrix *m)
{
    return m->format == ILDL_FORMAT_CSR && m->base == 0 && m->view == ILDL_VIEW_FULL &&
           m->duplicates == ILDL_DUPLICATES_REFUSE && m->offset_type == ILDL_INDEX_64 &&
           m->index_type == ILDL_INDEX_32;
}

static inline int64_t index_at(const void *a, int type, int64_t k)
{
    return type == ILDL_INDEX_64 ? ((const int64_t *)a)[k] : (int64_t)((const int32_t *)a)[k];
}

/* The descriptor's own fields: sizes, enumerations, pointers, row pointers. */
static int check_matrix(const ildl_matrix *m, char *msg, size_t len)
{
    if (m->format != ILDL_FORMAT_CSR && m->format != ILDL_FORMAT_COO)
        return ildl_msg(msg, len, "unknown matrix format %d", m->format), ILDL_ERR_INVALID_OPTION;
    if (m->base != 0 && m->base != 1)
        return ildl_msg(msg, len, "base = %d, must be 0 or 1", m->base), ILDL_ERR_INVALID_OPTION;
    if (m->view < ILDL_VIEW_FULL || m->view > ILDL_VIEW_UPPER)
        return ildl_msg(msg, len, "unknown view %d", m->view), ILDL_ERR_INVALID_OPTION;
    if (m->duplicates != ILDL_DUPLICATES_REFUSE && m->duplicates != ILDL_DUPLICATES_SUM)
        return ildl_msg(msg, len, "unknown duplicates rule %d", m->duplicates), ILDL_ERR_INVALID_OPTION;
    if ((m->offset_type != ILDL_INDEX_32 && m->offset_type != ILDL_INDEX_64) ||
        (m->index_type != ILDL_INDEX_32 && m->index_type != ILDL_INDEX_64))
        return ildl_msg(msg, len, "unknown index type (offset_type %d, index_type %d)", m->offset_type,
                        m->index_type), ILDL_ERR_INVALID_OPTION;
    if (m->n <= 0) return ildl_msg(msg, len, "n = %lld: the matrix is empty", (long long)m->n), ILDL_ERR_EMPTY;
    if (m->n > INT32_MAX)
        return ildl_msg(msg, len, "n = %lld exceeds 2^31 - 1, the largest order supported", (long long)m->n),
               ILDL_ERR_NOT_SUPPORTED;
    if (m->nnz < 0 || m->nnz > INT64_MAX / 64)
        return ildl_msg(msg, len, "nnz = %lld is out of range", (long long)m->nnz), ILDL_ERR_INDEX_RANGE;
    if ((m->format == ILDL_FORMAT_CSR && !m->rows) || (m->nnz > 0 && (!m->rows || !m->cols || !m->values)))
        return ildl_msg(msg, len, "rows, cols and values must not be NULL"), ILDL_ERR_NULL_ARGUMENT;
    if (m->format == ILDL_FORMAT_CSR) {
        int64_t first = index_at(m->rows, m->offset_type, 0), last = index_at(m->rows, m->offset_type, m->n);
        if (first != m->base)
            return ildl_msg(msg, len, "rowptr[0] = %lld, must be the base %d", (long long)first, m->base),
                   ILDL_ERR_INDEX_RANGE;
        if (last - m->base != m->nnz)
            return ildl_msg(msg, len, "rowptr[n] - base = %lld but nnz = %lld", (long long)(last - m->base),
                            (long long)m->nnz), ILDL_ERR_INDEX_RANGE;
        for (int64_t i = 0; i < m->n; i++)
            if (index_at(m->rows, m->offset_type, i + 1) < index_at(m->rows, m->offset_type, i))
                return ildl_msg(msg, len, "row pointers decrease at row %lld", (long long)(i + m->base)),
                       ILDL_ERR_INDEX_RANGE;
    }
    return ILDL_SUCCESS;
}

/* ri, cj [nnz]: the 0-based row and column of each entry, checked against n, the view, and
 * the values for NaN/Inf. */
static int read_entries(const ildl_matrix *m, int32_t *ri, int32_t *cj, char *msg, size_t len)
{
    int64_t n = m->n, row = 0;
    for (int64_t k = 0; k < m->nnz; k++) {
        int64_t i, j = index_at(m->cols, m->index_type, k) - m->base;
        if (m->format == ILDL_FORMAT_COO) {
            i = index_at(m->rows, m->index_type, k) - m->base;
        } else {
            while (index_at(m->rows, m->offset_type, row + 1) - m->base <= k) row++;
            i = row;
        }
        if (i < 0 || i >= n || j < 0 || j >= n)
            return ildl_msg(msg, len, "entry %lld at (%lld,%lld) is outside 1..n = %lld of base %d%s", (long long)k,
                            (long long)(i + m->base), (long long)(j + m->base), (long long)n, m->base,
                            (i == -1 || j == -1) ? " (an index 0: 0-based data?)"
                            : (i == n || j == n) ? " (an index n: 1-based data?)" : ""),
                   ILDL_ERR_INDEX_RANGE;
        if ((m->view == ILDL_VIEW_LOWER && i < j) || (m->view == ILDL_VIEW_UPPER && i > j))
            return ildl_msg(msg, len, "entry %lld at (%lld,%lld) is %s the diagonal, but the view is %s",
                            (long long)k, (long long)(i + m->base), (long long)(j + m->base),
                            i < j ? "above" : "below", m->view == ILDL_VIEW_LOWER ? "LOWER" : "UPPER"),
                   ILDL_ERR_INDEX_RANGE;
        if (!isfinite(m->values[k]))
            return ildl_msg(msg, len, "value %lld at (%lld,%lld) is %g", (long long)k, (long long)(i + m->base),
                            (long long)(j + m->base), m->values[k]), ILDL_ERR_NAN_INF;
        ri[k] = (int32_t)i;
        cj[k] = (int32_t)j;
    }
    return ILDL_SUCCESS;
}

typedef struct { int32_t col; int64_t src; } slot;

static int slot_cmp(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return (x->src > y->src) - (x->src < y->src);
}

/* The full pattern of m's entries ri, cj (mirrored unless FULL), rows sorted, entries at one
 * position merged: rowptr[n+1], col[], and per merged entry p the caller's entries gidx[gptr[p]
 * .. gptr[p+1]) in the order given. A position given twice with duplicates REFUSE fails. */
static int full_pattern(const ildl_matrix *m, const int32_t *ri, const int32_t *cj, int nthreads, int64_t **rowptr_out,
                        int32_t **col_out, int64_t **gptr_out, int64_t **gidx_out, char *msg, size_t len)
{
    int32_t n = (int32_t)m->n;
    int mirror = m->view != ILDL_VIEW_FULL;
    int64_t *eptr = calloc((size_t)n + 1, sizeof(int64_t)), *rowptr = NULL, *gptr = NULL, *gidx = NULL;
    int32_t *col = NULL;
    slot *e = NULL;
    int st = ILDL_SUCCESS;
    if (!eptr) return ILDL_ERR_OUT_OF_MEMORY;
    for (int64_t k = 0; k < m->nnz; k++) {
        eptr[ri[k] + 1]++;
        if (mirror && ri[k] != cj[k]) eptr[cj[k] + 1]++;
    }
    for (int32_t i = 0; i < n; i++) eptr[i + 1] += eptr[i];
    int64_t ne = eptr[n];
    e = ildl_malloc(sizeof(slot) * (size_t)(ne + 1));
    int64_t *next = ildl_malloc(sizeof(int64_t) * ((size_t)n + 1));
    if (!e || !next) { free(next); st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    memcpy(next, eptr, sizeof(int64_t) * (size_t)n);
    for (int64_t k = 0; k < m->nnz; k++) {
        e[next[ri[k]]++] = (slot){cj[k], k};
        if (mirror && ri[k] != cj[k]) e[next[cj[k]]++] = (slot){ri[k], k};
    }
    free(next);
#pragma omp parallel for schedule(dynamic, 1024) num_threads(nthreads)
    for (int32_t i = 0; i < n; i++)
        if (eptr[i + 1] - eptr[i] > 1) qsort(e + eptr[i], (size_t)(eptr[i + 1] - eptr[i]), sizeof(slot), slot_cmp);
    int64_t nc = 0; /* merged entries: runs of one column inside a row */
    for (int32_t i = 0; i < n; i++)
        for (int64_t q = eptr[i]; q < eptr[i + 1]; q++) nc += q == eptr[i] || e[q].col != e[q - 1].col;
    rowptr = ildl_malloc(sizeof(int64_t) * ((size_t)n + 1));
    col = ildl_malloc(sizeof(int32_t) * (size_t)(nc + 1));
    gptr = ildl_malloc(sizeof(int64_t) * (size_t)(nc + 1));
    gidx = ildl_malloc(sizeof(int64_t) * (size_t)(ne + 1));
    if (!rowptr || !col || !gptr || !gidx) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    int64_t p = 0;
    rowptr[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int64_t q = eptr[i]; q < eptr[i + 1]; q++) {
            if (q == eptr[i] || e[q].col != e[q - 1].col) {
                col[p] = e[q].col;
                gptr[p++] = q;
            } else if (m->duplicates == ILDL_DUPLICATES_REFUSE) {
                st = ILDL_ERR_DUPLICATE;
                ildl_msg(msg, len, "entries %lld and %lld are both at (%lld,%lld) (duplicates refused)",
                         (long long)e[q - 1].src, (long long)e[q].src, (long long)ri[e[q].src] + m->base,
                         (long long)cj[e[q].src] + m->base); /* as given, not mirrored */
                goto cleanup;
            }
            gidx[q] = e[q].src;
        }
        rowptr[i + 1] = p;
    }
    gptr[p] = ne;

cleanup:
    free(eptr);
    free(e);
    if (st) {
        free(rowptr); free(col); free(gptr); free(gidx);
        return st;
    }
    *rowptr_out = rowptr;
    *col_out = col;
    *gptr_out = gptr;
    *gidx_out = gidx;
    return ILDL_SUCCESS;
}

/* full[p] = the sum of values[gidx[q]], q in gptr[p] .. gptr[p+1], in that order, p < nc. */
static void gather(int64_t nc, const int64_t *gptr, const int64_t *gidx, const double *values, double *full)
{
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < nc; p++) {
        double s = values[gidx[gptr[p]]];
        for (int64_t q = gptr[p] + 1; q < gptr[p + 1]; q++) s += values[gidx[q]];
        full[p] = s;
    }
}

void ildl_api_gather(const ildl_handle *h, const double *values, double *full)
{
    gather(h->A.rowptr[h->A.n], h->gptr, h->gidx, values, full);
}

/* m (checked) as its full pattern: A (sorted 0-based CSR, values summed) and the map of each
 * entry of A to m's entries (gptr, gidx; see full_pattern). */
static int convert(const ildl_matrix *m, int nthreads, ildl_csr *A, int64_t **gptr, int64_t **gidx, char *msg,
                   size_t len)
{
    memset(A, 0, sizeof *A);
    *gptr = *gidx = NULL;
    int32_t *ri = ildl_malloc(sizeof(int32_t) * (size_t)(m->nnz + 1));
    int32_t *cj = ildl_malloc(sizeof(int32_t) * (size_t)(m->nnz + 1));
    int st = ILDL_SUCCESS;
    if (!ri || !cj) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    st = read_entries(m, ri, cj, msg, len);
    if (!st) st = full_pattern(m, ri, cj, nthreads, &A->rowptr, &A->col, gptr, gidx, msg, len);
    if (st) goto cleanup;
    A->n = (int32_t)m->n;
    A->val = ildl_malloc(sizeof(double) * (size_t)(A->rowptr[A->n] + 1));
    if (!A->val) { st = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    gather(A->rowptr[A->n], *gptr, *gidx, m->values, A->val);

cleanup:
    if (st == ILDL_ERR_OUT_OF_MEMORY && msg && !msg[0]) ildl_msg(msg, len, "out of memory");
    if (st) {
        ildl_csr_free(A);
        free(*gptr); free(*gidx);
        *gptr = *gidx = NULL;
    }
    free(ri); free(cj);
    return st;
}

/* ildl_setup_matrix and ildl_analyse_matrix (defer: no backend state until ildl_factor). */
static int setup_matrix(const ildl_matrix *m, const ildl_options *opts, int defer, ildl_handle **out)
{
    if (!out) return ildl_api_setup_fail(ILDL_ERR_NULL_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!m) return ildl_api_setup_fail(ILDL_ERR_NULL_ARGUMENT, "m is NULL");
    char msg[512] = "";
    int st = check_matrix(m, msg, sizeof msg);
    if (st) return ildl_api_setup_fail(st, "%s", msg);
    if (plain_layout(m))
        return ildl_api_setup_csr((int32_t)m->n, m->rows, m->cols, m->values, opts, defer, out);
    /* the options' threads where they are valid (the analysis checks them), else one */
    int nthreads = 1;
#ifdef _OPENMP
    nthreads = omp_get_max_threads();
#endif
    if (opts && opts->num_threads != 0)
        nthreads = opts->num_threads > 0 && opts->num_threads <= ILDL_MAX_THREADS ? opts->num_threads : 1;
    ildl_csr A;
    int64_t *gptr, *gidx;
    st = convert(m, nthreads, &A, &gptr, &gidx, msg, sizeof msg);
    if (st) return ildl_api_setup_fail(st, "%s", msg);
    st = ildl_api_setup_csr(A.n, A.rowptr, A.col, A.val, opts, defer, out); /* its message set on failure */
    ildl_csr_free(&A);
    if (st) {
        free(gptr); free(gidx);
        return st;
    }
    (*out)->gptr = gptr;
    (*out)->gidx = gidx;
    (*out)->desc_nnz = m->nnz;
    return ILDL_SUCCESS;
}

ILDL_API int ildl_setup_matrix(const ildl_matrix *m, const ildl_options *opts, ildl_handle **out)
{
    return setup_matrix(m, opts, 0, out);
}

ILDL_API int ildl_analyse_matrix(const ildl_matrix *m, const ildl_options *opts, ildl_handle **out)
{
    return setup_matrix(m, opts, 1, out);
}

/* The position of (i, j) in h's sorted full pattern, or -1. */
static int64_t find_entry(const ildl_csr *A, int32_t i, int32_t j)
{
    int64_t lo = A->rowptr[i], hi = A->rowptr[i + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (A->col[mid] < j) lo = mid + 1;
        else hi = mid;
    }
    return lo < A->rowptr[i + 1] && A->col[lo] == j ? lo : -1;
}

static int factor_matrix(ildl_handle *h, const ildl_matrix *m)
{
    char msg[512] = "";
    int st = check_matrix(m, msg, sizeof msg);
    if (st) return ildl_api_fail(h, st, "%s", msg);
    if (m->n != h->A.n)
        return ildl_api_fail(h, ILDL_ERR_SIZE_MISMATCH, "m->n = %lld but the handle's n = %d", (long long)m->n,
                             (int)h->A.n);
    int64_t nc = h->A.rowptr[h->A.n];
    int32_t *ri = ildl_malloc(sizeof(int32_t) * (size_t)(m->nnz + 1));
    int32_t *cj = ildl_malloc(sizeof(int32_t) * (size_t)(m->nnz + 1));
    double *full = calloc((size_t)nc + 1, sizeof(double));
    int64_t *seen = m->duplicates == ILDL_DUPLICATES_REFUSE ? calloc((size_t)nc + 1, sizeof(int64_t)) : NULL;
    if (!ri || !cj || !full || (m->duplicates == ILDL_DUPLICATES_REFUSE && !seen)) {
        st = ildl_api_fail(h, ILDL_ERR_OUT_OF_MEMORY, "out of memory");
        goto cleanup;
    }
    st = read_entries(m, ri, cj, msg, sizeof msg);
    if (st) { ildl_api_fail(h, st, "%s", msg); goto cleanup; }
    for (int64_t k = 0; k < m->nnz; k++)
        for (int side = 0; side < 2; side++) {
            if (side == 1 && (m->view == ILDL_VIEW_FULL || ri[k] == cj[k])) break;
            int32_t i = side ? cj[k] : ri[k], j = side ? ri[k] : cj[k];
            int64_t p = find_entry(&h->A, i, j);
            if (p < 0) {
                st = ildl_api_fail(h, ILDL_ERR_PATTERN, "entry %lld at (%lld,%lld) is not in the setup's pattern",
                                   (long long)k, (long long)ri[k] + m->base, (long long)cj[k] + m->base);
                goto cleanup;
            }
            int64_t c = h->src[p];
            if (seen) {
                if (seen[c]) {
                    st = ildl_api_fail(h, ILDL_ERR_DUPLICATE, "entries %lld and %lld are both at (%lld,%lld) "
                                       "(duplicates refused)", (long long)(seen[c] - 1), (long long)k,
                                       (long long)i + m->base, (long long)j + m->base);
                    goto cleanup;
                }
                seen[c] = k + 1;
            }
            full[c] += m->values[k];
        }
    st = ildl_api_factor(h, full);

cleanup:
    if (st) h->factored = 0;
    free(ri); free(cj); free(full); free(seen);
    return st;
}

ILDL_API int ildl_factor_matrix(ildl_handle *h, const ildl_matrix *m)
{
    if (!h) return ILDL_ERR_NULL_ARGUMENT;
    h->err[0] = 0;
    if (!m) {
        h->factored = 0;
        return ildl_api_fail(h, ILDL_ERR_NULL_ARGUMENT, "m is NULL");
    }
    int prev = ildl_api_threads_push(h), st = factor_matrix(h, m);
    ildl_api_threads_pop(prev);
    return st;
}

int ildl_api_matrix_to_csr(const ildl_matrix *m, ildl_csr *A, char *msg, size_t len)
{
    memset(A, 0, sizeof *A);
    int st = check_matrix(m, msg, len);
    if (st) return st;
    int64_t *gptr, *gidx;
    st = convert(m, 1, A, &gptr, &gidx, msg, len);
    free(gptr); free(gidx);
    return st;
}

ILDL_API int ildl_setup(int32_t n, const int64_t *rowptr, const int32_t *colind, const double *values,
                        const ildl_options *opts, ildl_handle **out)
{
    return ildl_api_setup_csr(n, rowptr, colind, values, opts, 0, out);
}
