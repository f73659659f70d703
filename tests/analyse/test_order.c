/* test_order.c -- orderings: valid permutations on awkward graphs, and each method's purpose
 * (fill for AMD/METIS, bandwidth for RCM, level sets for GMC) measured independently here. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include "analyse/fill.h"
#include "analyse/levels.h"
#include "analyse/order.h"
#include "blockildl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int all_methods[] = {ILDL_ORDER_AMD, ILDL_ORDER_RCM, ILDL_ORDER_GMC,
                                  ILDL_ORDER_METIS, ILDL_ORDER_NATURAL, ILDL_ORDER_AUTO,
                                  ILDL_ORDER_GMC_FILL};
#define NMETHODS ((int)(sizeof all_methods / sizeof all_methods[0]))

/* Order A with method, asserting success and a valid permutation; returns malloc'ed perm. */
static int32_t *order_ok(const ildl_csr *A, int method)
{
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)(A->n > 0 ? A->n : 1));
    char msg[256] = "";
    assert_non_null(perm);
    int st = ildl_order_graph(A->n, A->rowptr, A->col, method, 1, perm, NULL, msg, sizeof msg);
    if (st != ILDL_SUCCESS) print_message("method %d: %s\n", method, msg);
    assert_int_equal(st, ILDL_SUCCESS);
    assert_true(ildl_is_permutation(A->n, perm));
    return perm;
}

static int32_t *inverse(int32_t n, const int32_t *perm)
{
    int32_t *inv = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(inv);
    for (int32_t k = 0; k < n; k++) inv[perm[k]] = k;
    return inv;
}

/* Random permutation (Fisher-Yates). */
static int32_t *random_perm(int32_t n, uint64_t seed)
{
    int32_t *p = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(p);
    for (int32_t i = 0; i < n; i++) p[i] = i;
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)(ildl_test_rand(&seed) * (i + 1));
        if (j > i) j = i;
        int32_t t = p[i]; p[i] = p[j]; p[j] = t;
    }
    return p;
}

/* A shuffled copy of A (B = P A P^T). */
static void shuffled(const ildl_csr *A, uint64_t seed, ildl_csr *B)
{
    int32_t *p = random_perm(A->n, seed);
    assert_int_equal(ildl_csr_permute(A, p, B), ILDL_SUCCESS);
    free(p);
}

/* nnz of the Cholesky factor L (diagonal included) of A(perm,perm): elimination tree by
 * path-compressed ancestors, then each row's pattern is the union of tree paths from its
 * entries up to the row (Liu). */
static int64_t chol_nnz(const ildl_csr *A, const int32_t *perm)
{
    int32_t n = A->n;
    int32_t *inv = inverse(n, perm);
    int32_t *parent = malloc(sizeof(int32_t) * (size_t)n);
    int32_t *anc = malloc(sizeof(int32_t) * (size_t)n);
    int32_t *mark = malloc(sizeof(int32_t) * (size_t)n);
    assert_true(parent && anc && mark);
    for (int32_t k = 0; k < n; k++) {
        parent[k] = anc[k] = -1;
        int32_t i = perm[k];
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = inv[A->col[p]];
            while (j >= 0 && j < k) {
                int32_t next = anc[j];
                anc[j] = k;
                if (next < 0) parent[j] = k;
                j = next;
            }
        }
    }
    int64_t nnz = n;
    for (int32_t k = 0; k < n; k++) {
        mark[k] = k;
        int32_t i = perm[k];
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = inv[A->col[p]];
            if (j >= k) continue;
            for (; mark[j] != k; j = parent[j]) {
                assert_true(j >= 0 && j < k);
                mark[j] = k;
                nnz++;
            }
        }
    }
    free(inv); free(parent); free(anc); free(mark);
    return nnz;
}

