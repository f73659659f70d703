/* test_gje.c -- block-Jacobi's Gauss-Jordan inversion with implicit pivoting (src/cpu/gje.c):
 * inverses whose product with their blocks is the identity to rounding for every size 1..32,
 * exact inverses where pivoting is forced (zero diagonals, permutations), perturbed pivots on
 * singular blocks, non-finite inverses reported, the batched apply against the product, in place,
 * and the batch checks. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "support/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/gje.h"

typedef struct batch {
    int64_t count;
    int32_t *size;
    int64_t *offset, *rowptr;
    double *A, *inv;
    int32_t *pert;
} batch;

static void batch_make(batch *B, int64_t count, const int32_t *sizes)
{
    B->count = count;
    B->size = malloc(sizeof(int32_t) * (size_t)count);
    B->offset = malloc(sizeof(int64_t) * (size_t)(count + 1));
    B->rowptr = malloc(sizeof(int64_t) * (size_t)(count + 1));
    B->pert = malloc(sizeof(int32_t) * (size_t)count);
    assert_non_null(B->size);
    assert_non_null(B->offset);
    assert_non_null(B->rowptr);
    B->offset[0] = B->rowptr[0] = 0;
    for (int64_t b = 0; b < count; b++) {
        B->size[b] = sizes[b];
        B->offset[b + 1] = B->offset[b] + (int64_t)sizes[b] * sizes[b];
        B->rowptr[b + 1] = B->rowptr[b] + sizes[b];
    }
    B->A = calloc((size_t)B->offset[count], sizeof(double));
    B->inv = calloc((size_t)B->offset[count], sizeof(double));
    assert_non_null(B->A);
    assert_non_null(B->inv);
    assert_int_equal(ildl_gje_check_batch(count, B->size, B->offset, B->rowptr), 0);
}

static void batch_free(batch *B)
{
    free(B->size);
    free(B->offset);
    free(B->rowptr);
    free(B->A);
    free(B->inv);
    free(B->pert);
}

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000 * 2.0 - 1.0;
}

/* max_ij |(A X - I)_ij| / (||A||_F ||X||_F) for block b (X column-major) */
static double identity_error(const batch *B, int64_t b)
{
    int m = B->size[b];
    const double *a = B->A + B->offset[b], *x = B->inv + B->offset[b];
    double err = 0.0, na = 0.0, nx = 0.0;
    for (int e = 0; e < m * m; e++) na += a[e] * a[e], nx += x[e] * x[e];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double s = 0.0;
            for (int k = 0; k < m; k++) s += a[i * m + k] * x[j * m + k];
            err = fmax(err, fabs(s - (i == j)));
        }
    return err / (sqrt(na) * sqrt(nx));
}

/* Every size 1..32, several blocks each, random entries (no diagonal dominance: pivoting
 * matters), symmetric and unsymmetric. */
static void test_random_inverses(void **state)
{
    (void)state;
    int32_t sizes[32 * 4];
    for (int t = 0; t < 32 * 4; t++) sizes[t] = 1 + t % 32;
    batch B;
    batch_make(&B, 32 * 4, sizes);
    unsigned seed = 7;
    for (int64_t b = 0; b < B.count; b++) {
        int m = B.size[b];
        double *a = B.A + B.offset[b];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) a[i * m + j] = urand(&seed);
        if (b % 2) /* symmetric indefinite, zero diagonal */
            for (int i = 0; i < m; i++) {
                a[i * m + i] = m > 1 ? 0.0 : 1.0;
                for (int j = 0; j < i; j++) a[j * m + i] = a[i * m + j];
            }
    }
    assert_int_equal(ildl_gje_invert(B.count, B.size, B.offset, B.A, 1e-300, 1.0, B.inv, B.pert), 0);
    for (int64_t b = 0; b < B.count; b++) {
        assert_int_equal(B.pert[b], 0);
        double e = identity_error(&B, b);
        if (e > 1e-12) fail_msg("block %lld (size %d): |AX - I| / (|A||X|) = %g", (long long)b, B.size[b], e);
    }
    /* in place (inv = A): the same bits */
    double *W = malloc(sizeof(double) * (size_t)B.offset[B.count]);
    assert_non_null(W);
    memcpy(W, B.A, sizeof(double) * (size_t)B.offset[B.count]);
    assert_int_equal(ildl_gje_invert(B.count, B.size, B.offset, W, 1e-300, 1.0, W, NULL), 0);
    assert_memory_equal(W, B.inv, sizeof(double) * (size_t)B.offset[B.count]);
    free(W);
    batch_free(&B);
}

/* A permutation with powers of two: the inverse is exact, which only a pivoting elimination gets
 * (every diagonal entry is zero). */
