/* test_match.c -- maximum-product matching against brute force over all permutations, its
 * dual scaling bounds, structural singularity, the symmetric scaling, the 2x2 pairs cut from
 * the matching's cycles, and ildl_analyse with MATCHING (pairs adjacent, never split). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blockildl.h"
#include "analyse/analyse.h"
#include "analyse/match.h"
#include "core/util.h"
#include "analyse/order.h"
#include "io/mmio.h"

/* ---------------------------------------------------------------- helpers */

/* CSR (sorted) of a dense n x n matrix; entries where keep[] is set are stored even when
 * their value is 0 (explicit zeros), the others only when nonzero. */
static void csr_from_dense(int32_t n, const double *D, const char *keep, ildl_csr *A)
{
    int64_t nnz = 0;
    for (int32_t k = 0; k < n * n; k++) nnz += (D[k] != 0.0 || (keep && keep[k]));
    assert_int_equal(ildl_csr_alloc(n, nnz, A), ILDL_SUCCESS);
    int64_t q = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++) {
            int32_t k = i * n + j;
            if (D[k] == 0.0 && !(keep && keep[k])) continue;
            A->col[q] = j;
            A->val[q++] = D[k];
        }
        A->rowptr[i + 1] = q;
    }
}

/* Random n x n matrix of density dens, magnitudes 10^[-4,4], random signs; symmetric if sym.
 * A few stored entries are explicit zeros (keep). */
static void random_small(int32_t n, double dens, int sym, uint64_t *rs, double *D, char *keep)
{
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) {
            if (sym && j < i) {
                D[i * n + j] = D[j * n + i];
                keep[i * n + j] = keep[j * n + i];
                continue;
            }
            double x = ildl_test_rand(rs);
            keep[i * n + j] = 0;
            D[i * n + j] = 0.0;
            if (x < dens) {
                double mag = pow(10.0, 8.0 * ildl_test_rand(rs) - 4.0);
                D[i * n + j] = ildl_test_rand(rs) < 0.5 ? -mag : mag;
            } else if (x < dens + 0.05) {
                keep[i * n + j] = 1; /* stored zero: not an edge */
            }
        }
}

/* Brute force over all permutations: largest number of nonzero a_{i,p(i)} (the maximum
 * matching cardinality) and, if that is n, the largest sum of log |a_{i,p(i)}|. */
typedef struct {
    int32_t n;
    const double *D;
    int32_t p[8];
    char used[8];
    int best_card;
    double best_log;
} brute;

static void brute_rec(brute *B, int32_t i, int card, double lsum)
{
    if (i == B->n) {
        if (card > B->best_card) B->best_card = card;
        if (card == B->n && lsum > B->best_log) B->best_log = lsum;
        return;
    }
    for (int32_t j = 0; j < B->n; j++) {
        if (B->used[j]) continue;
        double a = fabs(B->D[i * B->n + j]);
        B->used[j] = 1;
        brute_rec(B, i + 1, card + (a > 0.0), a > 0.0 ? lsum + log(a) : lsum);
        B->used[j] = 0;
    }
}

static void brute_force(int32_t n, const double *D, int *card, double *best_log)
{
    brute B;
    memset(&B, 0, sizeof B);
    B.n = n;
    B.D = D;
    B.best_card = -1;
    B.best_log = -INFINITY;
    brute_rec(&B, 0, 0, 0.0);
    *card = B.best_card;
    *best_log = B.best_log;
}

/* match is injective, and uses only stored nonzero entries. Returns the matched count. */
static int32_t check_matching(const ildl_csr *A, const int32_t *match)
{
    int32_t n = A->n, cnt = 0;
    char *used = calloc((size_t)n, 1);
    assert_non_null(used);
    for (int32_t i = 0; i < n; i++) {
        int32_t j = match[i];
        if (j < 0) continue;
        assert_true(j < n);
        assert_false(used[j]);
        used[j] = 1;
        cnt++;
        int found = 0;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->col[p] == j) {
                found = 1;
                assert_true(A->val[p] != 0.0);
            }
        assert_true(found);
    }
    free(used);
    return cnt;
}