/* Bandwidth of A(perm,perm). */
static int32_t bandwidth(const ildl_csr *A, const int32_t *perm)
{
    int32_t *inv = inverse(A->n, perm), bw = 0;
    for (int32_t i = 0; i < A->n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t d = abs(inv[i] - inv[A->col[p]]);
            if (d > bw) bw = d;
        }
    free(inv);
    return bw;
}

/* Number of level sets of the lower-triangular dependency graph of A(perm,perm). */
static int32_t num_levels(const ildl_csr *A, const int32_t *perm)
{
    int32_t n = A->n, nlev = 0;
    int32_t *inv = inverse(n, perm);
    int32_t *lev = calloc((size_t)n, sizeof(int32_t));
    assert_non_null(lev);
    for (int32_t k = 0; k < n; k++) {
        int32_t i = perm[k], l = 1;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = inv[A->col[p]];
            if (j < k && lev[j] + 1 > l) l = lev[j] + 1;
        }
        lev[k] = l;
        if (l > nlev) nlev = l;
    }
    free(inv); free(lev);
    return nlev;
}

static int32_t max_degree(const ildl_csr *A)
{
    int32_t d = 0;
    for (int32_t i = 0; i < A->n; i++) {
        int32_t di = 0;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) di += A->col[p] != i;
        if (di > d) d = di;
    }
    return d;
}

/* Connected-component label of every vertex (union-find on the edges). */
static int32_t *components(const ildl_csr *A, int32_t *ncomp)
{
    int32_t n = A->n;
    int32_t *root = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(root);
    for (int32_t i = 0; i < n; i++) root[i] = i;
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int32_t a = i, b = A->col[p];
            while (root[a] != a) a = root[a] = root[root[a]];
            while (root[b] != b) b = root[b] = root[root[b]];
            if (a != b) root[a < b ? b : a] = a < b ? a : b;
        }
    *ncomp = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t a = i;
        while (root[a] != a) a = root[a];
        root[i] = a;
        *ncomp += (a == i);
    }
    return root;
}

/* 400 vertices in 6 interleaved components of random edges, plus isolated vertices: some with
 * a diagonal entry, some with no entry at all. */
