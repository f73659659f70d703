/* backend.cu -- the CUDA backend's host side: device selection, upload of the tile store,
 * the per-level launch sequence of the factorization and of the solves, the map to the
 * user's ordering, and SQMR with device-side operators. Every CUDA call is checked; failures
 * become ILDL_ERR_DEVICE / ILDL_ERR_OUT_OF_MEMORY with a message, never an abort. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <cub/block/block_reduce.cuh>
#include <string.h>
#include "cuda/context.cuh"
extern "C" {
#include "cuda/cuda_backend.h"
#include "analyse/tickets.h"
#include "core/util.h"
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

static pthread_mutex_t g_capture_lock = PTHREAD_MUTEX_INITIALIZER;
void ildl_cuda_capture_lock(void) { pthread_mutex_lock(&g_capture_lock); }
void ildl_cuda_capture_unlock(void) { pthread_mutex_unlock(&g_capture_lock); }

/* cudaDeviceSynchronize, never while another thread of the backend captures a graph. */
static cudaError_t device_sync_locked(void)
{
    ildl_cuda_capture_lock();
    cudaError_t e = cudaDeviceSynchronize();
    ildl_cuda_capture_unlock();
    return e;
}



/* Allocate count elements on the device (c->bytes counts them) and copy src there if given;
 * the time spent in each call kind adds to c->t_malloc / c->t_copy (ILDL_SETUP_PROFILE). */
template <typename Tp>
static cudaError_t upload(Tp **dst, const Tp *src, size_t count, ildl_cuda_ctx *c)
{
    size_t b = sizeof(Tp) * (count ? count : 1);
    double t0 = ildl_wtime();
    cudaError_t e = cudaMalloc((void **)dst, b);
    double t1 = ildl_wtime();
    c->t_malloc += t1 - t0;
    if (e != cudaSuccess) return e;
    c->bytes += b;
    if (src && count) {
        e = cudaMemcpy(*dst, src, sizeof(Tp) * count, cudaMemcpyHostToDevice);
        c->t_copy += ildl_wtime() - t1;
    }
    return e;
}

template <typename Tp>
static cudaError_t alloc(Tp **dst, size_t count, ildl_cuda_ctx *c)
{
    return upload<Tp>(dst, NULL, count, c);
}

/* alloc, then zero the bytes (on the legacy stream; ildl_cuda_factor synchronizes the device
 * before its first kernel): the solves' flags and counters, and the factor's storage, of which
 * the factorization writes only each tile's stored entries (a download of the unused capacity
 * must not copy another handle's old data, nor differ from the CPU reference's zeros). */
template <typename Tp>
static cudaError_t alloc_zeroed(Tp **dst, size_t count, ildl_cuda_ctx *c)
{
    cudaError_t e = alloc<Tp>(dst, count, c);
    if (e == cudaSuccess) e = cudaMemset(*dst, 0, sizeof(Tp) * (count ? count : 1));
    return e;
}

static void lanes_free(ildl_cuda_ctx *c, int values_only);

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

extern "C" void ildl_cuda_destroy(ildl_cuda_ctx *c)
{
    if (!c) return;
    device_scope scope;
    cudaSetDevice(c->device);
    ildl_cuda_sqmr_free(c);
    ildl_cuda_capture_lock(); /* cudaFree synchronises the device */
    lanes_free(c, 0);
    for (int k = 0; k < 2; k++)
        if (c->pinned[k]) cudaHostUnregister(c->pinned[k]);
    void *ptrs[] = {(void *)c->T.bstart, (void *)c->T.row_ptr, (void *)c->T.row, (void *)c->T.col,
                    (void *)c->T.col_ptr, (void *)c->T.col_tiles, (void *)c->T.col_diag, (void *)c->T.level_rows,
                    (void *)c->T.fwd_seq0, (void *)c->T.bwd_seq0, (void *)c->T.fwd_seq, (void *)c->T.bwd_seq,
                    (void *)c->T.fwd_end, (void *)c->T.bwd_end, (void *)c->T.fwd_meta, (void *)c->T.bwd_meta,
                    (void *)c->T.a_ptr, (void *)c->T.a_idx, (void *)c->T.a_val, (void *)c->T.format,
                    (void *)c->T.cap, (void *)c->T.tile_order, (void *)c->T.off, (void *)c->T.nnz,
                    (void *)c->T.val, (void *)c->T.idx, (void *)c->T.piv, (void *)c->T.d_diag,
                    (void *)c->T.d_off, (void *)c->T.piv_type, (void *)c->d_rowbase,
                    (void *)c->d_inflight, (void *)c->d_need, (void *)c->d_res, (void *)c->d_rownorm,
                    (void *)c->d_state, (void *)c->d_pair_hint, (void *)c->d_q, (void *)c->d_qs,
                    (void *)c->d_qinv, (void *)c->d_w, (void *)c->d_r, (void *)c->d_z, (void *)c->d_arow,
                    (void *)c->d_acol, (void *)c->d_aval, (void *)c->d_done_f,
                    (void *)c->d_done_b, (void *)c->d_epoch, (void *)c->d_tickets, (void *)c->T.val32, (void *)c->d_tile_rr,
                    (void *)c->d_tile_s, (void *)c->d_sweep, (void *)c->d_slot_size, (void *)c->d_perm, (void *)c->d_scale,
                    (void *)c->d_totals, (void *)c->T.sf_items_f, (void *)c->T.sf_items_b, (void *)c->T.sf_rec_f, (void *)c->T.sf_rec_b,
                    (void *)c->T.sf_scr_f, (void *)c->T.sf_scr_b, (void *)c->T.sf_scratch,
                    (void *)c->T.sf_count, (void *)c->T.sf_ready, (void *)c->T.vii_off};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++)
        if (ptrs[k]) cudaFree(ptrs[k]);
    for (int k = 0; k < 4; k++)
        if (c->ev[k]) cudaEventDestroy(c->ev[k]);
    if (c->ev_fork) cudaEventDestroy(c->ev_fork);
    if (c->ev_join) cudaEventDestroy(c->ev_join);
    for (int k = 0; k < 2; k++)
        if (c->fstream[k]) cudaStreamDestroy(c->fstream[k]);
    free(c->chunk_r0);
    free(c->chunk_n);
    free(c->chunk_slots);
    free(c->chunk_last);
    free(c->chunk_toff);
    free(c->level_ptr);
#ifdef ILDL_SOLVE_TRACE
    if (c->d_trace) cudaFree(c->d_trace);
#endif
    ildl_cuda_capture_unlock();
    free(c);
}

/* Chunks of consecutive rows of a level whose tiles fit the in-flight budget (the same rule
 * as the CPU reference; chunking changes neither grants nor offsets). */
static int plan_chunks(ildl_cuda_ctx *c, const ildl_tiles *T, int32_t *rowbase, int32_t *tile_rr,
                       int32_t *tile_s)
{
    int64_t longest = 1, ntl_all = 0;
    for (int32_t i = 0; i < T->nb; i++) {
        int64_t len = T->row_ptr[i + 1] - T->row_ptr[i];
        if (len > longest) longest = len;
    }
    int64_t budget = T->ntiles < 16384 ? T->ntiles : 16384;
    if (budget < longest) budget = longest;
    c->budget = budget;
    c->chunk_r0 = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->nb + 1));
    c->chunk_n = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->nb + 1));
    c->chunk_last = (int8_t *)malloc((size_t)T->nb + 1);
    c->chunk_toff = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->nb + 2));
    c->chunk_slots = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->nb + 1));
    if (!c->chunk_r0 || !c->chunk_n || !c->chunk_last || !c->chunk_toff || !c->chunk_slots)
        return ILDL_ERR_OUT_OF_MEMORY;
    c->nchunks = 0;
    for (int32_t lev = 0; lev < T->nlevels; lev++) {
        int32_t r0 = T->level_ptr[lev], rend = T->level_ptr[lev + 1];
        while (r0 < rend) {
            int32_t nrows = 0;
            int64_t ntl = 0;
            c->chunk_toff[c->nchunks] = ntl_all;
            while (r0 + nrows < rend) {
                int32_t i = T->level_rows[r0 + nrows];
                int64_t len = T->row_ptr[i + 1] - T->row_ptr[i];
                if (nrows > 0 && ntl + len > budget) break;
                rowbase[r0 + nrows] = (int32_t)ntl;
                for (int64_t s = 1; s < len; s++) {
                    tile_rr[ntl_all] = nrows;
                    tile_s[ntl_all] = (int32_t)s;
                    ntl_all++;
                }
                nrows++;
                ntl += len;
            }
            c->chunk_r0[c->nchunks] = r0;
            c->chunk_n[c->nchunks] = nrows;
            c->chunk_slots[c->nchunks] = ntl;
            c->chunk_last[c->nchunks] = (r0 + nrows == rend);
            c->nchunks++;
            r0 += nrows;
        }
    }
    c->chunk_toff[c->nchunks] = ntl_all;
    /* phase B pairs a chunk's slots (rows in level order, each row's tiles in order) with the
     * storage order through tile_order and d_slot_size: the two must be the same sequence */
    int64_t g = 0;
    for (int32_t r = 0; r < T->nb; r++) {
        int32_t i = T->level_rows[r];
        for (int64_t t = T->row_ptr[i]; t < T->row_ptr[i + 1]; t++, g++)
            if (T->tile_order[g] != t) {
                snprintf(g_cuda_msg, sizeof g_cuda_msg, "storage order differs from the chunks' slot order at %lld",
                         (long long)g);
                return ILDL_ERR_INTERNAL;
            }
    }
    return ILDL_SUCCESS;
}

