/* test_cuda_gje.c -- block-Jacobi's Gauss-Jordan inversion and apply on the device (src/cuda/gje.cu)
 * against the CPU reference (src/cpu/gje.c): the same bits for the inverses, the perturbed
 * counts and the applied vector, on a batch of every size 1..32 with random, symmetric
 * zero-diagonal, tied, singular and NaN-holding blocks. Skipped (visibly) without a GPU. */
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
#include "cpu/gje.h"
#include "cuda/cuda_backend.h"

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffffff) / (double)0x1000000 * 2.0 - 1.0;
}

static void test_gje_agreement(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU block-Jacobi tests not run\n");
        skip();
        return;
    }
    const int64_t count = 4000;
    int32_t *size = malloc(sizeof(int32_t) * count), *pc = malloc(sizeof(int32_t) * count),
            *pg = malloc(sizeof(int32_t) * count);
    int64_t *off = malloc(sizeof(int64_t) * (count + 1)), *row = malloc(sizeof(int64_t) * (count + 1));
    assert_non_null(size);
    assert_non_null(off);
    assert_non_null(row);
    off[0] = row[0] = 0;
    for (int64_t b = 0; b < count; b++) {
        size[b] = 1 + (int32_t)((b * 7) % 32);
        off[b + 1] = off[b] + (int64_t)size[b] * size[b];
        row[b + 1] = row[b] + size[b];
    }
    double *A = malloc(sizeof(double) * off[count]), *ic = malloc(sizeof(double) * off[count]),
           *ig = malloc(sizeof(double) * off[count]);
    double *x = malloc(sizeof(double) * row[count]), *zc = malloc(sizeof(double) * row[count]),
           *zg = malloc(sizeof(double) * row[count]);
    assert_non_null(A);
    assert_non_null(ig);
    assert_non_null(zg);
    unsigned seed = 5;
    for (int64_t b = 0; b < count; b++) {
        int m = size[b];
        double *a = A + off[b];
        for (int i = 0; i < m * m; i++) a[i] = urand(&seed);
        switch (b % 6) {
        case 1: /* symmetric, zero diagonal */
            for (int i = 0; i < m; i++) {
                a[i * m + i] = 0.0;
                for (int j = 0; j < i; j++) a[j * m + i] = a[i * m + j];
            }
            break;
        case 2: /* ties: entries of equal magnitude */
            for (int i = 0; i < m * m; i++) a[i] = a[i] < 0 ? -1.0 : 1.0;
            break;
        case 3: /* singular: the last row repeats the first */
            if (m > 1) memcpy(a + (m - 1) * m, a, sizeof(double) * m);
            break;
        case 4: /* a NaN */
            a[(m * m) / 2] = NAN;
            break;
        default:
            break;
        }
    }
    for (int64_t i = 0; i < row[count]; i++) x[i] = urand(&seed);
    int64_t bad = ildl_gje_invert(count, size, off, A, 1e-10, 1e-6, ic, pc);
    ildl_gje_apply(count, size, off, row, ic, x, zc);
    char msg[256] = "";
    assert_int_equal(ildl_cuda_gje_host(0, count, size, off, row, A, 1e-10, 1e-6, ig, pg, x, zg, msg, sizeof msg),
                     ILDL_SUCCESS);
    assert_true(bad > 0);
    assert_memory_equal(pc, pg, sizeof(int32_t) * count);
    int64_t differ = 0;
    for (int64_t e = 0; e < off[count]; e++) differ += memcmp(&ic[e], &ig[e], sizeof(double)) != 0;
    if (differ) fail_msg("%lld of %lld inverse entries differ from the CPU's", (long long)differ, (long long)off[count]);
    assert_memory_equal(zc, zg, sizeof(double) * row[count]);
    printf("GPU block-Jacobi: %lld blocks, %lld entries, %lld blocks perturbed or not finite: the CPU's bits\n",
           (long long)count, (long long)off[count], (long long)bad);
    free(size), free(pc), free(pg), free(off), free(row), free(A), free(ic), free(ig), free(x), free(zc), free(zg);
}

/* Without a GPU (or on a build without CUDA) the host entry fails cleanly with a message. */
static void test_gje_no_device_message(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() > 0) {
        printf("SKIP: a CUDA device is present: the no-device path is not reachable\n");
        skip();
        return;
    }
    int32_t size[1] = {1};
    int64_t off[2] = {0, 1}, row[2] = {0, 1};
    double A[1] = {2.0}, inv[1] = {0.0};
    char msg[256] = "";
    int st = ildl_cuda_gje_host(0, 1, size, off, row, A, 1e-10, 1e-6, inv, NULL, NULL, NULL, msg, sizeof msg);
    assert_int_not_equal(st, ILDL_SUCCESS);
    assert_true(strlen(msg) > 0);
    assert_true(inv[0] == 0.0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gje_agreement),
        cmocka_unit_test(test_gje_no_device_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
