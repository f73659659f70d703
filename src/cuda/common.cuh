/* common.cuh -- shared pieces of the CUDA backend: error checking that turns every failed
 * CUDA call into a status (never an abort), and the device view of the tile store. */
#ifndef ILDL_CUDA_COMMON_CUH
#define ILDL_CUDA_COMMON_CUH
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
extern "C" {
#include "blockildl.h"
#include "analyse/tiles.h"
}

#define LD ILDL_TILE        /* core/dense_rules.h, through analyse/tiles.h */
#define TILE ILDL_TILE_AREA

/* A -DILDL_SOLVE_TRACE build (a diagnostic: the sync-free sweeps record per ticket when it was
 * claimed, its waits and its end) run with ILDL_CUDA_PROFILE set writes the last solve's records
 * to this file unless the tuning names another (tuning.h; bench/solve_trace.py reads it). */
#ifndef ILDL_SOLVE_TRACE_FILE
#define ILDL_SOLVE_TRACE_FILE "ildl-solve-trace.bin"
#endif

/* Evaluate a CUDA call; on failure record where and jump to the function's cleanup label. */
#define CU(call)                                                                         \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            ildl_cuda_note_error(e_, #call, __FILE__, __LINE__);                         \
            status = (e_ == cudaErrorMemoryAllocation) ? ILDL_ERR_OUT_OF_MEMORY          \
                                                       : ILDL_ERR_DEVICE;                \
            goto cleanup;                                                                \
        }                                                                                \
    } while (0)

/* After a launch: launch-configuration errors surface here. */
#define CU_LAUNCH() CU(cudaGetLastError())

void ildl_cuda_note_error(cudaError_t e, const char *what, const char *file, int line);
/* Entry points switch the calling thread to their handle's device; a device_scope declared
 * first in each puts the caller's own context (whatever device, primary or not) back when the
 * entry point returns, so the caller's next launch goes where it went before. A thread that
 * had no current context keeps the handle's device (switching "back" would create a context
 * on device 0). Without the driver's entry points nothing is restored. */
struct device_scope {
    void *prev;
    device_scope();
    ~device_scope();
};

/* Forget the calling thread's last CUDA failure (at the start of an entry point); or set it to a
 * message of the backend's own; or what it is, and without one what status means. */
