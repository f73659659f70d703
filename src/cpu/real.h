/* real.h -- the value type of the CPU reference factorization and solves.
 *
 * The files that include this header are compiled twice (as CXSparse does for its index and
 * value types): as they are, for double, and through src/cpu/single/, which defines ILDL_SINGLE
 * first, for float. RN(name) gives each function its name for the type: name for double,
 * name_s for float. Every operation of the single build is a float operation, so, with FMA
 * contraction off, the CUDA kernels (templates on the same type) round it the same way.
 *
 * What stays double in the single build: the tile store's A values (a_val: cast to float when
 * loaded), D (d_diag/d_off hold the float values exactly) and the parameters (cast to float
 * where they meet the data, so the double build, where the casts do nothing, is unchanged). */
#ifndef ILDL_CPU_REAL_H
#define ILDL_CPU_REAL_H
#include <math.h>

#ifdef ILDL_SINGLE
typedef float ildl_real;
#define RN(name) name##_s
#define RABS fabsf
#define RSQRT sqrtf
#define RMAX fmaxf
#define RCOPYSIGN copysignf
#define TVAL(T) ((T)->val32) /* the stored factor values */
#else
typedef double ildl_real;
#define RN(name) name
#define RABS fabs
#define RSQRT sqrt
#define RMAX fmax
#define RCOPYSIGN copysign
#define TVAL(T) ((T)->val)
#endif

#endif
