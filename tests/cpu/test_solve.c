/* test_solve.c -- the level-scheduled block solves (src/cpu/solve.c).
 * With a complete factor, solving A(q,q) x = y recovers x. With an incomplete factor the
 * solve must still invert exactly the matrix the store holds: solve(U^T D U z) = z, which
 * tests the solve (dense and sparse tiles, 1x1 and 2x2 pivots) apart from factor quality. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"
#include "support/factor_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "analyse/fill.h"
#include "analyse/levels.h"
#include "analyse/tiles.h"
#include "cpu/factor.h"

/* ---------------------------------------------------------------- fixtures */

/* Factor A (identity permutation, scaling 1) with the given blocking and parameters. */
static void factor(const ildl_csr *A, int maxbs, uint64_t seed, int lf, double ff, double tau,
                   int pivoting, ildl_tiles *T, ildl_factor_stats *st)
{
    int32_t n = A->n, nb;
    int32_t *bstart = ft_make_blocks(n, maxbs, seed, &nb);
    int64_t nnz = A->rowptr[n];
    int64_t *src = malloc(sizeof(int64_t) * (size_t)nnz);
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)n);
    double *s = malloc(sizeof(double) * (size_t)n);
    assert_true(src && perm && s);
    for (int64_t k = 0; k < nnz; k++) src[k] = k;
    for (int32_t k = 0; k < n; k++) {
        perm[k] = k;
        s[k] = 1.0;
    }
    ildl_coarse C;
    ildl_levels L;
    assert_int_equal(ildl_coarse_build(A, nb, bstart, lf < 0 ? nb : lf, &C), ILDL_SUCCESS);
    assert_int_equal(ildl_levels_compute(&C, &L), ILDL_SUCCESS);
    assert_int_equal(ildl_tiles_build(A, src, perm, nb, bstart, &C, &L, ff, 0, T), ILDL_SUCCESS);
    ildl_tiles_load_values(T, A->val, s);
    ildl_factor_params p;
    memset(&p, 0, sizeof(p));
    p.pivoting = pivoting;
    p.drop_tol = tau;
    p.pivot_tol = 1e-14;
    p.perturb = 1e-6;
    p.leftover = ILDL_LEFTOVER_SCAN;
    assert_int_equal(ildl_cpu_factor(T, &p, st), ILDL_SUCCESS);
    ildl_coarse_free(&C);
    ildl_levels_free(&L);
    free(bstart);
    free(src);
    free(perm);
    free(s);
}

/* y = A(q,q) x for the sparse A. */
static void matvec_perm(const ildl_csr *A, const int32_t *q, const double *x, double *y)
{
    int32_t n = A->n;
    int32_t *iq = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(iq);
    for (int32_t a = 0; a < n; a++) iq[q[a]] = a;
    for (int32_t a = 0; a < n; a++) {
        double s = 0.0;
        int32_t r = q[a];
        for (int64_t p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) s += A->val[p] * x[iq[A->col[p]]];
        y[a] = s;
    }
    free(iq);
}

