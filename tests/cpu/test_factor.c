/* test_factor.c -- the CPU reference block-iLDL^T (src/cpu/factor.c).
 * Exactness: with full block fill, unlimited capacity and tau = 0 the factor is a complete
 * block LDL^T, so A(q,q) = U^T D U to rounding and D has A's inertia (Sylvester).
 * Incomplete: capacities, leftover grants and storage invariants, plus the identities an
 * incomplete factor still satisfies exactly (diagonal blocks; tiles nothing was dropped from).
 * Determinism: bitwise identical factors for 1 and 2 threads. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"
#include "support/factor_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "analyse/fill.h"
#include "analyse/levels.h"
#include "analyse/tiles.h"
#include "cpu/factor.h"

/* ---------------------------------------------------------------- fixtures */

/* Tile store of A (identity permutation, scaling 1) for the blocking bstart. */
static void build_tiles(const ildl_csr *A, int32_t nb, const int32_t *bstart, int lf, double ff,
                        ildl_tiles *T)
{
    int32_t n = A->n;
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
    assert_int_equal(ildl_coarse_build(A, nb, bstart, lf, &C), ILDL_SUCCESS);
    assert_int_equal(ildl_levels_compute(&C, &L), ILDL_SUCCESS);
    assert_int_equal(ildl_tiles_build(A, src, perm, nb, bstart, &C, &L, ff, 0, T), ILDL_SUCCESS);
    ildl_tiles_load_values(T, A->val, s);
    ildl_coarse_free(&C);
    ildl_levels_free(&L);
    free(src);
    free(perm);
    free(s);
}

static ildl_factor_params params(int pivoting, double tau, int threads)
{
    ildl_factor_params p;
    memset(&p, 0, sizeof(p));
    p.pivoting = pivoting;
    p.drop_tol = tau;
    p.pivot_tol = 1e-14;
    p.perturb = 1e-6;
    p.leftover = ILDL_LEFTOVER_SCAN;
    p.pair_hint = NULL;
    p.num_threads = threads;
    return p;
}

/* KKT matrix [[H, B^T], [B, 0]] (zero_first: [[0, B], [B^T, H]]): H n1 x n1 sparse SPD
 * (strictly diagonally dominant, positive diagonal), B n2 x n1 with a structurally
 * independent entry per row, so the inertia is (n1, n2, 0). */
static void make_kkt(int32_t n1, int32_t n2, int zero_first, uint64_t seed, ildl_csr *A)
{
    int64_t cap = (int64_t)n1 * 4 + (int64_t)n2 * 4 + 16;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap), *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap), *rowsum = calloc((size_t)n1, sizeof(double));
    assert_true(ti && tj && tv && rowsum);
    int32_t h0 = zero_first ? n2 : 0, b0 = zero_first ? 0 : n1; /* offsets of H and B rows */
    int64_t m = 0;
    for (int32_t i = 0; i < n1; i++) {
        for (int k = 0; k < 2; k++) {
            int32_t j = (int32_t)(ildl_test_rand(&seed) * n1);
            if (j >= n1) j = n1 - 1;
            if (j == i) continue;
            double v = 2.0 * ildl_test_rand(&seed) - 1.0;
            ti[m] = h0 + i; tj[m] = h0 + j; tv[m] = v; m++;
            rowsum[i] += fabs(v);
            rowsum[j] += fabs(v);
        }
    }
    for (int32_t i = 0; i < n1; i++) {
        ti[m] = h0 + i; tj[m] = h0 + i; tv[m] = rowsum[i] + 0.5 + ildl_test_rand(&seed); m++;
    }
    for (int32_t r = 0; r < n2; r++) {
        int32_t c0 = (int32_t)((int64_t)r * n1 / n2);
        ti[m] = b0 + r; tj[m] = h0 + c0; tv[m] = 1.0 + ildl_test_rand(&seed); m++;
        for (int k = 0; k < 2; k++) {
            int32_t c = (int32_t)(ildl_test_rand(&seed) * n1);
            if (c >= n1) c = n1 - 1;
            if (c == c0) continue;
            ti[m] = b0 + r; tj[m] = h0 + c; tv[m] = 0.5 * (2.0 * ildl_test_rand(&seed) - 1.0); m++;
        }
    }
    ildl_test_csr_from_triplets(n1 + n2, m, ti, tj, tv, A);
    free(ti); free(tj); free(tv); free(rowsum);
}

/* Stored factor value p in either precision (float to double is exact). */
static double tval(const ildl_tiles *T, int64_t p) { return T->val32 ? (double)T->val32[p] : T->val[p]; }

/* ---------------------------------------------------------------- dense reconstruction */

/* Dense unit upper U (n x n) and block diagonal D from the tile store; checks that diagonal
 * tiles hold zeros on and below their diagonal. */