/* Warps per block of the forward and backward solve kernels: ILDL_SOLVE_WARPS="F,B" or "W"
 * (1, 2, 4 or 8 each; anything else: the default) for experiments, else the defaults, the
 * fastest measured at n = 1M: 2 and 2 for the staged kernels (perf-notes §13, §31), one warp
 * per block row for the kernels without staging tiles (ns; §52). */
static void solve_warps_default(int ns, int *wf, int *wb)
{
    const char *env = getenv("ILDL_SOLVE_WARPS");
    int df = ns ? ILDL_SOLVE_WARPS_NS : ILDL_SOLVE_WARPS_FORWARD, db = ns ? ILDL_SOLVE_WARPS_NS : ILDL_SOLVE_WARPS_BACKWARD;
    int f = df, b = db;
    if (env && sscanf(env, "%d,%d", &f, &b) == 1) b = f; /* one count: both directions */
    *wf = solve_warps_valid(f) ? f : df;
    *wb = solve_warps_valid(b) ? b : db;
}

/* Blocks of the persistent sync-free solve kernels: as many as can be resident (the time
 * per iteration falls in proportion to the rows in flight: perf-notes §13), fewer when there
 * are fewer block rows; ILDL_SF_BLOCKS lowers the count for experiments. */
static int syncfree_blocks(const ildl_cuda_ctx *c, int per_sm)
{
    const char *env = getenv("ILDL_SF_BLOCKS");
    int64_t cap = (int64_t)(per_sm < 1 ? 1 : per_sm) * c->sm_count;
    int64_t b = env ? atol(env) : cap;
    if (b > cap) b = cap;
    if (b > c->nb) b = c->nb;
    return b < 1 ? 1 : (int)b;
}

/* The sync-free sweeps run without staging tiles (SOLVE_*_NS) when the levels average at least
 * this many block rows. Those kernels sum a sparse tile by lanes (each lane its own output's
 * entries, over counts and a column-by-column copy built after each factorization: device
 * memory for ~9 bytes per sparse entry) and read dense tiles from global memory; a block needs
 * almost no shared memory, so one warp per block row and 32 rows in flight per SM. Wide
 * levels gain (control70, 1525 block rows per level: -12% per SQMR iteration; the 1M Stokes
 * problem, 672: sweeps -10% / -33%), narrow ones lose: their critical path pays for the
 * values loaded after each dependency's wait (the shared stokes64, 8 rows per level: +30%;
 * aug3dcqp, 46: +16%): perf-notes §51, §52. ILDL_SF_NOSTAGE=0/1 overrides (experiments). */
#define SF_NOSTAGE_MIN_ROWS_PER_LEVEL 256

static int sf_nostage_default(const ildl_cuda_ctx *c)
{
    if (c->lanes_failed || c->staged_only) return 0; /* they need their lanes; the user's choice */
    const char *env = getenv("ILDL_SF_NOSTAGE");
    if (env) return atoi(env) != 0;
    return c->nlevels > 0 && (int64_t)c->nb >= (int64_t)SF_NOSTAGE_MIN_ROWS_PER_LEVEL * c->nlevels;
}

/* The forward sweep reads V_ii from global memory instead of staging it (SOLVE_FORWARD_SYNCFREE_VG)
 * when the levels are wide: at least this many block rows per level on average. Less shared
 * memory per block, so more rows in flight, for a memory latency more at the end of each row
 * (perf-notes §41). ILDL_SF_VGLOBAL=0/1 overrides (experiments). */
#define SF_VGLOBAL_MIN_ROWS_PER_LEVEL 256

static int sf_vglobal_default(const ildl_cuda_ctx *c)
{
    const char *env = getenv("ILDL_SF_VGLOBAL");
    if (env) return atoi(env) != 0;
    /* the kernels without staging tiles have the shared memory for V_ii: staged, it saves the
     * end of each row a memory latency (forward -4 to -7%, perf-notes §51) */
    if (c->sf_nostage) return 0;
    return c->nlevels > 0 && (int64_t)c->nb >= (int64_t)SF_VGLOBAL_MIN_ROWS_PER_LEVEL * c->nlevels;
}

/* Free the lanes of the solves without staging tiles (all of them, or only the values in
 * double once the solves read float: values_only). */
static void lanes_free(ildl_cuda_ctx *c, int values_only)
{
    dev_tiles &D = c->T;
    void *v[] = {D.lane_val, D.vii_pk, D.lane_val32, D.vii_pk32, D.lane_cnt_f, D.lane_cnt_b, D.lane_row,
                 D.lane_size, D.lane_off, D.lane_tmp, D.lane_col};
    size_t cap = D.lane_cap ? (size_t)D.lane_cap : 1, nt = D.ntiles ? (size_t)D.ntiles : 1; /* as upload counts */
    size_t vc = D.vii_cap ? (size_t)D.vii_cap : 1;
    size_t bytes[] = {sizeof(double) * cap, sizeof(double) * vc, sizeof(float) * cap, sizeof(float) * vc,
                      nt * LD, nt * LD, cap, sizeof(int64_t) * nt, sizeof(int64_t) * nt,
                      D.lane_tmp_bytes ? D.lane_tmp_bytes : 1, D.total_cap ? (size_t)D.total_cap : 1};
    for (int k = 0; k < (values_only ? 2 : 11); k++)
        if (v[k]) {
            cudaFree(v[k]);
            c->bytes -= bytes[k];
        }
    D.lane_val = NULL;
    D.vii_pk = NULL;
    if (values_only) return;
    D.lane_val32 = NULL;
    D.vii_pk32 = NULL;
    D.lane_cnt_f = D.lane_cnt_b = D.lane_row = D.lane_col = NULL;
    D.lane_size = D.lane_off = NULL;
    D.lane_tmp = NULL;
}

/* The lanes of the solves without staging tiles (dev_tiles.lane_*), allocated the first time
 * those kernels are chosen, and their values in the solves' type (float once T.val32 exists).
 * About 9 bytes per entry of the sparse off-diagonal tiles' capacity (5 in float), 1 per entry
 * of the whole capacity (lane_col), 80 per tile, and the packed V_ii (vii_pk: ~4 bytes per
 * entry of a diagonal tile, 2 in float).
 * Device memory exhausted: freed again, and the staged kernels are used (lanes_failed). */