/* Dense M = U^T D U from the tile store (unit upper U, 1x1/2x2 D). */
static double *stored_utdu(const ildl_tiles *T)
{
    int32_t n = T->n;
    double *U = calloc((size_t)n * n, sizeof(double)), *DU = calloc((size_t)n * n, sizeof(double));
    double *M = calloc((size_t)n * n, sizeof(double));
    assert_true(U && DU && M);
    for (int32_t k = 0; k < n; k++) U[(size_t)k * n + k] = 1.0;
    for (int64_t t = 0; t < T->ntiles; t++) {
        int32_t i = T->row[t], j = T->col[t];
        int mi = ildl_tiles_block_size(T, i), mj = ildl_tiles_block_size(T, j);
        size_t bi = (size_t)T->bstart[i], bj = (size_t)T->bstart[j];
        const double *v = T->val + T->off[t];
        if (T->format[t] == ILDL_TILE_SPARSE) {
            for (int64_t q = 0; q < T->nnz[t]; q++) {
                int r = T->idx[T->off[t] + q] >> 5, c = T->idx[T->off[t] + q] & 31;
                U[(bi + r) * n + bj + c] = v[q];
            }
        } else {
            for (int r = 0; r < mi; r++)
                for (int c = (i == j ? r + 1 : 0); c < mj; c++) U[(bi + r) * n + bj + c] = v[r * mj + c];
        }
    }
    for (int32_t k = 0; k < n; k++) {
        double d = T->d_diag[k], e = 0.0;
        int two = T->piv_type[k] == 2;
        if (two) e = T->d_off[k];
        for (int32_t c = 0; c < n; c++) {
            DU[(size_t)k * n + c] = d * U[(size_t)k * n + c] + (two ? e * U[(size_t)(k + 1) * n + c] : 0.0);
            if (two)
                DU[(size_t)(k + 1) * n + c] = e * U[(size_t)k * n + c] +
                                              T->d_diag[k + 1] * U[(size_t)(k + 1) * n + c];
        }
        if (two) k++;
    }
    for (int32_t k = 0; k < n; k++)
        for (int32_t a = k; a < n; a++) {
            double u = U[(size_t)k * n + a];
            if (u == 0.0) continue;
            for (int32_t c = 0; c < n; c++) M[(size_t)a * n + c] += u * DU[(size_t)k * n + c];
        }
    free(U);
    free(DU);
    return M;
}

static double rel_err(int32_t n, const double *x, const double *ref)
{
    double e = 0.0, r = 0.0;
    for (int32_t k = 0; k < n; k++) {
        e += (x[k] - ref[k]) * (x[k] - ref[k]);
        r += ref[k] * ref[k];
    }
    return sqrt(e / r);
}

static double *random_vec(int32_t n, uint64_t seed)
{
    double *x = malloc(sizeof(double) * (size_t)n);
    assert_non_null(x);
    for (int32_t k = 0; k < n; k++) x[k] = 2.0 * ildl_test_rand(&seed) - 1.0;
    return x;
}

/* KKT [[H, B^T], [B, 0]], H n1 x n1 SPD (diagonally dominant; diagonal only if hdiag),
 * B n2 x n1 with an independent entry per row. */
static void make_kkt(int32_t n1, int32_t n2, int hdiag, uint64_t seed, ildl_csr *A)
{
    int64_t cap = (int64_t)n1 * 4 + (int64_t)n2 * 4 + 16;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap), *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap), *rowsum = calloc((size_t)n1, sizeof(double));
    assert_true(ti && tj && tv && rowsum);
    int64_t m = 0;
    for (int32_t i = 0; i < n1 && !hdiag; i++) {
        for (int k = 0; k < 2; k++) {
            int32_t j = (int32_t)(ildl_test_rand(&seed) * n1);
            if (j >= n1) j = n1 - 1;
            if (j == i) continue;
            double v = 2.0 * ildl_test_rand(&seed) - 1.0;
            ti[m] = i; tj[m] = j; tv[m] = v; m++;
            rowsum[i] += fabs(v);
            rowsum[j] += fabs(v);
        }
    }
    for (int32_t i = 0; i < n1; i++) {
        ti[m] = i; tj[m] = i; tv[m] = rowsum[i] + 0.5 + ildl_test_rand(&seed); m++;
    }
    for (int32_t r = 0; r < n2; r++) {
        int32_t c0 = (int32_t)((int64_t)r * n1 / n2);
        ti[m] = n1 + r; tj[m] = c0; tv[m] = 1.0 + ildl_test_rand(&seed); m++;
        for (int k = 0; k < 2; k++) {
            int32_t c = (int32_t)(ildl_test_rand(&seed) * n1);
            if (c >= n1) c = n1 - 1;
            if (c == c0) continue;
            ti[m] = n1 + r; tj[m] = c; tv[m] = 0.5 * (2.0 * ildl_test_rand(&seed) - 1.0); m++;
        }
    }
    ildl_test_csr_from_triplets(n1 + n2, m, ti, tj, tv, A);
    free(ti); free(tj); free(tv); free(rowsum);
}

