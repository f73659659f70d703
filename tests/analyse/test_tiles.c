/* test_tiles.c -- the tile store layout: A's upper triangle in tiles, value reloading with
 * scaling, capacity and format rules, storage order by level, CSC view, freeing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyse/fill.h"
#include "analyse/levels.h"
#include "analyse/tiles.h"
#include "blockildl.h"

/* One analysed problem: the user's A, its permuted copy Ap and everything built on it. */
typedef struct prob {
    ildl_csr A, Ap;
    int32_t *perm;
    int64_t *src;
    int32_t nb, *bstart;
    ildl_coarse C;
    ildl_levels L;
    ildl_tiles T;
} prob;

static int64_t find_entry(const ildl_csr *A, int32_t i, int32_t j)
{
    for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (A->col[p] == j) return p;
    return -1;
}

/* Permute A (perm random when seed != 0, identity otherwise), find src, build C, L, T. */
static void prob_make(prob *P, int32_t nb, const int32_t *bstart, int lf, double rf,
                      uint64_t seed)
{
    int32_t n = P->A.n;
    P->perm = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(P->perm);
    for (int32_t i = 0; i < n; i++) P->perm[i] = i;
    uint64_t s = seed;
    for (int32_t i = n - 1; seed && i > 0; i--) {
        int32_t j = (int32_t)(ildl_test_rand(&s) * (i + 1));
        if (j > i) j = i;
        int32_t t = P->perm[i];
        P->perm[i] = P->perm[j];
        P->perm[j] = t;
    }
    assert_int_equal(ildl_csr_permute(&P->A, P->perm, &P->Ap), ILDL_SUCCESS);
    int64_t nnz = P->Ap.rowptr[n];
    P->src = malloc(sizeof(int64_t) * (size_t)nnz);
    assert_non_null(P->src);
    for (int32_t k = 0; k < n; k++)
        for (int64_t p = P->Ap.rowptr[k]; p < P->Ap.rowptr[k + 1]; p++) {
            P->src[p] = find_entry(&P->A, P->perm[k], P->perm[P->Ap.col[p]]);
            assert_true(P->src[p] >= 0);
        }
    P->nb = nb;
    P->bstart = malloc(sizeof(int32_t) * (size_t)(nb + 1));
    assert_non_null(P->bstart);
    memcpy(P->bstart, bstart, sizeof(int32_t) * (size_t)(nb + 1));
    assert_int_equal(ildl_coarse_build(&P->Ap, nb, bstart, lf, &P->C), ILDL_SUCCESS);
    assert_int_equal(ildl_levels_compute(&P->C, &P->L), ILDL_SUCCESS);
    assert_int_equal(ildl_tiles_build(&P->Ap, P->src, P->perm, nb, bstart, &P->C, &P->L, rf, 0,
                                      &P->T),
                     ILDL_SUCCESS);
}

static void prob_free(prob *P)
{
    ildl_tiles_free(&P->T);
    ildl_levels_free(&P->L);
    ildl_coarse_free(&P->C);
    ildl_csr_free(&P->Ap);
    ildl_csr_free(&P->A);
    free(P->perm);
    free(P->src);
    free(P->bstart);
}

static int32_t block_of(const int32_t *bstart, int32_t i)
{
    int32_t b = 0;
    while (bstart[b + 1] <= i) b++;
    return b;
}