/* Pairs: involution without fixed points, joining only i, j with a_ij stored and nonzero,
 * and each pair is a matched edge. Returns the number of pairs. */
static int32_t check_pairs(const ildl_csr *A, const int32_t *pair, const int32_t *match)
{
    int32_t n = A->n, np = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t j = pair[i];
        if (j < 0) {
            assert_int_equal(j, -1);
            continue;
        }
        assert_true(j < n);
        assert_true(j != i);
        assert_int_equal(pair[j], i);
        int found = 0;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->col[p] == j && A->val[p] != 0.0) found = 1;
        assert_true(found);
        if (match) assert_true(match[i] == j || match[j] == i);
        np += i < j;
    }
    return np;
}

/* Dual scaling bounds: |r_i a_ij c_j| <= 1 + 1e-12 everywhere, matched entries 1 +- 1e-12. */
static void check_unsym_scaling(const ildl_csr *A, const int32_t *match, const double *lr,
                                const double *lc)
{
    for (int32_t i = 0; i < A->n; i++) {
        assert_true(isfinite(lr[i]) && isfinite(lc[i]));
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = A->col[p];
            double x = exp(lr[i]) * fabs(A->val[p]) * exp(lc[j]);
            assert_true(x <= 1.0 + 1e-12);
            if (match[i] == j) assert_true(fabs(x - 1.0) <= 1e-12);
        }
    }
}

/* max over stored entries of |s_i a_ij s_j|. */
static double scaled_max(const ildl_csr *A, const double *s)
{
    double m = 0.0;
    for (int32_t i = 0; i < A->n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            m = fmax(m, fabs(s[i] * A->val[p] * s[A->col[p]]));
    return m;
}

static double scaled_entry(const ildl_csr *A, const double *s, int32_t i, int32_t j)
{
    for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (A->col[p] == j) return fabs(s[i] * A->val[p] * s[j]);
    return 0.0;
}

typedef struct {
    int32_t i, j;
    double v;
} trip;

static int trip_cmp(const void *a, const void *b)
{
    const trip *x = a, *y = b;
    if (x->i != y->i) return x->i < y->i ? -1 : 1;
    if (x->j != y->j) return x->j < y->j ? -1 : 1;
    return 0;
}

/* Random symmetric KKT-like matrix: [H B^T; B 0] with H (nh x nh) and B (m x nh) sparse,
 * magnitudes spread over 10^(+-6). The zero block makes 2x2 pivots necessary. */
static void random_kkt(int32_t nh, int32_t m, uint64_t seed, ildl_csr *A)
{
    uint64_t s = seed;
    int64_t cap = (int64_t)nh * 4 + (int64_t)m * 4;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap), *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap);
    assert_true(ti && tj && tv);
    int64_t t = 0;
    for (int32_t i = 0; i < nh; i++) {
        ti[t] = tj[t] = i;
        tv[t++] = pow(10.0, 6.0 * ildl_test_rand(&s) - 3.0);
        int32_t j = (int32_t)(ildl_test_rand(&s) * nh);
        if (j != i) {
            ti[t] = i; tj[t] = j;
            tv[t++] = ildl_test_rand(&s) - 0.5;
        }
    }
    for (int32_t r = 0; r < m; r++) {
        for (int k = 0; k < 3; k++) {
            int32_t j = (r * 7 + k * 13 + (int32_t)(ildl_test_rand(&s) * 5)) % nh;
            ti[t] = nh + r; tj[t] = j;
            tv[t++] = (ildl_test_rand(&s) < 0.5 ? -1 : 1) * pow(10.0, 6.0 * ildl_test_rand(&s) - 3.0);
        }
    }
    /* triplets may repeat (i,j) in either triangle: keep one of each */
    trip *tr = malloc(sizeof(trip) * (size_t)t);
    assert_non_null(tr);
    for (int64_t a = 0; a < t; a++) {
        tr[a].i = ti[a] > tj[a] ? ti[a] : tj[a];
        tr[a].j = ti[a] > tj[a] ? tj[a] : ti[a];
        tr[a].v = tv[a];
    }
    qsort(tr, (size_t)t, sizeof(trip), trip_cmp);
    int64_t u = 0;
    for (int64_t a = 0; a < t; a++) {
        if (u > 0 && tr[a].i == ti[u - 1] && tr[a].j == tj[u - 1]) continue;
        ti[u] = tr[a].i; tj[u] = tr[a].j; tv[u++] = tr[a].v;
    }
    ildl_test_csr_from_triplets(nh + m, u, ti, tj, tv, A);
    free(tr); free(ti); free(tj); free(tv);
}