static void factor_dense(const ildl_tiles *T, double *U, double *D)
{
    int32_t n = T->n;
    memset(U, 0, sizeof(double) * (size_t)n * n);
    memset(D, 0, sizeof(double) * (size_t)n * n);
    for (int32_t k = 0; k < n; k++) U[(size_t)k * n + k] = 1.0;
    for (int64_t t = 0; t < T->ntiles; t++) {
        int32_t i = T->row[t], j = T->col[t];
        int mi = ildl_tiles_block_size(T, i), mj = ildl_tiles_block_size(T, j);
        size_t bi = (size_t)T->bstart[i], bj = (size_t)T->bstart[j];
        int64_t o = T->off[t];
        if (i == j) {
            assert_int_equal(T->format[t], ILDL_TILE_DENSE);
            for (int r = 0; r < mi; r++)
                for (int c = 0; c < mi; c++) {
                    if (c > r) U[(bi + r) * n + bi + c] = tval(T, o + r * mi + c);
                    else assert_true(tval(T, o + r * mi + c) == 0.0);
                }
        } else if (T->format[t] == ILDL_TILE_SPARSE) {
            for (int64_t q = 0; q < T->nnz[t]; q++) {
                int r = T->idx[T->off[t] + q] >> 5, c = T->idx[T->off[t] + q] & 31;
                U[(bi + r) * n + bj + c] = tval(T, o + q);
            }
        } else {
            for (int r = 0; r < mi; r++)
                for (int c = 0; c < mj; c++) U[(bi + r) * n + bj + c] = tval(T, o + r * mj + c);
        }
    }
    for (int32_t k = 0; k < n; k++) {
        D[(size_t)k * n + k] = T->d_diag[k];
        if (T->piv_type[k] == 2) {
            assert_true(k + 1 < n);
            assert_int_equal(T->piv_type[k + 1], 0);
            D[(size_t)k * n + k + 1] = D[(size_t)(k + 1) * n + k] = T->d_off[k];
            D[(size_t)(k + 1) * n + k + 1] = T->d_diag[k + 1];
            k++;
        } else {
            assert_int_equal(T->piv_type[k], 1);
        }
    }
}

/* M = U^T D U (D tridiagonal at most); absval: |U|^T |D| |U|. */
static double *form_utdu(int32_t n, const double *U, const double *D, int absval)
{
    double *DU = calloc((size_t)n * n, sizeof(double)), *M = calloc((size_t)n * n, sizeof(double));
    assert_true(DU && M);
    for (int32_t k = 0; k < n; k++)
        for (int32_t l = (k > 0 ? k - 1 : 0); l <= k + 1 && l < n; l++) {
            double d = D[(size_t)k * n + l];
            if (d == 0.0) continue;
            for (int32_t c = 0; c < n; c++)
                DU[(size_t)k * n + c] += absval ? fabs(d * U[(size_t)l * n + c]) : d * U[(size_t)l * n + c];
        }
    for (int32_t k = 0; k < n; k++)
        for (int32_t a = k; a < n; a++) {
            double u = absval ? fabs(U[(size_t)k * n + a]) : U[(size_t)k * n + a];
            if (u == 0.0) continue;
            for (int32_t c = 0; c < n; c++) M[(size_t)a * n + c] += u * DU[(size_t)k * n + c];
        }
    free(DU);
    return M;
}

/* Dense A (analysed order) from the tile store's a_idx/a_val, mirrored. */
static double *a_dense(const ildl_tiles *T)
{
    int32_t n = T->n;
    double *A = calloc((size_t)n * n, sizeof(double));
    assert_non_null(A);
    for (int64_t t = 0; t < T->ntiles; t++) {
        size_t bi = (size_t)T->bstart[T->row[t]], bj = (size_t)T->bstart[T->col[t]];
        for (int64_t q = T->a_ptr[t]; q < T->a_ptr[t + 1]; q++) {
            size_t r = bi + (T->a_idx[q] >> 5), c = bj + (T->a_idx[q] & 31);
            A[r * n + c] = A[c * n + r] = T->a_val[q];
        }
    }
    return A;
}

/* Frobenius norm of A(q,q) - M restricted to rows [r0,r1) x cols [c0,c1) (all: 0..n). */
static double diff_fro(int32_t n, const double *A, const int32_t *q, const double *M, int32_t r0,
                       int32_t r1, int32_t c0, int32_t c1)
{
    double s = 0.0;
    for (int32_t a = r0; a < r1; a++)
        for (int32_t b = c0; b < c1; b++) {
            double d = A[(size_t)q[a] * n + q[b]] - M[(size_t)a * n + b];
            s += d * d;
        }
    return sqrt(s);
}

/* Check A(q,q) = M entrywise on rows [r0,r1) x cols [c0,c1) up to the backward error of
 * the elimination (1e-11 (|U|^T|D||U| + |A|)), except on the diagonal where a perturbed
 * pivot shifts the factored matrix by at most dmax: replacing pivot d by delta factors
 * exactly A(q,q) + (delta - d) e_k e_k^T. Returns the number of such shifted entries. */