/* Every upper entry of Ap is in a_* exactly once, at the right tile and local index. */
static void check_entries(const prob *P)
{
    const ildl_tiles *T = &P->T;
    int32_t n = P->A.n;
    double *D = ildl_test_dense(&P->A);
    char *seen = calloc((size_t)n * (size_t)n, 1);
    assert_non_null(seen);
    int64_t nupper = 0;
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = P->Ap.rowptr[i]; p < P->Ap.rowptr[i + 1]; p++) nupper += P->Ap.col[p] >= i;
    assert_int_equal(T->a_ptr[0], 0);
    assert_int_equal(T->a_ptr[T->ntiles], nupper);
    for (int64_t t = 0; t < T->ntiles; t++) {
        int32_t bi = T->row[t], bj = T->col[t];
        int32_t mi = ildl_tiles_block_size(T, bi), mj = ildl_tiles_block_size(T, bj);
        for (int64_t q = T->a_ptr[t]; q < T->a_ptr[t + 1]; q++) {
            int r = T->a_idx[q] / 32, c = T->a_idx[q] % 32;
            assert_true(r < mi && c < mj);
            if (q > T->a_ptr[t]) assert_true(T->a_idx[q] > T->a_idx[q - 1]);
            if (bi == bj) assert_true(c >= r);
            int32_t i = P->bstart[bi] + r, j = P->bstart[bj] + c;
            assert_false(seen[(size_t)i * n + j]);
            seen[(size_t)i * n + j] = 1;
            int64_t p = find_entry(&P->Ap, i, j);
            assert_true(p >= 0);
            assert_true(T->a_val[q] == P->Ap.val[p]);
            assert_int_equal(T->a_srow[q], P->perm[i]);
            assert_int_equal(T->a_scol[q], P->perm[j]);
            assert_true(P->A.val[T->a_src[q]] == D[(size_t)P->perm[i] * n + P->perm[j]]);
            assert_int_equal(P->A.col[T->a_src[q]], P->perm[j]);
            assert_true(T->a_src[q] >= P->A.rowptr[P->perm[i]] &&
                        T->a_src[q] < P->A.rowptr[P->perm[i] + 1]);
        }
    }
    free(seen);
    free(D);
}

/* Copies of C, L and bstart, the CSC view, storage order and the factor arrays. */
static void check_structure(const prob *P)
{
    const ildl_tiles *T = &P->T;
    int32_t nb = P->nb;
    int64_t nt = P->C.nblocks;
    assert_int_equal(T->n, P->A.n);
    assert_int_equal(T->nb, nb);
    assert_int_equal(T->ntiles, nt);
    assert_memory_equal(T->bstart, P->bstart, sizeof(int32_t) * (size_t)(nb + 1));
    assert_memory_equal(T->row_ptr, P->C.row_ptr, sizeof(int64_t) * (size_t)(nb + 1));
    assert_memory_equal(T->col, P->C.col, sizeof(int32_t) * (size_t)nt);
    assert_memory_equal(T->fill_lvl, P->C.lvl, sizeof(int32_t) * (size_t)nt);
    for (int32_t i = 0; i < nb; i++)
        for (int64_t t = T->row_ptr[i]; t < T->row_ptr[i + 1]; t++) assert_int_equal(T->row[t], i);
    assert_int_equal(T->nlevels, P->L.nlevels);
    assert_memory_equal(T->level_ptr, P->L.level_ptr, sizeof(int32_t) * (size_t)(P->L.nlevels + 1));
    assert_memory_equal(T->level_rows, P->L.level_rows, sizeof(int32_t) * (size_t)nb);
    assert_memory_equal(T->row_level, P->L.row_level, sizeof(int32_t) * (size_t)nb);

    /* CSC: each tile once, in its column, rows ascending */
    char *seen = calloc((size_t)nt + 1, 1);
    assert_non_null(seen);
    assert_int_equal(T->col_ptr[0], 0);
    assert_int_equal(T->col_ptr[nb], nt);
    for (int32_t j = 0; j < nb; j++) {
        assert_true(T->col_ptr[j + 1] >= T->col_ptr[j]);
        for (int64_t s = T->col_ptr[j]; s < T->col_ptr[j + 1]; s++) {
            int64_t t = T->col_tiles[s];
            assert_true(t >= 0 && t < nt);
            assert_false(seen[t]);
            seen[t] = 1;
            assert_int_equal(T->col[t], j);
            if (s > T->col_ptr[j]) assert_true(T->row[t] > T->row[T->col_tiles[s - 1]]);
        }
        /* the last tile of a column is its diagonal tile */
        assert_int_equal(T->col_tiles[T->col_ptr[j + 1] - 1], T->row_ptr[j]);
    }

    /* solve orders: per column, the tiles (k,i) k < i by (level of k, k) then col_tiles' rest;
     * per row, the diagonal tile, then the row's tiles by (level of j descending, j) */
    for (int32_t i = 0; i < nb; i++) {
        int64_t q0 = T->col_ptr[i], q1 = T->col_ptr[i + 1], q = q0;
        while (q < q1 && T->row[T->col_tiles[q]] < i) q++;
        for (int64_t s = q0; s < q1; s++) {
            int64_t t = T->fwd_seq[s];
            assert_int_equal(T->col[t], i);
            if (s >= q) assert_int_equal(t, T->col_tiles[s]);
            else assert_true(T->row[t] < i);
            if (s > q0 && s < q) {
                int64_t u = T->fwd_seq[s - 1];
                int32_t lu = T->row_level[T->row[u]], lt = T->row_level[T->row[t]];
                assert_true(lu < lt || (lu == lt && T->row[u] < T->row[t]));
            }
        }
        int64_t t0 = T->row_ptr[i], t1 = T->row_ptr[i + 1];
        assert_int_equal(T->bwd_seq[t0], t0);
        for (int64_t s = t0 + 1; s < t1; s++) {
            int64_t t = T->bwd_seq[s];
            assert_true(t > t0 && t < t1);
            if (s > t0 + 1) {
                int64_t u = T->bwd_seq[s - 1];
                int32_t lu = T->row_level[T->col[u]], lt = T->row_level[T->col[t]];
                assert_true(lu > lt || (lu == lt && T->col[u] < T->col[t]));
            }
        }
    }

    /* storage order: a permutation by (level of block row, id); offsets are a scan of cap */
    memset(seen, 0, (size_t)nt);
    int64_t off = 0;
    for (int64_t s = 0; s < nt; s++) {
        int64_t t = T->tile_order[s];
        assert_true(t >= 0 && t < nt);
        assert_false(seen[t]);
        seen[t] = 1;
        if (s > 0) {
            int64_t u = T->tile_order[s - 1];
            int32_t lu = T->row_level[T->row[u]], lt = T->row_level[T->row[t]];
            assert_true(lu < lt || (lu == lt && u < t));
        }
        assert_int_equal(T->cap_off[t], off);
        off += T->cap[t];
    }
    assert_int_equal(T->total_cap, off);
    for (int64_t t = 0; t < nt; t++) {
        assert_int_equal(T->off[t], T->cap_off[t]);
        assert_int_equal(T->nnz[t], 0);
    }
    free(seen);
    assert_non_null(T->val);
    assert_non_null(T->idx);
    assert_non_null(T->piv);
    assert_non_null(T->d_diag);
    assert_non_null(T->d_off);
    assert_non_null(T->piv_type);
}

