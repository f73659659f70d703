/* reduce.h -- the one fixed summation order used for every inner product of SQMR, on the
 * CPU and on the GPU, so both backends compute bit-identical scalars and take the same
 * number of iterations.
 *
 * Order: P = ILDL_DOT_BLOCKS * ILDL_DOT_THREADS lanes. Lane p (block g = p / THREADS, thread
 * t = p % THREADS) sums x[i]*y[i] for i = p, p+P, p+2P, ... in that order, starting from 0.
 * Inside a block the THREADS lane sums are combined by halving: for s = THREADS/2, ..., 1:
 * v[t] += v[t+s] for t < s. The block results are then added for g = 0, 1, ..., BLOCKS-1
 * starting from 0. (This is exactly a 128 x 256 CUDA reduction with a fixed grid.) */
#ifndef ILDL_KRYLOV_REDUCE_H
#define ILDL_KRYLOV_REDUCE_H
#include <stdint.h>

#define ILDL_DOT_BLOCKS 128
#define ILDL_DOT_THREADS 256
#define ILDL_DOT_LANES (ILDL_DOT_BLOCKS * ILDL_DOT_THREADS)

/* x^T y in the fixed order above; lanes is caller scratch of ILDL_DOT_LANES doubles. */
double ildl_dot_fixed(int32_t n, const double *x, const double *y, double *lanes);

/* 1 / sqrt(1 + theta^2) without overflow, identically rounded on CPU and GPU. */
static inline double ildl_givens_c(double theta)
{
    return theta > 1e150 ? 1.0 / theta : 1.0 / __builtin_sqrt(1.0 + theta * theta);
}

#endif
