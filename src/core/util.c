#define _POSIX_C_SOURCE 199309L
#include "core/util.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

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

int ildl_profiling(void)
{
    /* read each time, not cached: no static state shared by threads, and it is a few calls */
    const char *v = getenv("ILDL_SETUP_PROFILE");
    return v != NULL && v[0] != 0 && strcmp(v, "0") != 0; /* set, and not to "0" */
}

void ildl_profile_lap(double *t, const char *fmt, ...)
{
    double now = ildl_wtime();
    if (ildl_profiling()) {
        char what[128];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        fprintf(stderr, "ildl profile: %-32s %.4f s\n", what, now - *t);
    }
    *t = now;
}

int ildl_isfinite(double x) { return isfinite(x) ? 1 : 0; }

void *ildl_thread_scratch(size_t bytes, int *oom)
{
    void *p = ildl_malloc(bytes);
    if (!p) {
#pragma omp atomic write
        *oom = 1;
    }
    return p;
}

int ildl_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int ildl_set_threads(int t)
{
#ifdef _OPENMP
    int prev = omp_get_max_threads();
    if (t > 0) omp_set_num_threads(t);
    return prev;
#else
    (void)t;
    return 1;
#endif
}
