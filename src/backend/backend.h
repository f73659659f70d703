/* backend.h -- the backend interface: what the API asks of a backend, one table of functions
 * per backend (backend_cpu.c, the reference; backend_cuda.c over src/cuda). src/api.c chooses a
 * table at setup and holds no backend or precision branch; every backend reads the same
 * analysis and returns the same factor statistics, and the CUDA backend's results equal the
 * CPU's bit for bit (docs/architecture.md). */
#ifndef ILDL_BACKEND_BACKEND_H
#define ILDL_BACKEND_BACKEND_H
#include <stddef.h>
#include "blockildl.h"
#include "analyse/analyse.h"
#include "core/csr.h"
#include "cpu/factor.h"
#include "krylov/sqmr.h"
#include "krylov/sqmr_multi.h"

/* What a backend sees of the handle: valid for the backend's lifetime. Their contents change
 * with each ildl_factor (A's values, the scaling, the tiles' values). */
typedef struct ildl_backend_env {
    const ildl_options *opt;
    const ildl_csr *A;  /* the user's matrix, sorted: SQMR's matrix */
    ildl_analysis *an;  /* the tile store (the factor), the order and the scaling */
} ildl_backend_env;

/* Every function that can fail returns an ILDL_* status and writes a message into msg[msglen]
 * that names the step that failed. */
typedef struct ildl_backend_ops {
    int kind; /* ILDL_BACKEND_CPU or ILDL_BACKEND_CUDA */
    /* The backend's state for env, after the analysis. */
    int (*create)(const ildl_backend_env *env, void **state, char *msg, size_t msglen);
    /* Factor env's tiles (their values loaded, scaled); rescaled: new values changed the scaling.
     * The factor is then what options.precision asks for. */
    int (*factor)(void *state, const ildl_factor_params *p, int rescaled, ildl_factor_stats *fs, char *msg,
                  size_t msglen);
    /* z = M^{-1} r in the user's order; where: an ildl_memory; stream: a cudaStream_t or NULL. */
    int (*apply)(void *state, const double *r, double *z, int where, void *stream, char *msg, size_t msglen);
    /* Z = M^{-1} R for k >= 1 columns (column-major, leading dimensions ldr, ldz >= n); each
     * column the bits of apply on it. */
    int (*apply_multi)(void *state, int k, const double *R, int64_t ldr, double *Z, int64_t ldz, int where,
                       void *stream, char *msg, size_t msglen);
    /* SQMR on A x = b, host vectors: ildl_sqmr's contract. */
    int (*sqmr)(void *state, const double *b, double *x, const ildl_sqmr_params *prm, ildl_sqmr_result *res,
                char *msg, size_t msglen);
    /* SQMR on A x[j] = b[j] for k (1..ILDL_SQMR_MULTI_MAX) columns of host vectors: ildl_sqmr_multi's
     * contract (each column the x, result and status[j] of sqmr on it alone); returns an error
     * of the call (msg set), else ILDL_SUCCESS with the columns' statuses in status[]. */
    int (*sqmr_multi)(void *state, int k, const double *const *b, double *const *x, const ildl_sqmr_params *prm,
                      ildl_sqmr_result *res, int *status, char *msg, size_t msglen);
    /* The device bytes the state for env (after the analysis) will hold once created and factored,
     * computed without allocating (0 on the CPU). */
    int (*estimate)(const ildl_backend_env *env, size_t *bytes, char *msg, size_t msglen);
    size_t (*device_bytes)(const void *state); /* device memory held (0 on the CPU) */
    const char *(*device_name)(const void *state); /* "" on the CPU */
    void (*destroy)(void *state); /* NULL allowed */
} ildl_backend_ops;

extern const ildl_backend_ops ildl_backend_cpu;
extern const ildl_backend_ops ildl_backend_cuda;

/* Backend selection. Unless opt asks for the CPU backend, start finding a usable GPU (and
 * starting its context) on a helper thread beside the analysis; NULL when no thread runs
 * (the CPU backend asked for, or the context started already). */
void *ildl_backend_probe_start(const ildl_options *opt);
/* Join the probe of ildl_backend_probe_start(opt) (NULL allowed): the number of usable GPUs, 0
 * when opt asks for the CPU backend. */
int ildl_backend_probe_finish(const ildl_options *opt, void *probe);
/* The CUDA devices the CUDA backend can use (0 without a GPU or in a build without CUDA). */
int ildl_backend_device_count(void);

#endif