/* ---------------------------------------------------------------- tests */

/* Complete factor: x = solve(A(q,q) x) to 1e-10, and the normwise backward error
 * ||A(q,q) x' - y|| / (||A||_F ||x'|| + ||y||) of the computed x' is at most 1e-12. */
static void exact_solve(const ildl_csr *A, int maxbs, uint64_t seed, int pivoting)
{
    ildl_tiles T;
    ildl_factor_stats st;
    int32_t n = A->n;
    factor(A, maxbs, seed, -1, 0.0, 0.0, pivoting, &T, &st);
    assert_int_equal(st.nperturbed, 0);
    int32_t *q = ft_global_perm(&T);
    double *x = random_vec(n, seed + 1), *y = malloc(sizeof(double) * (size_t)n);
    double *b = malloc(sizeof(double) * (size_t)n), *r = malloc(sizeof(double) * (size_t)n);
    assert_true(y && b && r);
    matvec_perm(A, q, x, y);
    memcpy(b, y, sizeof(double) * (size_t)n);
    ildl_cpu_invert_diagonal(&T);
    ildl_cpu_solve(&T, y);
    assert_true(rel_err(n, y, x) <= 1e-10);
    matvec_perm(A, q, y, r);
    double rn = 0.0, bn = 0.0, yn = 0.0, an = 0.0;
    for (int32_t k = 0; k < n; k++) {
        rn += (r[k] - b[k]) * (r[k] - b[k]);
        bn += b[k] * b[k];
        yn += y[k] * y[k];
    }
    for (int64_t p = 0; p < A->rowptr[n]; p++) an += A->val[p] * A->val[p];
    assert_true(sqrt(rn) <= 1e-12 * (sqrt(an) * sqrt(yn) + sqrt(bn)));
    free(q); free(x); free(y); free(b); free(r);
    ildl_tiles_free(&T);
}

static void test_solve_exact(void **state)
{
    (void)state;
    ildl_csr A;
    /* 25% zero diagonal, well coupled: 32-row diagonal tiles have no structurally zero row */
    ildl_test_random_sym(150, 16, 4.0, 0.25, 4, &A);
    exact_solve(&A, 32, 1, ILDL_PIVOT_BK);
    exact_solve(&A, 32, 2, ILDL_PIVOT_ROOK);
    ildl_csr_free(&A);
    make_kkt(120, 50, 0, 8, &A);
    exact_solve(&A, 32, 3, ILDL_PIVOT_BK);
    exact_solve(&A, 13, 4, ILDL_PIVOT_ROOK);
    ildl_csr_free(&A);
    ildl_test_laplace2d(11, 1.1, &A);
    exact_solve(&A, 32, 5, ILDL_PIVOT_NONE);
    exact_solve(&A, 7, 6, ILDL_PIVOT_BK);
    ildl_csr_free(&A);
}

/* Incomplete factor: solve(M z) = z for M = U^T D U as stored. Counts the sparse tiles and
 * 2x2 pivots seen, so the caller can check both kinds were exercised. */
static void incomplete_solve(const ildl_csr *A, int maxbs, uint64_t seed, int lf, double ff,
                             double tau, int pivoting, int64_t *nsparse, int64_t *n2x2)
{
    ildl_tiles T;
    ildl_factor_stats st;
    int32_t n = A->n;
    factor(A, maxbs, seed, lf, ff, tau, pivoting, &T, &st);
    assert_int_equal(st.nperturbed, 0); /* keeps M well conditioned enough for 1e-10 */
    for (int64_t t = 0; t < T.ntiles; t++) *nsparse += T.format[t] == ILDL_TILE_SPARSE;
    *n2x2 += st.n2x2;
    double *M = stored_utdu(&T), *z = random_vec(n, seed + 7), *y = calloc((size_t)n, sizeof(double));
    assert_non_null(y);
    for (int32_t a = 0; a < n; a++) {
        double s = 0.0;
        for (int32_t b = 0; b < n; b++) s += M[(size_t)a * n + b] * z[b];
        y[a] = s;
    }
    ildl_cpu_invert_diagonal(&T); /* after stored_utdu, which reads U_ii */
    ildl_cpu_solve(&T, y);
    assert_true(rel_err(n, y, z) <= 1e-10);
    free(M); free(z); free(y);
    ildl_tiles_free(&T);
}

