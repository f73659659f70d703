#define _DEFAULT_SOURCE /* madvise, posix_memalign */
#define _POSIX_C_SOURCE 200112L
#include "core/util.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

double ildl_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Arrays from this size on are 2 MiB aligned and marked for transparent huge pages: the
 * analysis writes hundreds of MiB of fresh arrays, and where the kernel gives huge pages only
 * on request (THP "madvise") each 4 KiB page would cost a fault on first touch. */
#define ILDL_HUGE_MIN ((size_t)8 << 20)
#define ILDL_HUGE_ALIGN ((size_t)2 << 20)

void *ildl_malloc(size_t bytes)
{
    if (bytes < ILDL_HUGE_MIN) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, ILDL_HUGE_ALIGN, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without THP nothing changes */
#endif
    return p;
}

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
        fprintf(stderr, "ildl profile: %-32s %.6f s\n", what, now - *t);
    }
    *t = now;
}

int ildl_isfinite(double x) { return isfinite(x) ? 1 : 0; }

double ildl_host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return (pages > 0 && size > 0) ? (double)pages * (double)size : 0.0;
}

void *ildl_thread_scratch(size_t bytes, int *oom)
{
    void *p = ildl_malloc(bytes);
    if (!p) {
#pragma omp atomic write
        *oom = 1;
    }
    return p;
}

void ildl_copy_parallel(void *dst, const void *src, size_t bytes)
{
    const size_t piece = (size_t)1 << 20;
    int64_t np = (int64_t)((bytes + piece - 1) / piece);
#pragma omp parallel for schedule(static) if (np > 1)
    for (int64_t k = 0; k < np; k++) {
        size_t off = (size_t)k * piece, len = bytes - off < piece ? bytes - off : piece;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}

int ildl_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int ildl_threads_beside_helper(void)
{
#ifdef _OPENMP
    int t = omp_get_max_threads();
    return t > 1 && t >= omp_get_num_procs() ? t - 1 : t;
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