void ildl_cuda_clear_message(void);
void ildl_cuda_set_message(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
const char *ildl_cuda_status_message(int status);
/* A process-wide lock between the backend's graph captures and its calls that synchronise
 * the device implicitly or explicitly (cudaDeviceSynchronize, cudaFree): CUDA refuses those
 * while any stream is capturing, so handles used on different threads take turns there. */
void ildl_cuda_capture_lock(void);
void ildl_cuda_capture_unlock(void);
/* cudaDeviceSynchronize, never while another thread of the backend captures a graph. */
cudaError_t device_sync_locked(void);

/* What the solves need of one tile, packed in 16 bytes (one load), per position of fwd_seq and
 * bwd_seq; rebuilt after every factorization (offsets and counts change). a: the tile's offset in
 * val (bits 0-39), its stored entries (40-50), sparse (51), rows of the block it depends on
 * (52-57); dep: that block (row k forward, column j backward), dep0: its first row. */
struct __align__(16) solve_meta {
    long long a;
    int32_t dep, dep0;
};
#define SOLVE_META_OFF_BITS 40

/* What a sync-free sweep needs to start a work item, packed per ticket (one 32-byte load
 * instead of a chain of four dependent ones: the item, its row, the row's tile range, its
 * V_ii offset); rebuilt after every factorization (u0 moves). u0: V_ii's offset in val; q0:
 * the first of the row's tiles in fwd_seq/bwd_seq order; nq: their count; mc: rows of the
 * block | (chunk + 1) << 8, chunk = -1 for a whole row (sf_items). */
struct __align__(16) sf_rowrec {
    long long u0, q0;
    int32_t i, b0, nq, mc;
};

/* Device copies of the tile store arrays (same names and meaning as ildl_tiles). */
struct dev_tiles {
    int32_t n, nb;
    int64_t ntiles;
    const int32_t *bstart;
    const int64_t *row_ptr;
    const int32_t *row, *col;
    const int64_t *col_ptr, *col_tiles;
    const int64_t *col_diag; /* position of tile (i,i) in block column i (solves: tiles before it) */
    const int64_t *fwd_seq0, *bwd_seq0; /* the solves' tile orders as analysed (ildl_tiles) */
    /* ... as the solves read them: within each block row's range, the tiles the factorization
     * left without an entry moved behind the others (k_skip_empty, after every factorization;
     * other positions and split rows as analysed), and fwd_end[i] / bwd_end[i]: the end of
     * block row i's non-empty tiles, where the solves stop */
    int64_t *fwd_seq, *bwd_seq;
    int64_t *fwd_end, *bwd_end;
    solve_meta *fwd_meta, *bwd_meta;  /* [ntiles] the tiles of fwd_seq, bwd_seq, packed (solve_prepare.cu) */
    const int32_t *level_rows;
    const int64_t *a_ptr;
    const uint16_t *a_idx;
    double *a_val;
    const uint8_t *format;
    const int64_t *cap;
    const int64_t *tile_order;
    int64_t total_cap;
    int64_t *off, *nnz;
    double *val;
    float *val32;   /* precision single: the factor (val is NULL); mixed: a single-precision
                     * copy of val that the solves read; double: NULL */
    uint16_t *idx;
    int32_t *piv;
    double *d_diag, *d_off;
    int8_t *piv_type;
    /* sync-free solves, rows with many tiles split into work items (plan.cu, sf_split_plan):
     * items in ticket order, x = the row's position in level_rows, y = its chunk (or -1: the
     * whole row); per row, the first of its tiles' partial sums in scratch (-1: not split) */
    const int2 *sf_items_f, *sf_items_b;
    sf_rowrec *sf_rec_f, *sf_rec_b; /* [sf_nitems_*] the items' records (solve_meta_launch) */
    int32_t sf_nitems_f, sf_nitems_b;
    int32_t sf_chunk;       /* tiles per item of a split row */
    const int64_t *sf_scr_f, *sf_scr_b;
    double *sf_scratch;     /* LD partial sums per tile of the split rows (one direction at a time) */
    int *sf_count;          /* [nb] items of a split row finished in this sweep (the last resets it) */
    int *sf_ready;          /* [nb] forward: the epoch of the sweep whose split row's running sum is stored */
    /* The sync-free solves without staging tiles (solve_prepare.cu, solve_lanes_launch after each
     * factorization; NULL unless they are chosen): per position of fwd_seq (_f) and bwd_seq
     * (_b), a sparse tile's entries per output, LD counts (forward: per column; backward: per
     * row); forward, the sparse tiles' entries again, column by column (rows ascending within
     * a column), values in the solves' type (lane_val or lane_val32, as val / val32) and rows,
     * position q's from lane_off[q] (an exclusive sum of lane_size in fwd_seq order). */
    uint8_t *lane_cnt_f, *lane_cnt_b, *lane_row;
    /* backward, each stored sparse entry's column (idx & 31) at its stored position: one byte a
     * step where idx is two (the sweep is bound by its bytes: -6 to -7%) */
    uint8_t *lane_col;
    int64_t *lane_size, *lane_off;
    double *lane_val;
    float *lane_val32;
    int64_t lane_cap;       /* entries lane_val / lane_row hold: total_cap less the dense tiles' */
    /* With the lanes, V_ii's strict upper triangle packed row by row (vii_pos) in the solves'
     * type (vii_pk or vii_pk32, as lane_val / lane_val32), which the backward sweep reads: half
     * the bytes of the mi x mi tile (backward -8 to -14%). Row i's from vii_off[i] (a multiple of 16
     * entries: whole lines), set at setup; vii_cap entries in all. */
    const int64_t *vii_off;
    double *vii_pk;
    float *vii_pk32;
    int64_t vii_cap;
    void *lane_tmp;         /* the scan's scratch (host side only) */
    size_t lane_tmp_bytes;
    /* host side only: the sync-free sweeps' output vector kept in L2 as persisting lines, at most
     * l2_window bytes of it with hit ratio l2_ratio (0: no window; setup.cu, l2_window_setup) */
    size_t l2_window;
    float l2_ratio;
};

/* Launch kernel(args...) on stream s with an L2 access policy window over the n doubles at base
 * where the handle has one (T.l2_window, setup.cu's l2_window_setup: at most l2_window bytes,
 * hit ratio l2_ratio, hits persisting, misses streaming), plainly otherwise. The sync-free
 * sweeps window their output, SQMR's SpMV its q: values read long after they were written, by
 * when the factor streaming past would have evicted them. Errors as with <<<>>>: to
 * cudaGetLastError. */
template <typename... KArgs, typename... Args>
static void launch_l2_window(const dev_tiles &T, const void *base, int64_t n, void (*kernel)(KArgs...), dim3 grid,
                             dim3 block, size_t smem, cudaStream_t s, Args... args)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = at;
    if (T.l2_window) {
        size_t bytes = sizeof(double) * (size_t)n;
        at[0].id = cudaLaunchAttributeAccessPolicyWindow;
        at[0].val.accessPolicyWindow.base_ptr = const_cast<void *>(base);
        at[0].val.accessPolicyWindow.num_bytes = bytes < T.l2_window ? bytes : T.l2_window;
        at[0].val.accessPolicyWindow.hitRatio = T.l2_ratio;
        at[0].val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        at[0].val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        cfg.numAttrs = 1;
    }
    (void)cudaLaunchKernelEx(&cfg, kernel, args...);
}

