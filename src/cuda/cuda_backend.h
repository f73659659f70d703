/* cuda_backend.h -- C entry points of the CUDA backend (implemented in src/cuda/*.cu; a
 * build without CUDA links stub_nocuda.c instead). */
#ifndef ILDL_CUDA_BACKEND_H
#define ILDL_CUDA_BACKEND_H

/* Number of usable CUDA devices (0 without CUDA, driver or GPU). Never fails. */
int ildl_cuda_device_count(void);

#endif
