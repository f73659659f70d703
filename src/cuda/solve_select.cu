/* solve_select.cu -- which solve kernels a context runs (with or without staging tiles, V_ii
 * staged or from global memory, by the width of the levels unless the tuning says otherwise),
 * their warps per block and grids, the lanes the kernels without staging tiles need, and the
 * entry points that change these choices: the schedule, the warps, mixed precision. */
#include <stdio.h>
#include <stdlib.h>
#include "cuda/context.cuh"
extern "C" {
#include "cuda/cuda_backend.h"
}

/* Warps per block of the forward and backward solve kernels by default, the fastest measured:
 * 4 and 2 for the staged kernels (narrow levels), one warp per block row for the kernels
 * without staging tiles (ns: wide levels). */
static void solve_warps_default(int ns, int *wf, int *wb)
{
    *wf = ns ? ILDL_SOLVE_WARPS_NS : ILDL_SOLVE_WARPS_FORWARD;
    *wb = ns ? ILDL_SOLVE_WARPS_NS : ILDL_SOLVE_WARPS_BACKWARD;
}

/* Blocks of the persistent sync-free solve kernels: as many as can be resident (the time
 * per iteration falls in proportion to the rows in flight), fewer when there
 * are fewer block rows. */
static int syncfree_blocks(const ildl_cuda_ctx *c, int per_sm)
{
    int64_t b = (int64_t)(per_sm < 1 ? 1 : per_sm) * c->sm_count;
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
 * aug3dcqp, 46: +16%). The tuning's sf_nostage overrides the rule (tests). */
#define SF_NOSTAGE_MIN_ROWS_PER_LEVEL 256

static int sf_nostage_default(const ildl_cuda_ctx *c)
{
    if (c->sol.lanes_failed || c->sol.staged_only) return 0; /* they need their lanes; the user's choice */
    if (c->tune.sf_nostage >= 0) return c->tune.sf_nostage != 0;
    return c->sol.nlevels > 0 && (int64_t)c->nb >= (int64_t)SF_NOSTAGE_MIN_ROWS_PER_LEVEL * c->sol.nlevels;
}

/* The forward sweep reads V_ii from global memory instead of staging it (SOLVE_FORWARD_SYNCFREE_VG)
 * when the levels are wide: at least this many block rows per level on average. Less shared
 * memory per block, so more rows in flight, for a memory latency more at the end of each row
 * (a net gain on wide levels). The tuning's sf_vglobal overrides the rule (tests). */
#define SF_VGLOBAL_MIN_ROWS_PER_LEVEL 256

static int sf_vglobal_default(const ildl_cuda_ctx *c)
{
    if (c->tune.sf_vglobal >= 0) return c->tune.sf_vglobal != 0;
    /* the kernels without staging tiles have the shared memory for V_ii: staged, it saves the
     * end of each row a memory latency (forward -4 to -7%) */
    if (c->sol.sf_nostage) return 0;
    return c->sol.nlevels > 0 && (int64_t)c->nb >= (int64_t)SF_VGLOBAL_MIN_ROWS_PER_LEVEL * c->sol.nlevels;
}

/* Free the lanes of the solves without staging tiles (all of them, or only the values in
 * double once the solves read float: values_only). */
void lanes_free(ildl_cuda_ctx *c, int values_only)
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
        c->sol.lanes_failed = 1;
        e = cudaSuccess;
    }
    return e;
}

/* Configure the solve kernels for wf (forward) and wb (backward) warps per block (0: the
 * defaults for the kernels chosen) and size the sync-free grids. */
int set_solve_warps(ildl_cuda_ctx *c, int wf, int wb)
{
    int status = ILDL_SUCCESS, fwd = 0, bwd = 0;
    c->sol.sf_nostage = sf_nostage_default(c);
    if (c->sol.sf_nostage) {
        CU(lanes_alloc(c));
        c->sol.sf_nostage = sf_nostage_default(c); /* 0 if they did not fit */
    }
    if (wf == 0 || wb == 0) {
        int f, b;
        solve_warps_default(c->sol.sf_nostage, &f, &b);
        if (wf == 0) wf = f;
        if (wb == 0) wb = b;
    }
    c->sol.sf_vglobal = sf_vglobal_default(c);
    CU(solve_configure(wf, wb, c->T.val32 != NULL, c->sol.sf_vglobal != 0, c->sol.sf_nostage != 0, &fwd, &bwd));
    c->sol.solve_warps_f = wf;
    c->sol.solve_warps_b = wb;
    c->sol.sf_blocks_f = syncfree_blocks(c, fwd);
    c->sol.sf_blocks_b = syncfree_blocks(c, bwd);
cleanup:
    return status;
}

extern "C" int ildl_cuda_set_mixed(ildl_cuda_ctx *c)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    if (c->single) return ILDL_ERR_INVALID_OPTION;
    if (c->T.val32) return ILDL_SUCCESS;
    CU(cudaSetDevice(c->device));
    CU(cudaMalloc((void **)&c->T.val32, sizeof(float) * (size_t)(c->T.total_cap ? c->T.total_cap : 1)));
    c->bytes += sizeof(float) * (size_t)c->T.total_cap;
    ildl_cuda_sqmr_free(c); /* captured graphs hold the old tile-store view */
    status = set_solve_warps(c, c->sol.solve_warps_f, c->sol.solve_warps_b); /* the solves stage float tiles now */
cleanup:
    return status;
}

extern "C" int ildl_cuda_set_solve_warps(ildl_cuda_ctx *c, int warps_forward, int warps_backward)
{
    device_scope scope; /* the caller's context back on return */
    int status = ILDL_SUCCESS;
    if (!solve_warps_valid(warps_forward) || !solve_warps_valid(warps_backward)) return ILDL_ERR_INVALID_OPTION;
    CU(cudaSetDevice(c->device));
    if (c->sol.solve_warps_f != warps_forward || c->sol.solve_warps_b != warps_backward) {
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
    ildl_cuda_clear_message();
    if (cudaSetDevice(c->device) != cudaSuccess) {
        ildl_cuda_note_error(cudaGetLastError(), "cudaSetDevice", __FILE__, __LINE__);
        return ILDL_ERR_DEVICE;
    }
    if (schedule != ILDL_SCHEDULE_SYNCFREE && schedule != ILDL_SCHEDULE_LEVELS) return ILDL_ERR_INVALID_OPTION;
    if (c->sol.schedule != schedule) {
        c->sol.schedule = schedule;
        ildl_cuda_sqmr_free(c); /* captured graphs hold the old schedule */
    }
    /* capture SQMR's graphs now, so that the first solve does not pay for it */
    double tp = ildl_wtime();
    int st = c->hostA ? ildl_cuda_sqmr_prepare(c) : ILDL_SUCCESS;
    ildl_profile_lap(&tp, "cuda: SQMR's graphs captured");
    return st;
}
