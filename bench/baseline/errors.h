/* errors.h -- what the baseline tools (cusparse_baseline.cu, cudss_compare.cu) share for their
 * errors: an exception type, printf-style formatting into a std::string, and CUDA_CK, which
 * turns a failed CUDA runtime call into an Error naming the call, its place and the error. */
#ifndef ILDL_BENCH_BASELINE_ERRORS_H
#define ILDL_BENCH_BASELINE_ERRORS_H
#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <stdexcept>
#include <string>

struct Error : std::runtime_error {
    explicit Error(const std::string &s) : std::runtime_error(s) {}
};

static inline std::string strf(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return std::string(buf);
}

#define CUDA_CK(call)                                                                        \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess)                                                               \
            throw Error(strf("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call,         \
                             cudaGetErrorName(e_), cudaGetErrorString(e_)));                 \
    } while (0)

#endif
