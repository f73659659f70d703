/* test_block.c -- cosine blocking: partition invariants, Saad's greedy rule for RB,
 * recovery of exact block structure, pair handling, argument checks, speed; the supernodal
 * blocking SN against a dense symbolic factorization (the same fill, chains of the elimination
 * tree joined by its rule). */
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
#include "blockildl.h"
#include "analyse/analyse.h"
#include "analyse/block.h"
#include "core/util.h"

/* ---------------------------------------------------------------- helpers */

/* Sorted pattern of row i with the diagonal added; returns its length. */
static int64_t pattern(const ildl_csr *A, int32_t i, int32_t *buf)
{
    int64_t m = 0;
    int placed = 0;
    for (int64_t q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
        int32_t c = A->col[q];
        if (!placed && c >= i) {
            if (c != i) buf[m++] = i;
            placed = 1;
        }
        buf[m++] = c;
    }
    if (!placed) buf[m++] = i;
    return m;
}

/* Cosine similarity of the patterns (with diagonal) of rows i and j, by sorted merge. */
static double cosine(const ildl_csr *A, int32_t i, int32_t j)
{
    int32_t *a = malloc(sizeof(int32_t) * ((size_t)A->n + 1));
    int32_t *b = malloc(sizeof(int32_t) * ((size_t)A->n + 1));
    assert_non_null(a);
    assert_non_null(b);
    int64_t la = pattern(A, i, a), lb = pattern(A, j, b), x = 0, y = 0, hits = 0;
    while (x < la && y < lb) {
        if (a[x] == b[y]) { hits++; x++; y++; }
        else if (a[x] < b[y]) x++;
        else y++;
    }
    free(a);
    free(b);
    return (double)hits / sqrt((double)la * (double)lb);
}

/* Partition invariants: perm a permutation, bstart from 0 to n increasing, sizes <= max_bs. */
static void check_partition(const ildl_blocking *B, int32_t n, int max_bs)
{
    assert_int_equal(B->n, n);
    assert_true(B->nb >= 1 && B->nb <= n);
    assert_non_null(B->perm);
    assert_non_null(B->bstart);
    char *seen = calloc((size_t)n, 1);
    assert_non_null(seen);
    for (int32_t k = 0; k < n; k++) {
        assert_true(B->perm[k] >= 0 && B->perm[k] < n);
        assert_int_equal(seen[B->perm[k]], 0);
        seen[B->perm[k]] = 1;
    }
    free(seen);
    assert_int_equal(B->bstart[0], 0);
    assert_int_equal(B->bstart[B->nb], n);
    for (int32_t b = 0; b < B->nb; b++) {
        int32_t sz = B->bstart[b + 1] - B->bstart[b];
        assert_true(sz >= 1 && sz <= max_bs);
    }
}

/* blk[old row] = its block. */
static int32_t *block_of(const ildl_blocking *B)
{
    int32_t *blk = malloc(sizeof(int32_t) * (size_t)B->n);
    assert_non_null(blk);
    for (int32_t b = 0; b < B->nb; b++)
        for (int32_t k = B->bstart[b]; k < B->bstart[b + 1]; k++) blk[B->perm[k]] = b;
    return blk;
}

/* Every pair lies in one block on adjacent positions. */
static void check_pairs(const ildl_blocking *B, const int32_t *pair)
{
    int32_t n = B->n;
    int32_t *blk = block_of(B);
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(pos);
    for (int32_t k = 0; k < n; k++) pos[B->perm[k]] = k;
    for (int32_t i = 0; i < n; i++) {
        if (pair[i] < 0) continue;
        assert_int_equal(blk[i], blk[pair[i]]);
        assert_int_equal(abs(pos[i] - pos[pair[i]]), 1);
    }
    free(blk);
    free(pos);
}

/* Saad's greedy rule for RB, checked with an independent cosine: every block holds rows
 * similar to its first row, and it ends only when full, at a dissimilar row, or before a
 * pair that does not fit or holds a dissimilar row. */
static void check_rb_rule(const ildl_csr *A, const int32_t *order, const int32_t *pair,
                          int max_bs, double thr, const ildl_blocking *B)
{
    int32_t n = A->n;
    for (int32_t k = 0; k < n; k++) assert_int_equal(B->perm[k], order[k]);
    for (int32_t b = 0; b < B->nb; b++) {
        int32_t s = B->bstart[b], e = B->bstart[b + 1];
        int lead = (pair && s + 1 < n && pair[order[s]] == order[s + 1]) ? 2 : 1;
        for (int32_t k = s + lead; k < e; k++)
            assert_true(cosine(A, order[k], order[s]) >= thr);
        if (e == n) continue;
        if (pair) assert_true(pair[order[e - 1]] != order[e]);
        int u = (pair && e + 1 < n && pair[order[e]] == order[e + 1]) ? 2 : 1;
        int full = (e - s) + u > max_bs;
        int dissimilar = cosine(A, order[e], order[s]) < thr ||
                         (u == 2 && cosine(A, order[e + 1], order[s]) < thr);
        assert_true(full || dissimilar);
    }
}

static void identity(int32_t n, int32_t *p)
{
    for (int32_t i = 0; i < n; i++) p[i] = i;
}