static int32_t check_identity(int32_t n, const double *A, const int32_t *q, const double *M,
                              const double *Mabs, int32_t r0, int32_t r1, int32_t c0, int32_t c1,
                              double dmax)
{
    int32_t shifted = 0;
    for (int32_t a = r0; a < r1; a++)
        for (int32_t b = c0; b < c1; b++) {
            double x = A[(size_t)q[a] * n + q[b]], e = fabs(x - M[(size_t)a * n + b]);
            double tol = 1e-11 * (Mabs[(size_t)a * n + b] + fabs(x));
            if (e <= tol) continue;
            assert_int_equal(a, b);
            assert_true(e <= dmax + tol);
            shifted++;
        }
    return shifted;
}

static double fro(size_t len, const double *x)
{
    double s = 0.0;
    for (size_t k = 0; k < len; k++) s += x[k] * x[k];
    return sqrt(s);
}

/* Inertia of the dense symmetric A by cyclic Jacobi eigenvalues (|lambda| <= ztol: zero). */
static void jacobi_inertia(int32_t n, const double *A0, double ztol, int32_t in[3])
{
    double *a = malloc(sizeof(double) * (size_t)n * n);
    assert_non_null(a);
    memcpy(a, A0, sizeof(double) * (size_t)n * n);
    double total = fro((size_t)n * n, a);
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0.0;
        for (int32_t p = 0; p < n; p++)
            for (int32_t r = p + 1; r < n; r++) off += a[(size_t)p * n + r] * a[(size_t)p * n + r];
        if (sqrt(off) <= 1e-15 * total) break;
        for (int32_t p = 0; p < n; p++)
            for (int32_t r = p + 1; r < n; r++) {
                double apr = a[(size_t)p * n + r];
                if (apr == 0.0) continue;
                double theta = (a[(size_t)r * n + r] - a[(size_t)p * n + p]) / (2.0 * apr);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int32_t k = 0; k < n; k++) { /* columns p, r */
                    double x = a[(size_t)k * n + p], y = a[(size_t)k * n + r];
                    a[(size_t)k * n + p] = c * x - s * y;
                    a[(size_t)k * n + r] = s * x + c * y;
                }
                for (int32_t k = 0; k < n; k++) { /* rows p, r */
                    double x = a[(size_t)p * n + k], y = a[(size_t)r * n + k];
                    a[(size_t)p * n + k] = c * x - s * y;
                    a[(size_t)r * n + k] = s * x + c * y;
                }
            }
    }
    in[0] = in[1] = in[2] = 0;
    for (int32_t k = 0; k < n; k++) {
        double l = a[(size_t)k * n + k];
        in[fabs(l) <= ztol ? 2 : (l > 0 ? 0 : 1)]++;
    }
    free(a);
}

/* ---------------------------------------------------------------- checks */

/* Storage invariants of any factor: packing in storage order, capacities and grants, the
 * leftover rule (grants come only from earlier levels), sorted unique in-range sparse
 * indices, finite values, stats consistent with D. */
