/* The single-precision instance of src/cpu/solve.c (see src/cpu/real.h). */
#define ILDL_SINGLE 1
#include "../solve.c"