static void shuffle(int32_t n, int32_t *p, uint64_t *s)
{
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)(ildl_test_rand(s) * (i + 1));
        if (j > i) j = i;
        int32_t t = p[i]; p[i] = p[j]; p[j] = t;
    }
}

/* Disjoint random pairs of rows that are adjacent in order (about a third of the rows). */
static int32_t *adjacent_pairs(int32_t n, const int32_t *order, uint64_t *s)
{
    int32_t *pair = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(pair);
    for (int32_t i = 0; i < n; i++) pair[i] = -1;
    for (int32_t k = 0; k + 1 < n; k++)
        if (ildl_test_rand(s) < 0.35) {
            pair[order[k]] = order[k + 1];
            pair[order[k + 1]] = order[k];
            k++;
        }
    return pair;
}

/* Disjoint random pairs of arbitrary rows. */
static int32_t *random_pairs(int32_t n, uint64_t *s)
{
    int32_t *p = malloc(sizeof(int32_t) * (size_t)n);
    int32_t *pair = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(p);
    assert_non_null(pair);
    identity(n, p);
    shuffle(n, p, s);
    for (int32_t i = 0; i < n; i++) pair[i] = -1;
    for (int32_t k = 0; k + 1 < n && k < n / 2; k += 2) {
        pair[p[k]] = p[k + 1];
        pair[p[k + 1]] = p[k];
    }
    free(p);
    return pair;
}

/* The 6x6 example below; with_diag = 0 leaves out all diagonal entries. Patterns with the
 * diagonal: r0 = r1 = {0,1,2}, r2 = {0,1,2,3}, r3 = {2,3,4,5}, r4 = r5 = {3,4,5}. */
static void hand6(int with_diag, ildl_csr *A)
{
    int32_t ti[13] = {0, 0, 1, 2, 3, 3, 4, 0, 1, 2, 3, 4, 5};
    int32_t tj[13] = {1, 2, 2, 3, 4, 5, 5, 0, 1, 2, 3, 4, 5};
    double tv[13];
    for (int k = 0; k < 13; k++) tv[k] = 1.0;
    ildl_test_csr_from_triplets(6, with_diag ? 13 : 7, ti, tj, tv, A);
}

static void expect_bstart(const ildl_blocking *B, int32_t nb, const int32_t *bs)
{
    assert_int_equal(B->nb, nb);
    for (int32_t b = 0; b <= nb; b++) assert_int_equal(B->bstart[b], bs[b]);
}

/* ---------------------------------------------------------------- RB */

/* Cuts of the 6x6 example, derived by hand: cos(r1,r0) = 1, cos(r2,r0) = 3/sqrt(12) = 0.866,
 * cos(r3,r0) = 1/sqrt(12), cos(r3,r2) = 2/4, cos(r4,r3) = cos(r5,r3) = 0.866, cos(r5,r4) = 1,
 * cos(r4,r2) = 1/sqrt(12). Without stored diagonals the results must not change. */
static void test_rb_hand6(void **state)
{
    (void)state;
    for (int with_diag = 0; with_diag <= 1; with_diag++) {
        ildl_csr A;
        ildl_blocking B;
        int32_t order[6], rev[6] = {5, 4, 3, 2, 1, 0};
        identity(6, order);
        hand6(with_diag, &A);

        assert_int_equal(ildl_block_rb(&A, order, NULL, 32, 0.8, &B), ILDL_SUCCESS);
        expect_bstart(&B, 2, (int32_t[]){0, 3, 6});
        check_rb_rule(&A, order, NULL, 32, 0.8, &B);
        ildl_blocking_free(&B);

        assert_int_equal(ildl_block_rb(&A, order, NULL, 32, 0.9, &B), ILDL_SUCCESS);
        expect_bstart(&B, 4, (int32_t[]){0, 2, 3, 4, 6});
        ildl_blocking_free(&B);

        /* cos(r3,r2) = 0.5 exactly passes threshold 0.5; max_bs 2 ends every pair of rows */
        assert_int_equal(ildl_block_rb(&A, order, NULL, 2, 0.5, &B), ILDL_SUCCESS);
        expect_bstart(&B, 3, (int32_t[]){0, 2, 4, 6});
        ildl_blocking_free(&B);

        assert_int_equal(ildl_block_rb(&A, order, NULL, 2, 0.8, &B), ILDL_SUCCESS);
        expect_bstart(&B, 4, (int32_t[]){0, 2, 3, 5, 6});
        ildl_blocking_free(&B);

        /* reversed: r4 and r3 (0.866) join r5, r2 (1/sqrt(12) to r5) starts a block */
        assert_int_equal(ildl_block_rb(&A, rev, NULL, 32, 0.8, &B), ILDL_SUCCESS);
        expect_bstart(&B, 2, (int32_t[]){0, 3, 6});
        for (int k = 0; k < 6; k++) assert_int_equal(B.perm[k], rev[k]);
        ildl_blocking_free(&B);

        /* pair (2,3): the cut between them moves before r2; r4 is dissimilar to r2 */
        int32_t pair[6] = {-1, -1, 3, 2, -1, -1};
        assert_int_equal(ildl_block_rb(&A, order, pair, 32, 0.8, &B), ILDL_SUCCESS);
        expect_bstart(&B, 3, (int32_t[]){0, 2, 4, 6});
        check_rb_rule(&A, order, pair, 32, 0.8, &B);
        ildl_blocking_free(&B);

        /* pair (2,3) with room for 3 rows and no similarity test: {0,1} {2,3,4} {5} */
        assert_int_equal(ildl_block_rb(&A, order, pair, 3, 0, &B), ILDL_SUCCESS);
        expect_bstart(&B, 3, (int32_t[]){0, 2, 5, 6});
        ildl_blocking_free(&B);
        ildl_csr_free(&A);
    }
}

