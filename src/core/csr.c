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

/* A row is sorted by (column, source position): ties are duplicates, which validation then
 * rejects, but a total order keeps every sort's result the same. The pair is packed into one
 * unsigned key, column (flipped into unsigned order) above the entry's offset in its row, so
 * compares and moves are single integers and the offset comes back from the low half. */
#define ROW_KEY_MAX_LEN ((int64_t)UINT32_MAX)

static uint64_t row_key(int32_t c, int64_t off)
{
    return ((uint64_t)((uint32_t)c ^ 0x80000000u) << 32) | (uint64_t)off;
}

static int32_t key_col(uint64_t key) { return (int32_t)((uint32_t)(key >> 32) ^ 0x80000000u); }

static int64_t key_off(uint64_t key) { return (int64_t)(key & 0xffffffffu); }

static int key_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* 1 if col[0..len) is ascending (equal neighbours allowed: they stay in source order). */
static int row_sorted(const int32_t *col, int64_t len)
{
    for (int64_t k = 1; k < len; k++)
        if (col[k - 1] > col[k]) return 0;
    return 1;
}

/* Sort the distinct keys key[0..len): insertion sort for short rows, else qsort. */
static void sort_keys(uint64_t *key, int64_t len)
{
    if (len > 32) {
        qsort(key, (size_t)len, sizeof(uint64_t), key_cmp);
        return;
    }
    for (int64_t k = 1; k < len; k++) {
        uint64_t x = key[k];
        int64_t j = k - 1;
        for (; j >= 0 && key[j] > x; j--) key[j + 1] = key[j];
        key[j + 1] = x;
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
#pragma omp parallel for schedule(static) reduction(max : maxrow)
    for (int32_t i = 0; i < n; i++) {
        out->rowptr[i] = rowptr[i] - rowptr[0];
        if (rowptr[i + 1] - rowptr[i] > maxrow) maxrow = rowptr[i + 1] - rowptr[i];
    }
    out->rowptr[n] = nnz;
    if (maxrow > ROW_KEY_MAX_LEN) { /* 2^32 entries in a row of n < 2^31 columns: duplicates */
        ildl_csr_free(out);
        return ILDL_ERR_DUPLICATE;
    }
    int oom = 0;
    /* rows are independent and keep their positions, so threads change nothing in the result */
#pragma omp parallel
    {
        uint64_t *key = ildl_thread_scratch(sizeof(uint64_t) * (size_t)(maxrow > 0 ? maxrow : 1), &oom);
#pragma omp for schedule(dynamic, 4096)
        for (int32_t i = 0; i < n; i++) {
            if (!key) continue;
            int64_t len = rowptr[i + 1] - rowptr[i], q = out->rowptr[i];
            const int32_t *ci = col + rowptr[i];
            if (row_sorted(ci, len)) { /* the usual case: copy */
                for (int64_t k = 0; k < len; k++, q++) {
                    out->col[q] = ci[k];
                    out->val[q] = val ? val[rowptr[i] + k] : 1.0;
                    if (perm_out) perm_out[q] = rowptr[i] + k;
                }
                continue;
            }
            for (int64_t k = 0; k < len; k++) key[k] = row_key(ci[k], k);
            sort_keys(key, len);
            for (int64_t k = 0; k < len; k++, q++) {
                int64_t p = rowptr[i] + key_off(key[k]);
                out->col[q] = key_col(key[k]);
                out->val[q] = val ? val[p] : 1.0;
                if (perm_out) perm_out[q] = p;
            }
        }
        free(key);
    }
    if (oom) {
        ildl_csr_free(out);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    return ILDL_SUCCESS;
}

/* Row i of the sorted copy S: no duplicates, every (i,j) has a (j,i) within sym_tol;
 * tmap (optional) receives the slot of (j,i) for every slot of the row. */
static int check_sym_row(const ildl_csr *S, int32_t i, double sym_tol, int64_t *tmap, char *msg,
                         size_t msglen)
{
    for (int64_t p = S->rowptr[i]; p < S->rowptr[i + 1]; p++) {
        int32_t j = S->col[p];
        if (p > S->rowptr[i] && S->col[p - 1] == j) {
            ildl_msg(msg, msglen, "duplicate entry (%d,%d)", (int)i, (int)j);
            return ILDL_ERR_DUPLICATE;
        }
        if (j == i) {
            if (tmap) tmap[p] = p;
            continue;
        }
        int64_t q = find_sorted(S->col, S->rowptr[j], S->rowptr[j + 1], i);
        if (q < 0) {
            ildl_msg(msg, msglen, "entry (%d,%d) present but (%d,%d) missing: pattern not symmetric",
                     (int)i, (int)j, (int)j, (int)i);
            return ILDL_ERR_NOT_SYMMETRIC;
        }
        if (tmap) tmap[p] = q;
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

/* Row i of a caller's CSR (rowptr already monotone): not empty, columns in [0,n), values
 * finite. ILDL_SUCCESS or the status of its first bad entry, with a message. */
static int check_entries_row(int32_t n, const int64_t *rowptr, const int32_t *col,
                             const double *val, int32_t i, char *msg, size_t msglen)
{
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
        if (!isfinite(val[p])) {
            ildl_msg(msg, msglen, "entry (%d,%d) is %g", (int)i, (int)col[p], val[p]);
            return ILDL_ERR_NAN_INF;
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
    /* rows in parallel; the first bad row is found as a serial scan would find it */
    int32_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (int32_t i = 0; i < n; i++)
        if (rowptr[i + 1] < rowptr[i] && i < bad) bad = i;
    if (bad < n) {
        ildl_msg(msg, msglen, "rowptr decreases at row %d", (int)bad);
        return ILDL_ERR_INDEX_RANGE;
    }
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : bad)
    for (int32_t i = 0; i < n; i++)
        if (i < bad && check_entries_row(n, rowptr, col, val, i, NULL, 0)) bad = i;
    return bad < n ? check_entries_row(n, rowptr, col, val, bad, msg, msglen) : ILDL_SUCCESS;
}

int ildl_csr_validate_sorted_tmap(const ildl_csr *S, double sym_tol, int64_t *tmap, char *msg,
                                  size_t msglen)
{
    /* rows in parallel; the message names the first bad row, as a serial scan would */
    int32_t n = S->n, bad = n;
#pragma omp parallel for schedule(dynamic, 4096) reduction(min : bad)
    for (int32_t i = 0; i < n; i++)
        if (i < bad && check_sym_row(S, i, sym_tol, tmap, NULL, 0)) bad = i;
    return bad < n ? check_sym_row(S, bad, sym_tol, NULL, msg, msglen) : ILDL_SUCCESS;
}

int ildl_csr_validate_sorted(const ildl_csr *S, double sym_tol, char *msg, size_t msglen)
{
    return ildl_csr_validate_sorted_tmap(S, sym_tol, NULL, msg, msglen);
}

int ildl_csr_validate(int32_t n, const int64_t *rowptr, const int32_t *col, const double *val,
                      double sym_tol, char *msg, size_t msglen)
{
    int st = ildl_csr_validate_entries(n, rowptr, col, val, msg, msglen);
    if (st) return st;
    /* sorted copy to check duplicates and symmetry in O(nnz log) */
    ildl_csr S;
    st = ildl_csr_from_user(n, rowptr, col, val, &S, NULL);
    if (st) { /* out of memory, or a row too long to be free of repeated columns */
        ildl_msg(msg, msglen, st == ILDL_ERR_DUPLICATE ? "a row has 2^32 or more entries, so it repeats a column"
                                                       : "out of memory while validating");
        return st;
    }
    st = ildl_csr_validate_sorted(&S, sym_tol, msg, msglen);
    ildl_csr_free(&S);
    return st;
}

/* Row i of A times x in the reference order (csr.h): in order, or, for a long row, by
 * ILDL_SPMV_LANES strided sums combined by halving. */
static double row_dot(const ildl_csr *A, int32_t i, const double *x)
{
    int64_t p0 = A->rowptr[i], p1 = A->rowptr[i + 1];
    if (p1 - p0 <= ILDL_SPMV_LONG_ROW) {
        double s = 0.0;
        for (int64_t p = p0; p < p1; p++) s += A->val[p] * x[A->col[p]];
        return s;
    }
    double s[ILDL_SPMV_LANES];
    for (int l = 0; l < ILDL_SPMV_LANES; l++) {
        double t = 0.0;
        for (int64_t p = p0 + l; p < p1; p += ILDL_SPMV_LANES) t += A->val[p] * x[A->col[p]];
        s[l] = t;
    }
    for (int h = ILDL_SPMV_LANES / 2; h > 0; h /= 2)
        for (int l = 0; l < h; l++) s[l] = s[l] + s[l + h];
    return s[0];
}

void ildl_csr_matvec(const ildl_csr *A, const double *x, double *y)
{
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < A->n; i++) y[i] = row_dot(A, i, x);
}

void ildl_csr_matvec_multi(const ildl_csr *A, int m, const double *const *x, double *const *y)
{
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < A->n; i++) {
        if (A->rowptr[i + 1] - A->rowptr[i] > ILDL_SPMV_LONG_ROW) {
            for (int j = 0; j < m; j++) y[j][i] = row_dot(A, i, x[j]);
            continue;
        }
        double s[16];
        for (int j = 0; j < m; j++) s[j] = 0.0;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double a = A->val[p];
            int32_t c = A->col[p];
            for (int j = 0; j < m; j++) s[j] += a * x[j][c];
        }
        for (int j = 0; j < m; j++) y[j][i] = s[j];
    }
}

/* Largest row length of A (0 for no entries). */
static int64_t max_row_len(const ildl_csr *A)
{
    int64_t m = 0;
#pragma omp parallel for schedule(static) reduction(max : m)
    for (int32_t i = 0; i < A->n; i++)
        if (A->rowptr[i + 1] - A->rowptr[i] > m) m = A->rowptr[i + 1] - A->rowptr[i];
    return m;
}

int ildl_csr_permute_src(const ildl_csr *A, const int32_t *perm, const int64_t *src, ildl_csr *B,
                         int64_t *src_out)
{
    int32_t n = A->n;
    int st = ildl_csr_alloc(n, A->rowptr[n], B);
    if (st) return st;
    int32_t *inv = ildl_malloc(sizeof(int32_t) * (size_t)n);
    if (!inv) {
        ildl_csr_free(B);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
#pragma omp parallel for schedule(static)
    for (int32_t k = 0; k < n; k++) inv[perm[k]] = k;
    for (int32_t k = 0; k < n; k++) /* O(n) prefix sum: cheaper serial than split */
        B->rowptr[k + 1] = B->rowptr[k] + (A->rowptr[perm[k] + 1] - A->rowptr[perm[k]]);
    int64_t maxrow = max_row_len(A);
    if (maxrow > ROW_KEY_MAX_LEN) { /* as in ildl_csr_from_user */
        free(inv);
        ildl_csr_free(B);
        return ILDL_ERR_DUPLICATE;
    }
    int oom = 0;
    /* one pass per row: gather, sort by (new column, position in A), write; rows are
     * independent, so the thread count changes nothing */
#pragma omp parallel
    {
        uint64_t *key = ildl_thread_scratch(sizeof(uint64_t) * (size_t)(maxrow > 0 ? maxrow : 1), &oom);
#pragma omp for schedule(dynamic, 4096)
        for (int32_t k = 0; k < n; k++) {
            if (!key) continue;
            int32_t i = perm[k];
            int64_t len = A->rowptr[i + 1] - A->rowptr[i], q = B->rowptr[k];
            for (int64_t t = 0; t < len; t++) key[t] = row_key(inv[A->col[A->rowptr[i] + t]], t);
            sort_keys(key, len);
            for (int64_t t = 0; t < len; t++, q++) {
                int64_t p = A->rowptr[i] + key_off(key[t]);
                B->col[q] = key_col(key[t]);
                B->val[q] = A->val[p];
                if (src_out) src_out[q] = src ? src[p] : p;
            }
        }
        free(key);
    }
    free(inv);
    if (oom) {
        ildl_csr_free(B);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    return ILDL_SUCCESS;
}

int ildl_csr_permute(const ildl_csr *A, const int32_t *perm, ildl_csr *B)
{
    return ildl_csr_permute_src(A, perm, NULL, B, NULL);
}

double ildl_csr_max_abs(const ildl_csr *A)
{
    double m = 0.0;
    for (int64_t p = 0; p < A->rowptr[A->n]; p++) m = fmax(m, fabs(A->val[p]));
    return m;
}