/* The capacity and format of every tile follow the documented rules; ndense_rows is the
 * number of trailing block rows forced dense. Counts of A per tile are taken from Ap. */
static void check_rules(const prob *P, double rf, int32_t ndense_rows, int64_t *nsparse,
                        int64_t *nfill)
{
    const ildl_tiles *T = &P->T;
    int32_t nb = P->nb, n = P->A.n;
    int64_t *cnt = calloc((size_t)nb * (size_t)nb, sizeof(int64_t));
    assert_non_null(cnt);
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = P->Ap.rowptr[i]; p < P->Ap.rowptr[i + 1]; p++)
            if (P->Ap.col[p] >= i)
                cnt[(size_t)block_of(P->bstart, i) * nb + block_of(P->bstart, P->Ap.col[p])]++;
    *nsparse = *nfill = 0;
    for (int32_t bi = 0; bi < nb; bi++) {
        double sum = 0.0;
        int occ = 0;
        for (int32_t bj = bi + 1; bj < nb; bj++)
            if (cnt[(size_t)bi * nb + bj] > 0) {
                sum += (double)cnt[(size_t)bi * nb + bj];
                occ++;
            }
        double mean = occ ? sum / occ : 1.0;
        if (mean < 1.0) mean = 1.0;
        for (int64_t t = T->row_ptr[bi]; t < T->row_ptr[bi + 1]; t++) {
            int32_t bj = T->col[t];
            int64_t mi = ildl_tiles_block_size(T, bi), mj = ildl_tiles_block_size(T, bj);
            int64_t c = cnt[(size_t)bi * nb + bj];
            assert_int_equal(T->a_ptr[t + 1] - T->a_ptr[t], c);
            if (T->fill_lvl[t] > 0) {
                assert_int_equal(c, 0);
                (*nfill)++;
            }
            if (bj == bi || rf <= 0.0 || bi >= nb - ndense_rows) {
                assert_int_equal(T->format[t], ILDL_TILE_DENSE);
                assert_int_equal(T->cap[t], mi * mj);
                continue;
            }
            double want = ceil(rf * (c > 0 ? (double)c : mean));
            if (want > (double)(mi * mj)) want = (double)(mi * mj);
            int sparse = want * 10.0 < 0.5 * 8.0 * (double)(mi * mj);
            assert_int_equal(T->format[t], sparse ? ILDL_TILE_SPARSE : ILDL_TILE_DENSE);
            assert_int_equal(T->cap[t], sparse ? (int64_t)want : mi * mj);
            *nsparse += sparse;
        }
    }
    free(cnt);
}