static void check_storage(const ildl_tiles *T, const ildl_factor_stats *st)
{
    int32_t nl = T->nlevels;
    int64_t *lvl_used = calloc((size_t)nl, sizeof(int64_t)), *lvl_cap = calloc((size_t)nl, sizeof(int64_t));
    assert_true(lvl_used && lvl_cap);
    int64_t pos = 0, granted = 0, nnz = (int64_t)T->n;
    for (int64_t s = 0; s < T->ntiles; s++) {
        int64_t t = T->tile_order[s];
        int32_t i = T->row[t], j = T->col[t];
        int mi = ildl_tiles_block_size(T, i), mj = ildl_tiles_block_size(T, j);
        assert_int_equal(T->off[t], pos); /* packed without gaps in storage order */
        pos += T->nnz[t];
        lvl_used[T->row_level[i]] += T->nnz[t];
        lvl_cap[T->row_level[i]] += T->cap[t];
        assert_true(T->nnz[t] >= 0 && T->nnz[t] <= (int64_t)mi * mj);
        nnz += (i == j) ? (int64_t)mi * (mi - 1) / 2 : T->nnz[t];
        if (T->format[t] == ILDL_TILE_DENSE) {
            assert_int_equal(T->nnz[t], (int64_t)mi * mj);
        } else {
            assert_true(i != j);
            if (T->nnz[t] > T->cap[t]) granted += T->nnz[t] - T->cap[t];
            const uint16_t *ix = T->idx + T->off[t];
            for (int64_t q = 0; q < T->nnz[t]; q++) {
                assert_true((ix[q] >> 5) < mi && (ix[q] & 31) < mj);
                if (q > 0) assert_true(ix[q] > ix[q - 1]);
                assert_true(tval(T, T->off[t] + q) != 0.0);
            }
        }
        for (int64_t q = 0; q < T->nnz[t]; q++) assert_true(isfinite(tval(T, T->off[t] + q)));
    }
    assert_true(pos <= T->total_cap);
    assert_int_equal(granted, st->leftover_granted);
    int64_t cu = 0, cc = 0;
    for (int32_t l = 0; l < nl; l++) {
        cu += lvl_used[l];
        cc += lvl_cap[l];
        assert_true(cu <= cc);
    }
    int32_t n2 = 0, pos_ = 0, neg = 0, zero = 0;
    for (int32_t k = 0; k < T->n; k++) {
        assert_true(isfinite(T->d_diag[k]) && isfinite(T->d_off[k]));
        if (T->piv_type[k] == 2) {
            n2++;
            double a = T->d_diag[k], b = T->d_off[k], c = T->d_diag[k + 1];
            double l1 = 0.5 * (a + c) + sqrt(0.25 * (a - c) * (a - c) + b * b);
            double l2 = 0.5 * (a + c) - sqrt(0.25 * (a - c) * (a - c) + b * b);
            pos_ += (l1 > 0) + (l2 > 0);
            neg += (l1 < 0) + (l2 < 0);
            zero += (l1 == 0) + (l2 == 0);
            k++;
        } else {
            double a = T->d_diag[k];
            pos_ += a > 0;
            neg += a < 0;
            zero += a == 0;
        }
    }
    assert_int_equal(st->n2x2, n2);
    assert_int_equal(st->inertia_pos, pos_);
    assert_int_equal(st->inertia_neg, neg);
    assert_int_equal(st->inertia_zero, zero);
    assert_int_equal(st->factor_nnz, nnz + n2);
    free(lvl_used);
    free(lvl_cap);
}

/* Complete factor of A: A(q,q) = U^T D U to rounding; returns the stats. */
static ildl_factor_stats exact_case(const ildl_csr *A, int maxbs, uint64_t seed, int pivoting,
                                    int expect_exact)
{
    int32_t nb, n = A->n;
    int32_t *bstart = ft_make_blocks(n, maxbs, seed, &nb);
    ildl_tiles T;
    build_tiles(A, nb, bstart, nb, 0.0, &T);
    for (int64_t t = 0; t < T.ntiles; t++) assert_int_equal(T.format[t], ILDL_TILE_DENSE);
    ildl_factor_params p = params(pivoting, 0.0, 0);
    ildl_factor_stats st;
    assert_int_equal(ildl_cpu_factor(&T, &p, &st), ILDL_SUCCESS);
    check_storage(&T, &st);

    double *U = malloc(sizeof(double) * (size_t)n * n), *D = malloc(sizeof(double) * (size_t)n * n);
    assert_true(U && D);
    factor_dense(&T, U, D);
    double *M = form_utdu(n, U, D, 0), *Mabs = form_utdu(n, U, D, 1);
    double *Ad = a_dense(&T), *Ac = ildl_test_dense(A);
    for (size_t k = 0; k < (size_t)n * n; k++) assert_true(Ad[k] == Ac[k]); /* loaded as given */
    int32_t *q = ft_global_perm(&T);
    int32_t shifted = check_identity(n, Ad, q, M, Mabs, 0, n, 0, n, p.perturb + p.pivot_tol);
    assert_true(shifted <= st.nperturbed);
    assert_int_equal(st.inertia_pos + st.inertia_neg + st.inertia_zero, n);
    if (expect_exact) assert_int_equal(st.nperturbed, 0);
    if (st.nperturbed == 0) {
        double rel = diff_fro(n, Ad, q, M, 0, n, 0, n) / fro((size_t)n * n, Ad);
        assert_true(rel <= 1e-12);
        int32_t in[3];
        jacobi_inertia(n, Ad, 1e-10 * fro((size_t)n * n, Ad), in);
        assert_int_equal(in[2], 0); /* the test matrices are nonsingular */
        assert_int_equal(st.inertia_pos, in[0]);
        assert_int_equal(st.inertia_neg, in[1]);
        assert_int_equal(st.inertia_zero, 0);
    }
    free(U); free(D); free(M); free(Mabs); free(Ad); free(Ac); free(q); free(bstart);
    ildl_tiles_free(&T);
    return st;
}

/* ---------------------------------------------------------------- tests */

