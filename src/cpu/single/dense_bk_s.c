/* The single-precision instance of src/cpu/dense_bk.c (see src/cpu/real.h). */
#define ILDL_SINGLE 1
#include "../dense_bk.c"