/* A random matrix, a random permutation and hand-chosen blocks including a full 32. */
static void test_random_layout(void **state)
{
    (void)state;
    const int32_t bstart[] = {0, 3, 4, 9, 41, 50, 57, 60};
    const int32_t nb = 7;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        const double rfs[] = {1.0, 2.0, 8.0, 0.0, -1.0};
        for (size_t k = 0; k < sizeof rfs / sizeof rfs[0]; k++) {
            prob P;
            memset(&P, 0, sizeof P);
            ildl_test_random_sym(60, 2, 1.0, 0.1, seed, &P.A);
            prob_make(&P, nb, bstart, (int)(seed % 3), rfs[k], seed * 31 + 7);
            check_entries(&P);
            check_structure(&P);
            int64_t nsparse, nfill;
            check_rules(&P, rfs[k], 1, &nsparse, &nfill);
            if (rfs[k] <= 0.0) assert_int_equal(nsparse, 0);

            /* reload with new values and a scaling */
            int64_t nnz = P.A.rowptr[60];
            double *v2 = malloc(sizeof(double) * (size_t)nnz), s[60];
            assert_non_null(v2);
            for (int64_t p = 0; p < nnz; p++) v2[p] = 3.0 * P.A.val[p] - 0.5;
            uint64_t rs = seed;
            for (int i = 0; i < 60; i++) s[i] = 0.5 + ildl_test_rand(&rs);
            ildl_tiles_load_values(&P.T, v2, s);
            ildl_csr A2 = P.A;
            A2.val = v2;
            double *D2 = ildl_test_dense(&A2);
            for (int64_t t = 0; t < P.T.ntiles; t++)
                for (int64_t q = P.T.a_ptr[t]; q < P.T.a_ptr[t + 1]; q++) {
                    int32_t i = P.bstart[P.T.row[t]] + P.T.a_idx[q] / 32;
                    int32_t j = P.bstart[P.T.col[t]] + P.T.a_idx[q] % 32;
                    int32_t oi = P.perm[i], oj = P.perm[j];
                    double want = s[oi] * D2[(size_t)oi * 60 + oj] * s[oj];
                    assert_true(fabs(P.T.a_val[q] - want) <= 1e-15 * fabs(want));
                }
            free(D2);
            free(v2);
            prob_free(&P);
        }
    }
}

/* Hand-made: 6 blocks of 8 rows (dense tile = 64, sparse iff cap <= 25).
 * (0,1): 2 entries, (0,2): 4, (1,3): 3, (1,4): 2; with lf = 1 the fill is (1,2) (via block
 * 0) whose row mean is (3+2)/2 = 2.5, and (3,4) (via block 1) in a row with no entries of
 * its own (base 1). */