/* A path (tridiagonal): neighbours have cos 2/3, rows two apart 1/3, the end rows and their
 * neighbours 2/sqrt(6). Comparing with the block's FIRST row stops chains at two rows. */
static void test_rb_first_row_rule(void **state)
{
    (void)state;
    int32_t n = 6, ti[11], tj[11], order[6];
    double tv[11];
    int m = 0;
    for (int32_t i = 0; i < n; i++) {
        ti[m] = i; tj[m] = i; tv[m] = 2.0; m++;
        if (i + 1 < n) { ti[m] = i; tj[m] = i + 1; tv[m] = -1.0; m++; }
    }
    ildl_csr A;
    ildl_blocking B;
    ildl_test_csr_from_triplets(n, m, ti, tj, tv, &A);
    identity(n, order);
    assert_int_equal(ildl_block_rb(&A, order, NULL, 32, 0.6, &B), ILDL_SUCCESS);
    expect_bstart(&B, 3, (int32_t[]){0, 2, 4, 6});
    ildl_blocking_free(&B);
    /* threshold 0.3: r2 joins r0 (1/sqrt(6)), r3 shares nothing with r0; r4 (2/3) and r5
     * (1/sqrt(6)) join r3 */
    assert_int_equal(ildl_block_rb(&A, order, NULL, 32, 0.3, &B), ILDL_SUCCESS);
    expect_bstart(&B, 2, (int32_t[]){0, 3, 6});
    ildl_blocking_free(&B);
    ildl_csr_free(&A);
}

/* Partition invariants and the greedy rule on a Laplacian and random matrices, in natural
 * and random orders, with and without pairs. */
static void test_rb_invariants(void **state)
{
    (void)state;
    uint64_t s = 12345;
    const double thr[] = {0.0, 0.3, 0.5, 0.8, 1.0};
    const int bsz[] = {1, 2, 5, 8, 32};
    for (int mat = 0; mat < 4; mat++) {
        ildl_csr A;
        if (mat == 0) ildl_test_laplace2d(17, 0, &A);
        else ildl_test_random_sym(300 + 50 * mat, 2 + 3 * mat, 1.0, 0.1, 77 + mat, &A);
        int32_t n = A.n;
        int32_t *order = malloc(sizeof(int32_t) * (size_t)n);
        assert_non_null(order);
        for (int o = 0; o < 2; o++) {
            identity(n, order);
            if (o) shuffle(n, order, &s);
            int32_t *pair = adjacent_pairs(n, order, &s);
            for (int ti = 0; ti < 5; ti++)
                for (int bi = 0; bi < 5; bi++)
                    for (int usep = 0; usep < 2; usep++) {
                        ildl_blocking B;
                        const int32_t *pp = usep ? pair : NULL;
                        assert_int_equal(ildl_block_rb(&A, order, pp, bsz[bi], thr[ti], &B),
                                         ILDL_SUCCESS);
                        check_partition(&B, n, bsz[bi]);
                        if (bsz[bi] == 1) {
                            assert_int_equal(B.nb, n);
                            pp = NULL; /* pairs cannot fit into 1-row blocks */
                        } else if (pp) {
                            check_pairs(&B, pp);
                        }
                        check_rb_rule(&A, order, pp, bsz[bi], thr[ti], &B);
                        if (thr[ti] == 0.0 && !pp)
                            for (int32_t b = 0; b + 1 < B.nb; b++)
                                assert_int_equal(B.bstart[b + 1] - B.bstart[b], bsz[bi]);
                        ildl_blocking_free(&B);
                    }
            free(pair);
        }
        free(order);
        ildl_csr_free(&A);
    }
}

/* ---------------------------------------------------------------- strategy SN */

/* Dense symbolic factorization of A permuted by perm (perm[new] = old, n small): L[i*n+k] = 1
 * for i > k where L has an entry; returns the count of those entries. */
static int64_t dense_symbolic(const ildl_csr *A, const int32_t *perm, char *L)
{
    int32_t n = A->n;
    int32_t *inv = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(inv);
    for (int32_t k = 0; k < n; k++) inv[perm[k]] = k;
    memset(L, 0, (size_t)n * (size_t)n);
    for (int32_t r = 0; r < n; r++)
        for (int64_t p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
            int32_t i = inv[r], j = inv[A->col[p]];
            if (i != j) L[(size_t)(i > j ? i : j) * n + (i > j ? j : i)] = 1;
        }
    int64_t cnt = 0;
    for (int32_t k = 0; k < n; k++)
        for (int32_t i = k + 1; i < n; i++) {
            if (!L[(size_t)i * n + k]) continue;
            cnt++;
            for (int32_t j = k + 1; j < i; j++) /* rows i, j of column k meet: L(i,j) */
                if (L[(size_t)j * n + k]) L[(size_t)i * n + j] = 1;
        }
    free(inv);
    return cnt;
}

