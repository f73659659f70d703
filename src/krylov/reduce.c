#include "krylov/reduce.h"

/* Sequential over i, each product added to its lane: the same per-lane order as the GPU's
 * strided loop, without the CPU-hostile strided access. Lanes and blocks that receive no
 * element hold exact zeros, and adding +0.0 leaves any sum unchanged, so they are skipped. */
double ildl_dot_fixed(int32_t n, const double *x, const double *y, double *lanes)
{
    int32_t active = n < ILDL_DOT_LANES ? n : ILDL_DOT_LANES;
    int nblocks = (active + ILDL_DOT_THREADS - 1) / ILDL_DOT_THREADS;
    for (int p = 0; p < nblocks * ILDL_DOT_THREADS; p++) lanes[p] = 0.0;
    int32_t p = 0;
    for (int32_t i = 0; i < n; i++) {
        lanes[p] += x[i] * y[i];
        if (++p == ILDL_DOT_LANES) p = 0;
    }
    double total = 0.0;
    for (int g = 0; g < nblocks; g++) {
        double *v = lanes + g * ILDL_DOT_THREADS;
        for (int s = ILDL_DOT_THREADS / 2; s > 0; s >>= 1)
            for (int t = 0; t < s; t++) v[t] += v[t + s];
        total += v[0];
    }
    return total;
}
