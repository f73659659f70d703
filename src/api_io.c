/* api_io.c -- the Matrix Market reader and writer of src/io in the public API: a matrix into an
 * ildl_matrix whose arrays the library owns, any ildl_matrix out, and dense vectors in. */
#include <stdlib.h>
#include <string.h>
#include "api_internal.h"
#include "core/util.h"
#include "io/mmio.h"

#define OWNED 0x4f574e44 /* ildl_matrix.reserved_int[0] of a matrix whose arrays the library allocated */

ILDL_API int ildl_matrix_read(const char *path, ildl_matrix *m)
{
    if (!m) return ildl_api_setup_fail(ILDL_ERR_NULL_ARGUMENT, "m is NULL");
    ildl_matrix_init(m);
    if (!path) return ildl_api_setup_fail(ILDL_ERR_NULL_ARGUMENT, "path is NULL");
    ildl_csr A;
    char msg[512] = "";
    int st = ildl_mm_read(path, &A, msg, sizeof msg);
    if (st) return ildl_api_setup_fail(st, "%s", msg[0] ? msg : ildl_strerror(st));
    m->n = A.n;
    m->nnz = A.rowptr[A.n];
    m->rows = A.rowptr;
    m->cols = A.col;
    m->values = A.val;
    m->reserved_int[0] = OWNED; /* read here: ildl_matrix_free frees its arrays */
    return ILDL_SUCCESS;
}

ILDL_API int ildl_matrix_free(ildl_matrix *m)
{
    if (!m) return ILDL_SUCCESS;
    if (m->reserved_int[0] == OWNED) {
        free((void *)m->rows);
        free((void *)m->cols);
        free((void *)m->values);
    }
    ildl_matrix_init(m);
    return ILDL_SUCCESS;
}

ILDL_API int ildl_matrix_write(const char *path, const ildl_matrix *m)
{
    if (!path || !m) return ildl_api_setup_fail(ILDL_ERR_NULL_ARGUMENT, "path and m must not be NULL");
    ildl_csr A;
    char msg[512] = "";
    int st = ildl_api_matrix_to_csr(m, &A, msg, sizeof msg);
    if (!st) st = ildl_mm_write(path, &A, msg, sizeof msg);
    ildl_csr_free(&A);
    return st ? ildl_api_setup_fail(st, "%s", msg[0] ? msg : ildl_strerror(st)) : ILDL_SUCCESS;
}

ILDL_API int ildl_vector_read(const char *path, int64_t want_n, double **x, int64_t *n)
{
    if (!x || !n || !path) return ildl_api_setup_fail(ILDL_ERR_NULL_ARGUMENT, "path, x and n must not be NULL");
    *x = NULL;
    *n = 0;
    if (want_n < 0 || want_n > INT32_MAX)
        return ildl_api_setup_fail(ILDL_ERR_SIZE_MISMATCH, "want_n = %lld is out of range", (long long)want_n);
    int32_t len = 0;
    char msg[512] = "";
    int st = ildl_mm_read_vector(path, (int32_t)want_n, x, &len, msg, sizeof msg);
    if (st) return ildl_api_setup_fail(st, "%s", msg[0] ? msg : ildl_strerror(st));
    *n = len;
    return ILDL_SUCCESS;
}

ILDL_API void ildl_vector_free(double *x) { free(x); }
