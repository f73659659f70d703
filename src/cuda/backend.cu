/* backend.cu -- the CUDA backend's state outside any context: the calling thread's last CUDA
 * failure (a message, never an abort), switching to a handle's device and back, the lock
 * between graph captures and device-wide synchronisations, the devices and the warm-up thread
 * that starts CUDA beside the host's analysis, the diagnostics' switch and the tests' settings.
 * The rest: setup.cu (a context's creation and destruction), plan.cu (the work layout),
 * solve_select.cu (which solve kernels), factorize.cu (a factorization and what follows it),
 * apply.cu (the preconditioner), factor*.cu and solve*.cu (the kernels), sqmr.cu (SQMR). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "cuda/context.cuh"
extern "C" {
#include "cuda/cuda_backend.h"
}

/* per thread: handles used on different threads (and their setups) report their own errors */
static thread_local char g_cuda_msg[512];

void ildl_cuda_note_error(cudaError_t e, const char *what, const char *file, int line)
{
    snprintf(g_cuda_msg, sizeof g_cuda_msg, "%s failed: %s (%s:%d)", what, cudaGetErrorString(e),
             file, line);
}

extern "C" const char *ildl_cuda_last_message(void) { return g_cuda_msg; }

void ildl_cuda_clear_message(void) { g_cuda_msg[0] = 0; }

void ildl_cuda_set_message(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_cuda_msg, sizeof g_cuda_msg, fmt, ap);
    va_end(ap);
}

const char *ildl_cuda_status_message(int status) { return g_cuda_msg[0] ? g_cuda_msg : ildl_strerror(status); }

/* cuCtxGetCurrent / cuCtxSetCurrent through the runtime (no link to libcuda); NULL where the
 * driver does not provide them. */
typedef int (*ctx_get_fn)(void **);
typedef int (*ctx_set_fn)(void *);
struct ctx_fns {
    ctx_get_fn get;
    ctx_set_fn set;
};
static ctx_fns ctx_functions(void)
{
    static const ctx_fns f = [] {
        ctx_fns r = {NULL, NULL};
        void *g = NULL, *t = NULL;
        cudaDriverEntryPointQueryResult q1, q2;
        if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &g, 12000, cudaEnableDefault, &q1) == cudaSuccess &&
            cudaGetDriverEntryPointByVersion("cuCtxSetCurrent", &t, 12000, cudaEnableDefault, &q2) == cudaSuccess &&
            q1 == cudaDriverEntryPointSuccess && q2 == cudaDriverEntryPointSuccess && g && t) {
            r.get = (ctx_get_fn)g;
            r.set = (ctx_set_fn)t;
        }
        cudaGetLastError();
        return r;
    }();
    return f;
}

device_scope::device_scope() : prev(NULL)
{
    ctx_fns f = ctx_functions();
    if (f.get && f.get(&prev) != 0) prev = NULL;
}

device_scope::~device_scope()
{
    ctx_fns f = ctx_functions();
    if (prev && f.set) f.set(prev);
}

int ildl_cuda_profiling(void) { return getenv("ILDL_CUDA_PROFILE") != NULL; }

/* The settings contexts copy at creation (tuning.h), behind a lock: handles are created on
 * several threads. Hidden: a hook for the tests, not part of the library's interface. */
static pthread_mutex_t g_tuning_lock = PTHREAD_MUTEX_INITIALIZER;
static ildl_cuda_tuning g_tuning = ILDL_CUDA_TUNING_DEFAULT;

extern "C" __attribute__((visibility("hidden"))) void ildl_cuda_tuning_get(ildl_cuda_tuning *t)
{
    pthread_mutex_lock(&g_tuning_lock);
    *t = g_tuning;
    pthread_mutex_unlock(&g_tuning_lock);
}

extern "C" __attribute__((visibility("hidden"))) void ildl_cuda_tuning_set(const ildl_cuda_tuning *t)
{
    static const ildl_cuda_tuning defaults = ILDL_CUDA_TUNING_DEFAULT;
    pthread_mutex_lock(&g_tuning_lock);
    g_tuning = t ? *t : defaults;
    pthread_mutex_unlock(&g_tuning_lock);
}

static pthread_mutex_t g_capture_lock = PTHREAD_MUTEX_INITIALIZER;
void ildl_cuda_capture_lock(void) { pthread_mutex_lock(&g_capture_lock); }
void ildl_cuda_capture_unlock(void) { pthread_mutex_unlock(&g_capture_lock); }

/* cudaDeviceSynchronize, never while another thread of the backend captures a graph. */
cudaError_t device_sync_locked(void)
{
    ildl_cuda_capture_lock();
    cudaError_t e = cudaDeviceSynchronize();
    ildl_cuda_capture_unlock();
    return e;
}

extern "C" int ildl_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}

struct ildl_cuda_warmup {
    pthread_t thread;
    int device_id, ndev;
};

/* Bit d: device d's primary context exists (a warm-up made it); later setups need no thread. */
static unsigned long long g_context_ready;

static void *warmup_main(void *arg)
{
    ildl_cuda_warmup *w = (ildl_cuda_warmup *)arg;
    w->ndev = ildl_cuda_device_count();
    if (w->device_id >= 0 && w->device_id < w->ndev && cudaSetDevice(w->device_id) == cudaSuccess &&
        cudaFree(0) == cudaSuccess && w->device_id < 64) /* cudaFree(0) creates the primary context, */
        __atomic_fetch_or(&g_context_ready, 1ULL << w->device_id, __ATOMIC_RELAXED); /* shared by all threads */
    cudaGetLastError(); /* this thread's error state only; create reports its own errors */
    return NULL;
}

extern "C" ildl_cuda_warmup *ildl_cuda_warmup_start(int device_id)
{
    if (device_id >= 0 && device_id < 64 &&
        (__atomic_load_n(&g_context_ready, __ATOMIC_RELAXED) >> device_id & 1))
        return NULL; /* started already: finish(NULL) only counts the devices, at once */
    ildl_cuda_warmup *w = (ildl_cuda_warmup *)calloc(1, sizeof *w);
    if (!w) return NULL;
    w->device_id = device_id;
    if (pthread_create(&w->thread, NULL, warmup_main, w) != 0) {
        free(w);
        return NULL;
    }
    return w;
}

extern "C" int ildl_cuda_warmup_finish(ildl_cuda_warmup *w)
{
    if (!w) return ildl_cuda_device_count();
    pthread_join(w->thread, NULL);
    int n = w->ndev;
    free(w);
    return n;
}

extern "C" size_t ildl_cuda_bytes(const ildl_cuda_ctx *c) { return c ? c->bytes : 0; }
extern "C" const char *ildl_cuda_device_name(const ildl_cuda_ctx *c) { return c ? c->name : ""; }