/* ---------------------------------------------------------------- matching */

/* Random small matrices, symmetric and not: the matching is a valid matching of maximum
 * cardinality, optimal in product when perfect, and its duals give the MC64 scaling. */
static void test_maxprod_vs_brute_force(void **state)
{
    (void)state;
    uint64_t rs = 12345;
    double D[64];
    char keep[64];
    int perfect = 0, singular = 0;
    for (int trial = 0; trial < 600; trial++) {
        int32_t n = 1 + trial % 8;
        double dens = 0.15 + 0.6 * ildl_test_rand(&rs);
        int sym = trial % 2;
        random_small(n, dens, sym, &rs, D, keep);
        ildl_csr A = {0};
        csr_from_dense(n, D, keep, &A);
        int32_t match[8], nun = -1;
        double lr[8], lc[8];
        assert_int_equal(ildl_match_maxprod(&A, match, lr, lc, &nun), ILDL_SUCCESS);
        int32_t cnt = check_matching(&A, match);
        int card;
        double best;
        brute_force(n, D, &card, &best);
        assert_int_equal(cnt, card);
        assert_int_equal(nun, n - card);
        check_unsym_scaling(&A, match, lr, lc);
        if (card == n) {
            double got = 0.0;
            for (int32_t i = 0; i < n; i++) got += log(fabs(D[i * n + match[i]]));
            assert_true(fabs(got - best) <= 1e-10 * fmax(1.0, fabs(best)));
            perfect++;
        } else {
            singular++;
        }
        ildl_csr_free(&A);
    }
    /* the random family really exercises both cases */
    assert_true(perfect > 100);
    assert_true(singular > 50);
}

/* Hand-made structurally singular matrices: rows 0..2 only reach columns 0..1 (cardinality
 * n-1), and an all-zero row (explicit zeros) is unmatched. */
static void test_structurally_singular(void **state)
{
    (void)state;
    double D[16] = {
        2, 1, 0, 0,
        1, 3, 0, 0,
        5, 4, 0, 0,
        0, 0, 1, 7,
    };
    ildl_csr A = {0};
    csr_from_dense(4, D, NULL, &A);
    int32_t match[4], nun;
    double lr[4], lc[4];
    assert_int_equal(ildl_match_maxprod(&A, match, lr, lc, &nun), ILDL_SUCCESS);
    assert_int_equal(nun, 1);
    assert_int_equal(check_matching(&A, match), 3);
    check_unsym_scaling(&A, match, lr, lc);
    ildl_csr_free(&A);

    /* symmetric, row/col 1 stores only zeros */
    double E[9] = {4, 0, 1, 0, 0, 0, 1, 0, 2};
    char keep[9] = {0, 1, 0, 1, 1, 1, 0, 1, 0};
    csr_from_dense(3, E, keep, &A);
    double s[3];
    int32_t pair[3];
    assert_int_equal(ildl_match_scale(&A, s, pair, &nun), ILDL_SUCCESS);
    assert_int_equal(nun, 1);
    assert_int_equal(pair[1], -1);
    for (int i = 0; i < 3; i++) assert_true(isfinite(s[i]) && s[i] > 0.0);
    assert_true(scaled_max(&A, s) <= 1.0 + 1e-12);
    ildl_csr_free(&A);
}