static void test_exact_random_zero_diag(void **state)
{
    (void)state;
    const int32_t sizes[] = {20, 77, 200};
    for (int s = 0; s < 3; s++) {
        ildl_csr A;
        /* degree 16 couples every row to others inside its 32-row block or before it, so
         * no diagonal tile is left with a structurally zero row */
        ildl_test_random_sym(sizes[s], 16, 1.0, 0.25, 100 + s, &A);
        int32_t zeros = 0;
        for (int32_t k = 0; k < A.n; k++)
            for (int64_t p = A.rowptr[k]; p < A.rowptr[k + 1]; p++) zeros += A.col[p] == k && A.val[p] == 0.0;
        assert_true(zeros >= A.n / 10);
        exact_case(&A, 32, 7 + s, ILDL_PIVOT_BK, 1);
        exact_case(&A, 32, 7 + s, ILDL_PIVOT_ROOK, 1);
        /* many small blocks and levels; a tiny block may be left with a (near) zero Schur
         * complement that no in-block pivoting fixes: then the perturbed identity is checked */
        exact_case(&A, 5, 9 + s, ILDL_PIVOT_ROOK, 0);
        ildl_csr_free(&A);
    }
}

static void test_exact_random_nonzero_diag_none(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(150, 6, 8.0, 0.0, 5, &A);
    for (int32_t k = 0; k < A.n; k++) /* make the diagonal dominant: no pivoting needed */
        for (int64_t p = A.rowptr[k]; p < A.rowptr[k + 1]; p++)
            if (A.col[p] == k) A.val[p] = (A.val[p] >= 0 ? 8.0 : -8.0) + A.val[p];
    ildl_factor_stats st = exact_case(&A, 32, 3, ILDL_PIVOT_NONE, 1);
    assert_int_equal(st.n2x2, 0);
    ildl_csr_free(&A);
}

static void test_exact_kkt_inertia(void **state)
{
    (void)state;
    const int32_t n1s[] = {14, 60, 130}, n2s[] = {6, 25, 70};
    for (int s = 0; s < 3; s++) {
        ildl_csr A;
        make_kkt(n1s[s], n2s[s], 0, 40 + s, &A);
        for (int piv = ILDL_PIVOT_BK; piv <= ILDL_PIVOT_ROOK; piv++) {
            ildl_factor_stats st = exact_case(&A, 32, 11 + s, piv, 1);
            assert_int_equal(st.inertia_pos, n1s[s]);
            assert_int_equal(st.inertia_neg, n2s[s]);
            assert_int_equal(st.inertia_zero, 0);
        }
        ildl_csr_free(&A);
    }
}

static void test_exact_laplace(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(12, 1.3, &A); /* n = 144, indefinite */
    for (int piv = ILDL_PIVOT_NONE; piv <= ILDL_PIVOT_ROOK; piv++) exact_case(&A, 32, 21, piv, 1);
    ildl_csr_free(&A);
}

/* [[0, B], [B^T, H]] blocked so that the first blocks lie inside the zero block: their
 * pivots stay exactly zero (no update reaches them), so each is perturbed and counted, and
 * the factor is exact for A plus those diagonal shifts. */
static void test_none_perturbs_zero_pivots(void **state)
{
    (void)state;
    ildl_csr A;
    make_kkt(40, 15, 1, 77, &A);
    int32_t nb, inside = 0;
    int32_t *bstart = ft_make_blocks(A.n, 8, 2, &nb); /* the blocking exact_case will use */
    for (int32_t b = 0; b < nb && bstart[b + 1] <= 15; b++) inside = bstart[b + 1];
    assert_true(inside > 0);
    for (int piv = ILDL_PIVOT_NONE; piv <= ILDL_PIVOT_ROOK; piv++) {
        ildl_factor_stats st = exact_case(&A, 8, 2, piv, 0);
        /* no pivoting keeps all 15 zero rows first in their blocks; BK/Rook may pair the
         * zero rows of a block straddling the boundary, but not those of all-zero tiles */
        assert_true(st.nperturbed >= (piv == ILDL_PIVOT_NONE ? 15 : inside));
        if (piv == ILDL_PIVOT_NONE) assert_int_equal(st.n2x2, 0);
    }
    free(bstart);
    ildl_csr_free(&A);
}