/* SN without pairs: the same fill as the given order (its postorder), every block a chain of
 * the elimination tree (parent(k) = k+1 inside a block), and a block ends exactly where the
 * rule says: full, not a chain, or the column of L below k holding fewer than half the rows
 * of k+1's column and k+1. Amalgamated: the greedy merge's rule (below). With pairs:
 * partition and pairs only. */
static void test_sn_rule(void **state)
{
    (void)state;
    uint64_t s = 777;
    int merged = 0;
    const int bsz[] = {1, 2, 5, 32};
    for (int mat = 0; mat < 4; mat++) {
        ildl_csr A;
        if (mat == 0) ildl_test_laplace2d(15, 0, &A);
        else if (mat == 3) ildl_test_kkt_zero_first(25, 60, 5, &A);
        else ildl_test_random_sym(150 + 60 * mat, 2 * mat, 1.0, 0.2, 31 + mat, &A);
        int32_t n = A.n;
        int32_t *order = malloc(sizeof(int32_t) * (size_t)n);
        char *L = malloc((size_t)n * (size_t)n);
        int32_t *cc = malloc(sizeof(int32_t) * (size_t)n), *par = malloc(sizeof(int32_t) * (size_t)n);
        assert_true(order && L && cc && par);
        for (int o = 0; o < 2; o++) {
            identity(n, order);
            if (o) shuffle(n, order, &s);
            int64_t fill0 = dense_symbolic(&A, order, L);
            int32_t *pair = adjacent_pairs(n, order, &s);
            for (int bi = 0; bi < 4; bi++)
                for (int usep = 0; usep < 2; usep++) {
                    ildl_blocking B;
                    const int32_t *pp = usep ? pair : NULL;
                    assert_int_equal(ildl_block_sn(&A, order, pp, bsz[bi], 0, 0, NULL, &B), ILDL_SUCCESS);
                    check_partition(&B, n, bsz[bi]);
                    if (pp && bsz[bi] > 1) check_pairs(&B, pp);
                    if (!pp) {
                        assert_int_equal(dense_symbolic(&A, B.perm, L), fill0);
                        for (int32_t k = 0; k < n; k++) {
                            cc[k] = 0;
                            par[k] = -1;
                            for (int32_t i = n - 1; i > k; i--)
                                if (L[(size_t)i * n + k]) {
                                    cc[k]++;
                                    par[k] = i;
                                }
                        }
                        int32_t *blk = block_of(&B), *pos = malloc(sizeof(int32_t) * (size_t)n);
                        assert_non_null(pos);
                        for (int32_t k = 0; k < n; k++) pos[B.perm[k]] = k;
                        for (int32_t b = 0; b < B.nb; b++)
                            for (int32_t k = B.bstart[b]; k + 1 < n && k < B.bstart[b + 1]; k++) {
                                int same = k + 1 < B.bstart[b + 1];
                                int rule = (k + 2 - B.bstart[b]) <= bsz[bi] && par[k] == k + 1 &&
                                           (double)cc[k] >= 0.5 * (double)(cc[k + 1] + 1);
                                assert_int_equal(same, rule);
                            }
                        free(blk);
                        free(pos);
                    }
                    /* amalgamated: the same order, cut at a subset of the chains' cuts, each block
                     * within the size; a cut stays exactly where the greedy merge from the last
                     * block down stops: where the block before the group does not fit or hangs
                     * neither below the group nor beside it (par of the group's top) */
                    ildl_blocking G;
                    assert_int_equal(ildl_block_sn(&A, order, pp, bsz[bi], 1, 0, NULL, &G), ILDL_SUCCESS);
                    check_partition(&G, n, bsz[bi]);
                    if (pp && bsz[bi] > 1) check_pairs(&G, pp);
                    assert_memory_equal(G.perm, B.perm, sizeof(int32_t) * (size_t)n);
                    assert_true(G.nb <= B.nb);
                    int amal = 6 * B.nb > n; /* chains of 6 rows or more on average: kept */
                    if (!amal) assert_int_equal(G.nb, B.nb);
                    merged += G.nb < B.nb;
                    char *cut = calloc((size_t)n + 1, 1);
                    assert_non_null(cut);
                    for (int32_t b = 0; b <= B.nb; b++) cut[B.bstart[b]] = 1;
                    for (int32_t g = 0; g <= G.nb; g++) assert_true(cut[G.bstart[g]]);
                    if (!pp && amal)
                        for (int32_t g = 0; g < G.nb; g++) {
                            int32_t f = G.bstart[g], e = G.bstart[g + 1] - 1;
                            for (int32_t k = f; k <= e; k++) {
                                if (!cut[k] || k == 0) continue;
                                /* the block before k: [a, k-1]; the group [k, e] at that point */
                                int32_t a = k - 1;
                                while (!cut[a]) a--;
                                int hangs = (par[k - 1] >= k && par[k - 1] <= e) ||
                                            (par[k - 1] >= 0 && par[k - 1] == par[e]);
                                int fits = (e - a + 1) <= bsz[bi];
                                assert_int_equal(k > f, hangs && fits); /* inside: merged; at f: refused */
                            }
                        }
                    free(cut);
                    ildl_blocking_free(&G);
                    ildl_blocking_free(&B);
                }
            free(pair);
        }
        free(order); free(L); free(cc); free(par);
        ildl_csr_free(&A);
    }
    assert_true(merged > 0); /* the amalgamation is not a no-op on these */
}