static cudaError_t lanes_alloc(ildl_cuda_ctx *c)
{
    dev_tiles &D = c->T;
    cudaError_t e = cudaSuccess;
    if (!D.lane_cnt_f) {
        D.lane_tmp_bytes = solve_lanes_tmp_bytes(D.ntiles);
        e = alloc(&D.lane_cnt_f, (size_t)D.ntiles * LD, c);
        if (e == cudaSuccess) e = alloc(&D.lane_cnt_b, (size_t)D.ntiles * LD, c);
        if (e == cudaSuccess) e = alloc(&D.lane_row, (size_t)D.lane_cap, c);
        if (e == cudaSuccess) e = alloc(&D.lane_size, (size_t)D.ntiles, c);
        if (e == cudaSuccess) e = alloc(&D.lane_off, (size_t)D.ntiles, c);
        if (e == cudaSuccess) e = alloc((char **)&D.lane_tmp, D.lane_tmp_bytes, c);
        if (e == cudaSuccess) e = alloc(&D.lane_col, D.total_cap ? (size_t)D.total_cap : 1, c);
    }
    if (e == cudaSuccess && D.val32 && !D.lane_val32) {
        e = alloc(&D.lane_val32, (size_t)D.lane_cap, c);
        if (e == cudaSuccess) e = alloc(&D.vii_pk32, (size_t)D.vii_cap, c);
        if (e == cudaSuccess) lanes_free(c, 1);
    }
    if (e == cudaSuccess && !D.val32 && !D.lane_val) {
        e = alloc(&D.lane_val, (size_t)D.lane_cap, c);
        if (e == cudaSuccess) e = alloc(&D.vii_pk, (size_t)D.vii_cap, c);
    }
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); /* not sticky: clear it */
        lanes_free(c, 0);
        c->lanes_failed = 1;
        e = cudaSuccess;
    }
    return e;
}

/* Configure the solve kernels for wf (forward) and wb (backward) warps per block (0: the
 * defaults for the kernels chosen) and size the sync-free grids. */
static int set_solve_warps(ildl_cuda_ctx *c, int wf, int wb)
{
    int status = ILDL_SUCCESS, fwd = 0, bwd = 0;
    c->sf_nostage = sf_nostage_default(c);
    if (c->sf_nostage) {
        CU(lanes_alloc(c));
        c->sf_nostage = sf_nostage_default(c); /* 0 if they did not fit */
    }
    if (wf == 0 || wb == 0) {
        int f, b;
        solve_warps_default(c->sf_nostage, &f, &b);
        if (wf == 0) wf = f;
        if (wb == 0) wb = b;
    }
    c->sf_vglobal = sf_vglobal_default(c);
    CU(solve_configure(wf, wb, c->T.val32 != NULL, c->sf_vglobal != 0, c->sf_nostage != 0, &fwd, &bwd));
    {
        const char *env = getenv("ILDL_SF_PROTOCOL"); /* experiments: 0 fences, 1 acquire/release, 2 values */
        c->sf_protocol = env ? atoi(env) : ILDL_SF_PROTOCOL;
        c->sf_protocol = c->sf_protocol == 2 ? 2 : c->sf_protocol ? 1 : 0;
        CU(solve_set_protocol(c->sf_protocol));
        env = getenv("ILDL_SMALL_SPARSE"); /* experiments: 0 stages every tile densely */
        CU(solve_set_small_sparse(env ? atoi(env) : 1));
        env = getenv("ILDL_SF_BACKOFF"); /* experiments: the longest pause between polls, ns */
        CU(solve_set_backoff(env && atoi(env) > 0 ? (unsigned)atoi(env) : ILDL_SF_BACKOFF));
        env = getenv("ILDL_VII_L1"); /* experiments: tiles before a row's end that V_ii is asked of L1 */
        CU(solve_set_vii_l1(env ? atoi(env) : ILDL_VII_L1_AHEAD));
    }
    /* the settings are written through the legacy stream; the solves run on non-blocking ones */
    CU(device_sync_locked());
    c->solve_warps_f = wf;
    c->solve_warps_b = wb;
    c->sf_blocks_f = syncfree_blocks(c, fwd);
    c->sf_blocks_b = syncfree_blocks(c, bwd);
cleanup:
    return status;
}

/* Rows with more than ILDL_SF_SPLIT tiles are split into work items of at most
 * ILDL_SF_CHUNK tiles in the sync-free solves (ILDL_SF_SPLIT=N: rows with more than N tiles in
 * both sweeps, chunks of min(N, ILDL_SF_CHUNK)). A row's tiles are otherwise summed by one
 * block one after the other: a KKT matrix's dense row makes a block row with a thousand tiles,
 * and its sweep waits for that block alone. Splitting costs the row a pass through global
 * memory (the items' partial sums, summed in tile order by the last of them to finish), so
 * only long rows pay for it (at 32 tiles the 1M Stokes sweeps were 1.5-2.6x slower, perf-notes
 * §38). Forward, the threshold comes down to ILDL_SF_SPLIT_MIN tiles while at most
 * ILDL_SF_FEW_PER_SM rows per SM are longer than it (ildl_sweep_split_threshold): the last
 * levels' few longest rows otherwise finish the sweep one warp each while the rest of the
 * machine idles; where many rows are long the machine is busy with them anyway, and the items
 * only cost. With the forward split row's last item going on from the others' running sum
 * (row_chunk), helmholtz101 (121 rows of 65-94 tiles split) gained 1.5% per iteration, stokes64
 * (128 rows of 100-133) and control70 (none) stayed within 0.3% (perf-notes §72). */
#define ILDL_SF_SPLIT 128
#define ILDL_SF_CHUNK 32
#define ILDL_SF_SPLIT_MIN 64
#define ILDL_SF_FEW_PER_SM 1

/* The sync-free solves' work items in ticket order, per direction (dev_tiles.sf_*): one per
 * row, or one per chunk of sf_chunk tiles of a row with more; the split rows' scratch for the
 * tiles' partial sums (one direction at a time) and their item counters. col_diag: host copy. */
static cudaError_t sf_split_plan(ildl_cuda_ctx *c, const ildl_tiles *T, const int64_t *col_diag)
{
    dev_tiles &D = c->T;
    const char *env = getenv("ILDL_SF_SPLIT");
    const int set = env && atoi(env) > 0; /* one threshold for both sweeps */
    int split = set ? atoi(env) : ILDL_SF_SPLIT;
    int split_f = set ? split /* forward: else lowered while the rows above it are few */
                      : ildl_sweep_split_threshold(T, ILDL_SWEEP_FORWARD, (int64_t)ILDL_SF_FEW_PER_SM * c->sm_count,
                                                   ILDL_SF_SPLIT_MIN, split);
    int chunk = split_f < ILDL_SF_CHUNK ? split_f : ILDL_SF_CHUNK; /* split_f <= split */
    env = getenv("ILDL_SF_ORDER"); /* ildl_sweep_ticket_order: 0 level order, else chains */
    int chain = env ? atoi(env) != 0 : 1;
    int32_t nb = T->nb;
    int64_t cap = 2 * ((int64_t)nb + T->ntiles / chunk + 2), tot[2] = {0, 0}; /* both directions */
    int2 *items = (int2 *)malloc(sizeof(int2) * (size_t)cap);
    int64_t *scr = (int64_t *)malloc(sizeof(int64_t) * 2 * ((size_t)nb + 1));
    int32_t *seq = (int32_t *)malloc(sizeof(int32_t) * 2 * ((size_t)nb + 1)); /* forward, backward */
    int32_t nitems[2] = {0, 0}, nsplit[2] = {0, 0};
    int64_t longest[2] = {0, 0};
    cudaError_t e = cudaSuccess;
    if (!items || !scr || !seq || ildl_sweep_ticket_orders(T, chain, seq, seq + nb + 1) != ILDL_SUCCESS) {
        e = cudaErrorMemoryAllocation;
        goto done;
    }
    for (int dir = 0; dir < 2; dir++) {
        int2 *it = items + (dir ? nitems[0] : 0);
        int64_t *so = scr + (size_t)dir * (nb + 1);
        const int32_t *order = seq + (size_t)dir * (nb + 1);
        int32_t k = 0;
        for (int32_t t = 0; t < nb; t++) {
            int32_t pos = order[t], i = T->level_rows[pos];
            int64_t ntile = dir ? T->row_ptr[i + 1] - T->row_ptr[i] - 1 : col_diag[i] - T->col_ptr[i];
            if (ntile > longest[dir]) longest[dir] = ntile;
            if (ntile <= (dir ? split : split_f)) {
                so[i] = -1;
                it[k++] = make_int2(pos, -1);
                continue;
            }
            so[i] = tot[dir];
            tot[dir] += ntile;
            nsplit[dir]++;
            for (int64_t q = 0; q < ntile; q += chunk) it[k++] = make_int2(pos, (int)(q / chunk));
        }
        nitems[dir] = k;
    }
    if (ildl_profiling())
        fprintf(stderr, "ildl profile: cuda: solve rows split: forward %d of > %d tiles (longest %lld), "
                "backward %d of > %d (longest %lld); tickets in %s order\n", (int)nsplit[0], split_f,
                (long long)longest[0], (int)nsplit[1], split, (long long)longest[1], chain ? "chain" : "level");
    D.sf_chunk = chunk;
    D.sf_nitems_f = nitems[0];
    D.sf_nitems_b = nitems[1];
    e = upload((int2 **)&D.sf_items_f, items, (size_t)nitems[0], c);
    if (e == cudaSuccess) e = upload((int2 **)&D.sf_items_b, items + nitems[0], (size_t)nitems[1], c);
    if (e == cudaSuccess) e = alloc(&D.sf_rec_f, (size_t)nitems[0], c); /* filled by solve_meta_launch */
    if (e == cudaSuccess) e = alloc(&D.sf_rec_b, (size_t)nitems[1], c);
    if (e == cudaSuccess) e = upload((int64_t **)&D.sf_scr_f, scr, (size_t)nb, c);
    if (e == cudaSuccess) e = upload((int64_t **)&D.sf_scr_b, scr + nb + 1, (size_t)nb, c);
    if (e == cudaSuccess)
        e = alloc(&D.sf_scratch, (size_t)(tot[0] > tot[1] ? tot[0] : tot[1]) * LD, c);
    if (e == cudaSuccess) e = alloc_zeroed(&D.sf_count, (size_t)nb, c);
    if (e == cudaSuccess) e = alloc_zeroed(&D.sf_ready, (size_t)nb, c);
done:
    free(items);
    free(scr);
    free(seq);
    return e;
}