/* A permutation-like matrix with a dominant cycle: the matching must follow it. */
static void test_diag_vs_cycle(void **state)
{
    (void)state;
    /* diagonal product 1e-4, 2-cycle (0 1) times a_22: 100 * 100 * 1 = 1e4 */
    double D[9] = {1e-2, 100, 0, 100, 1e-2, 1e-3, 0, 1e-3, 1};
    ildl_csr A = {0};
    csr_from_dense(3, D, NULL, &A);
    int32_t match[3], pair[3], nun;
    double s[3];
    assert_int_equal(ildl_match_maxprod(&A, match, NULL, NULL, &nun), ILDL_SUCCESS);
    assert_int_equal(nun, 0);
    assert_int_equal(match[0], 1);
    assert_int_equal(match[1], 0);
    assert_int_equal(match[2], 2);
    assert_int_equal(ildl_match_scale(&A, s, pair, &nun), ILDL_SUCCESS);
    assert_int_equal(pair[0], 1);
    assert_int_equal(pair[1], 0);
    assert_int_equal(pair[2], -1);
    /* 2-cycles and fixed points are exactly 1 after the symmetric scaling */
    assert_true(fabs(scaled_entry(&A, s, 0, 1) - 1.0) <= 1e-12);
    assert_true(fabs(scaled_entry(&A, s, 2, 2) - 1.0) <= 1e-12);
    ildl_csr_free(&A);
}

/* Zero-diagonal 3-cycle and 4-cycle: odd cycles give one pair and one 1x1, even cycles
 * split into two pairs; the 1x1 of the 3-cycle is the row with the largest diagonal. */
static void test_long_cycles(void **state)
{
    (void)state;
    /* symmetric, a_01 = 1, a_12 = 2, a_02 = 3 -> perfect matchings are the two 3-cycles */
    double D[9] = {0, 1, 3, 1, 0, 2, 3, 2, 0};
    char keep[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    ildl_csr A = {0};
    csr_from_dense(3, D, keep, &A);
    int32_t match[3], pair[3], nun;
    double s[3];
    assert_int_equal(ildl_match_maxprod(&A, match, NULL, NULL, &nun), ILDL_SUCCESS);
    assert_int_equal(nun, 0);
    for (int i = 0; i < 3; i++) assert_true(match[i] != i && match[match[i]] != i);
    assert_int_equal(ildl_match_scale(&A, s, pair, &nun), ILDL_SUCCESS);
    assert_int_equal(check_pairs(&A, pair, match), 1);
    assert_true(scaled_max(&A, s) <= 1.0 + 1e-12);
    ildl_csr_free(&A);

    /* same with a nonzero diagonal on row 1 only: 1 must be the 1x1 */
    double E[9] = {0, 1, 3, 1, 1e-3, 2, 3, 2, 0};
    csr_from_dense(3, E, keep, &A);
    assert_int_equal(ildl_match_maxprod(&A, match, NULL, NULL, &nun), ILDL_SUCCESS);
    assert_true(match[1] != 1); /* still a 3-cycle: product 6 against 9e-3 for (0 2)(1) */
    assert_int_equal(ildl_match_scale(&A, s, pair, &nun), ILDL_SUCCESS);
    assert_int_equal(pair[1], -1);
    assert_int_equal(pair[0], 2);
    ildl_csr_free(&A);

    /* 4-cycle 0-1-2-3-0 with zero diagonal and no chords: two pairs */
    double F[16] = {0, 1, 0, 2, 1, 0, 3, 0, 0, 3, 0, 4, 2, 0, 4, 0};
    csr_from_dense(4, F, NULL, &A);
    int32_t m4[4], p4[4];
    double s4[4];
    assert_int_equal(ildl_match_maxprod(&A, m4, NULL, NULL, &nun), ILDL_SUCCESS);
    assert_int_equal(nun, 0);
    assert_int_equal(ildl_match_scale(&A, s4, p4, &nun), ILDL_SUCCESS);
    assert_int_equal(check_pairs(&A, p4, m4), 2);
    ildl_csr_free(&A);
}

/* ---------------------------------------------------------------- symmetric scaling */

/* Badly scaled random symmetric matrices and KKT matrices: s finite and positive, every
 * scaled entry <= 1 + 1e-12, matched entries of 1x1s and 2-cycles at 1, row maxima near 1,
 * and the pairs are valid matched edges. */
static void test_symmetric_scaling(void **state)
{
    (void)state;
    int32_t total_pairs = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        ildl_csr A = {0};
        if (seed % 2) {
            ildl_test_random_sym(400, 5, 1.0, 0.3, seed, &A);
            uint64_t r = seed * 77;
            double *e = malloc(sizeof(double) * (size_t)A.n);
            assert_non_null(e);
            for (int32_t i = 0; i < A.n; i++) e[i] = pow(10.0, 8.0 * ildl_test_rand(&r) - 4.0);
            for (int32_t i = 0; i < A.n; i++)
                for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) A.val[p] *= e[i] * e[A.col[p]];
            free(e);
        } else {
            random_kkt(300, 120, seed, &A);
        }
        int32_t n = A.n, nun = -1, nun2 = -1;
        double *s = malloc(sizeof(double) * (size_t)n), *lr = malloc(sizeof(double) * (size_t)n),
               *lc = malloc(sizeof(double) * (size_t)n);
        int32_t *pair = malloc(sizeof(int32_t) * (size_t)n), *match = malloc(sizeof(int32_t) * (size_t)n);
        assert_true(s && lr && lc && pair && match);
        assert_int_equal(ildl_match_maxprod(&A, match, lr, lc, &nun), ILDL_SUCCESS);
        check_unsym_scaling(&A, match, lr, lc);
        assert_int_equal(ildl_match_scale(&A, s, pair, &nun2), ILDL_SUCCESS);
        assert_int_equal(nun, nun2);
        for (int32_t i = 0; i < n; i++) assert_true(isfinite(s[i]) && s[i] > 0.0);
        assert_true(scaled_max(&A, s) <= 1.0 + 1e-12);
        for (int32_t i = 0; i < n; i++) {
            int32_t j = match[i];
            if (j >= 0 && (j == i || match[j] == i))
                assert_true(fabs(scaled_entry(&A, s, i, j) - 1.0) <= 1e-12);
            double m = 0.0;
            for (int64_t p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
                m = fmax(m, fabs(s[i] * A.val[p] * s[A.col[p]]));
            if (m > 0.0) assert_true(m >= 0.99);
        }
        total_pairs += check_pairs(&A, pair, match);
        free(s); free(lr); free(lc); free(pair); free(match);
        ildl_csr_free(&A);
    }
    assert_true(total_pairs > 50); /* the KKT matrices need 2x2 pivots */
}