/* SN with a work limit below the factor's entries refuses (out of memory), holding nothing; an
 * analysis with that budget says so. */
static void test_sn_limit(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace2d(30, 0, &A);
    int32_t n = A.n, *order = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(order);
    identity(n, order);
    ildl_blocking B;
    int over = 0;
    assert_int_equal(ildl_block_sn(&A, order, NULL, 32, 0, 100, &over, &B), ILDL_ERR_OUT_OF_MEMORY);
    assert_int_equal(over, 1);
    assert_null(B.perm);
    assert_null(B.bstart);
    assert_int_equal(ildl_block_sn(&A, order, NULL, 32, 0, 100000000, &over, &B), ILDL_SUCCESS);
    assert_int_equal(over, 0);
    ildl_blocking_free(&B);
    /* through the analysis: refused with the budget in the message, nothing held */
    ildl_options o;
    ildl_test_complete_options(&o, ILDL_BLOCKING_SN, ILDL_ORDER_AMD);
    ildl_analysis an;
    int64_t need = -1;
    char msg[256] = "";
    assert_int_equal(ildl_analyse_within(&A, NULL, &o, 100, &need, NULL, &an, msg, sizeof msg), ILDL_ERR_OUT_OF_MEMORY);
    assert_non_null(strstr(msg, "more than the 100 entries allowed"));
    assert_int_equal(need, 0);
    assert_int_equal(ildl_analyse_within(&A, NULL, &o, 0, &need, NULL, &an, msg, sizeof msg), ILDL_SUCCESS);
    assert_true(an.tiles.total_cap > 100);
    ildl_analysis_free(&an);
    free(order);
    ildl_csr_free(&A);
}

/* An SN analysis is the same for every backend (the CPU's factor is the GPU's reference, and
 * the ladder's results agree across backends): amalgamated for both, fewer blocks than the
 * order's chains of the elimination tree would give on this KKT system of small chains. */
static void test_sn_same_for_every_backend(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_kkt_zero_first(40, 160, 7, &A);
    ildl_analysis an[3];
    const int backend[3] = {ILDL_BACKEND_CPU, ILDL_BACKEND_CUDA, ILDL_BACKEND_AUTO};
    for (int k = 0; k < 3; k++) {
        ildl_options o;
        ildl_test_complete_options(&o, ILDL_BLOCKING_SN, ILDL_ORDER_AMD);
        o.backend = backend[k];
        char msg[256] = "";
        assert_int_equal(ildl_analyse(&A, NULL, &o, &an[k], msg, sizeof msg), ILDL_SUCCESS);
    }
    int32_t n = A.n;
    for (int k = 1; k < 3; k++) {
        assert_int_equal(an[k].blk.nb, an[0].blk.nb);
        assert_memory_equal(an[k].blk.perm, an[0].blk.perm, sizeof(int32_t) * (size_t)n);
        assert_memory_equal(an[k].blk.bstart, an[0].blk.bstart, sizeof(int32_t) * ((size_t)an[0].blk.nb + 1));
        assert_int_equal(an[k].tiles.total_cap, an[0].tiles.total_cap);
    }
    ildl_blocking chains;
    assert_int_equal(ildl_block_sn(&A, an[0].blk.perm, NULL, 32, 0, 0, NULL, &chains), ILDL_SUCCESS);
    assert_true(6 * chains.nb > n);     /* small chains: amalgamated */
    assert_true(an[0].blk.nb < chains.nb);
    ildl_blocking_free(&chains);
    for (int k = 0; k < 3; k++) ildl_analysis_free(&an[k]);
    ildl_csr_free(&A);
}

/* ---------------------------------------------------------------- exact block structure */

/* nblk dense 8x8 blocks on randomly shuffled rows: grp[row] = its block; with couple > 0,
 * one extra entry joins the first rows of consecutive blocks. */