static void components_graph(ildl_csr *A)
{
    const int32_t n = 400;
    uint64_t s = 12345;
    int64_t cap = 4 * (int64_t)n, m = 0;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap), *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap);
    assert_true(ti && tj && tv);
    for (int32_t i = 0; i < n; i++) {
        int32_t c = i % 7; /* class 6 is isolated */
        if (c == 6) {
            if (i % 2 == 0) { ti[m] = i; tj[m] = i; tv[m] = 1.0; m++; }
            continue;
        }
        ti[m] = i; tj[m] = i; tv[m] = 4.0; m++;
        for (int k = 0; k < 2; k++) {
            int32_t j = (int32_t)(ildl_test_rand(&s) * (n / 7)) * 7 + c;
            if (j >= n || j == i) continue;
            ti[m] = i; tj[m] = j; tv[m] = -1.0; m++;
        }
        /* a chain through the class keeps each class connected */
        if (i + 7 < n) { ti[m] = i; tj[m] = i + 7; tv[m] = -1.0; m++; }
    }
    ildl_test_csr_from_triplets(n, m, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

static void test_laplacian_all_methods(void **state)
{
    (void)state;
    ildl_csr A = {0};
    ildl_test_laplace2d(30, 0.0, &A);
    for (int k = 0; k < NMETHODS; k++) free(order_ok(&A, all_methods[k]));
    int32_t *p = order_ok(&A, ILDL_ORDER_NATURAL);
    for (int32_t i = 0; i < A.n; i++) assert_int_equal(p[i], i);
    free(p);
    ildl_csr_free(&A);
}

static void test_components_and_isolated(void **state)
{
    (void)state;
    ildl_csr A = {0};
    components_graph(&A);
    int32_t ncomp, *label = components(&A, &ncomp);
    assert_true(ncomp > 6 + 20); /* 6 classes plus the isolated vertices */
    int32_t dmax = max_degree(&A);
    for (int k = 0; k < NMETHODS; k++) {
        int32_t *p = order_ok(&A, all_methods[k]);
        if (all_methods[k] == ILDL_ORDER_RCM) {
            /* Cuthill-McKee visits one component at a time: each is one contiguous run */
            int32_t runs = 1;
            for (int32_t i = 1; i < A.n; i++) runs += label[p[i]] != label[p[i - 1]];
            assert_int_equal(runs, ncomp);
        }
        if (all_methods[k] == ILDL_ORDER_GMC) assert_true(num_levels(&A, p) <= dmax + 1);
        free(p);
    }
    free(label);
    ildl_csr_free(&A);
}

static void test_single_vertex(void **state)
{
    (void)state;
    int32_t ti[1] = {0}, tj[1] = {0};
    double tv[1] = {2.0};
    ildl_csr A = {0};
    ildl_test_csr_from_triplets(1, 1, ti, tj, tv, &A);
    for (int k = 0; k < NMETHODS; k++) {
        int32_t *p = order_ok(&A, all_methods[k]);
        assert_int_equal(p[0], 0);
        free(p);
    }
    ildl_csr_free(&A);
}

static void test_self_loops_only(void **state)
{
    (void)state;
    enum { N = 17 };
    int32_t ti[N], tj[N];
    double tv[N];
    for (int i = 0; i < N; i++) { ti[i] = tj[i] = i; tv[i] = 1.0 + i; }
    ildl_csr A = {0};
    ildl_test_csr_from_triplets(N, N, ti, tj, tv, &A);
    for (int k = 0; k < NMETHODS; k++) {
        int32_t *p = order_ok(&A, all_methods[k]);
        if (all_methods[k] == ILDL_ORDER_GMC) assert_int_equal(num_levels(&A, p), 1);
        free(p);
    }
    ildl_csr_free(&A);
}

static void test_fill_amd_metis(void **state)
{
    (void)state;
    const int32_t m = 30;
    ildl_csr G = {0}, A = {0};
    ildl_test_laplace2d(m, 0.0, &G);
    shuffled(&G, 777, &A);
    int32_t *nat = order_ok(&A, ILDL_ORDER_NATURAL);
    int32_t *gnat = order_ok(&G, ILDL_ORDER_NATURAL);
    int32_t *amd = order_ok(&A, ILDL_ORDER_AMD);
    int32_t *met = order_ok(&A, ILDL_ORDER_METIS);
    int64_t f_shuf = chol_nnz(&A, nat), f_band = chol_nnz(&G, gnat);
    int64_t f_amd = chol_nnz(&A, amd), f_met = chol_nnz(&A, met);
    print_message("nnz(L): shuffled %lld, banded %lld, AMD %lld, METIS %lld\n", (long long)f_shuf,
                  (long long)f_band, (long long)f_amd, (long long)f_met);
    /* the banded natural order has exactly about n*m entries: a check of chol_nnz itself */
    assert_true(f_band > (int64_t)(m * m) * (m - 1) && f_band <= (int64_t)(m * m) * (m + 1));
    assert_true(f_amd < f_shuf / 2);
    assert_true(f_met < f_shuf / 2);
    /* both should also clearly beat the band, which is what a grid's natural order gives */
    assert_true(f_amd < (f_band * 3) / 4);
    assert_true(f_met < (f_band * 3) / 4);
    free(nat); free(gnat); free(amd); free(met);
    ildl_csr_free(&G);
    ildl_csr_free(&A);
}

static void test_rcm_bandwidth(void **state)
{
    (void)state;
    const int32_t m = 30;
    ildl_csr G = {0}, A = {0};
    ildl_test_laplace2d(m, 0.0, &G);
    shuffled(&G, 99, &A);
    int32_t *nat = order_ok(&A, ILDL_ORDER_NATURAL);
    int32_t *rcm = order_ok(&A, ILDL_ORDER_RCM);
    int32_t bw_shuf = bandwidth(&A, nat), bw_rcm = bandwidth(&A, rcm);
    print_message("bandwidth: shuffled %d, RCM %d (grid width %d)\n", bw_shuf, bw_rcm, m);
    assert_true(bw_shuf > 10 * m);
    assert_true(bw_rcm <= 2 * m);
    free(nat); free(rcm);
    ildl_csr_free(&G);
    ildl_csr_free(&A);
}

static void test_gmc_levels(void **state)
{
    (void)state;
    const int32_t m = 30;
    ildl_csr G = {0}, A = {0};
    ildl_test_laplace2d(m, 0.0, &G);
    shuffled(&G, 4242, &A);
    int32_t *gnat = order_ok(&G, ILDL_ORDER_NATURAL), *ggmc = order_ok(&G, ILDL_ORDER_GMC);
    int32_t *anat = order_ok(&A, ILDL_ORDER_NATURAL), *agmc = order_ok(&A, ILDL_ORDER_GMC);
    int32_t l_gnat = num_levels(&G, gnat), l_ggmc = num_levels(&G, ggmc);
    int32_t l_anat = num_levels(&A, anat), l_agmc = num_levels(&A, agmc);
    print_message("levels: grid natural %d, grid GMC %d, shuffled natural %d, shuffled GMC %d\n",
                  l_gnat, l_ggmc, l_anat, l_agmc);
    assert_int_equal(l_gnat, 2 * m - 1); /* anti-diagonal wavefronts: checks num_levels */
    assert_true(l_ggmc <= 4);
    /* greedy never needs more than degree + 1 colours, whatever the vertex order (a shuffled
     * grid's natural order is itself shallow, so it is no useful yardstick here) */
    assert_true(l_agmc <= max_degree(&A) + 1);
    assert_true(l_agmc <= l_anat);
    free(gnat); free(ggmc); free(anat); free(agmc);
    ildl_csr_free(&G);
    ildl_csr_free(&A);
}

/* Levels of a triangular solve with A's pattern in the order perm after level-of-fill lf:
 * computed here by the analysis's own fill and level code with one-row blocks, independently
 * of the ordering code under test. */
static int32_t filled_depth(const ildl_csr *A, const int32_t *perm, int lf)
{
    ildl_csr Ap = {0};
    ildl_coarse C = {0};
    ildl_levels L = {0};
    int32_t *bstart = malloc(sizeof(int32_t) * ((size_t)A->n + 1));
    assert_non_null(bstart);
    for (int32_t i = 0; i <= A->n; i++) bstart[i] = i;
    assert_int_equal(ildl_csr_permute(A, perm, &Ap), ILDL_SUCCESS);
    assert_int_equal(ildl_coarse_build(&Ap, A->n, bstart, lf, &C), ILDL_SUCCESS);
    assert_int_equal(ildl_levels_compute(&C, &L), ILDL_SUCCESS);
    int32_t d = L.nlevels;
    ildl_levels_free(&L);
    ildl_coarse_free(&C);
    ildl_csr_free(&Ap);
    free(bstart);
    return d;
}

/* GMC_FILL's promise: after level-of-fill lf the order has at most (colours + hubs) levels,
 * for lf = 0, 1, 2 (distance 1, 2, 3), where plain GMC loses its levels to the fill. */
static void test_gmc_fill_levels(void **state)
{
    (void)state;
    ildl_csr G[3] = {{0}}, A[3] = {{0}};
    ildl_test_laplace2d(30, 0.0, &G[0]);
    ildl_test_laplace3d(10, 0.0, &G[1]);
    ildl_test_random_sym(600, 6, 1.0, 0.0, 77, &G[2]);
    for (int g = 0; g < 3; g++) {
        shuffled(&G[g], 500 + g, &A[g]);
        for (int lf = 0; lf <= 2; lf++) {
            int32_t *perm = malloc(sizeof(int32_t) * (size_t)A[g].n), ncol = -1, nhub = -1;
            assert_non_null(perm);
            assert_int_equal(ildl_order_gmc_fill(A[g].n, A[g].rowptr, A[g].col, lf + 1, perm, &ncol, &nhub),
                             ILDL_SUCCESS);
            assert_true(ildl_is_permutation(A[g].n, perm));
            int32_t d = filled_depth(&A[g], perm, lf);
            int32_t *plain = order_ok(&A[g], ILDL_ORDER_GMC);
            int32_t dplain = filled_depth(&A[g], plain, lf);
            print_message("graph %d, l_f %d: GMC_FILL %d colours + %d hubs, %d levels; plain GMC %d levels\n", g,
                          lf, (int)ncol, (int)nhub, (int)d, (int)dplain);
            assert_true(ncol >= 1 && nhub == 0);
            assert_true(d <= ncol + nhub);
            if (lf == 0) assert_true(dplain <= d + 1); /* without fill the two are the same kind */
            if (g == 1 && lf >= 1) assert_true(dplain > d); /* the fill costs plain GMC levels on a 3D grid */
            free(perm); free(plain);
        }
        ildl_csr_free(&G[g]);
        ildl_csr_free(&A[g]);
    }
}

/* Vertices of very high degree (hubs) go last, outside the colouring, and the bound still
 * holds: fill through a hub cannot join two vertices that both come before it. */
static void test_gmc_fill_hubs(void **state)
{
    (void)state;
    const int32_t m = 30, n = m * m + 2;
    ildl_csr grid = {0}, A = {0};
    ildl_test_laplace2d(m, 0.0, &grid);
    int64_t cap = grid.rowptr[grid.n] + 2 * 2 * (n / 3 + 1) + 2, t = 0;
    int32_t *ti = malloc(sizeof(int32_t) * cap), *tj = malloc(sizeof(int32_t) * cap);
    double *tv = malloc(sizeof(double) * cap);
    assert_true(ti && tj && tv);
    for (int32_t i = 0; i < grid.n; i++)
        for (int64_t p = grid.rowptr[i]; p < grid.rowptr[i + 1]; p++) {
            ti[t] = i; tj[t] = grid.col[p]; tv[t++] = grid.val[p];
        }
    for (int h = 0; h < 2; h++) { /* hub m*m + h joins every third grid vertex (from h) */
        int32_t hub = m * m + h;
        ti[t] = hub; tj[t] = hub; tv[t++] = 100.0;
        for (int32_t v = h; v < m * m; v += 3) {
            ti[t] = hub; tj[t] = v; tv[t++] = -1.0;
            ti[t] = v; tj[t] = hub; tv[t++] = -1.0;
        }
    }
    ildl_test_csr_from_triplets(n, t, ti, tj, tv, &A);
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)n), ncol = -1, nhub = -1;
    assert_non_null(perm);
    assert_int_equal(ildl_order_gmc_fill(n, A.rowptr, A.col, 2, perm, &ncol, &nhub), ILDL_SUCCESS);
    assert_true(ildl_is_permutation(n, perm));
    assert_int_equal(nhub, 2);
    assert_int_equal(perm[n - 2], m * m);
    assert_int_equal(perm[n - 1], m * m + 1);
    int32_t d = filled_depth(&A, perm, 1);
    print_message("grid + 2 hubs: %d colours + %d hubs, %d levels after level-1 fill\n", (int)ncol, (int)nhub,
                  (int)d);
    assert_true(d <= ncol + nhub);
    free(perm); free(ti); free(tj); free(tv);
    ildl_csr_free(&grid);
    ildl_csr_free(&A);
}