/* The sync-free sweeps' output vector as persisting lines in L2 (common.cuh, launch_l2_window): a
 * tile reads its dependency's values (256 bytes) long after they were written, by when the factor
 * streaming through L2 has pushed them out to memory, so that a sweep read about as many bytes of
 * x again as it wrote (perf-notes §71: per iteration -1.5 to -2.6% at n >= 1M). Raises the
 * device's persisting L2 size (cudaLimitPersistingL2CacheSize, a setting of the whole device in
 * this process) to the window's bytes if it is smaller, at most the device's maximum; never
 * lowers it. on = 0 (ildl_options.l2_persist OFF) or ILDL_L2_PERSIST=0 (experiments) leave the limit
 * alone and launch without the window. */
static void l2_window_setup(const cudaDeviceProp *prop, int32_t n, int on, dev_tiles *D)
{
    const char *env = getenv("ILDL_L2_PERSIST");
    size_t bytes = sizeof(double) * (size_t)n, win = bytes, lim, cur = 0;
    D->l2_window = 0;
    D->l2_ratio = 0.0f;
    if (!on || (env && atoi(env) == 0) || prop->persistingL2CacheMaxSize <= 0 || prop->accessPolicyMaxWindowSize <= 0 ||
        bytes == 0)
        return;
    if (win > (size_t)prop->accessPolicyMaxWindowSize) win = (size_t)prop->accessPolicyMaxWindowSize;
    lim = win < (size_t)prop->persistingL2CacheMaxSize ? win : (size_t)prop->persistingL2CacheMaxSize;
    if (cudaDeviceGetLimit(&cur, cudaLimitPersistingL2CacheSize) != cudaSuccess ||
        (cur < lim && cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, lim) != cudaSuccess)) {
        (void)cudaGetLastError(); /* not sticky: run without the window */
        return;
    }
    if (cur > lim) lim = cur < win ? cur : win;
    D->l2_window = win;
    D->l2_ratio = (float)((double)lim / (double)win);
}