static void shuffled_blocks(int32_t nblk, int couple, uint64_t *s, ildl_csr *A, int32_t *grp,
                            int32_t *rows)
{
    int32_t n = 8 * nblk;
    int64_t cap = (int64_t)nblk * 36 + nblk;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap), *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap);
    assert_true(ti && tj && tv);
    identity(n, rows);
    shuffle(n, rows, s);
    int64_t m = 0;
    for (int32_t b = 0; b < nblk; b++) {
        for (int x = 0; x < 8; x++) {
            grp[rows[8 * b + x]] = b;
            for (int y = x; y < 8; y++) {
                ti[m] = rows[8 * b + x]; tj[m] = rows[8 * b + y]; tv[m] = 1.0; m++;
            }
        }
        if (couple && b + 1 < nblk) {
            ti[m] = rows[8 * b]; tj[m] = rows[8 * b + 8]; tv[m] = 0.1; m++;
        }
    }
    ildl_test_csr_from_triplets(n, m, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

/* Rows of every block come from one dense block; if whole, each dense block is one block. */
static void check_groups(const ildl_blocking *B, const int32_t *grp, int whole)
{
    for (int32_t b = 0; b < B->nb; b++) {
        int32_t g = grp[B->perm[B->bstart[b]]];
        for (int32_t k = B->bstart[b]; k < B->bstart[b + 1]; k++) assert_int_equal(grp[B->perm[k]], g);
        if (whole) assert_int_equal(B->bstart[b + 1] - B->bstart[b], 8);
    }
}

static void test_exact_blocks(void **state)
{
    (void)state;
    uint64_t s = 99;
    const int32_t nblk = 60, n = 8 * nblk;
    int32_t *grp = malloc(sizeof(int32_t) * (size_t)n), *rows = malloc(sizeof(int32_t) * (size_t)n);
    assert_true(grp && rows);
    const int ords[] = {ILDL_ORDER_NATURAL, ILDL_ORDER_AMD, ILDL_ORDER_RCM};
    for (int couple = 0; couple < 2; couple++) {
        ildl_csr A;
        ildl_blocking B;
        shuffled_blocks(nblk, couple, &s, &A, grp, rows);
        for (int oi = 0; oi < 3; oi++) {
            /* max_bs 8: exactly the dense blocks, also with weak coupling */
            assert_int_equal(ildl_block_br(&A, ords[oi], 1, NULL, 8, 0.8, 0.9, &B), ILDL_SUCCESS);
            check_partition(&B, n, 8);
            check_groups(&B, grp, 1);
            assert_int_equal(B.nb, nblk);
            ildl_blocking_free(&B);
            /* max_bs 4 splits each dense block but never mixes two */
            assert_int_equal(ildl_block_br(&A, ords[oi], 1, NULL, 4, 0.8, 0.9, &B), ILDL_SUCCESS);
            check_partition(&B, n, 4);
            check_groups(&B, grp, 0);
            assert_int_equal(B.nb, 2 * nblk);
            ildl_blocking_free(&B);
            if (!couple) {
                /* nothing couples the dense blocks, so larger blocks cannot mix them */
                assert_int_equal(ildl_block_br(&A, ords[oi], 1, NULL, 16, 0.8, 0.9, &B), ILDL_SUCCESS);
                check_partition(&B, n, 16);
                check_groups(&B, grp, 1);
                ildl_blocking_free(&B);
            }
        }
        /* RB on an order that lists each dense block consecutively */
        const int rb_bs[] = {8, 16, 32, 4};
        for (int bi = 0; bi < 4; bi++) {
            int bs = rb_bs[bi] < 8 ? rb_bs[bi] : 8;
            assert_int_equal(ildl_block_rb(&A, rows, NULL, rb_bs[bi], 0.8, &B), ILDL_SUCCESS);
            check_partition(&B, n, rb_bs[bi]);
            assert_int_equal(B.nb, n / bs);
            for (int32_t b = 0; b <= B.nb; b++) assert_int_equal(B.bstart[b], b * bs);
            ildl_blocking_free(&B);
        }
        ildl_csr_free(&A);
    }
    free(grp);
    free(rows);
}

/* ---------------------------------------------------------------- BR */

static void test_br_invariants(void **state)
{
    (void)state;
    uint64_t s = 4242;
    const double thr[] = {0.0, 0.3, 0.8, 1.0};
    const int bsz[] = {1, 2, 7, 32};
    const int ords[] = {ILDL_ORDER_NATURAL, ILDL_ORDER_AMD, ILDL_ORDER_RCM, ILDL_ORDER_METIS,
                        ILDL_ORDER_GMC, ILDL_ORDER_GMC_FILL};
    for (int mat = 0; mat < 3; mat++) {
        ildl_csr A;
        if (mat == 0) ildl_test_laplace2d(18, 0, &A);
        else ildl_test_random_sym(400 + 100 * mat, 3 * mat, 1.0, 0.2, 5 + mat, &A);
        int32_t n = A.n;
        int32_t *pair = random_pairs(n, &s);
        for (int ti = 0; ti < 4; ti++)
            for (int bi = 0; bi < 4; bi++)
                for (int oi = 0; oi < 6; oi++)
                    for (int usep = 0; usep < 2; usep++) {
                        ildl_blocking B;
                        int st = ildl_block_br(&A, ords[oi], 1, usep ? pair : NULL, bsz[bi], thr[ti],
                                               0.9, &B);
                        assert_int_equal(st, ILDL_SUCCESS);
                        check_partition(&B, n, bsz[bi]);
                        if (bsz[bi] == 1) assert_int_equal(B.nb, n);
                        else if (usep) check_pairs(&B, pair);
                        ildl_blocking_free(&B);
                    }
        free(pair);
        ildl_csr_free(&A);
    }
}

/* On more rows than one chunk of BR's parallel passes over rows (65536: the unit numbering),
 * with pairs across chunk boundaries, and with every ordering (AUTO colours the final graph
 * beside AMD): the same blocking for any thread count. With 5 threads the second level (12279
 * or 24130 vertices) is grouped in windows (br_group_parallel); threshold 0.5 (AUTO only) adds
 * levels that merge little or nothing, where the best similarity below the threshold decides
 * the next step. */
static void test_br_thread_independent_large(void **state)
{
    (void)state;
    uint64_t s = 4242;
    const int ords[] = {ILDL_ORDER_AUTO, ILDL_ORDER_AMD, ILDL_ORDER_RCM, ILDL_ORDER_METIS,
                        ILDL_ORDER_GMC_FILL};
    const int threads[] = {2, 5};
    int prev = ildl_set_threads(1);
    ildl_csr A;
    ildl_test_laplace2d(380, 0, &A); /* 144400 rows: three chunks */
    int32_t n = A.n;
    int32_t *pair = random_pairs(n, &s);
    for (int oi = 0; oi < 6; oi++)
        for (int usep = 0; usep < 2; usep++) {
            ildl_blocking R, B;
            int ord = ords[oi < 5 ? oi : 0];
            double thr = oi < 5 ? 0.0 : 0.5;
            ildl_set_threads(1);
            assert_int_equal(ildl_block_br(&A, ord, 1, usep ? pair : NULL, 32, thr, 0.9, &R), ILDL_SUCCESS);
            for (int k = 0; k < 2; k++) {
                ildl_set_threads(threads[k]);
                assert_int_equal(ildl_block_br(&A, ord, 1, usep ? pair : NULL, 32, thr, 0.9, &B), ILDL_SUCCESS);
                assert_int_equal(B.nb, R.nb);
                assert_int_equal(B.ordering_used, R.ordering_used);
                assert_memory_equal(B.perm, R.perm, sizeof(int32_t) * (size_t)n);
                assert_memory_equal(B.bstart, R.bstart, sizeof(int32_t) * ((size_t)R.nb + 1));
                ildl_blocking_free(&B);
            }
            if (usep) check_pairs(&R, pair);
            ildl_blocking_free(&R);
        }
    free(pair);
    ildl_csr_free(&A);
    ildl_set_threads(prev);
}

/* BR coarsens its graph row by row in parallel: the blocking (perm and bstart) must be the
 * same for every thread count, with and without pairs, over thresholds that merge in one
 * level, in several, or stop early. */
static void test_br_thread_independent(void **state)
{
    (void)state;
    uint64_t s = 777;
    const double thr[] = {0.0, 0.4, 0.8};
    const int bsz[] = {4, 32};
    const int threads[] = {2, 3, 7};
    int prev = ildl_set_threads(1);
    for (int mat = 0; mat < 3; mat++) {
        ildl_csr A;
        if (mat == 0) ildl_test_laplace2d(40, 0, &A);
        else ildl_test_random_sym(3000 * mat, 2 + 4 * mat, 1.0, 0.1, 11 + mat, &A);
        int32_t n = A.n;
        int32_t *pair = random_pairs(n, &s);
        for (int ti = 0; ti < 3; ti++)
            for (int bi = 0; bi < 2; bi++)
                for (int usep = 0; usep < 2; usep++) {
                    ildl_blocking R, B;
                    ildl_set_threads(1);
                    assert_int_equal(ildl_block_br(&A, ILDL_ORDER_AMD, 1, usep ? pair : NULL,
                                                   bsz[bi], thr[ti], 0.9, &R), ILDL_SUCCESS);
                    for (int k = 0; k < 3; k++) {
                        ildl_set_threads(threads[k]);
                        assert_int_equal(ildl_block_br(&A, ILDL_ORDER_AMD, 1, usep ? pair : NULL,
                                                       bsz[bi], thr[ti], 0.9, &B), ILDL_SUCCESS);
                        assert_int_equal(B.nb, R.nb);
                        assert_memory_equal(B.perm, R.perm, sizeof(int32_t) * (size_t)n);
                        assert_memory_equal(B.bstart, R.bstart, sizeof(int32_t) * ((size_t)R.nb + 1));
                        ildl_blocking_free(&B);
                    }
                    ildl_blocking_free(&R);
                }
        free(pair);
        ildl_csr_free(&A);
    }
    ildl_set_threads(prev);
}

/* No two rows of a 5-point Laplacian have similar patterns (cos < 0.6 between any two), so
 * threshold 0.8 and decay 1 merge nothing; threshold 0 merges neighbourhoods into big blocks. */
static void test_br_laplace(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_blocking B;
    ildl_test_laplace2d(20, 0, &A);
    int32_t n = A.n;
    assert_int_equal(ildl_block_br(&A, ILDL_ORDER_NATURAL, 1, NULL, 32, 0.8, 1.0, &B), ILDL_SUCCESS);
    assert_int_equal(B.nb, n);
    ildl_blocking_free(&B);
    /* with decay < 1 an empty first level does not end BR: the threshold keeps falling */
    assert_int_equal(ildl_block_br(&A, ILDL_ORDER_NATURAL, 1, NULL, 32, 0.8, 0.9, &B), ILDL_SUCCESS);
    check_partition(&B, n, 32);
    assert_true(B.nb < n / 2);
    ildl_blocking_free(&B);
    assert_int_equal(ildl_block_br(&A, ILDL_ORDER_AMD, 1, NULL, 16, 0, 0.9, &B), ILDL_SUCCESS);
    check_partition(&B, n, 16);
    assert_true(B.nb < n / 4);
    ildl_blocking_free(&B);
    ildl_csr_free(&A);
}

/* A row without a stored diagonal still counts it: two rows {0,1} without diagonals have
 * patterns {0,1} (with the diagonal) and cos 1, so BR and RB group them at threshold 1. */
static void test_implicit_diagonal(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_blocking B;
    int32_t ti[] = {0, 2}, tj[] = {1, 2}, order[3] = {0, 1, 2};
    double tv[] = {1.0, 1.0};
    ildl_test_csr_from_triplets(3, 2, ti, tj, tv, &A);
    assert_int_equal(ildl_block_rb(&A, order, NULL, 32, 1.0, &B), ILDL_SUCCESS);
    expect_bstart(&B, 2, (int32_t[]){0, 2, 3});
    ildl_blocking_free(&B);
    assert_int_equal(ildl_block_br(&A, ILDL_ORDER_NATURAL, 1, NULL, 32, 1.0, 0.9, &B), ILDL_SUCCESS);
    assert_int_equal(B.nb, 2);
    check_partition(&B, 3, 32);
    int32_t *blk = block_of(&B);
    assert_int_equal(blk[0], blk[1]);
    assert_true(blk[2] != blk[0]);
    free(blk);
    ildl_blocking_free(&B);
    ildl_csr_free(&A);
}

/* ---------------------------------------------------------------- errors, speed */

static void test_invalid(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_blocking B;
    ildl_test_laplace2d(4, 0, &A);
    int32_t order[16], bad[16], pair[16];
    identity(16, order);
    identity(16, bad);
    bad[3] = 2;
    for (int i = 0; i < 16; i++) pair[i] = -1;
    pair[0] = 1; /* not an involution: pair[1] = -1 */
    assert_int_equal(ildl_block_rb(&A, order, NULL, 0, 0.8, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_rb(&A, order, NULL, 33, 0.8, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_rb(&A, order, NULL, 8, NAN, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_rb(&A, order, NULL, 8, -0.1, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_rb(&A, bad, NULL, 8, 0.8, &B), ILDL_ERR_INVALID_OPTION);
    assert_null(B.perm);
    assert_null(B.bstart);
    assert_int_equal(ildl_block_rb(&A, NULL, NULL, 8, 0.8, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_rb(&A, order, pair, 8, 0.8, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_rb(&A, order, NULL, 8, 0.8, NULL), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_br(&A, ILDL_ORDER_AMD, 1, NULL, 8, 0.8, 1.5, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_br(&A, ILDL_ORDER_AMD, 1, pair, 8, 0.8, 0.9, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_br(&A, 99, 1, NULL, 8, 0.8, 0.9, &B), ILDL_ERR_INVALID_OPTION);
    assert_null(B.perm);
    assert_int_equal(ildl_block_br(NULL, ILDL_ORDER_AMD, 1, NULL, 8, 0.8, 0.9, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_sn(&A, order, NULL, 0, 0, 0, NULL, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_sn(&A, order, NULL, 33, 0, 0, NULL, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_sn(&A, bad, NULL, 8, 0, 0, NULL, &B), ILDL_ERR_INVALID_OPTION);
    assert_null(B.perm);
    assert_int_equal(ildl_block_sn(&A, NULL, NULL, 8, 0, 0, NULL, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_sn(&A, order, pair, 8, 0, 0, NULL, &B), ILDL_ERR_INVALID_OPTION);
    assert_int_equal(ildl_block_sn(&A, order, NULL, 8, 0, 0, NULL, NULL), ILDL_ERR_INVALID_OPTION);

    ildl_blocking_free(NULL);
    ildl_csr_free(&A);
}

/* Size of the largest shared matrix (n = 35k, nnz = 500k): RB well under a second, BR a few. */
static void test_speed(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_blocking B;
    ildl_test_random_sym(35000, 13, 1.0, 0, 3, &A);
    int32_t n = A.n;
    int32_t *order = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(order);
    identity(n, order);
    double t0 = ildl_wtime();
    assert_int_equal(ildl_block_rb(&A, order, NULL, 32, 0.5, &B), ILDL_SUCCESS);
    double t_rb = ildl_wtime() - t0;
    check_partition(&B, n, 32);
    ildl_blocking_free(&B);
    t0 = ildl_wtime();
    assert_int_equal(ildl_block_br(&A, ILDL_ORDER_NATURAL, 1, NULL, 32, 0.1, 0.9, &B), ILDL_SUCCESS);
    double t_br = ildl_wtime() - t0;
    check_partition(&B, n, 32);
    printf("n = %d, nnz = %lld: RB %.3f s, BR %.3f s (%d blocks)\n", (int)n,
           (long long)A.rowptr[n], t_rb, t_br, (int)B.nb);
    ildl_blocking_free(&B);
    /* generous bounds: a loaded test machine must not fail a correct build */
    assert_true(t_rb < 2.0);
    assert_true(t_br < 10.0);
    free(order);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rb_hand6),
        cmocka_unit_test(test_rb_first_row_rule),
        cmocka_unit_test(test_rb_invariants),
        cmocka_unit_test(test_exact_blocks),
        cmocka_unit_test(test_br_invariants),
        cmocka_unit_test(test_br_thread_independent),
        cmocka_unit_test(test_br_thread_independent_large),
        cmocka_unit_test(test_br_laplace),
        cmocka_unit_test(test_implicit_diagonal),
        cmocka_unit_test(test_sn_rule),
        cmocka_unit_test(test_sn_limit),
        cmocka_unit_test(test_sn_same_for_every_backend),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