/* Factor two copies with 1 and 2 threads; everything written must match bit for bit. */
static void check_threads_bitwise(const ildl_csr *A, int maxbs, int lf, double ff, double tau,
                                  int piv)
{
    int32_t nb;
    int32_t *bstart = ft_make_blocks(A->n, maxbs, 31, &nb);
    ildl_tiles T1, T2;
    build_tiles(A, nb, bstart, lf < 0 ? nb : lf, ff, &T1);
    build_tiles(A, nb, bstart, lf < 0 ? nb : lf, ff, &T2);
    ildl_factor_params p1 = params(piv, tau, 1), p2 = params(piv, tau, 2);
    ildl_factor_stats s1, s2;
    assert_int_equal(ildl_cpu_factor(&T1, &p1, &s1), ILDL_SUCCESS);
    assert_int_equal(ildl_cpu_factor(&T2, &p2, &s2), ILDL_SUCCESS);
    assert_memory_equal(&s1, &s2, sizeof(s1));
    size_t nt = (size_t)T1.ntiles, n = (size_t)T1.n;
    assert_memory_equal(T1.off, T2.off, nt * sizeof(int64_t));
    assert_memory_equal(T1.nnz, T2.nnz, nt * sizeof(int64_t));
    assert_memory_equal(T1.val, T2.val, (size_t)T1.total_cap * sizeof(double));
    assert_memory_equal(T1.idx, T2.idx, (size_t)T1.total_cap * sizeof(uint16_t));
    assert_memory_equal(T1.piv, T2.piv, n * sizeof(int32_t));
    assert_memory_equal(T1.d_diag, T2.d_diag, n * sizeof(double));
    assert_memory_equal(T1.d_off, T2.d_off, n * sizeof(double));
    assert_memory_equal(T1.piv_type, T2.piv_type, n * sizeof(int8_t));
    /* a second factorization of the same store reproduces the first */
    assert_int_equal(ildl_cpu_factor(&T2, &p1, &s2), ILDL_SUCCESS);
    assert_memory_equal(T1.val, T2.val, (size_t)T1.total_cap * sizeof(double));
    ildl_tiles_free(&T1);
    ildl_tiles_free(&T2);
    free(bstart);
}

static void test_threads_bitwise(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(200, 6, 1.0, 0.2, 3, &A);
    check_threads_bitwise(&A, 32, -1, 0.0, 0.0, ILDL_PIVOT_ROOK);
    check_threads_bitwise(&A, 16, 1, 2.0, 1e-2, ILDL_PIVOT_BK);
    check_threads_bitwise(&A, 6, 2, 2.0, 1e-3, ILDL_PIVOT_ROOK);
    ildl_csr_free(&A);
}

/* Incomplete factor: storage invariants, and the identities that hold exactly for whatever
 * was kept: diagonal blocks of U^T D U equal A(q,q)'s (they pull every update present and
 * are never dropped); with tau = 0, so do the tiles nothing was cut from (dense ones and
 * sparse ones holding fewer entries than their capacity). */
static void incomplete_case(const ildl_csr *A, int maxbs, int lf, double ff, double tau, int piv,
                            int64_t *granted, int64_t *nsparse)
{
    int32_t nb, n = A->n;
    int32_t *bstart = ft_make_blocks(n, maxbs, 17, &nb);
    ildl_tiles T;
    build_tiles(A, nb, bstart, lf, ff, &T);
    ildl_factor_params p = params(piv, tau, 0);
    ildl_factor_stats st;
    assert_int_equal(ildl_cpu_factor(&T, &p, &st), ILDL_SUCCESS);
    check_storage(&T, &st);
    *granted += st.leftover_granted;

    double *U = malloc(sizeof(double) * (size_t)n * n), *D = malloc(sizeof(double) * (size_t)n * n);
    assert_true(U && D);
    factor_dense(&T, U, D);
    double *M = form_utdu(n, U, D, 0), *Mabs = form_utdu(n, U, D, 1), *Ad = a_dense(&T);
    int32_t *q = ft_global_perm(&T), shifted = 0;
    for (int64_t t = 0; t < T.ntiles; t++) {
        int32_t i = T.row[t], j = T.col[t];
        int32_t r0 = T.bstart[i], r1 = T.bstart[i + 1], c0 = T.bstart[j], c1 = T.bstart[j + 1];
        if (T.format[t] == ILDL_TILE_SPARSE) (*nsparse)++;
        int untouched = (i == j) || (tau == 0.0 && (T.format[t] == ILDL_TILE_DENSE ||
                                                     T.nnz[t] < T.cap[t]));
        if (untouched)
            shifted += check_identity(n, Ad, q, M, Mabs, r0, r1, c0, c1, p.perturb + p.pivot_tol);
    }
    assert_true(shifted <= st.nperturbed);
    free(U); free(D); free(M); free(Mabs); free(Ad); free(q); free(bstart);
    ildl_tiles_free(&T);
}

static void test_incomplete(void **state)
{
    (void)state;
    int64_t granted = 0, nsparse = 0;
    ildl_csr A;
    ildl_test_random_sym(200, 6, 2.0, 0.1, 9, &A);
    incomplete_case(&A, 32, 1, 2.0, 1e-2, ILDL_PIVOT_BK, &granted, &nsparse);
    incomplete_case(&A, 32, 1, 2.0, 0.0, ILDL_PIVOT_ROOK, &granted, &nsparse);
    incomplete_case(&A, 12, 2, 1.5, 0.0, ILDL_PIVOT_BK, &granted, &nsparse);
    ildl_csr_free(&A);
    make_kkt(150, 50, 0, 5, &A);
    incomplete_case(&A, 32, 1, 2.0, 1e-2, ILDL_PIVOT_ROOK, &granted, &nsparse);
    incomplete_case(&A, 16, 0, 1.0, 0.0, ILDL_PIVOT_BK, &granted, &nsparse);
    ildl_csr_free(&A);
    ildl_test_laplace2d(14, 0.7, &A);
    incomplete_case(&A, 32, 1, 2.0, 1e-2, ILDL_PIVOT_BK, &granted, &nsparse);
    ildl_csr_free(&A);
    /* the runs must have exercised sparse tiles and leftover grants at all */
    assert_true(nsparse > 0);
    assert_true(granted > 0);
}