/* A real KKT matrix, if the shared folder is there: same bounds as above. */
static void test_shared_kkt(void **state)
{
    (void)state;
    const char *path = ildl_test_shared_matrix("sqd_cvxqp1_m_2x2_it10.mtx.gz");
    if (!path) skip();
    ildl_csr A = {0};
    char msg[256];
    if (ildl_mm_read(path, &A, msg, sizeof msg) != ILDL_SUCCESS) skip();
    int32_t n = A.n, nun;
    double *s = malloc(sizeof(double) * (size_t)n);
    int32_t *pair = malloc(sizeof(int32_t) * (size_t)n), *match = malloc(sizeof(int32_t) * (size_t)n);
    assert_true(s && pair && match);
    assert_int_equal(ildl_match_maxprod(&A, match, NULL, NULL, &nun), ILDL_SUCCESS);
    assert_int_equal(check_matching(&A, match), n - nun);
    assert_int_equal(ildl_match_scale(&A, s, pair, &nun), ILDL_SUCCESS);
    assert_true(scaled_max(&A, s) <= 1.0 + 1e-12);
    int32_t np = check_pairs(&A, pair, match);
    printf("%s: n = %d, unmatched %d, %d pairs\n", path, (int)n, (int)nun, (int)np);
    free(s); free(pair); free(match);
    ildl_csr_free(&A);
}

/* The matching's parallel passes (column maxima, first tight edges, pair hints) cannot change
 * its result: match, log scalings and the symmetric scaling are the same bits at 1, 2 and 4
 * threads, on generated indefinite matrices with and without zero diagonals. */