extern "C" int ildl_cuda_create(const ildl_tiles *T, const ildl_csr *A, int device_id, int solve_kernels,
                                int l2_persist, ildl_cuda_ctx **out, char *msg, size_t msglen)
{
    device_scope scope;
    int status = ILDL_SUCCESS;
    int32_t *rowbase = NULL, *tile_rr = NULL, *tile_s = NULL;
    ildl_cuda_ctx *c = NULL;
    int ndev = ildl_cuda_device_count();
    *out = NULL;
    g_cuda_msg[0] = 0;
    if (ndev <= 0) {
        ildl_msg(msg, msglen, "no usable CUDA device");
        return ILDL_ERR_NO_DEVICE;
    }
    if (device_id < 0 || device_id >= ndev) {
        ildl_msg(msg, msglen, "device_id %d out of range (%d devices)", device_id, ndev);
        return ILDL_ERR_INVALID_OPTION;
    }
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    c = (ildl_cuda_ctx *)calloc(1, sizeof *c);
    rowbase = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->nb + 1));
    tile_rr = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->ntiles + 1));
    tile_s = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->ntiles + 1));
    if (!c || !rowbase || !tile_rr || !tile_s) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
    c->device = device_id;
    c->staged_only = solve_kernels == ILDL_SOLVE_KERNELS_STAGED;
    CU(cudaSetDevice(device_id));
    {
        cudaDeviceProp prop;
        CU(cudaGetDeviceProperties(&prop, device_id));
        snprintf(c->name, sizeof c->name, "%s", prop.name);
        c->sm_count = prop.multiProcessorCount;
        l2_window_setup(&prop, T->n, l2_persist != ILDL_L2_PERSIST_OFF, &c->T);
    }
    ildl_profile_lap(&tp, "cuda: device and its properties");
    status = plan_chunks(c, T, rowbase, tile_rr, tile_s);
    if (status) goto cleanup;
    {
        ildl_cuda_ctx *B = c; /* upload/alloc count bytes and time in the context */
        dev_tiles &D = c->T;
        D.n = T->n;
        D.nb = T->nb;
        D.ntiles = T->ntiles;
        D.total_cap = T->total_cap;
        int64_t na = T->a_ptr[T->ntiles];
        CU(upload((int32_t **)&D.bstart, T->bstart, (size_t)T->nb + 1, B));
        CU(upload((int64_t **)&D.row_ptr, T->row_ptr, (size_t)T->nb + 1, B));
        CU(upload((int32_t **)&D.row, T->row, (size_t)T->ntiles, B));
        CU(upload((int32_t **)&D.col, T->col, (size_t)T->ntiles, B));
        CU(upload((int64_t **)&D.col_ptr, T->col_ptr, (size_t)T->nb + 1, B));
        CU(upload((int64_t **)&D.col_tiles, T->col_tiles, (size_t)T->ntiles, B));
        CU(upload((int64_t **)&D.fwd_seq0, T->fwd_seq, (size_t)T->ntiles, B));
        CU(upload((int64_t **)&D.bwd_seq0, T->bwd_seq, (size_t)T->ntiles, B));
        CU(upload(&D.fwd_seq, T->fwd_seq, (size_t)T->ntiles, B)); /* k_skip_empty rewrites row ranges */
        CU(upload(&D.bwd_seq, T->bwd_seq, (size_t)T->ntiles, B));
        CU(alloc(&D.fwd_end, (size_t)T->nb, B));
        CU(alloc(&D.bwd_end, (size_t)T->nb, B));
        CU(alloc(&D.fwd_meta, (size_t)T->ntiles, B));
        CU(alloc(&D.bwd_meta, (size_t)T->ntiles, B));
        if (T->total_cap >= (1LL << SOLVE_META_OFF_BITS)) {
            snprintf(g_cuda_msg, sizeof g_cuda_msg, "factor capacity %lld entries exceeds the CUDA backend's 2^%d",
                     (long long)T->total_cap, SOLVE_META_OFF_BITS);
            status = ILDL_ERR_NOT_SUPPORTED;
            goto cleanup;
        }
        {
            int64_t *cd = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->nb + 1));
            if (!cd) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
            for (int32_t i = 0; i < T->nb; i++) cd[i] = ildl_tiles_col_diag(T, i);
            cudaError_t e = upload((int64_t **)&D.col_diag, cd, (size_t)T->nb, B);
            if (e == cudaSuccess) e = sf_split_plan(c, T, cd);
            free(cd);
            CU(e);
        }
        {
            /* the leftover scan's static view of every storage slot (factor.cu, slot_get) */
            int64_t *ss = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->ntiles + 1));
            if (!ss) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
            for (int64_t g = 0; g < T->ntiles; g++) {
                int64_t t = T->tile_order[g];
                int32_t i = T->row[t];
                int sparse = t != T->row_ptr[i] && T->format[t] == ILDL_TILE_SPARSE;
                ss[g] = sparse ? -T->cap[t] - 1
                               : (int64_t)ildl_tiles_block_size(T, i) * ildl_tiles_block_size(T, T->col[t]);
            }
            cudaError_t e = upload(&c->d_slot_size, ss, (size_t)T->ntiles, B);
            free(ss);
            CU(e);
        }
        CU(upload((int32_t **)&D.level_rows, T->level_rows, (size_t)T->nb, B));
        CU(upload((int64_t **)&D.a_ptr, T->a_ptr, (size_t)T->ntiles + 1, B));
        CU(upload((uint16_t **)&D.a_idx, T->a_idx, (size_t)na, B));
        CU(alloc(&D.a_val, (size_t)na, B));
        CU(upload((uint8_t **)&D.format, T->format, (size_t)T->ntiles, B));
        CU(upload((int64_t **)&D.cap, T->cap, (size_t)T->ntiles, B));
        CU(upload((int64_t **)&D.tile_order, T->tile_order, (size_t)T->ntiles, B));
        CU(alloc(&D.off, (size_t)T->ntiles, B));
        CU(alloc(&D.nnz, (size_t)T->ntiles, B));
        if (T->val32) {
            /* precision single: the factorization computes in float and writes val32 only (the
             * double factor is never allocated); the solves read it in double arithmetic */
            CU(alloc_zeroed(&D.val32, (size_t)T->total_cap, B));
            c->single = 1;
        } else {
            CU(alloc_zeroed(&D.val, (size_t)T->total_cap, B));
        }
        CU(alloc_zeroed(&D.idx, (size_t)T->total_cap, B));
        CU(alloc(&D.piv, (size_t)T->n, B));
        CU(alloc(&D.d_diag, (size_t)T->n, B));
        CU(alloc(&D.d_off, (size_t)T->n, B));
        CU(alloc(&D.piv_type, (size_t)T->n, B));
        c->d_level_rows = (int32_t *)D.level_rows;
        CU(upload(&c->d_rowbase, rowbase, (size_t)T->nb, B));
        CU(upload(&c->d_tile_rr, tile_rr, (size_t)c->chunk_toff[c->nchunks], B));
        CU(upload(&c->d_tile_s, tile_s, (size_t)c->chunk_toff[c->nchunks], B));
        /* the in-flight tiles and row norms hold the factorization's value type: float in
         * precision single, so half as many doubles' worth */
        size_t vals = (size_t)c->budget * TILE, norms = (size_t)c->budget * LD;
        if (c->single) {
            vals = (vals + 1) / 2;
            norms = (norms + 1) / 2;
        }
        CU(alloc(&c->d_inflight, vals, B));
        CU(alloc(&c->d_need, (size_t)c->budget, B));
        CU(alloc(&c->d_res, (size_t)c->budget, B));
        CU(alloc(&c->d_rownorm, norms, B));
        CU(alloc(&c->d_state, 1, B));
        CU(alloc_zeroed(&c->d_done_f, (size_t)T->nb, B));
        CU(alloc_zeroed(&c->d_done_b, (size_t)T->nb, B));
        CU(alloc(&c->d_sweep, (size_t)T->n, B));
        CU(alloc_zeroed(&c->d_epoch, 1, B));
        CU(alloc_zeroed(&c->d_tickets, 3, B));
        c->d_skip = c->d_tickets + 2; /* never written: the solves never skip */
        c->nlevels = T->nlevels;
        c->level_ptr = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T->nlevels + 1));
        if (!c->level_ptr) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
        memcpy(c->level_ptr, T->level_ptr, sizeof(int32_t) * ((size_t)T->nlevels + 1));
        c->nb = T->nb;
        {
            const char *env = getenv("ILDL_SKIP_EMPTY"); /* experiments: 0 keeps every tile */
            c->skip_empty = env ? atoi(env) != 0 : 1;
        }
        CU(factor_configure());
        for (int k = 0; k < 2; k++) CU(cudaStreamCreateWithFlags(&c->fstream[k], cudaStreamNonBlocking));
        CU(cudaEventCreateWithFlags(&c->ev_fork, cudaEventDisableTiming));
        CU(cudaEventCreateWithFlags(&c->ev_join, cudaEventDisableTiming));
        if (getenv("ILDL_CUDA_PROFILE")) {
            for (int k = 0; k < 4; k++) CU(cudaEventCreate(&c->ev[k]));
            c->prof_solve = 1;
#ifdef ILDL_SOLVE_TRACE
            if (getenv("ILDL_SOLVE_TRACE")) {
                CU(alloc(&c->d_trace, (size_t)20 * T->nb, B));
                CU(solve_set_trace(c->d_trace));
            }
#endif
        }
        {
            /* where each row's packed V_ii starts in vii_pk (lanes_alloc allocates it) */
            int64_t *vo = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T->nb + 1));
            if (!vo) { status = ILDL_ERR_OUT_OF_MEMORY; goto cleanup; }
            int64_t at = 0;
            for (int32_t i = 0; i < T->nb; i++) {
                vo[i] = at;
                at += vii_packed_size(ildl_tiles_block_size(T, i));
            }
            vo[T->nb] = at;
            D.vii_cap = at;
            cudaError_t e = upload((int64_t **)&D.vii_off, vo, (size_t)T->nb + 1, B);
            free(vo);
            CU(e);
        }
        D.lane_cap = T->total_cap; /* the lanes hold the sparse tiles' entries (lanes_alloc) */
        for (int64_t t = 0; t < T->ntiles; t++)
            if (T->format[t] != ILDL_TILE_SPARSE) D.lane_cap -= T->cap[t];
        status = set_solve_warps(c, 0, 0); /* the default warps for the kernels chosen */
        if (status) goto cleanup;
        c->n = T->n;
        CU(alloc(&c->d_q, (size_t)T->n, B));
        CU(alloc(&c->d_qs, (size_t)T->n, B));
        CU(alloc(&c->d_qinv, (size_t)T->n, B));
        CU(alloc(&c->d_perm, (size_t)T->n, B));
        CU(alloc(&c->d_scale, (size_t)T->n, B));
        CU(alloc(&c->d_totals, 1, B));
        CU(alloc(&c->d_w, (size_t)T->n, B));
        CU(alloc(&c->d_r, (size_t)T->n, B));
        CU(alloc(&c->d_z, (size_t)T->n, B));
        if (A) {
            CU(upload(&c->d_arow, A->rowptr, (size_t)A->n + 1, B));
            CU(upload(&c->d_acol, A->col, (size_t)A->rowptr[A->n], B));
            CU(alloc(&c->d_aval, (size_t)A->rowptr[A->n], B));
            c->hostA = A;
        }
    }
cleanup:
    free(rowbase);
    free(tile_rr);
    free(tile_s);
    if (c && ildl_profiling()) {
        double t_dev = c->t_malloc + c->t_copy;
        fprintf(stderr, "ildl profile: %-32s %.4f s\n", "cuda: cudaMalloc calls", c->t_malloc);
        fprintf(stderr, "ildl profile: %-32s %.4f s\n", "cuda: cudaMemcpy calls", c->t_copy);
        fprintf(stderr, "ildl profile: %-32s %.4f s\n", "cuda: the rest of the upload", ildl_wtime() - tp - t_dev);
    }
    if (status) {
        ildl_msg(msg, msglen, "CUDA setup failed: %s", g_cuda_msg[0] ? g_cuda_msg : ildl_strerror(status));
        ildl_cuda_destroy(c);
        return status;
    }
    *out = c;
    return ILDL_SUCCESS;
}

#define STATS_THREADS 256
typedef cub::BlockReduce<unsigned long long, STATS_THREADS> stats_reduce_t;

/* The statistics of ildl_factor_final_stats (src/cpu/factor.c) in parallel: a row whose
 * predecessor opens a 2x2 pivot is that pivot's second row (a factor never has two 2x2 openings
 * in a row), the classification is the reference's, and integer sums do not depend on the
 * order. */