/* The reference's dropping rule for dense tiles: tau = 0 leaves them as they are (a store of
 * dense tiles then skips the pass on the GPU), any tau > 0 drops, turning a -0 into +0. A has
 * blocks {0,1}, {2,3}, an explicit -0 at (0,2), so U(0,2) = -0 / 2 = -0 before dropping. */
static void test_dense_tau0_keeps_zero_sign(void **state)
{
    (void)state;
    /* rows: 0: (0,2)=-0 (0,3)=1; 1: (1,2)=0.5; the diagonal 2; symmetric */
    static const int64_t rp[5] = {0, 3, 5, 8, 10};
    static const int32_t ci[10] = {0, 2, 3, 1, 2, 0, 1, 2, 0, 3};
    const double vv[10] = {2.0, -0.0, 1.0, 2.0, 0.5, -0.0, 0.5, 2.0, 1.0, 2.0};
    ildl_csr A;
    assert_int_equal(ildl_csr_alloc(4, 10, &A), ILDL_SUCCESS);
    memcpy(A.rowptr, rp, sizeof rp);
    memcpy(A.col, ci, sizeof ci);
    memcpy(A.val, vv, sizeof(double) * 10);
    const int32_t bstart[3] = {0, 2, 4};
    double u02[2], u12[2];
    for (int k = 0; k < 2; k++) {
        ildl_tiles T;
        build_tiles(&A, 2, bstart, 1, 0.0, &T); /* fill_factor 0: every tile dense */
        for (int64_t t = 0; t < T.ntiles; t++) assert_int_equal(T.format[t], ILDL_TILE_DENSE);
        ildl_factor_params p = params(ILDL_PIVOT_ROOK, k == 0 ? 0.0 : 1e-300, 1);
        ildl_factor_stats st;
        assert_int_equal(ildl_cpu_factor(&T, &p, &st), ILDL_SUCCESS);
        int64_t t = T.row_ptr[0] + 1; /* tile (0,1) */
        assert_int_equal(T.col[t], 1);
        assert_int_equal(T.nnz[t], 4);
        u02[k] = T.val[T.off[t]];
        u12[k] = T.val[T.off[t] + 2];
        ildl_tiles_free(&T);
    }
    assert_true(u02[0] == 0.0 && signbit(u02[0])); /* tau = 0: kept, -0 */
    assert_true(u02[1] == 0.0 && !signbit(u02[1])); /* tau > 0: dropped, +0 */
    assert_true(u12[0] == 0.25 && u12[1] == 0.25);
    ildl_csr_free(&A);
}

/* After ildl_cpu_invert_diagonal: every diagonal tile V_ii of T times U_ii (from the dense U
 * taken before the inversion) is the identity to rounding. */
static void check_inverted_diagonal(const ildl_tiles *T, const double *U)
{
    int32_t n = T->n;
    double tol = T->val32 ? 1e-5 : 1e-12;
    assert_true(T->diag_inverted);
    for (int32_t i = 0; i < T->nb; i++) {
        int m = ildl_tiles_block_size(T, i);
        size_t b = (size_t)T->bstart[i];
        int64_t o = T->off[T->row_ptr[i]];
        for (int r = 0; r < m; r++)
            for (int c = 0; c < m; c++) {
                double s = 0, sabs = 0;
                for (int k = 0; k < m; k++) {
                    double v = k == r ? 1.0 : tval(T, o + r * m + k), u = U[(b + k) * n + b + c];
                    if (k < r) assert_true(v == 0.0);
                    s += v * u;
                    sabs += fabs(v * u);
                }
                assert_true(fabs(s - (r == c ? 1.0 : 0.0)) <= tol * (1.0 + sabs));
            }
    }
}

/* Precision single (ildl_cpu_factor_s): a complete float factor of A(q,q) is U^T D U to float
 * rounding, with the double factor's inertia; D holds float values; the bits do not depend on
 * the thread count; its solve agrees with the double factor's to float accuracy. */
