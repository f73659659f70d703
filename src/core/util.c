#define _POSIX_C_SOURCE 199309L
#include "core/util.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

double ildl_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *ildl_malloc(size_t bytes) { return malloc(bytes ? bytes : 1); }

void *ildl_calloc(size_t count, size_t size)
{
    if (count == 0 || size == 0) return calloc(1, 1);
    return calloc(count, size);
}

void ildl_msg(char *msg, size_t msglen, const char *fmt, ...)
{
    if (!msg || msglen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

int ildl_isfinite(double x) { return isfinite(x) ? 1 : 0; }