static void test_threads_identical(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++) {
        ildl_csr A;
        if (m < 2) ildl_test_random_sym(3000, 5, 2.0, m ? 0.3 : 0.0, 77 + m, &A);
        else ildl_test_laplace2d(60, 0.7, &A);
        int32_t n = A.n, nun[3], *match[3], *pair[3];
        double *lr[3], *lc[3], *s[3];
        for (int k = 0; k < 3; k++) {
            match[k] = malloc(sizeof(int32_t) * (size_t)n);
            pair[k] = malloc(sizeof(int32_t) * (size_t)n);
            lr[k] = malloc(sizeof(double) * (size_t)n);
            lc[k] = malloc(sizeof(double) * (size_t)n);
            s[k] = malloc(sizeof(double) * (size_t)n);
            assert_true(match[k] && pair[k] && lr[k] && lc[k] && s[k]);
            int prev = ildl_set_threads(k == 0 ? 1 : 2 * k);
            assert_int_equal(ildl_match_maxprod(&A, match[k], lr[k], lc[k], &nun[k]), ILDL_SUCCESS);
            int32_t nun2;
            assert_int_equal(ildl_match_scale(&A, s[k], pair[k], &nun2), ILDL_SUCCESS);
            ildl_set_threads(prev);
            if (k == 0) continue;
            assert_int_equal(nun[k], nun[0]);
            assert_memory_equal(match[k], match[0], sizeof(int32_t) * (size_t)n);
            assert_memory_equal(lr[k], lr[0], sizeof(double) * (size_t)n);
            assert_memory_equal(lc[k], lc[0], sizeof(double) * (size_t)n);
            assert_memory_equal(s[k], s[0], sizeof(double) * (size_t)n);
            assert_memory_equal(pair[k], pair[0], sizeof(int32_t) * (size_t)n);
        }
        for (int k = 0; k < 3; k++) {
            free(match[k]); free(pair[k]); free(lr[k]); free(lc[k]); free(s[k]);
        }
        ildl_csr_free(&A);
    }
}

/* ---------------------------------------------------------------- ordering and analyse */

/* ildl_match_order keeps every pair adjacent, for every ordering method. */
static void test_match_order(void **state)
{
    (void)state;
    ildl_csr A = {0};
    random_kkt(200, 80, 9, &A);
    int32_t n = A.n, nun;
    double *s = malloc(sizeof(double) * (size_t)n);
    int32_t *pair = malloc(sizeof(int32_t) * (size_t)n), *order = malloc(sizeof(int32_t) * (size_t)n),
            *inv = malloc(sizeof(int32_t) * (size_t)n);
    assert_true(s && pair && order && inv);
    assert_int_equal(ildl_match_scale(&A, s, pair, &nun), ILDL_SUCCESS);
    char msg[256];
    for (int method = ILDL_ORDER_AMD; method <= ILDL_ORDER_NATURAL; method++) {
        assert_int_equal(ildl_match_order(&A, pair, method, 1, order, NULL, msg, sizeof msg), ILDL_SUCCESS);
        assert_true(ildl_is_permutation(n, order));
        for (int32_t k = 0; k < n; k++) inv[order[k]] = k;
        for (int32_t i = 0; i < n; i++)
            if (pair[i] >= 0) assert_int_equal(abs(inv[i] - inv[pair[i]]), 1);
    }
    free(s); free(pair); free(order); free(inv);
    ildl_csr_free(&A);
}

/* ildl_analyse with MATCHING: the scaling is ildl_match_scale's, every pair is adjacent in
 * the analysed order and inside one block, and pair_hint marks exactly the pairs' first rows.
 * Also ildl_analyse_rescale reproduces the scaling for the same values. */
