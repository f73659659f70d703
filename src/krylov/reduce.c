#include "krylov/reduce.h"
#include <math.h>

/* The lanes' halving and the blocks' sum (reduce.h) of nblocks blocks of lane sums. */
static double lanes_total(int nblocks, double *lanes)
{
    double total = 0.0;
    for (int g = 0; g < nblocks; g++) {
        double *v = lanes + g * ILDL_DOT_THREADS;
        for (int s = ILDL_DOT_THREADS / 2; s > 0; s >>= 1)
            for (int t = 0; t < s; t++) v[t] += v[t + s];
        total += v[0];
    }
    return total;
}

/* Blocks holding at least one lane that receives an element; their lanes zeroed. */
static int lanes_clear(int32_t n, double *lanes)
{
    int32_t active = n < ILDL_DOT_LANES ? n : ILDL_DOT_LANES;
    int nblocks = (active + ILDL_DOT_THREADS - 1) / ILDL_DOT_THREADS;
    for (int p = 0; p < nblocks * ILDL_DOT_THREADS; p++) lanes[p] = 0.0;
    return nblocks;
}

/* Sequential over i, each product added to its lane: the same per-lane order as the GPU's
 * strided loop, without the CPU-hostile strided access. Lanes and blocks that receive no
 * element hold exact zeros, and adding +0.0 leaves any sum unchanged, so they are skipped. */
double ildl_dot_fixed(int32_t n, const double *x, const double *y, double *lanes)
{
    int nblocks = lanes_clear(n, lanes);
    int32_t p = 0;
    for (int32_t i = 0; i < n; i++) {
        lanes[p] += x[i] * y[i];
        if (++p == ILDL_DOT_LANES) p = 0;
    }
    return lanes_total(nblocks, lanes);
}

double ildl_nrm2_fixed(int32_t n, const double *x, double *lanes)
{
    double s = ildl_dot_fixed(n, x, x, lanes);
    if (ildl_nrm2_plain_ok(s)) return sqrt(s);
    double m = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double a = fabs(x[i]);
        if (a > m || a != a) m = a; /* a NaN stays */
    }
    if (m == 0.0 || !(m <= 0x1.fffffffffffffp+1023)) return m; /* zero, an Inf or a NaN */
    int e = ildl_nrm2_exponent(m);
    int nblocks = lanes_clear(n, lanes);
    int32_t p = 0;
    for (int32_t i = 0; i < n; i++) {
        double v = ildl_scale_pow2(x[i], -e);
        lanes[p] += v * v;
        if (++p == ILDL_DOT_LANES) p = 0;
    }
    return ildl_scale_pow2(sqrt(lanes_total(nblocks, lanes)), e);
}