/* Distance 2 on a complete graph is n^2 work per vertex: refused with a message, never a hang;
 * distance 1 (l_f = 0) on it is cheap and succeeds with n colours. */
static void test_gmc_fill_budget(void **state)
{
    (void)state;
    const int32_t n = 1200;
    int64_t t = 0, cap = (int64_t)n * n;
    int32_t *ti = malloc(sizeof(int32_t) * cap), *tj = malloc(sizeof(int32_t) * cap);
    double *tv = malloc(sizeof(double) * cap);
    assert_true(ti && tj && tv);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) {
            ti[t] = i; tj[t] = j; tv[t++] = i == j ? (double)n : -1.0;
        }
    ildl_csr A = {0};
    ildl_test_csr_from_triplets(n, t, ti, tj, tv, &A);
    free(ti); free(tj); free(tv);
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)n), ncol = -1;
    char msg[256] = "";
    assert_non_null(perm);
    assert_int_equal(ildl_order_graph(n, A.rowptr, A.col, ILDL_ORDER_GMC_FILL, 1, perm, NULL, msg, sizeof msg),
                     ILDL_ERR_NOT_SUPPORTED);
    print_message("complete graph, l_f 1: %s\n", msg);
    assert_non_null(strstr(msg, "GMC-FILL"));
    assert_int_equal(ildl_order_gmc_fill(n, A.rowptr, A.col, 1, perm, &ncol, NULL), ILDL_SUCCESS);
    assert_int_equal(ncol, n);
    assert_true(ildl_is_permutation(n, perm));
    char m2[256] = "";
    assert_int_equal(ildl_order_graph(n, A.rowptr, A.col, ILDL_ORDER_GMC_FILL, -1, perm, NULL, m2, sizeof m2),
                     ILDL_ERR_INVALID_OPTION);
    assert_true(strlen(m2) > 0);
    free(perm);
    ildl_csr_free(&A);
}

