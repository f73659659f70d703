/* testutil.h -- helpers shared by the cmocka tests. Include after <cmocka.h>'s prerequisites:
 *   #include <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> then <cmocka.h> then this. */
#ifndef ILDL_TESTUTIL_H
#define ILDL_TESTUTIL_H
#include <stdint.h>
#include "blockildl.h"
#include "core/csr.h"

/* Folder of the shared real matrices: $ILDL_MATRICES_DIR if set, else ../shared/matrices. */
const char *ildl_test_matrices_dir(void);

/* Path of a shared real matrix ("tuma2.mtx.gz") under ILDL_SHARED_MATRICES, or NULL (and a
 * printed "SKIP: ..." line) when the shared folder is not beside the clone. The returned
 * string is static storage (valid until the next call). */
const char *ildl_test_shared_matrix(const char *name);

/* Path of a file under the repository's data/ folder (static storage). */
const char *ildl_test_data_file(const char *name);

/* Build an n x n symmetric CSR (full pattern, sorted) from the upper-or-lower triangle
 * triplets (i, j, v) (both (i,j) and (j,i) are inserted unless i == j). Asserts on OOM. */
void ildl_test_csr_from_triplets(int32_t n, int64_t nt, const int32_t *ti, const int32_t *tj,
                                 const double *tv, ildl_csr *A);

/* Random sparse symmetric indefinite matrix: each row gets about deg off-diagonal entries
 * in (-1,1), diagonal in (-dscale, dscale) with random sign (some exactly zero if zero_diag
 * > 0: that fraction of diagonals is 0). Deterministic from seed. */
void ildl_test_random_sym(int32_t n, int deg, double dscale, double zero_diag, uint64_t seed,
                          ildl_csr *A);

/* 2D 5-point Laplacian on an m x m grid, shifted: diag = 4 - shift. */
void ildl_test_laplace2d(int32_t m, double shift, ildl_csr *A);

/* 3D 7-point Laplacian on an m x m x m grid, shifted: diag = 6 - shift. */
void ildl_test_laplace3d(int32_t m, double shift, ildl_csr *A);

/* The KKT matrix [[0, B], [B^T, H]] of order m + k (1 <= m <= k), its zero block first: B (m x k)
 * has b(i,i) in [1,2) and one more entry in (-1/2, 1/2) per row (full row rank), H =
 * tridiag(-1, 4, -1). Nonsingular, inertia (k, m, 0). Deterministic from seed. */
void ildl_test_kkt_zero_first(int32_t m, int32_t k, uint64_t seed, ildl_csr *A);

/* Dense copy (n*n row-major, malloc'ed) of a CSR. */
double *ildl_test_dense(const ildl_csr *A);

/* Simple deterministic PRNG (splitmix64) in [0,1). */
double ildl_test_rand(uint64_t *state);

/* ||b - A x|| / ||b|| in long double (no square of a double over- or underflows there): an
 * independent check of a reported true residual, for any finite b and x. */
double ildl_test_residual_ld(const ildl_csr *A, const double *x, const double *b);

/* Set the CUDA backend's internal settings (src/cuda/tuning.h) from ILDL_TEST_TUNING, a list
 * "field=value,..." of its int fields (sf_nostage, sf_vglobal, sf_split, sf_chain_order,
 * pin_host), over the defaults; unset or empty: the defaults. Prints "tuning: <the list>" when
 * it applied one. Returns 0, or -1 (and a message) on an unknown field or a bad value. Call it
 * before the program makes its first handle (bench/device-check.sh sets the variable). */
int ildl_test_apply_tuning(void);

/* ildl_setup of A with o is refused as an invalid option, makes no handle, and the message of
 * ildl_last_error(NULL) contains needle: 1 if so, else 0 (what happened printed). */
/* *o = the defaults with the complete rung's factor options: blocking and ordering as given, the
 * complete block fill (ILDL_MAX_FILL_LEVEL, unlimited capacity), nothing dropped. */
void ildl_test_complete_options(ildl_options *o, int blocking, int ordering);

int ildl_test_refused(const ildl_csr *A, const ildl_options *o, const char *needle);

#endif
