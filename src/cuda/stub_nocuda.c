/* stub_nocuda.c -- the CUDA backend entry points of a build without CUDA: they report that no
 * device is available, so the API falls back to (or refuses) the CPU backend cleanly. */
#include "cuda/cuda_backend.h"
#include "blockildl.h"

int ildl_cuda_device_count(void) { return 0; }