static void single_case(const ildl_csr *A, int maxbs, uint64_t seed, int pivoting)
{
    int32_t nb, n = A->n;
    int32_t *bstart = ft_make_blocks(n, maxbs, seed, &nb);
    ildl_tiles T, Td, T3;
    build_tiles(A, nb, bstart, nb, 0.0, &T);
    build_tiles(A, nb, bstart, nb, 0.0, &Td);
    build_tiles(A, nb, bstart, nb, 0.0, &T3);
    assert_int_equal(ildl_tiles_set_precision(&T, 1), ILDL_SUCCESS);
    assert_int_equal(ildl_tiles_set_precision(&T3, 1), ILDL_SUCCESS);
    assert_null(T.val);
    ildl_factor_params p = params(pivoting, 0.0, 1), p3 = params(pivoting, 0.0, 3);
    ildl_factor_stats st, sd, s3;
    assert_int_equal(ildl_cpu_factor(&T, &p, &st), ILDL_ERR_INTERNAL); /* the double factor needs val */
    assert_int_equal(ildl_cpu_factor_s(&T, &p, &st), ILDL_SUCCESS);
    assert_int_equal(ildl_cpu_factor(&Td, &p, &sd), ILDL_SUCCESS);
    assert_int_equal(ildl_cpu_factor_s(&T3, &p3, &s3), ILDL_SUCCESS);
    check_storage(&T, &st);
    assert_memory_equal(T.val32, T3.val32, (size_t)T.total_cap * sizeof(float));
    assert_memory_equal(T.d_diag, T3.d_diag, (size_t)n * sizeof(double));
    assert_memory_equal(T.piv, T3.piv, (size_t)n * sizeof(int32_t));
    for (int32_t k = 0; k < n; k++) {
        assert_true(T.d_diag[k] == (double)(float)T.d_diag[k]);
        assert_true(T.d_off[k] == (double)(float)T.d_off[k]);
    }
    assert_int_equal(st.inertia_pos, sd.inertia_pos);
    assert_int_equal(st.inertia_neg, sd.inertia_neg);
    /* the identity, to float rounding */
    double *U = malloc(sizeof(double) * (size_t)n * n), *D = malloc(sizeof(double) * (size_t)n * n);
    assert_true(U && D);
    factor_dense(&T, U, D);
    double *M = form_utdu(n, U, D, 0), *Ad = a_dense(&T);
    int32_t *q = ft_global_perm(&T);
    if (st.nperturbed == 0) {
        double rel = diff_fro(n, Ad, q, M, 0, n, 0, n) / fro((size_t)n * n, Ad);
        assert_true(rel <= 1e-5);
        assert_true(rel > 0); /* float rounding is visible: this is not the double factor */
    }
    /* the solves: float against double; then the inverted diagonal tiles are U_ii^{-1} */
    ildl_cpu_invert_diagonal(&Td);
    ildl_cpu_invert_diagonal_s(&T);
    check_inverted_diagonal(&T, U);
    double *x = malloc(sizeof(double) * (size_t)n), *xs = malloc(sizeof(double) * (size_t)n);
    assert_true(x && xs);
    uint64_t rs = seed;
    for (int32_t k = 0; k < n; k++) xs[k] = x[k] = 2 * ildl_test_rand(&rs) - 1;
    ildl_cpu_solve(&Td, x);
    ildl_cpu_solve_s(&T, xs);
    double num = 0, den = 0;
    for (int32_t k = 0; k < n; k++) {
        num += (x[k] - xs[k]) * (x[k] - xs[k]);
        den += x[k] * x[k];
    }
    printf("single n=%d blocks<=%d pivot=%d: ||A - U^T D U||/||A|| %.2e (perturbed %d), solve vs double %.2e\n",
           (int)n, maxbs, pivoting, st.nperturbed ? -1.0 : diff_fro(n, Ad, q, M, 0, n, 0, n) / fro((size_t)n * n, Ad),
           (int)st.nperturbed, sqrt(num / den));
    assert_true(sqrt(num / den) <= 1e-4);
    free(U); free(D); free(M); free(Ad); free(q); free(x); free(xs); free(bstart);
    ildl_tiles_free(&T);
    ildl_tiles_free(&Td);
    ildl_tiles_free(&T3);
}

static void test_single(void **state)
{
    (void)state;
    ildl_csr A;
    make_kkt(60, 25, 0, 41, &A);
    single_case(&A, 32, 12, ILDL_PIVOT_BK);
    single_case(&A, 8, 13, ILDL_PIVOT_ROOK);
    ildl_csr_free(&A);
    ildl_test_laplace2d(12, 1.3, &A);
    for (int piv = ILDL_PIVOT_NONE; piv <= ILDL_PIVOT_ROOK; piv++) single_case(&A, 32, 21, piv);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_random_zero_diag),
        cmocka_unit_test(test_exact_random_nonzero_diag_none),
        cmocka_unit_test(test_exact_kkt_inertia),
        cmocka_unit_test(test_exact_laplace),
        cmocka_unit_test(test_none_perturbs_zero_pivots),
        cmocka_unit_test(test_threads_bitwise),
        cmocka_unit_test(test_incomplete),
        cmocka_unit_test(test_dense_tau0_keeps_zero_sign),
        cmocka_unit_test(test_single),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
