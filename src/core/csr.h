/* csr.h -- the validated sparse matrix every stage works on: n x n, CSR, 0-based,
 * full symmetric pattern, columns sorted ascending in each row, no duplicates. */
#ifndef ILDL_CORE_CSR_H
#define ILDL_CORE_CSR_H
#include <stddef.h>
#include <stdint.h>

typedef struct ildl_csr {
    int32_t n;
    int64_t *rowptr; /* [n+1] */
    int32_t *col;    /* [rowptr[n]] sorted within each row */
    double *val;     /* [rowptr[n]] */
} ildl_csr;

/* Allocate an n x n CSR with room for nnz entries (rowptr zeroed). ILDL_SUCCESS or OOM. */
int ildl_csr_alloc(int32_t n, int64_t nnz, ildl_csr *out);

/* Free the arrays of A and zero it (A may be partially allocated or zeroed). */
void ildl_csr_free(ildl_csr *A);

/* Deep copy src into dst. ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_csr_copy(const ildl_csr *src, ildl_csr *dst);

/* Check a caller's CSR: n>0, rowptr monotone from 0, indices in range, no duplicates,
 * finite values, symmetric pattern and values (|a_ij - a_ji| <= sym_tol*max(|a_ij|,|a_ji|)),
 * no empty row. Returns an ILDL_* status and, on failure, a message in msg (msglen bytes)
 * naming the offending row/entry. Does not require sorted columns. */
int ildl_csr_validate(int32_t n, const int64_t *rowptr, const int32_t *col, const double *val,
                      double sym_tol, char *msg, size_t msglen);

/* ildl_csr_validate in two steps, for a caller that needs the sorted copy anyway:
 * _entries checks everything but duplicates and symmetry (rowptr, ranges, empty rows, NaN/Inf);
 * _sorted checks duplicates and symmetry on ildl_csr_from_user's copy of those same arrays.
 * Same statuses and messages as ildl_csr_validate. */
int ildl_csr_validate_entries(int32_t n, const int64_t *rowptr, const int32_t *col, const double *val,
                              char *msg, size_t msglen);
int ildl_csr_validate_sorted(const ildl_csr *S, double sym_tol, char *msg, size_t msglen);

/* ildl_csr_validate_sorted that also fills tmap[q] ([nnz]) with the slot of the transposed
 * entry of slot q, which the symmetry check finds anyway (tmap is undefined on failure). */
int ildl_csr_validate_sorted_tmap(const ildl_csr *S, double sym_tol, int64_t *tmap, char *msg,
                                  size_t msglen);

/* Build a sorted CSR copy of a caller's (validated) CSR; perm_out (optional, [nnz]) receives
 * for each sorted slot the index of the caller's entry it came from. Equal columns keep the
 * caller's order. ILDL_SUCCESS, ILDL_ERR_OUT_OF_MEMORY, or ILDL_ERR_DUPLICATE for a row of
 * 2^32 or more entries (which, with n < 2^31, must repeat a column). */
int ildl_csr_from_user(int32_t n, const int64_t *rowptr, const int32_t *col, const double *val,
                       ildl_csr *out, int64_t *perm_out);

/* The order of A x's sums, which the CUDA backend's SpMV keeps bit for bit: a row of at most
 * ILDL_SPMV_LONG_ROW entries is summed in order (one GPU thread per row); a longer one (a
 * dense row of a KKT system, which one thread would take alone while the rest of the GPU
 * waits: bloweya's 10 001 entries, 0.8 ms of an 8 us SpMV) in ILDL_SPMV_LANES strided sums, sum l
 * over its entries l, l + 32, l + 64, ... in order, then s_l = s_l + s_(l+h) for h = 16, 8, 4,
 * 2, 1 and l < h: s_0 (one warp per row, the halving by shuffles). */
#define ILDL_SPMV_LONG_ROW 128
#define ILDL_SPMV_LANES 32

/* y = A x (A full pattern), in the order above. */
void ildl_csr_matvec(const ildl_csr *A, const double *x, double *y);
/* y[j] = A x[j] for j < m (1..16 vectors, A read once): each y[j] the bits of ildl_csr_matvec. */
void ildl_csr_matvec_multi(const ildl_csr *A, int m, const double *const *x, double *const *y);

/* B = P A P^T with perm[new] = old (B row k is A row perm[k]); B sorted. */
int ildl_csr_permute(const ildl_csr *A, const int32_t *perm, ildl_csr *B);

/* ildl_csr_permute that also tracks where each entry came from: src_out[q] (optional,
 * [nnz]) = src[p] for B's entry q taken from A's entry p, or p itself when src is NULL.
 * A's rows need not be sorted; ties in a row are kept in A's order. */
int ildl_csr_permute_src(const ildl_csr *A, const int32_t *perm, const int64_t *src, ildl_csr *B,
                         int64_t *src_out);

/* max |a_ij| (0 for an all-zero matrix). */
double ildl_csr_max_abs(const ildl_csr *A);

#endif
