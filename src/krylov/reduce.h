/* reduce.h -- the one fixed summation order used for every inner product and 2-norm of SQMR,
 * on the CPU and on the GPU, so both backends compute bit-identical scalars and take the same
 * number of iterations.
 *
 * Order: P = ILDL_DOT_BLOCKS * ILDL_DOT_THREADS lanes. Lane p (block g = p / THREADS, thread
 * t = p % THREADS) sums x[i]*y[i] for i = p, p+P, p+2P, ... in that order, starting from 0.
 * Inside a block the THREADS lane sums are combined by halving: for s = THREADS/2, ..., 1:
 * v[t] += v[t+s] for t < s. The block results are then added for g = 0, 1, ..., BLOCKS-1
 * starting from 0. (This is exactly a 128 x 256 CUDA reduction with a fixed grid.)
 *
 * 2-norms (ildl_nrm2_fixed) never overflow or lose accuracy to underflow: s = x^T x in the
 * order above is used as sqrt(s) when ildl_nrm2_plain_ok(s) (finite and >= 2^-960: the squares
 * that underflowed then cost at most n * 2^-1075 <= 2^-84 s); otherwise every x[i] is scaled
 * by the power of two 2^-e that brings max |x_i| into [0.5, 1) (ildl_nrm2_exponent,
 * ildl_scale_pow2: exact for every entry whose scaled value is normal; the others' squares are
 * below 2^-2044 of the sum), the squares of the scaled values are summed in the same order, and
 * the root is scaled back by 2^e. A NaN in x gives NaN, an Inf gives Inf, x = 0 gives 0. */
#ifndef ILDL_KRYLOV_REDUCE_H
#define ILDL_KRYLOV_REDUCE_H
#include <stdint.h>
#include <string.h>

#define ILDL_DOT_BLOCKS 128
#define ILDL_DOT_THREADS 256
#define ILDL_DOT_LANES (ILDL_DOT_BLOCKS * ILDL_DOT_THREADS)

#ifdef __CUDACC__
#define ILDL_HD __host__ __device__
#else
#define ILDL_HD
#endif

/* x^T y in the fixed order above; lanes is caller scratch of ILDL_DOT_LANES doubles. */
double ildl_dot_fixed(int32_t n, const double *x, const double *y, double *lanes);

/* ||x||_2 in the fixed order above, without overflow or harmful underflow (see the top). */
double ildl_nrm2_fixed(int32_t n, const double *x, double *lanes);

/* 1 / sqrt(1 + theta^2) without overflow, identically rounded on CPU and GPU. */
static inline ILDL_HD double ildl_givens_c(double theta)
{
    return theta > 1e150 ? 1.0 / theta : 1.0 / __builtin_sqrt(1.0 + theta * theta);
}

/* 1 if sqrt(s) of a plain fixed-order sum of squares s is the 2-norm to rounding (s finite and
 * at least 2^-960), or s is NaN (a NaN entry: the norm is NaN either way). */
static inline ILDL_HD int ildl_nrm2_plain_ok(double s)
{
    return (s >= 0x1p-960 && s <= 0x1.fffffffffffffp+1023) || s != s;
}

/* 2^k for -1022 <= k <= 1023, built from its bits (the same on CPU and GPU). */
static inline ILDL_HD double ildl_pow2(int k)
{
    uint64_t bits = (uint64_t)(k + 1023) << 52;
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)bits);
#else
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
#endif
}

/* x * 2^k for -1100 <= k <= 1100, in two exact power-of-two steps (each factor normal). */
static inline ILDL_HD double ildl_scale_pow2(double x, int k)
{
    int k1 = k / 2;
    return (x * ildl_pow2(k1)) * ildl_pow2(k - k1);
}

/* For finite m > 0: the e with m * 2^-e in [0.5, 1). */
static inline ILDL_HD int ildl_nrm2_exponent(double m)
{
    int adj = 0;
    if (m < 0x1p-1022) { /* subnormal: bring it into the normal range first (exact) */
        m *= 0x1p54;
        adj = 54;
    }
    uint64_t bits;
#ifdef __CUDA_ARCH__
    bits = (uint64_t)__double_as_longlong(m);
#else
    memcpy(&bits, &m, sizeof bits);
#endif
    return (int)((bits >> 52) & 0x7ff) - 1022 - adj;
}

#endif
