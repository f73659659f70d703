/* util.h -- small helpers shared by all modules: timing, checked allocation, messages. */
#ifndef ILDL_CORE_UTIL_H
#define ILDL_CORE_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Wall-clock seconds from an arbitrary origin (monotonic). */
double ildl_wtime(void);

/* malloc/calloc that return NULL for size 0 requests as a valid (non-error) empty
 * allocation of 1 byte, so callers can treat NULL as out-of-memory uniformly. Large
 * ildl_malloc blocks ask for transparent huge pages (util.c); free() releases both. */
void *ildl_malloc(size_t bytes);
void *ildl_calloc(size_t count, size_t size);

/* snprintf into msg if msg != NULL and msglen > 0. */
void ildl_msg(char *msg, size_t msglen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Per-thread scratch, called by each thread inside an OpenMP parallel region: ildl_malloc(bytes);
 * on failure NULL and *oom set to 1 (atomically; the caller's flag, 0 before the region). */
void *ildl_thread_scratch(size_t bytes, int *oom);

/* Threads of later OpenMP parallel regions: t (> 0). Returns the previous count; without
 * OpenMP it does nothing and returns 1. Lets tests compare results across thread counts. */
int ildl_set_threads(int t);

/* memcpy by all threads in 1 MiB pieces: a large copy into fresh memory is bound by one
 * thread's page faults and bandwidth otherwise. */
void ildl_copy_parallel(void *dst, const void *src, size_t bytes);

/* Threads an OpenMP parallel region would get here (1 without OpenMP). */
int ildl_max_threads(void);

/* Threads for parallel regions while one helper thread of the library is busy beside them:
 * one fewer than now when now they would take every processor (a region whose thread shares
 * a core waits at its barrier for that core's time slices), else as now. */
int ildl_threads_beside_helper(void);

/* 1 if the environment variable ILDL_SETUP_PROFILE is set: the analysis then prints the times
 * of its sub-phases to stderr, and each factorization and solve theirs (the host's check and
 * load of new values, the device's launches, wait, statistics; SQMR's start, batches, checks)
 * (a diagnostic; nothing else changes). */
int ildl_profiling(void);

/* When ildl_profiling(): print "ildl profile: <what> <seconds since *t>" (fmt names what) to
 * stderr. Always sets *t to now, so consecutive calls time consecutive steps. */
void ildl_profile_lap(double *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* 1 if x is finite. */
int ildl_isfinite(double x);

/* The host's physical memory in bytes (0 if unknown). */
double ildl_host_memory_bytes(void);

#endif