static void path_graph(int32_t n, int32_t stride, ildl_csr *A);

/* The linear-time depth after level-1 fill equals the analysis's own fill + levels, for several
 * graphs and orders. */
static void test_depth_fill1(void **state)
{
    (void)state;
    ildl_csr G[4] = {{0}};
    ildl_test_laplace3d(7, 0.0, &G[0]);
    ildl_test_laplace2d(25, 0.0, &G[1]);
    ildl_test_random_sym(500, 5, 1.0, 0.0, 91, &G[2]);
    path_graph(300, 7, &G[3]);
    const int methods[] = {ILDL_ORDER_NATURAL, ILDL_ORDER_AMD, ILDL_ORDER_RCM, ILDL_ORDER_GMC, ILDL_ORDER_GMC_FILL};
    for (int g = 0; g < 4; g++) {
        int32_t *work = malloc(sizeof(int32_t) * 3 * (size_t)G[g].n);
        assert_non_null(work);
        for (int k = 0; k < 5; k++) {
            int32_t *p = order_ok(&G[g], methods[k]);
            int32_t fast = ildl_order_depth_fill1(G[g].n, G[g].rowptr, G[g].col, p, work);
            int32_t ref = filled_depth(&G[g], p, 1);
            if (fast != ref) print_message("graph %d method %d: %d levels, expected %d\n", g, methods[k], (int)fast, (int)ref);
            assert_int_equal(fast, ref);
            free(p);
        }
        free(work);
        ildl_csr_free(&G[g]);
    }
}

