/* test_block_jacobi.c -- block-Jacobi on an analysis (src/cpu/block_jacobi.c): z = M^{-1} r
 * solves A's diagonal blocks (the blocking's rows, in the original order, whatever the scaling):
 * for every row i, the sum over its entries a_ic with c in i's block of a_ic z_c is r_i; on a
 * random indefinite matrix and a KKT matrix with a zero block, with matching and
 * equilibration; in place; a block of more than 32 rows refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "analyse/analyse.h"
#include "cpu/block_jacobi.h"

/* max_i |sum_{c in block(i)} a_ic z_c - r_i| / max |r| */
static double block_residual(const ildl_csr *A, const ildl_block_jacobi *bj, const double *z, const double *r)
{
    int32_t *blockof = malloc(sizeof(int32_t) * (size_t)A->n);
    assert_non_null(blockof);
    for (int64_t b = 0; b < bj->count; b++)
        for (int64_t k = bj->rowptr[b]; k < bj->rowptr[b + 1]; k++) blockof[bj->perm[k]] = (int32_t)b;
    double err = 0, rmax = 0;
    for (int32_t i = 0; i < A->n; i++) {
        double s = 0;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (blockof[A->col[p]] == blockof[i]) s += A->val[p] * z[A->col[p]];
        err = fmax(err, fabs(s - r[i]));
        rmax = fmax(rmax, fabs(r[i]));
    }
    free(blockof);
    return err / rmax;
}

static void check_matrix(const ildl_csr *A, int scaling)
{
    ildl_options o;
    ildl_options_default(&o);
    o.scaling = scaling;
    ildl_analysis an;
    char msg[256];
    assert_int_equal(ildl_analyse(A, NULL, &o, &an, msg, sizeof msg), ILDL_SUCCESS);
    ildl_block_jacobi bj;
    assert_int_equal(ildl_block_jacobi_create(&an.blk, an.scale, &bj), ILDL_SUCCESS);
    assert_true(bj.count == an.blk.nb && bj.count > 1);
    assert_int_equal(ildl_block_jacobi_factor(&bj, A, 1e-14, 1e-6), 0);
    double *r = malloc(sizeof(double) * (size_t)A->n), *z = malloc(sizeof(double) * (size_t)A->n);
    assert_non_null(r);
    assert_non_null(z);
    uint64_t seed = 3;
    for (int32_t i = 0; i < A->n; i++) r[i] = ildl_test_rand(&seed) - 0.5;
    ildl_block_jacobi_apply(&bj, r, z);
    double e = block_residual(A, &bj, z, r);
    if (e > 1e-10) fail_msg("block residual %g (scaling %d, %lld blocks)", e, scaling, (long long)bj.count);
    memcpy(z, r, sizeof(double) * (size_t)A->n);
    ildl_block_jacobi_apply(&bj, z, z); /* in place */
    assert_true(block_residual(A, &bj, z, r) == e);
    free(r);
    free(z);
    ildl_block_jacobi_free(&bj);
    ildl_analysis_free(&an);
}

static void test_random_indefinite(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_random_sym(600, 6, 4.0, 0.0, 17, &A);
    check_matrix(&A, ILDL_SCALING_MATCHING);
    check_matrix(&A, ILDL_SCALING_EQUILIBRATE);
    ildl_csr_free(&A);
}

/* zero diagonal block: the blocks must pair the multipliers with their unknowns (matching) */
static void test_kkt_zero_block(void **state)
{
    (void)state;
    ildl_csr A;
    ildl_test_kkt_zero_first(200, 400, 5, &A);
    check_matrix(&A, ILDL_SCALING_MATCHING);
    ildl_csr_free(&A);
}

static void test_block_too_large(void **state)
{
    (void)state;
    int32_t perm[40], bstart[2] = {0, 40};
    double scale[40];
    for (int i = 0; i < 40; i++) perm[i] = i, scale[i] = 1.0;
    ildl_blocking blk = {.n = 40, .nb = 1, .perm = perm, .bstart = bstart};
    ildl_block_jacobi bj;
    assert_int_equal(ildl_block_jacobi_create(&blk, scale, &bj), ILDL_ERR_NOT_SUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_indefinite),
        cmocka_unit_test(test_kkt_zero_block),
        cmocka_unit_test(test_block_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