__global__ void __launch_bounds__(STATS_THREADS) k_factor_stats(dev_tiles T, factor_totals *out)
{
    __shared__ typename stats_reduce_t::TempStorage tmp;
    unsigned long long v[5] = {0, 0, 0, 0, 0}; /* nnz, n2x2, pos, neg, zero */
    int64_t stride = (int64_t)gridDim.x * blockDim.x, g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t t = g; t < T.ntiles; t += stride) {
        int32_t i = T.row[t];
        int64_t mi = dev_bsize(T, i);
        v[0] += T.col[t] == i ? (unsigned long long)(mi * (mi - 1) / 2) : (unsigned long long)T.nnz[t];
    }
    for (int64_t k = g; k < T.n; k += stride) {
        int8_t ty = T.piv_type[k];
        double a = T.d_diag[k];
        v[1] += ty == 2;
        if (ty == 2 && k + 1 < T.n) {
            double b = T.d_off[k], c = T.d_diag[k + 1];
            double det = a * c - b * b, tr = a + c;
            if (det < 0.0) {
                v[2]++;
                v[3]++;
            } else {
                int other = tr > 0.0 ? 2 : (tr < 0.0 ? 3 : 4);
                v[other]++;
                if (det > 0.0) v[other]++;
                else v[4]++;
            }
        } else if (k > 0 && T.piv_type[k - 1] == 2) {
            /* second row of the pivot above */
        } else if (a > 0.0) {
            v[2]++;
        } else if (a < 0.0) {
            v[3]++;
        } else {
            v[4]++;
        }
    }
    for (int q = 0; q < 5; q++) {
        unsigned long long sum = stats_reduce_t(tmp).Sum(v[q]);
        __syncthreads();
        if (threadIdx.x == 0 && sum) atomicAdd(&((unsigned long long *)out)[q], sum);
    }
}

/* Factored position -> user row and its scale: block b's factored row r is analysed row
 * bstart[b] + piv[r] (build_factored_map in src/api.c, for the CPU backend). One warp per block. */
__global__ void k_build_map(dev_tiles T, const int32_t *perm, const double *scale, int32_t *q, double *qs,
                            int32_t *qinv)
{
    int32_t b = blockIdx.x, k = T.bstart[b] + threadIdx.x;
    if (k < T.bstart[b + 1]) {
        int32_t orig = perm[T.bstart[b] + T.piv[k]];
        q[k] = orig;
        qs[k] = scale[orig];
        qinv[orig] = k;
    }
}

extern "C" int ildl_cuda_factor(ildl_cuda_ctx *c, ildl_tiles *T, const ildl_factor_params *p,
                                ildl_factor_stats *st, char *msg, size_t msglen)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    factor_state hs;
    memset(&hs, 0, sizeof hs);
    factor_params_d prm;
    c->factored = 0;
    c->aval_current = 0; /* the values may be new: the next solve copies them */
    g_cuda_msg[0] = 0;
    double t0 = ildl_wtime(), t1, t2;
    CU(cudaSetDevice(c->device));
    /* the factorization overwrites what pending solves read (the factor, the map, the solve
     * records), and its streams are non-blocking: first let every queued device-pointer
     * ildl_apply, on any stream, finish */
    CU(device_sync_locked());
    /* everything of the factorization is ordered on its stream fstream[0] (factor_run) */
    CU(cudaMemcpyAsync(c->T.a_val, T->a_val, sizeof(double) * (size_t)T->a_ptr[T->ntiles],
                       cudaMemcpyHostToDevice, c->fstream[0]));
    if (p->pair_hint && !c->d_pair_hint) CU(alloc(&c->d_pair_hint, (size_t)T->n, c));
    if (p->pair_hint)
        CU(cudaMemcpyAsync(c->d_pair_hint, p->pair_hint, (size_t)T->n, cudaMemcpyHostToDevice, c->fstream[0]));
    CU(cudaMemcpyAsync(c->d_state, &hs, sizeof hs, cudaMemcpyHostToDevice, c->fstream[0]));
    prm.pivoting = p->pivoting;
    prm.drop_tol = p->drop_tol;
    prm.pivot_tol = p->pivot_tol;
    prm.perturb = p->perturb;
    prm.pair_hint = p->pair_hint ? c->d_pair_hint : NULL;
    t1 = ildl_wtime();
    status = factor_run(c, prm, p->leftover);
    if (status) goto cleanup;
    if (c->pinned[0] && c->stream) {
        /* SQMR's copy of A's values, beside the factorization (page-locked: the host thread
         * goes on at once); on SQMR's stream, which its products follow */
        CU(cudaMemcpyAsync(c->d_aval, c->hostA->val, sizeof(double) * (size_t)c->hostA->rowptr[c->n],
                           cudaMemcpyHostToDevice, c->stream));
        c->aval_current = 1;
    }
    CU(cudaMemcpyAsync(&hs, c->d_state, sizeof hs, cudaMemcpyDeviceToHost, c->fstream[0]));
    CU(cudaStreamSynchronize(c->fstream[0]));
    t2 = ildl_wtime();
    if (hs.err) {
        status = hs.err;
        snprintf(g_cuda_msg, sizeof g_cuda_msg, "device factorization reported internal error %d", hs.err);
        goto cleanup;
    }
    solve_meta_launch(c->T, c->skip_empty, c->fstream[0]);
    CU_LAUNCH();
    if (!c->T.val32 || c->single) /* mixed: after the rounding (ildl_cuda_round_single) */
        CU(solve_lanes_launch(c->T, c->fstream[0]));
    if (c->have_map) {
        k_build_map<<<c->nb, 32, 0, c->fstream[0]>>>(c->T, c->d_perm, c->d_scale, c->d_q, c->d_qs, c->d_qinv);
        CU_LAUNCH();
    }
    c->map_built = c->have_map;
    if (st) {
        factor_totals tot;
        int grid = 4 * c->sm_count;
        CU(cudaMemsetAsync(c->d_totals, 0, sizeof tot, c->fstream[0]));
        k_factor_stats<<<grid, STATS_THREADS, 0, c->fstream[0]>>>(c->T, c->d_totals);
        CU_LAUNCH();
        CU(cudaMemcpyAsync(&tot, c->d_totals, sizeof tot, cudaMemcpyDeviceToHost, c->fstream[0]));
        CU(cudaStreamSynchronize(c->fstream[0]));
        memset(st, 0, sizeof *st);
        st->nperturbed = hs.nperturbed;
        st->leftover_granted = hs.granted;
        st->n2x2 = (int32_t)tot.n2x2;
        st->factor_nnz = (int64_t)(T->n + tot.n2x2 + tot.nnz);
        st->inertia_pos = (int32_t)tot.pos;
        st->inertia_neg = (int32_t)tot.neg;
        st->inertia_zero = (int32_t)tot.zero;
        st->t_upload = t1 - t0;
        st->t_device = t2 - t1;
        st->t_stats = ildl_wtime() - t2;
    }
    CU(cudaStreamSynchronize(c->fstream[0]));
    /* the caller may rewrite A's values (the next refactorization) once this returns */
    if (c->aval_current && c->stream) CU(cudaStreamSynchronize(c->stream));
    c->factored = 1;
cleanup:
    if (status) {
        /* a failed launch can leave the pulls of a chunk unjoined: nothing may still run on
         * the factorization's streams when the caller retries (errors here are the same) */
        cudaStreamSynchronize(c->fstream[0]);
        cudaStreamSynchronize(c->fstream[1]);
        if (c->stream) cudaStreamSynchronize(c->stream); /* A's values (page-locked copy) */
        ildl_msg(msg, msglen, "%s", g_cuda_msg[0] ? g_cuda_msg : ildl_strerror(status));
    }
    return status;
}

__global__ void k_round_single(int64_t m, double *v)
{
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m) v[k] = (double)(float)v[k];
}

__global__ void k_to_single(int64_t m, const double *v, float *w)
{
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m) w[k] = (float)v[k];
}

extern "C" int ildl_cuda_set_mixed(ildl_cuda_ctx *c)
{
    device_scope scope; /* the caller's context back on return */
    g_cuda_msg[0] = 0;
    int status = ILDL_SUCCESS;
    if (c->single) return ILDL_ERR_INVALID_OPTION;
    if (c->T.val32) return ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    CU(cudaMalloc((void **)&c->T.val32, sizeof(float) * (size_t)(c->T.total_cap ? c->T.total_cap : 1)));
    c->bytes += sizeof(float) * (size_t)c->T.total_cap;
    ildl_cuda_sqmr_free(c); /* captured graphs hold the old tile-store view */
    status = set_solve_warps(c, c->solve_warps_f, c->solve_warps_b); /* the solves stage float tiles now */
cleanup:
    return status;
}