/* AUTO's colouring rule on block graphs (ildl_order_auto_colour), decided here from the depth
 * of AMD's order after fill and GMC_FILL's colour count, both computed independently: it
 * switches exactly when the graph has >= 1000 vertices and colours + hubs <= depth / 4. */
static void test_auto_colour_rule(void **state)
{
    (void)state;
    ildl_csr G[4] = {{0}};
    ildl_test_laplace3d(12, 0.0, &G[0]);          /* 1728 vertices: deep under AMD, few colours */
    ildl_test_laplace2d(40, 0.0, &G[1]);
    ildl_test_laplace3d(8, 0.0, &G[2]);           /* 512: too small */
    path_graph(1500, 7, &G[3]);
    int switched = 0, kept = 0;
    for (int g = 0; g < 4; g++) {
        ildl_csr *A = &G[g];
        int32_t *amd = order_ok(A, ILDL_ORDER_AMD);
        int32_t *perm = malloc(sizeof(int32_t) * (size_t)A->n), *col = malloc(sizeof(int32_t) * (size_t)A->n);
        int32_t *perm2 = malloc(sizeof(int32_t) * (size_t)A->n);
        assert_true(perm && col && perm2);
        for (int lf = 1; lf <= 2; lf++) { /* level 1: the linear-time depth; 2: the symbolic fill */
            int32_t ncol = 0, nhub = 0;
            memcpy(perm, amd, sizeof(int32_t) * (size_t)A->n);
            int used = ILDL_ORDER_AMD;
            assert_int_equal(ildl_order_auto_colour(A->n, A->rowptr, A->col, lf, NULL, perm, &used), ILDL_SUCCESS);
            assert_int_equal(ildl_order_gmc_fill(A->n, A->rowptr, A->col, lf + 1, col, &ncol, &nhub), ILDL_SUCCESS);
            /* the same with the colouring computed ahead (as BR does, beside AMD) */
            memcpy(perm2, amd, sizeof(int32_t) * (size_t)A->n);
            ildl_colouring pre = {col, ncol, nhub, ILDL_SUCCESS};
            int used2 = ILDL_ORDER_AMD;
            assert_int_equal(ildl_order_auto_colour(A->n, A->rowptr, A->col, lf, &pre, perm2, &used2), ILDL_SUCCESS);
            assert_int_equal(used2, used);
            assert_memory_equal(perm2, perm, sizeof(int32_t) * (size_t)A->n);
            int32_t d_amd = filled_depth(A, amd, lf);
            int expect = A->n >= 1000 && ((int64_t)ncol + nhub) * 4 <= d_amd;
            print_message("graph %d, l_f %d: n %d, AMD %d levels after fill, GMC_FILL %d colours + %d hubs: %s\n", g,
                          lf, (int)A->n, (int)d_amd, (int)ncol, (int)nhub, used == ILDL_ORDER_GMC_FILL ? "colours" : "AMD");
            if (expect) {
                assert_int_equal(used, ILDL_ORDER_GMC_FILL);
                assert_memory_equal(perm, col, sizeof(int32_t) * (size_t)A->n);
                switched++;
            } else {
                assert_int_equal(used, ILDL_ORDER_AMD);
                assert_memory_equal(perm, amd, sizeof(int32_t) * (size_t)A->n);
                kept++;
            }
        }
        free(amd); free(perm); free(perm2); free(col);
        ildl_csr_free(A);
    }
    assert_true(switched >= 2 && kept >= 2);
}

