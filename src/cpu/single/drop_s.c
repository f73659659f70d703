/* The single-precision instance of src/cpu/drop.c (see src/cpu/real.h). */
#define ILDL_SINGLE 1
#include "../drop.c"
