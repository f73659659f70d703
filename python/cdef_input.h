/* cdef_input.h -- preprocessed with python/stub (empty stddef.h and stdint.h: cffi knows their
 * types) into the declarations of blockildl.h alone, which the Python package hands to cffi
 * (CMakeLists.txt, ILDL_PYTHON). */
#include "blockildl.h"