/* A path of n vertices (tridiagonal pattern) in the natural order or, with `stride` > 1,
 * visited in the order 0, stride, 2 stride, ... (mod n) so that no ordering sees it sorted. */
static void path_graph(int32_t n, int32_t stride, ildl_csr *A)
{
    int32_t *ti = malloc(sizeof(int32_t) * 3 * (size_t)n), *tj = malloc(sizeof(int32_t) * 3 * (size_t)n);
    double *tv = malloc(sizeof(double) * 3 * (size_t)n);
    assert_true(ti && tj && tv);
    int64_t t = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t v = (int32_t)(((int64_t)k * stride) % n), w = (int32_t)(((int64_t)(k + 1) * stride) % n);
        ti[t] = v; tj[t] = v; tv[t++] = 4.0;
        if (k + 1 < n) {
            ti[t] = v; tj[t] = w; tv[t++] = -1.0;
            ti[t] = w; tj[t] = v; tv[t++] = -1.0;
        }
    }
    ildl_test_csr_from_triplets(n, t, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

/* AUTO returns AMD's order unless AMD's depth is >= 3/4 of the vertices; then METIS's, if that
 * is shallower. Checked against AMD and METIS run here, on a grid (AMD is shallow) and on paths
 * (a chain, whatever order the vertices come in). */
static void test_auto_rule(void **state)
{
    (void)state;
    ildl_csr G[3] = {{0}};
    ildl_test_laplace2d(30, 0.0, &G[0]);
    path_graph(500, 1, &G[1]);
    path_graph(499, 7, &G[2]);
    int switched = 0;
    for (int g = 0; g < 3; g++) {
        ildl_csr *A = &G[g];
        int32_t *amd = order_ok(A, ILDL_ORDER_AMD), *met = order_ok(A, ILDL_ORDER_METIS);
        int32_t *perm = malloc(sizeof(int32_t) * (size_t)A->n);
        char msg[256] = "";
        int used = -1;
        assert_non_null(perm);
        assert_int_equal(ildl_order_graph(A->n, A->rowptr, A->col, ILDL_ORDER_AUTO, 1, perm, &used, msg, sizeof msg),
                         ILDL_SUCCESS);
        int32_t la = num_levels(A, amd), lm = num_levels(A, met);
        print_message("graph %d: n %d, AMD depth %d, METIS depth %d, AUTO chose %s\n", g, (int)A->n, (int)la,
                      (int)lm, used == ILDL_ORDER_METIS ? "METIS" : "AMD");
        int chain = (int64_t)la * 4 >= (int64_t)A->n * 3;
        if (chain && lm < la) {
            assert_int_equal(used, ILDL_ORDER_METIS);
            assert_memory_equal(perm, met, sizeof(int32_t) * (size_t)A->n);
            switched++;
        } else {
            assert_int_equal(used, ILDL_ORDER_AMD);
            assert_memory_equal(perm, amd, sizeof(int32_t) * (size_t)A->n);
        }
        if (g == 0) assert_int_equal(used, ILDL_ORDER_AMD); /* a grid is never a chain */
        free(amd); free(met); free(perm);
        ildl_csr_free(A);
    }
    print_message("AUTO switched to METIS on %d of 3 graphs\n", switched);
    assert_true(switched >= 1); /* the paths exercise the switch (AMD's depth on them: n - 1) */
}

static void test_invalid_method(void **state)
{
    (void)state;
    ildl_csr A = {0};
    ildl_test_laplace2d(4, 0.0, &A);
    int32_t perm[16];
    const int bad[] = {-1, 7, 99};
    for (int k = 0; k < 3; k++) {
        char msg[256] = "";
        int st = ildl_order_graph(A.n, A.rowptr, A.col, bad[k], 1, perm, NULL, msg, sizeof msg);
        assert_int_equal(st, ILDL_ERR_INVALID_OPTION);
        assert_true(strlen(msg) > 0);
    }
    ildl_csr_free(&A);
}

static void test_is_permutation(void **state)
{
    (void)state;
    int32_t ok[5] = {3, 0, 4, 1, 2}, dup[5] = {3, 0, 3, 1, 2}, neg[5] = {3, 0, -1, 1, 2},
            big[5] = {3, 0, 5, 1, 2};
    assert_true(ildl_is_permutation(5, ok));
    assert_false(ildl_is_permutation(5, dup));
    assert_false(ildl_is_permutation(5, neg));
    assert_false(ildl_is_permutation(5, big));
    assert_true(ildl_is_permutation(0, ok));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_laplacian_all_methods),
        cmocka_unit_test(test_components_and_isolated),
        cmocka_unit_test(test_single_vertex),
        cmocka_unit_test(test_self_loops_only),
        cmocka_unit_test(test_fill_amd_metis),
        cmocka_unit_test(test_rcm_bandwidth),
        cmocka_unit_test(test_gmc_levels),
        cmocka_unit_test(test_auto_rule),
        cmocka_unit_test(test_gmc_fill_levels),
        cmocka_unit_test(test_gmc_fill_hubs),
        cmocka_unit_test(test_gmc_fill_budget),
        cmocka_unit_test(test_depth_fill1),
        cmocka_unit_test(test_auto_colour_rule),
        cmocka_unit_test(test_invalid_method),
        cmocka_unit_test(test_is_permutation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