static void test_exact_permutation(void **state)
{
    (void)state;
    int32_t sizes[3] = {2, 5, 32};
    batch B;
    batch_make(&B, 3, sizes);
    for (int64_t b = 0; b < 3; b++) {
        int m = B.size[b];
        double *a = B.A + B.offset[b];
        /* row i has its entry 2^(i % 5) in column perm(i) = (i + 1) % m */
        for (int i = 0; i < m; i++) a[i * m + (i + 1) % m] = ldexp(1.0, i % 5);
    }
    assert_int_equal(ildl_gje_invert(3, B.size, B.offset, B.A, 1e-10, 1e-6, B.inv, B.pert), 0);
    for (int64_t b = 0; b < 3; b++) {
        int m = B.size[b];
        const double *x = B.inv + B.offset[b];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) { /* X = A^{-1}: X[(i+1)%m][i] = 2^-(i%5) */
                double want = (i == (j + 1) % m) ? ldexp(1.0, -(j % 5)) : 0.0;
                assert_true(x[j * m + i] == want);
            }
    }
    batch_free(&B);
}

/* A singular block gets a perturbed pivot (counted); with pivot_tol 0 a zero block's inverse is
 * not finite and reported as -1; the other blocks of the batch are unaffected. */
static void test_singular_blocks(void **state)
{
    (void)state;
    int32_t sizes[3] = {3, 4, 2};
    batch B;
    batch_make(&B, 3, sizes);
    double s3[9] = {1, 2, 3, 2, 4, 6, 1, 0, 1}; /* rows 0 and 1 dependent */
    memcpy(B.A, s3, sizeof s3);
    for (int i = 0; i < 4; i++) B.A[B.offset[1] + i * 4 + i] = 2.0;
    /* block 2 stays zero */
    assert_int_equal(ildl_gje_invert(3, B.size, B.offset, B.A, 1e-10, 1e-6, B.inv, B.pert), 2);
    assert_int_equal(B.pert[0], 1);
    assert_int_equal(B.pert[1], 0);
    assert_int_equal(B.pert[2], 2);
    for (int i = 0; i < 4; i++) assert_true(B.inv[B.offset[1] + i * 4 + i] == 0.5);
    /* the zero block: +perturb on the diagonal, its inverse 1/perturb */
    assert_true(B.inv[B.offset[2]] == 1.0 / 1e-6 && B.inv[B.offset[2] + 3] == 1.0 / 1e-6);
    assert_int_equal(ildl_gje_invert(3, B.size, B.offset, B.A, 0.0, 1e-6, B.inv, B.pert), 2);
    assert_int_equal(B.pert[2], -1);
    assert_int_equal(B.pert[1], 0);
    batch_free(&B);
}

/* The apply: z = blockdiag(inv) x against the product summed in the documented order (bits), and
 * in place (x == z) the same. */
static void test_apply(void **state)
{
    (void)state;
    int32_t sizes[6] = {1, 7, 32, 16, 3, 31};
    batch B;
    batch_make(&B, 6, sizes);
    unsigned seed = 11;
    for (int64_t e = 0; e < B.offset[6]; e++) B.inv[e] = urand(&seed);
    int64_t n = B.rowptr[6];
    double *x = malloc(sizeof(double) * (size_t)n), *z = malloc(sizeof(double) * (size_t)n);
    assert_non_null(x);
    assert_non_null(z);
    for (int64_t i = 0; i < n; i++) x[i] = urand(&seed);
    ildl_gje_apply(6, B.size, B.offset, B.rowptr, B.inv, x, z);
    for (int64_t b = 0; b < 6; b++) {
        int m = B.size[b];
        for (int i = 0; i < m; i++) {
            double s = 0.0;
            for (int j = 0; j < m; j++) s = s + B.inv[B.offset[b] + j * m + i] * x[B.rowptr[b] + j];
            assert_true(z[B.rowptr[b] + i] == s);
        }
    }
    ildl_gje_apply(6, B.size, B.offset, B.rowptr, B.inv, x, x);
    assert_memory_equal(x, z, sizeof(double) * (size_t)n);
    free(x);
    free(z);
    batch_free(&B);
}

static void test_check_batch(void **state)
{
    (void)state;
    int32_t size[3] = {2, 33, 1};
    int64_t off[4] = {0, 4, 4 + 33 * 33, 4 + 33 * 33 + 1}, row[4] = {0, 2, 35, 36};
    assert_int_equal(ildl_gje_check_batch(3, size, off, row), 2); /* 33 > 32 */
    size[1] = 0;
    assert_int_equal(ildl_gje_check_batch(3, size, off, row), 2);
    size[1] = 3;
    off[2] = 13, off[3] = 14, row[2] = 5, row[3] = 6;
    assert_int_equal(ildl_gje_check_batch(3, size, off, row), 0);
    row[3] = 7;
    assert_int_equal(ildl_gje_check_batch(3, size, off, row), 3);
    row[0] = 1;
    assert_int_equal(ildl_gje_check_batch(3, size, off, row), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_inverses), cmocka_unit_test(test_exact_permutation),
        cmocka_unit_test(test_singular_blocks), cmocka_unit_test(test_apply),
        cmocka_unit_test(test_check_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
