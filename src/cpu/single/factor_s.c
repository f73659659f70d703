/* The single-precision instance of src/cpu/factor.c (see src/cpu/real.h). */
#define ILDL_SINGLE 1
#include "../factor.c"