static void test_solve_incomplete(void **state)
{
    (void)state;
    int64_t nsparse = 0, n2x2 = 0;
    ildl_csr A;
    ildl_test_random_sym(200, 6, 4.0, 0.0, 12, &A);
    incomplete_solve(&A, 32, 1, 1, 2.0, 1e-2, ILDL_PIVOT_BK, &nsparse, &n2x2);
    incomplete_solve(&A, 16, 2, 2, 1.5, 1e-3, ILDL_PIVOT_ROOK, &nsparse, &n2x2);
    ildl_csr_free(&A);
    make_kkt(150, 50, 0, 5, &A);
    incomplete_solve(&A, 32, 3, 1, 2.0, 1e-2, ILDL_PIVOT_ROOK, &nsparse, &n2x2);
    incomplete_solve(&A, 16, 4, 0, 1.0, 0.0, ILDL_PIVOT_BK, &nsparse, &n2x2);
    ildl_csr_free(&A);
    ildl_test_laplace2d(14, 0.7, &A);
    incomplete_solve(&A, 32, 5, 1, 2.0, 1e-2, ILDL_PIVOT_BK, &nsparse, &n2x2);
    ildl_csr_free(&A);
    assert_true(nsparse > 0);
    assert_true(n2x2 > 0);
}

/* A level wider than the factorization's in-flight budget (thousands of 1x1 blocks in level
 * 0), so it is processed in several chunks; the complete factor must still solve exactly. */
static void test_solve_wide_level(void **state)
{
    (void)state;
    ildl_csr A;
    make_kkt(4000, 40, 1, 21, &A);
    exact_solve(&A, 1, 9, ILDL_PIVOT_BK);
    ildl_csr_free(&A);
}

/* The chunk width rule the CPU reference and every CUDA solve kernel share: the narrowest of
 * 8 and 16 rows whose non-empty (column, range) chunks fit 32 lanes, else 32; backward 32. */
static void test_sparse_chunk_code(void **state)
{
    (void)state;
    uint16_t idx[32 * 32];
    int nz = 0;
    for (int r = 0; r < 32; r++) idx[nz++] = (uint16_t)(r * 32 + 5); /* one full column */
    assert_int_equal(ildl_sparse_chunk_code(nz, idx, 1), 2);        /* 4 chunks of 8 */
    assert_int_equal(ildl_sparse_chunk_code(nz, idx, 0), 0);
    assert_int_equal(ildl_sparse_chunk_code(0, idx, 1), 2);
    nz = 0; /* 9 columns with entries in every range of 8 rows: 36 chunks of 8, 18 of 16 */
    for (int r = 0; r < 32; r += 8)
        for (int c = 0; c < 9; c++) idx[nz++] = (uint16_t)(r * 32 + c);
    assert_int_equal(ildl_sparse_chunk_code(nz, idx, 1), 1);
    nz = 0; /* 17 columns in rows 0 and 16: 34 chunks of 8 and of 16 */
    for (int r = 0; r < 32; r += 16)
        for (int c = 0; c < 17; c++) idx[nz++] = (uint16_t)(r * 32 + c);
    assert_int_equal(ildl_sparse_chunk_code(nz, idx, 1), 0);
    nz = 0; /* 32 chunks exactly: 8 columns in every range */
    for (int r = 0; r < 32; r += 8)
        for (int c = 0; c < 8; c++) idx[nz++] = (uint16_t)(r * 32 + 2 * c);
    assert_int_equal(ildl_sparse_chunk_code(nz, idx, 1), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solve_exact),
        cmocka_unit_test(test_solve_incomplete),
        cmocka_unit_test(test_solve_wide_level),
        cmocka_unit_test(test_sparse_chunk_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
