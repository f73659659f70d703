/* test_cuda_dense.c -- the dense factorization of one tile on the device (dd_factor, through
 * ildl_cuda_dense_factor_host: src/cuda/dense_batch.cu) against the CPU reference
 * (ildl_dense_factor, ildl_dense_factor_s): the same tile and pivot record bit for bit, for the
 * three pivot rules in double and in float, on tiles of every size 1..32 that the shared
 * matrices may not reach: random symmetric, saddle point with a zero block, magnitudes that tie,
 * pivots below the tolerance (perturbed), zero tiles, static 2x2 hints, and NaN or infinite
 * entries (a NaN compares equal to any NaN: its payload may differ between the CPU and the GPU).
 * Skipped (visibly) without a GPU. */
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
#include "cpu/dense_factor.h"
#include "cuda/cuda_backend.h"
#include "support/dense_check.h"

#define LD ILDL_TILE
#define TILE ILDL_TILE_AREA
#define KINDS 8

/* Tile b of the batch: size m, kind b % KINDS, from the dense tests' generators
 * (support/dense_check.h); symmetric, zeros outside m x m; hints for the static pivoting's 2x2
 * pivots on consecutive rows. */
static void make_tile(int kind, int m, uint64_t seed, double *t, int8_t *hint)
{
    if (kind == 1) dt_gen_kkt(m, 0, seed, t); /* saddle point: zero (2,2) block */
    else dt_gen_general(m, kind == 5 ? 1.0 : 0.0, seed, t); /* kind 5: zero diagonal */
    memset(hint, 0, LD);
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) {
            double v = t[i * LD + j];
            switch (kind) {
            case 2: v = v < 0 ? -1.0 : 1.0; break; /* ties everywhere */
            case 3: if (i == j) v = 1e-20 * v; break; /* pivots below the tolerance */
            case 4: v = 0.0; break; /* a zero tile: every pivot perturbed */
            case 6: if (i == m / 2 && j == (m + 1) / 2) v = NAN; break;
            case 7: if (i == 0 && j == m - 1) v = (m % 2) ? INFINITY : -INFINITY; break;
            default: break;
            }
            t[i * LD + j] = t[j * LD + i] = v;
        }
    for (int i = 0; i + 1 < m; i += 2)
        if ((kind == 1 || kind == 5) && i % 4 == 0) hint[i] = 1;
}

/* The same bits, or both NaN. */
static int same(double a, double b)
{
    if (isnan(a) && isnan(b)) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

static void check_pivoting(int pivoting, int single)
{
    const int count = 32 * KINDS * 3;
    int32_t *m = malloc(sizeof(int32_t) * count);
    double *tiles = malloc(sizeof(double) * TILE * count), *out = malloc(sizeof(double) * TILE * count);
    int8_t *hint = malloc((size_t)LD * count);
    ildl_dense_result *res = malloc(sizeof(ildl_dense_result) * count);
    assert_non_null(m);
    assert_non_null(tiles);
    assert_non_null(out);
    assert_non_null(hint);
    assert_non_null(res);
    for (int b = 0; b < count; b++) {
        m[b] = 1 + b % 32;
        make_tile((b / 32) % KINDS, m[b], 1000u * (uint64_t)pivoting + (uint64_t)b + 11u, tiles + (size_t)b * TILE,
                  hint + (size_t)b * LD);
        if (single)
            for (int e = 0; e < TILE; e++) tiles[(size_t)b * TILE + e] = (double)(float)tiles[(size_t)b * TILE + e];
    }
    const double tol = 1e-14, perturb = 1e-10;
    char msg[256] = "";
    int st = ildl_cuda_dense_factor_host(0, pivoting, single, count, m, tiles, hint, tol, perturb, out, res, msg,
                                         sizeof msg);
    if (st) printf("device: %s\n", msg);
    assert_int_equal(st, ILDL_SUCCESS);
    int bad = 0, n2x2 = 0, npert = 0;
    for (int b = 0; b < count; b++) {
        ildl_dense_params p = {tol, perturb, hint + (size_t)b * LD};
        ildl_dense_result r;
        double a[TILE], *g = out + (size_t)b * TILE;
        float af[TILE];
        if (single) {
            for (int e = 0; e < TILE; e++) af[e] = (float)tiles[(size_t)b * TILE + e];
            ildl_dense_factor_s(pivoting, m[b], af, &p, &r);
            for (int e = 0; e < TILE; e++) a[e] = af[e];
        } else {
            memcpy(a, tiles + (size_t)b * TILE, sizeof a);
            ildl_dense_factor(pivoting, m[b], a, &p, &r);
        }
        int ok = r.n2x2 == res[b].n2x2 && r.nperturbed == res[b].nperturbed;
        for (int e = 0; e < TILE && ok; e++) ok = same(a[e], g[e]);
        for (int i = 0; i < m[b] && ok; i++)
            ok = r.perm[i] == res[b].perm[i] && r.type[i] == res[b].type[i] && same(r.d_diag[i], res[b].d_diag[i]) &&
                 same(r.d_off[i], res[b].d_off[i]);
        if (!ok && bad++ < 5)
            printf("pivoting %d %s: tile %d (m %d, kind %d) differs\n", pivoting, single ? "float" : "double", b, m[b],
                   (b / 32) % KINDS);
        n2x2 += r.n2x2;
        npert += r.nperturbed;
    }
    printf("pivoting %d %s: %d tiles, %d differ (2x2 pivots %d, perturbed %d)\n", pivoting,
           single ? "float" : "double", count, bad, n2x2, npert);
    assert_int_equal(bad, 0);
    /* the cases are what they claim: perturbed pivots everywhere, 2x2 pivots beyond the hints */
    assert_true(npert > 0);
    assert_true(n2x2 > 0);
    free(m);
    free(tiles);
    free(out);
    free(hint);
    free(res);
}

static void test_dense_agreement(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() <= 0) {
        printf("SKIP: no CUDA device: GPU dense tile tests not run\n");
        skip();
        return;
    }
    for (int single = 0; single < 2; single++)
        for (int pivoting = ILDL_PIVOT_NONE; pivoting <= ILDL_PIVOT_ROOK; pivoting++) check_pivoting(pivoting, single);
}

/* One zero tile of m rows through the entry point: a failure must come with a message. */
static int factor_one(int32_t m)
{
    double t[TILE] = {0}, out[TILE];
    ildl_dense_result r;
    char msg[256] = "";
    int st = ildl_cuda_dense_factor_host(0, ILDL_PIVOT_ROOK, 0, 1, &m, t, NULL, 1e-14, 1e-10, out, &r, msg, sizeof msg);
    if (st) {
        assert_true(msg[0] != '\0');
        printf("%d rows: status %d, \"%s\"\n", (int)m, st, msg);
    }
    return st;
}

/* Without a device (or in a build without the CUDA backend) the entry point answers with a status
 * and a message, never a crash. */
static void test_dense_no_device_status(void **state)
{
    (void)state;
    if (ildl_cuda_device_count() > 0) {
        printf("SKIP: a CUDA device is present: the no-device status is not reachable\n");
        skip();
        return;
    }
    assert_int_not_equal(factor_one(2), ILDL_SUCCESS);
}

/* A tile of more than 32 rows is refused with a status and a message, before any device work
 * (in a build without the CUDA backend: the no-device status). */
static void test_dense_bad_size(void **state)
{
    (void)state;
    assert_int_not_equal(factor_one(33), ILDL_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_agreement),
        cmocka_unit_test(test_dense_no_device_status),
        cmocka_unit_test(test_dense_bad_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