/* Mixed precision: the solves read a single-precision copy of U; D is rounded in place. */
extern "C" int ildl_cuda_round_single(ildl_cuda_ctx *c)
{
    device_scope scope; /* the caller's context back on return */
    g_cuda_msg[0] = 0;
    int status = ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    if (!c->T.val32 || c->single) return ILDL_ERR_CALL_ORDER;
    /* on the factorization's stream, and finished before ildl_factor returns (a following
     * ildl_apply may run on any stream) */
    k_to_single<<<(unsigned)((c->T.total_cap + 255) / 256), 256, 0, c->fstream[0]>>>(c->T.total_cap, c->T.val,
                                                                                    c->T.val32);
    CU_LAUNCH();
    k_round_single<<<(c->n + 255) / 256, 256, 0, c->fstream[0]>>>(c->n, c->T.d_diag);
    CU_LAUNCH();
    k_round_single<<<(c->n + 255) / 256, 256, 0, c->fstream[0]>>>(c->n, c->T.d_off);
    CU_LAUNCH();
    CU(solve_lanes_launch(c->T, c->fstream[0])); /* their values from the rounded copy */
    CU(cudaStreamSynchronize(c->fstream[0]));
cleanup:
    return status;
}

extern "C" int ildl_cuda_download_factor(ildl_cuda_ctx *c, ildl_tiles *T)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    if (c->single ? !T->val32 : !T->val) return ILDL_ERR_SIZE_MISMATCH; /* host storage of the other precision */
    if (c->single)
        CU(cudaMemcpy(T->val32, c->T.val32, sizeof(float) * (size_t)T->total_cap, cudaMemcpyDeviceToHost));
    else
        CU(cudaMemcpy(T->val, c->T.val, sizeof(double) * (size_t)T->total_cap, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->idx, c->T.idx, sizeof(uint16_t) * (size_t)T->total_cap, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->piv, c->T.piv, sizeof(int32_t) * (size_t)T->n, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->d_diag, c->T.d_diag, sizeof(double) * (size_t)T->n, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->d_off, c->T.d_off, sizeof(double) * (size_t)T->n, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->piv_type, c->T.piv_type, (size_t)T->n, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->off, c->T.off, sizeof(int64_t) * (size_t)T->ntiles, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(T->nnz, c->T.nnz, sizeof(int64_t) * (size_t)T->ntiles, cudaMemcpyDeviceToHost));
    T->diag_inverted = 1; /* the device factor is prepared for the solves */
cleanup:
    return status;
}

extern "C" int ildl_cuda_pin_host(ildl_cuda_ctx *c, ildl_tiles *T)
{
    device_scope scope; /* the caller's context back on return */
    const char *env = getenv("ILDL_PIN_HOST"); /* experiments: 0 leaves the arrays pageable */
    if ((env && atoi(env) == 0) || !c->hostA || c->pinned[0] || cudaSetDevice(c->device) != cudaSuccess) {
        (void)cudaGetLastError();
        return ILDL_SUCCESS;
    }
    double t0 = ildl_wtime();
    void *a[2] = {c->hostA->val, T->a_val};
    size_t b[2] = {sizeof(double) * (size_t)c->hostA->rowptr[c->n], sizeof(double) * (size_t)T->a_ptr[T->ntiles]};
    for (int k = 0; k < 2; k++) {
        if (!a[k] || !b[k]) continue;
        if (cudaHostRegister(a[k], b[k], cudaHostRegisterDefault) == cudaSuccess) c->pinned[k] = a[k];
        else (void)cudaGetLastError(); /* not fatal: the copies stay pageable */
    }
    if (ildl_profiling())
        fprintf(stderr, "ildl profile: %-32s %.4f s (%s, %s)\n", "cuda: host arrays page-locked", ildl_wtime() - t0,
                c->pinned[0] ? "A" : "not A", c->pinned[1] ? "tiles" : "not tiles");
    return ILDL_SUCCESS;
}

extern "C" int ildl_cuda_set_map(ildl_cuda_ctx *c, const int32_t *perm, const double *scale)
{
    device_scope scope; /* the caller's context back on return */
    g_cuda_msg[0] = 0;
    int status = ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    /* ordered before the factorization that reads them, on its stream */
    CU(cudaMemcpyAsync(c->d_perm, perm, sizeof(int32_t) * (size_t)c->n, cudaMemcpyHostToDevice, c->fstream[0]));
    CU(cudaMemcpyAsync(c->d_scale, scale, sizeof(double) * (size_t)c->n, cudaMemcpyHostToDevice, c->fstream[0]));
    c->have_map = 1;
cleanup:
    return status;
}

#ifdef ILDL_SOLVE_TRACE
/* Experiments: write nb, nlevels, level_ptr, level_rows and the sweeps' records to path
 * (bench/solve_trace.py reads it); the last traced solve wins. */
static void trace_dump(ildl_cuda_ctx *c, const char *path)
{
    size_t nrec = (size_t)20 * c->nb;
    unsigned long long *rec = (unsigned long long *)malloc(nrec * sizeof *rec);
    int32_t *rows = (int32_t *)malloc(sizeof(int32_t) * (size_t)c->nb);
    FILE *f = fopen(path, "wb");
    if (rec && rows && f && cudaMemcpy(rec, c->d_trace, nrec * sizeof *rec, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cudaMemcpy(rows, c->d_level_rows, sizeof(int32_t) * (size_t)c->nb, cudaMemcpyDeviceToHost) == cudaSuccess) {
        int32_t hdr[2] = {c->nb, c->nlevels};
        fwrite(hdr, sizeof hdr, 1, f);
        fwrite(c->level_ptr, sizeof(int32_t), (size_t)c->nlevels + 1, f);
        fwrite(rows, sizeof(int32_t), (size_t)c->nb, f);
        fwrite(rec, sizeof *rec, nrec, f);
    }
    if (f) fclose(f);
    free(rec);
    free(rows);
}
#endif

__global__ void k_gather(int32_t n, const int32_t *q, const double *qs, const double *r, double *w, const int *skip)
{
    if (*skip) return;
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) w[k] = qs[k] * r[q[k]];
}

/* x (device, factored order) <- (U^T D U)^{-1} x on stream s; when r is not NULL, x is first
 * set to qs .* r[q] (the gather of a preconditioner application, fused with the sync-free
 * sweeps' first launch where there is one). */