static void test_analyse_matching(void **state)
{
    (void)state;
    ildl_csr A = {0};
    random_kkt(400, 150, 21, &A);
    int32_t n = A.n, nun;
    double *s = malloc(sizeof(double) * (size_t)n), *s2 = malloc(sizeof(double) * (size_t)n);
    int32_t *pair = malloc(sizeof(int32_t) * (size_t)n), *inv = malloc(sizeof(int32_t) * (size_t)n),
            *blk = malloc(sizeof(int32_t) * (size_t)n);
    assert_true(s && s2 && pair && inv && blk);
    assert_int_equal(ildl_match_scale(&A, s, pair, &nun), ILDL_SUCCESS);
    int32_t npairs = check_pairs(&A, pair, NULL);
    assert_true(npairs > 20);
    const int blockings[2] = {ILDL_BLOCKING_RB, ILDL_BLOCKING_BR};
    const int orderings[4] = {ILDL_ORDER_AMD, ILDL_ORDER_METIS, ILDL_ORDER_GMC, ILDL_ORDER_GMC_FILL};
    const int sizes[3] = {32, 5, 1};
    for (int b = 0; b < 2; b++)
        for (int o = 0; o < 4; o++)
            for (int z = 0; z < 3; z++) {
                ildl_options opt;
                ildl_options_default(&opt);
                opt.scaling = ILDL_SCALING_MATCHING;
                opt.blocking = blockings[b];
                opt.ordering = orderings[o];
                opt.max_block_size = sizes[z];
                opt.block_threshold = 0.3;
                ildl_analysis an;
                char msg[256] = "";
                int st = ildl_analyse(&A, NULL, &opt, &an, msg, sizeof msg);
                if (st) printf("analyse: %s\n", msg);
                assert_int_equal(st, ILDL_SUCCESS);
                assert_non_null(an.pair_hint);
                assert_int_equal(an.n_unmatched, nun);
                for (int32_t i = 0; i < n; i++) assert_true(an.scale[i] == s[i]);
                const int32_t *perm = an.blk.perm, *bs = an.blk.bstart;
                for (int32_t k = 0; k < n; k++) inv[perm[k]] = k;
                for (int32_t q = 0; q < an.blk.nb; q++)
                    for (int32_t k = bs[q]; k < bs[q + 1]; k++) blk[k] = q;
                int32_t hints = 0;
                for (int32_t k = 0; k < n; k++) {
                    int32_t i = perm[k], j = pair[i];
                    if (an.pair_hint[k]) {
                        assert_int_equal(an.pair_hint[k], 1);
                        assert_true(k + 1 < n && blk[k + 1] == blk[k]);
                        assert_int_equal(perm[k + 1], j);
                        assert_int_equal(an.pair_hint[k + 1], 0);
                        hints++;
                    }
                    if (j < 0 || sizes[z] < 2) continue;
                    assert_int_equal(abs(inv[j] - k), 1);      /* adjacent */
                    assert_int_equal(blk[inv[j]], blk[k]);     /* same block */
                    if (inv[j] == k + 1) assert_int_equal(an.pair_hint[k], 1);
                }
                assert_int_equal(hints, sizes[z] < 2 ? 0 : npairs);
                ildl_analysis_free(&an);
            }
    ildl_options opt;
    ildl_options_default(&opt);
    opt.scaling = ILDL_SCALING_MATCHING;
    assert_int_equal(ildl_analyse_rescale(&A, &opt, NULL, s2), ILDL_SUCCESS);
    for (int32_t i = 0; i < n; i++) assert_true(s2[i] == s[i]);
    /* equilibration leaves no pair hints */
    opt.scaling = ILDL_SCALING_EQUILIBRATE;
    ildl_analysis an;
    assert_int_equal(ildl_analyse(&A, NULL, &opt, &an, NULL, 0), ILDL_SUCCESS);
    assert_null(an.pair_hint);
    ildl_analysis_free(&an);
    free(s); free(s2); free(pair); free(inv); free(blk);
    ildl_csr_free(&A);
}

/* A matching memo: the first analysis fills it, the next ones (other blockings and orders, as
 * the ladder's complete rung tries) use it and give exactly what an analysis without it gives;
 * a cleared memo is filled again. */
