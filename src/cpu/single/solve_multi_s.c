/* The single-precision instance of src/cpu/solve_multi.c (see src/cpu/real.h). */
#define ILDL_SINGLE 1
#include "../solve_multi.c"