static int solve_device(ildl_cuda_ctx *c, double *x, const double *r, cudaStream_t s)
{
    int status = ILDL_SUCCESS;
    const int WF = c->solve_warps_f, WB = c->solve_warps_b;
    const unsigned nblk = (unsigned)((c->n + 255) / 256);
    const int values = c->schedule == ILDL_SCHEDULE_SYNCFREE && c->sf_protocol == 2;
    if (r && !values) {
        k_gather<<<nblk, 256, 0, s>>>(c->n, c->d_q, c->d_qs, r, x, c->d_skip);
        CU_LAUNCH();
    }
    if (c->schedule == ILDL_SCHEDULE_SYNCFREE) {
        /* ILDL_CUDA_PROFILE: time the two sweeps of a solve that is not being captured */
        cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        int prof = c->prof_solve && cudaStreamIsCapturing(s, &cap) == cudaSuccess &&
                   cap == cudaStreamCaptureStatusNone;
        /* protocol 2: x -> (forward) d_sweep -> (D) d_sweep -> (backward) x, each sweep writing
         * into a vector set to "unset" just before; else both sweeps in place on x */
        double *y = values ? c->d_sweep : x;
        if (prof) CU(cudaEventRecord(c->ev[0], s));
        if (values) /* also what k_syncfree_begin does, and the gather */
            k_sf_unset<<<nblk, 256, 0, s>>>(y, c->n, c->d_epoch, c->d_tickets, c->d_skip, c->d_q, c->d_qs, r, x);
        else
            k_syncfree_begin<<<1, 1, 0, s>>>(c->d_epoch, c->d_tickets, c->d_skip);
        CU_LAUNCH();
        const int kf = c->sf_nostage ? (c->sf_vglobal ? SOLVE_FORWARD_SYNCFREE_VG_NS : SOLVE_FORWARD_SYNCFREE_NS)
                                     : (c->sf_vglobal ? SOLVE_FORWARD_SYNCFREE_VG : SOLVE_FORWARD_SYNCFREE);
        solve_launch(WF, kf, c->sf_blocks_f, s,
                     c->T, NULL, x, y, c->d_done_f,
                     c->d_tickets, c->d_epoch, c->d_skip);
        CU_LAUNCH();
        if (prof) CU(cudaEventRecord(c->ev[1], s));
        k_dsolve<<<nblk, 256, 0, s>>>(c->T, y, values ? x : NULL, c->d_skip); /* and unsets x */
        CU_LAUNCH();
        if (prof) CU(cudaEventRecord(c->ev[2], s));
        solve_launch(WB, c->sf_nostage ? SOLVE_BACKWARD_SYNCFREE_NS : SOLVE_BACKWARD_SYNCFREE, c->sf_blocks_b, s,
                     c->T, NULL, y, x, c->d_done_b,
                     c->d_tickets + 1, c->d_epoch, c->d_skip);
        CU_LAUNCH();
        if (prof) {
            float ms[3];
            CU(cudaEventRecord(c->ev[3], s));
            CU(cudaEventSynchronize(c->ev[3]));
            for (int k = 0; k < 3; k++) CU(cudaEventElapsedTime(&ms[k], c->ev[k], c->ev[k + 1]));
            fprintf(stderr, "ILDL_CUDA_PROFILE solve (warps %d+%d, blocks %d+%d%s%s): forward %.3f ms, "
                    "D %.3f ms, backward %.3f ms\n", WF, WB, c->sf_blocks_f, c->sf_blocks_b,
                    c->sf_vglobal ? ", V_ii from global" : "", c->sf_nostage ? ", no staging tiles" : "", ms[0],
                    ms[1], ms[2]);
#ifdef ILDL_SOLVE_TRACE
            if (c->d_trace) trace_dump(c, getenv("ILDL_SOLVE_TRACE"));
#endif
        }
        return ILDL_SUCCESS;
    }
    for (int32_t lev = 0; lev < c->nlevels; lev++) {
        int32_t r0 = c->level_ptr[lev], nr = c->level_ptr[lev + 1] - r0;
        solve_launch(WF, SOLVE_FORWARD_LEVEL, nr, s, c->T, c->d_level_rows + r0, x, x, NULL, NULL, NULL, c->d_skip);
        CU_LAUNCH();
    }
    k_dsolve<<<(c->n + 255) / 256, 256, 0, s>>>(c->T, x, NULL, c->d_skip);
    CU_LAUNCH();
    for (int32_t lev = c->nlevels - 1; lev >= 0; lev--) {
        int32_t r0 = c->level_ptr[lev], nr = c->level_ptr[lev + 1] - r0;
        solve_launch(WB, SOLVE_BACKWARD_LEVEL, nr, s, c->T, c->d_level_rows + r0, x, x, NULL, NULL, NULL, c->d_skip);
        CU_LAUNCH();
    }
cleanup:
    return status;
}

extern "C" int ildl_cuda_set_solve_warps(ildl_cuda_ctx *c, int warps_forward, int warps_backward)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    if (!solve_warps_valid(warps_forward) || !solve_warps_valid(warps_backward)) return ILDL_ERR_INVALID_OPTION;
    CU(cudaSetDevice(c->device));
    if (c->solve_warps_f != warps_forward || c->solve_warps_b != warps_backward) {
        status = set_solve_warps(c, warps_forward, warps_backward);
        if (status) goto cleanup;
        ildl_cuda_sqmr_free(c); /* captured graphs hold the old kernels */
    }
    return c->hostA ? ildl_cuda_sqmr_prepare(c) : ILDL_SUCCESS;
cleanup:
    return status;
}

extern "C" int ildl_cuda_set_schedule(ildl_cuda_ctx *c, int schedule)
{
    device_scope scope; /* the caller's context back on return */
    g_cuda_msg[0] = 0;
    if (cudaSetDevice(c->device) != cudaSuccess) {
        ildl_cuda_note_error(cudaGetLastError(), "cudaSetDevice", __FILE__, __LINE__);
        return ILDL_ERR_DEVICE;
    }
    if (schedule != ILDL_SCHEDULE_SYNCFREE && schedule != ILDL_SCHEDULE_LEVELS) return ILDL_ERR_INVALID_OPTION;
    if (c->schedule != schedule) {
        c->schedule = schedule;
        ildl_cuda_sqmr_free(c); /* captured graphs hold the old schedule */
    }
    /* capture SQMR's graphs now, so that the first solve does not pay for it */
    double tp = ildl_wtime();
    int st = c->hostA ? ildl_cuda_sqmr_prepare(c) : ILDL_SUCCESS;
    ildl_profile_lap(&tp, "cuda: SQMR's graphs captured");
    return st;
}

extern "C" int ildl_cuda_solve_factored(ildl_cuda_ctx *c, double *x)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    if (!c->factored) return ILDL_ERR_CALL_ORDER;
    CU(cudaSetDevice(c->device));
    CU(cudaMemcpy(c->d_w, x, sizeof(double) * (size_t)c->n, cudaMemcpyHostToDevice));
    status = solve_device(c, c->d_w, NULL, 0);
    if (status) goto cleanup;
    CU(cudaMemcpy(x, c->d_w, sizeof(double) * (size_t)c->n, cudaMemcpyDeviceToHost));
cleanup:
    return status;
}

__global__ void k_scatter(int32_t n, const int32_t *q, const double *qs, const double *w, double *z, const int *skip)
{
    if (*skip) return;
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) z[q[k]] = qs[k] * w[k];
}

/* c->d_w = (U^T D U)^{-1} (qs .* r[q]) (factored order) for a device vector r in the user's
 * ordering, on stream s (capturable): a preconditioner application up to its scatter. */
int ildl_cuda_apply_to_w(ildl_cuda_ctx *c, const double *r, cudaStream_t s)
{
    return solve_device(c, c->d_w, r, s);
}

/* z = M^{-1} r with r, z device vectors in the user's ordering. */
int ildl_cuda_apply_device(ildl_cuda_ctx *c, const double *r, double *z, cudaStream_t s)
{
    int status = ildl_cuda_apply_to_w(c, r, s);
    if (status) goto cleanup;
    k_scatter<<<(c->n + 255) / 256, 256, 0, s>>>(c->n, c->d_q, c->d_qs, c->d_w, z, c->d_skip);
    CU_LAUNCH();
cleanup:
    return status;
}

extern "C" int ildl_cuda_apply(ildl_cuda_ctx *c, const double *r, double *z, int where, void *stream)
{
    device_scope scope; /* the caller's context back on return */
    g_cuda_msg[0] = 0;
    int status = ILDL_SUCCESS;
    cudaStream_t s = (cudaStream_t)stream;
    /* without the map (ildl_cuda_set_map before the factorization) the gather would read
     * through uninitialized indices */
    if (!c->factored || !c->map_built) return ILDL_ERR_CALL_ORDER;
    CU(cudaSetDevice(c->device));
    if (where == ILDL_MEMORY_DEVICE) {
        /* host pointers passed as device pointers would fault the context: refuse them */
        cudaPointerAttributes ar, az;
        CU(cudaPointerGetAttributes(&ar, r));
        CU(cudaPointerGetAttributes(&az, z));
        if (ar.type != cudaMemoryTypeDevice && ar.type != cudaMemoryTypeManaged) return ILDL_ERR_INVALID_OPTION;
        if (az.type != cudaMemoryTypeDevice && az.type != cudaMemoryTypeManaged) return ILDL_ERR_INVALID_OPTION;
        return ildl_cuda_apply_device(c, r, z, s);
    }
    CU(cudaMemcpyAsync(c->d_r, r, sizeof(double) * (size_t)c->n, cudaMemcpyHostToDevice, s));
    status = ildl_cuda_apply_device(c, c->d_r, c->d_z, s);
    if (status) goto cleanup;
    CU(cudaMemcpyAsync(z, c->d_z, sizeof(double) * (size_t)c->n, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
cleanup:
    return status;
}

