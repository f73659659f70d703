/* test_tickets.c -- the sync-free sweeps' ticket order: a permutation of the block rows, every
 * dependency before its row (else a sweep could deadlock), level order without chains, another
 * order with them; the threshold above which the sweeps split a row. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <stdlib.h>
#include <string.h>
#include "analyse/analyse.h"
#include "analyse/tickets.h"
#include "blockildl.h"

/* The analysis of A with default options but the given ordering. */
static void analyse(const ildl_csr *A, int ordering, ildl_analysis *an)
{
    int64_t nnz = A->rowptr[A->n];
    int64_t *src = malloc(sizeof(int64_t) * (size_t)nnz);
    assert_non_null(src);
    for (int64_t p = 0; p < nnz; p++) src[p] = p;
    ildl_options o;
    ildl_options_default(&o);
    o.ordering = ordering;
    char msg[256];
    memset(an, 0, sizeof *an);
    assert_int_equal(ildl_analyse(A, src, &o, an, msg, sizeof msg), ILDL_SUCCESS);
    free(src);
}

/* seq is a permutation of 0..nb-1 and every row's dependencies have earlier tickets;
 * returns how many tickets differ from level order. */
static int32_t check_order(const ildl_tiles *T, int dir, const int32_t *seq)
{
    int32_t nb = T->nb, moved = 0;
    int32_t *ticket = malloc(sizeof(int32_t) * (size_t)nb);
    assert_non_null(ticket);
    for (int32_t i = 0; i < nb; i++) ticket[i] = -1;
    for (int32_t t = 0; t < nb; t++) {
        assert_true(seq[t] >= 0 && seq[t] < nb);
        int32_t i = T->level_rows[seq[t]];
        assert_int_equal(ticket[i], -1);
        ticket[i] = t;
        moved += seq[t] != (dir == ILDL_SWEEP_BACKWARD ? nb - 1 - t : t);
    }
    int64_t deps = 0;
    for (int32_t i = 0; i < nb; i++)
        for (int64_t q = 0; q < ildl_sweep_row_tiles(T, dir, i); q++) {
            int32_t d = ildl_sweep_row_dep(T, dir, i, q);
            assert_true(dir == ILDL_SWEEP_BACKWARD ? d > i : d < i);
            assert_true(ticket[d] < ticket[i]);
            deps++;
        }
    assert_true(deps > 0);
    free(ticket);
    return moved;
}

/* Both sweeps of a 3D Laplacian (AMD: deep levels) and an indefinite 2D Laplacian (GMC_FILL:
 * few wide levels): level order unchanged without chains; chain order topological, and
 * different. */
static void test_ticket_orders(void **state)
{
    (void)state;
    ildl_csr A[2];
    ildl_test_laplace3d(14, 0.5, &A[0]);
    ildl_test_laplace2d(80, 4.5, &A[1]); /* indefinite: diagonal -0.5 */
    const int ordering[2] = {ILDL_ORDER_AMD, ILDL_ORDER_GMC_FILL};
    for (int m = 0; m < 2; m++) {
        ildl_analysis an;
        analyse(&A[m], ordering[m], &an);
        const ildl_tiles *T = &an.tiles;
        int32_t *seq = malloc(sizeof(int32_t) * (size_t)T->nb);
        assert_non_null(seq);
        for (int dir = 0; dir < 2; dir++) {
            assert_int_equal(ildl_sweep_ticket_order(T, dir, 0, seq), ILDL_SUCCESS);
            assert_int_equal(check_order(T, dir, seq), 0);
            assert_int_equal(ildl_sweep_ticket_order(T, dir, 1, seq), ILDL_SUCCESS);
            int32_t moved = check_order(T, dir, seq);
            print_message("matrix %d (nb %d, %d levels) %s: %d of %d tickets moved by the chains\n", m, T->nb,
                          T->nlevels, dir ? "backward" : "forward", moved, T->nb);
            assert_true(moved > 0);
        }
        /* both directions at once: the same orders */
        int32_t *both = malloc(sizeof(int32_t) * 2 * (size_t)T->nb);
        assert_non_null(both);
        assert_int_equal(ildl_sweep_ticket_orders(T, 1, both, both + T->nb), ILDL_SUCCESS);
        for (int dir = 0; dir < 2; dir++) {
            assert_int_equal(ildl_sweep_ticket_order(T, dir, 1, seq), ILDL_SUCCESS);
            assert_memory_equal(both + (size_t)dir * T->nb, seq, sizeof(int32_t) * (size_t)T->nb);
        }
        free(both);
        free(seq);
        ildl_analysis_free(&an);
        ildl_csr_free(&A[m]);
    }
}

/* Rows of sweep dir with more than t tiles, counted one by one. */
static int64_t rows_longer(const ildl_tiles *T, int dir, int64_t t)
{
    int64_t n = 0;
    for (int32_t i = 0; i < T->nb; i++) n += ildl_sweep_row_tiles(T, dir, i) > t;
    return n;
}

/* The split threshold is the least t in [lo, hi] with at most `few` rows longer, against a count
 * for every t: for every budget from none to all rows, both sweeps, two ranges; and the budgets
 * between reach thresholds strictly inside the range. */
static void test_split_threshold(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_laplace3d(14, 0.5, &A);
    ildl_analysis an;
    analyse(&A, ILDL_ORDER_AMD, &an);
    const ildl_tiles *T = &an.tiles;
    for (int dir = 0; dir < 2; dir++) {
        int64_t longest = 0;
        for (int32_t i = 0; i < T->nb; i++)
            if (ildl_sweep_row_tiles(T, dir, i) > longest) longest = ildl_sweep_row_tiles(T, dir, i);
        assert_true(longest >= 4);
        const int range[2][2] = {{1, (int)longest}, {2, (int)longest / 2}};
        for (int r = 0; r < 2; r++) {
            int lo = range[r][0], hi = range[r][1], inside = 0;
            for (int64_t few = 0; few <= T->nb; few += few < 8 ? 1 : 1 + few / 4) {
                int t = ildl_sweep_split_threshold(T, dir, few, lo, hi);
                assert_true(t >= lo && t <= hi);
                assert_true(t == hi || rows_longer(T, dir, t) <= few);    /* lowered only within the budget */
                assert_true(t == lo || rows_longer(T, dir, t - 1) > few); /* and as far as it goes */
                inside += t > lo && t < hi;
            }
            assert_int_equal(ildl_sweep_split_threshold(T, dir, T->nb, lo, hi), lo);
            print_message("%s, range [%d, %d]: %d budgets with a threshold inside\n", dir ? "backward" : "forward", lo,
                          hi, inside);
            assert_true(inside > 0);
        }
    }
    ildl_analysis_free(&an);
    ildl_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ticket_orders),
        cmocka_unit_test(test_split_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