static void test_capacities_by_hand(void **state)
{
    (void)state;
    int32_t ti[128], tj[128];
    double tv[128];
    int64_t m = 0;
    const int pairs[4][3] = {{0, 1, 2}, {0, 2, 4}, {1, 3, 3}, {1, 4, 2}};
    for (int k = 0; k < 4; k++)
        for (int e = 0; e < pairs[k][2]; e++) {
            ti[m] = 8 * pairs[k][0] + e;
            tj[m] = 8 * pairs[k][1] + (7 - e);
            tv[m++] = 1.0 + e;
        }
    for (int i = 0; i < 48; i++) { ti[m] = i; tj[m] = i; tv[m++] = 4.0; }
    const int32_t bstart[] = {0, 8, 16, 24, 32, 40, 48};
    struct { double rf; int64_t c01, c02, c12, c13, c14, c34; } cases[] = {
        {2.0, 4, 8, 5, 6, 4, 2},
        {3.0, 6, 12, 8, 9, 6, 3},
        {7.0, 14, 64, 18, 21, 14, 7}, /* (0,2): 28 > 25 -> dense */
        {20.0, 40, 64, 50, 60, 40, 20}, /* all but (3,4) dense */
        {0.0, 64, 64, 64, 64, 64, 64},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        prob P;
        memset(&P, 0, sizeof P);
        ildl_test_csr_from_triplets(48, m, ti, tj, tv, &P.A);
        prob_make(&P, 6, bstart, 1, cases[k].rf, 0);
        const ildl_tiles *T = &P.T;
        assert_int_equal(T->ntiles, 6 + 4 + 2);
        /* locate tiles by (row, col) */
        int64_t id[6][6];
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) id[a][b] = -1;
        for (int64_t t = 0; t < T->ntiles; t++) id[T->row[t]][T->col[t]] = t;
        assert_true(id[1][2] >= 0 && T->fill_lvl[id[1][2]] == 1);
        assert_true(id[3][4] >= 0 && T->fill_lvl[id[3][4]] == 1);
        const int64_t want[6][3] = {{0, 1, cases[k].c01}, {0, 2, cases[k].c02},
                                    {1, 2, cases[k].c12}, {1, 3, cases[k].c13},
                                    {1, 4, cases[k].c14}, {3, 4, cases[k].c34}};
        for (int w = 0; w < 6; w++) {
            int64_t t = id[want[w][0]][want[w][1]];
            assert_true(t >= 0);
            int64_t c = want[w][2];
            int sparse = c <= 25;
            assert_int_equal(T->cap[t], sparse ? c : 64);
            assert_int_equal(T->format[t], sparse ? ILDL_TILE_SPARSE : ILDL_TILE_DENSE);
        }
        for (int b = 0; b < 6; b++) {
            assert_int_equal(T->format[id[b][b]], ILDL_TILE_DENSE);
            assert_int_equal(T->cap[id[b][b]], 64);
        }
        check_entries(&P);
        check_structure(&P);
        int64_t nsparse, nfill;
        check_rules(&P, cases[k].rf, 1, &nsparse, &nfill);
        assert_int_equal(nfill, 2);
        prob_free(&P);
    }
}

/* 200 block rows: the last 1% (two rows) are dense although the rule would make their
 * single-entry tiles sparse. */
static void test_last_rows_dense(void **state)
{
    (void)state;
    prob P;
    memset(&P, 0, sizeof P);
    ildl_test_laplace2d(20, 0.0, &P.A);
    int32_t bstart[201];
    for (int b = 0; b <= 200; b++) bstart[b] = 2 * b;
    prob_make(&P, 200, bstart, 0, 1.0, 0);
    const ildl_tiles *T = &P.T;
    int64_t nsparse, nfill;
    check_rules(&P, 1.0, 2, &nsparse, &nfill);
    assert_true(nsparse > 0);
    /* tile (198,199) holds one entry: cap 1 would be sparse, but the row is in the last 1% */
    int64_t t = T->row_ptr[198] + 1;
    assert_int_equal(T->col[t], 199);
    assert_int_equal(T->a_ptr[t + 1] - T->a_ptr[t], 1);
    assert_int_equal(T->format[t], ILDL_TILE_DENSE);
    assert_int_equal(T->cap[t], 4);
    /* the same shape one row earlier stays sparse */
    t = T->row_ptr[197] + 1;
    assert_int_equal(T->col[t], 198);
    assert_int_equal(T->a_ptr[t + 1] - T->a_ptr[t], 1);
    assert_int_equal(T->format[t], ILDL_TILE_SPARSE);
    assert_int_equal(T->cap[t], 1);
    check_entries(&P);
    check_structure(&P);
    prob_free(&P);
}

static void test_free_zeroed(void **state)
{
    (void)state;
    ildl_tiles T;
    memset(&T, 0, sizeof T);
    ildl_tiles_free(&T);
    ildl_tiles_free(&T);
    ildl_tiles_free(NULL);
    assert_null(T.val);
    assert_int_equal(T.ntiles, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_layout),
        cmocka_unit_test(test_capacities_by_hand),
        cmocka_unit_test(test_last_rows_dense),
        cmocka_unit_test(test_free_zeroed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