static void test_match_memo(void **state)
{
    (void)state;
    ildl_csr A = {0};
    random_kkt(3000, 1200, 4, &A);
    int32_t n = A.n;
    ildl_match_memo memo;
    memset(&memo, 0, sizeof memo);
    for (int c = 0; c < 3; c++) {
        ildl_options o;
        ildl_options_default(&o);
        if (c > 0) {
            o.blocking = ILDL_BLOCKING_RB;
            o.ordering = c == 1 ? ILDL_ORDER_METIS : ILDL_ORDER_AMD;
        }
        ildl_analysis a, b;
        assert_int_equal(ildl_analyse_within(&A, NULL, &o, 0, NULL, &memo, &a, NULL, 0), ILDL_SUCCESS);
        assert_true(memo.valid && memo.n == n);
        assert_int_equal(ildl_analyse(&A, NULL, &o, &b, NULL, 0), ILDL_SUCCESS);
        assert_memory_equal(a.scale, b.scale, sizeof(double) * (size_t)n);
        assert_memory_equal(a.blk.perm, b.blk.perm, sizeof(int32_t) * (size_t)n);
        assert_int_equal(a.blk.nb, b.blk.nb);
        assert_non_null(a.pair_hint);
        assert_memory_equal(a.pair_hint, b.pair_hint, (size_t)n);
        assert_int_equal(a.n_unmatched, b.n_unmatched);
        assert_int_equal(a.tiles.total_cap, b.tiles.total_cap);
        assert_memory_equal(memo.scale, b.scale, sizeof(double) * (size_t)n);
        ildl_analysis_free(&a);
        ildl_analysis_free(&b);
    }
    /* a memo holding another matrix's matching gives that matching: the owner must clear it */
    double keep0 = memo.scale[0];
    memo.scale[0] = 2.0 * keep0;
    ildl_options o;
    ildl_options_default(&o);
    ildl_analysis a;
    assert_int_equal(ildl_analyse_within(&A, NULL, &o, 0, NULL, &memo, &a, NULL, 0), ILDL_SUCCESS);
    assert_true(a.scale[0] == 2.0 * keep0);
    ildl_analysis_free(&a);
    ildl_match_memo_clear(&memo);
    assert_int_equal(ildl_analyse_within(&A, NULL, &o, 0, NULL, &memo, &a, NULL, 0), ILDL_SUCCESS);
    assert_true(a.scale[0] == keep0 && memo.valid && memo.scale[0] == keep0);
    /* a rescaling of new values fills a cleared memo too: the analysis' scaling, kept */
    ildl_match_memo_clear(&memo);
    double *s = malloc(sizeof(double) * (size_t)n);
    assert_non_null(s);
    assert_int_equal(ildl_analyse_rescale(&A, &o, &memo, s), ILDL_SUCCESS);
    assert_true(memo.valid);
    assert_memory_equal(s, a.scale, sizeof(double) * (size_t)n);
    assert_memory_equal(memo.scale, a.scale, sizeof(double) * (size_t)n);
    free(s);
    ildl_analysis_free(&a);
    ildl_match_memo_free(&memo);
    ildl_csr_free(&A);
}

/* A larger matrix stays fast (successive shortest paths with pruning). */
static void test_speed(void **state)
{
    (void)state;
    ildl_csr A = {0};
    random_kkt(20000, 8000, 5, &A);
    int32_t n = A.n, nun;
    double *s = malloc(sizeof(double) * (size_t)n);
    int32_t *pair = malloc(sizeof(int32_t) * (size_t)n);
    assert_true(s && pair);
    double t0 = clock() / (double)CLOCKS_PER_SEC;
    assert_int_equal(ildl_match_scale(&A, s, pair, &nun), ILDL_SUCCESS);
    double t = clock() / (double)CLOCKS_PER_SEC - t0;
    printf("n = %d: matching scaling %.3f s, %d unmatched\n", (int)n, t, (int)nun);
    assert_true(scaled_max(&A, s) <= 1.0 + 1e-12);
    assert_true(t < 10.0);
    free(s); free(pair);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maxprod_vs_brute_force),
        cmocka_unit_test(test_threads_identical),
        cmocka_unit_test(test_structurally_singular),
        cmocka_unit_test(test_diag_vs_cycle),
        cmocka_unit_test(test_long_cycles),
        cmocka_unit_test(test_symmetric_scaling),
        cmocka_unit_test(test_shared_kkt),
        cmocka_unit_test(test_match_order),
        cmocka_unit_test(test_analyse_matching),
        cmocka_unit_test(test_match_memo),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