/* The factor values a factorization of value type R writes: val (double) or val32 (float). */
template <typename R> __device__ __forceinline__ R *fac_val(const dev_tiles &T);
template <> __device__ __forceinline__ double *fac_val<double>(const dev_tiles &T) { return T.val; }
template <> __device__ __forceinline__ float *fac_val<float>(const dev_tiles &T) { return T.val32; }

/* Math on the value type R, spelled out per type so that a float stays a float (the CPU
 * reference's single build calls fabsf, fmaxf, copysignf, sqrtf: cpu/real.h). */
__device__ __forceinline__ double r_abs(double x) { return fabs(x); }
__device__ __forceinline__ float r_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double r_max(double x, double y) { return fmax(x, y); }
__device__ __forceinline__ float r_max(float x, float y) { return fmaxf(x, y); }
__device__ __forceinline__ double r_copysign(double x, double y) { return copysign(x, y); }
__device__ __forceinline__ float r_copysign(float x, float y) { return copysignf(x, y); }
__device__ __forceinline__ double r_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float r_sqrt(float x) { return sqrtf(x); }

/* Where V(l, c), c > l, of an mi-row block's V_ii is in its packed strict upper triangle:
 * vii_pos(l, mi) + c - l - 1 (row l's entries follow rows 0..l-1's). */
__host__ __device__ __forceinline__ int vii_pos(int l, int mi) { return l * mi - l * (l + 1) / 2; }

/* Entries a packed V_ii of an mi-row block takes: its strict upper triangle, rounded up to 16 so
 * that every row's copy starts a 128-byte line (in double). */
__host__ __device__ __forceinline__ int64_t vii_packed_size(int mi) { return ((int64_t)mi * (mi - 1) / 2 + 15) / 16 * 16; }

__device__ __forceinline__ int dev_bsize(const dev_tiles &T, int32_t b)
{
    return T.bstart[b + 1] - T.bstart[b];
}

#endif
