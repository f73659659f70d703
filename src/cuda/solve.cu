/* solve.cu -- block triangular solves with U^T D U on the GPU, mirroring src/cpu/solve.c entry
 * for entry (same summation orders), in two schedules:
 *
 *  levels     one launch per level and direction (the reference schedule);
 *  sync-free  one persistent launch per direction: blocks take work items by an atomic ticket
 *             in a topological order and poll the values of the rows they depend on, which
 *             the sweep writes into a vector set to "not written yet" before (solve_sync.cuh).
 *
 * A block of W warps takes a block row: each warp stages an off-diagonal tile in shared memory
 * before it waits for the row the tile depends on, and warp 0 combines the partial sums in tile
 * order, so W (1, 2, 4 or 8, per direction) changes the speed, never a bit of the result.
 *
 * A row's arithmetic is the same in both schedules and reads only final values, so both give
 * bit-identical results; the sync-free one removes the per-level launch gaps that dominate
 * on deep matrices.
 *
 * Staged tiles are kept in the type of the stored factor (S): double, or float when the factor
 * is single precision (precision single or mixed: val32). The arithmetic is double either way
 * (a float widens exactly), so the bits are the same, but float tiles take half the shared
 * memory, and more blocks, i.e. more rows in flight, fit an SM.
 *
 * The parts: solve_sync.cuh (waiting, tracing), solve_tiles.cuh (a tile's metadata and values),
 * solve_sums_staged.cuh and solve_sums_lanes.cuh (a tile's partial sums), solve_vii.cuh (V_ii),
 * solve_rows.cuh (the row algorithms), solve_sweeps.cuh (the sync-free ticket loops); the
 * kernels in solve_levels.cu and solve_syncfree_*.cu (solve_kernels.cuh); what each
 * factorization rebuilds for them in solve_prepare.cu. This file configures and launches them. */
#include "cuda/solve_kernels.cuh"
#include "cuda/solve_tiles.cuh"

/* Dynamic shared memory of a solve kernel of W warps staging tiles of type S: a staged tile
 * per warp (ns: only add_sparse_chunk's scratch), V_ii (S; not in the forward kernel that
 * reads it from global memory, vg), the partial sums (double). */
template <int W, typename S> static size_t smem_bytes(bool forward, bool vg = false, bool ns = false)
{
    size_t ws = ns ? (size_t)warp_stage<S, true>() : (size_t)warp_stage<S, false>();
    if (W == 1) return ws * sizeof(S); /* row_one_warp: V_ii from global memory, no partial sums */
    return forward ? ((size_t)W * ws + (vg ? 0 : TILE)) * sizeof(S) + (size_t)PARTS_FORWARD * LD * sizeof(double)
                   : ((size_t)W * ws + STILE) * sizeof(S) + (size_t)PARTS_BACKWARD * LD * sizeof(double);
}

static cudaError_t set_smem(const void *kernel, size_t bytes)
{
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess) /* as much shared memory as the SM has: more resident blocks */
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 (int)cudaSharedmemCarveoutMaxShared);
    return e;
}

/* The kernels without staging tiles keep ~2.6 KB of shared memory a block (one warp): as much
 * of the SM as shared memory as blocks_per_sm of them need, the rest as L1, instead of all of
 * it as shared memory (L1 then ~28 KB on an H100). Their loads go through L1: the backward
 * sweep's rows of V_ii (a line per lane, used over 31 steps), the lanes' entries that share
 * sectors across steps (control70's backward sweep 0.345 -> 0.326 ms). */
static cudaError_t set_carveout_ns(const void *kernel, int blocks_per_sm, size_t dynamic_bytes)
{
    int dev = 0, per_sm = 0, reserved = 0, pct;
    cudaFuncAttributes fa;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&fa, kernel);
    if (e != cudaSuccess || per_sm <= 0) return e;
    size_t need = (size_t)blocks_per_sm * (fa.sharedSizeBytes + dynamic_bytes + (size_t)reserved);
    pct = (int)((100 * need + (size_t)per_sm - 1) / (size_t)per_sm);
    if (pct < 0 || pct > 100) pct = (int)cudaSharedmemCarveoutMaxShared;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, pct);
}

/* The sync-free kernel of one direction: forward reading V_ii from global memory (vg) or
 * staging it, without staging tiles (ns) or with. */
static solve_syncfree_fn syncfree_kernel(int warps, bool float_tiles, bool forward, bool vg, bool ns)
{
    if (!forward) return solve_backward_kernel(warps, float_tiles, ns);
    return ns ? solve_forward_ns_kernel(warps, float_tiles, vg) : solve_forward_kernel(warps, float_tiles, vg);
}

/* Raise the shared-memory limits of the kernels of one direction with W warps staging S;
 * *per_sm: how many blocks of its sync-free kernel (forward: the one that reads V_ii from
 * global memory if vg; ns: the one without staging tiles) fit on one SM. */
template <int W, typename S> static cudaError_t configure_w(bool forward, bool vg, bool ns, int *per_sm)
{
    size_t b = smem_bytes<W, S>(forward), bs = smem_bytes<W, S>(forward, forward && vg, ns);
    const void *lk = (const void *)solve_level_kernel(W, sizeof(S) == sizeof(float), forward);
    const void *sk = (const void *)syncfree_kernel(W, sizeof(S) == sizeof(float), forward, forward && vg, ns);
    cudaError_t e = set_smem(lk, b);
    if (e == cudaSuccess) e = set_smem(sk, bs);
    if (e == cudaSuccess && ns) e = set_carveout_ns(sk, SF_NS_WARPS_PER_SM / W, bs);
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, sk, W * 32, bs);
    return e;
}

#ifdef ILDL_SOLVE_TRACE
cudaError_t solve_set_trace(unsigned long long *buf)
{
    cudaError_t e = solve_forward_set_trace(buf);
    if (e == cudaSuccess) e = solve_forward_ns_set_trace(buf);
    return e == cudaSuccess ? solve_backward_set_trace(buf) : e;
}
#endif

int solve_warps_valid(int warps) { return warps == 1 || warps == 2 || warps == 4 || warps == 8; }

template <typename S>
static cudaError_t configure_s(int warps_f, int warps_b, bool vg, bool ns, int *fwd_per_sm, int *bwd_per_sm)
{
    cudaError_t e = warps_f == 1 ? configure_w<1, S>(true, vg, ns, fwd_per_sm)
                  : warps_f == 2 ? configure_w<2, S>(true, vg, ns, fwd_per_sm)
                  : warps_f == 4 ? configure_w<4, S>(true, vg, ns, fwd_per_sm) : configure_w<8, S>(true, vg, ns, fwd_per_sm);
    if (e != cudaSuccess) return e;
    return warps_b == 1 ? configure_w<1, S>(false, false, ns, bwd_per_sm)
         : warps_b == 2 ? configure_w<2, S>(false, false, ns, bwd_per_sm)
         : warps_b == 4 ? configure_w<4, S>(false, false, ns, bwd_per_sm) : configure_w<8, S>(false, false, ns, bwd_per_sm);
}

cudaError_t solve_configure(int warps_f, int warps_b, bool float_tiles, bool vg, bool ns, int *fwd_per_sm,
                            int *bwd_per_sm)
{
    return float_tiles ? configure_s<float>(warps_f, warps_b, vg, ns, fwd_per_sm, bwd_per_sm)
                       : configure_s<double>(warps_f, warps_b, vg, ns, fwd_per_sm, bwd_per_sm);
}

template <int W, typename S>
static void launch_w(int kind, unsigned grid, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                     const double *xin, double *x, int *ticket, const int *epoch, const int *skip)
{
    const bool fwd = kind != SOLVE_BACKWARD_LEVEL && kind != SOLVE_BACKWARD_SYNCFREE && kind != SOLVE_BACKWARD_SYNCFREE_NS;
    const bool vg = kind == SOLVE_FORWARD_SYNCFREE_VG || kind == SOLVE_FORWARD_SYNCFREE_VG_NS;
    const bool ns = kind == SOLVE_FORWARD_SYNCFREE_NS || kind == SOLVE_FORWARD_SYNCFREE_VG_NS ||
                    kind == SOLVE_BACKWARD_SYNCFREE_NS;
    const bool f = sizeof(S) == sizeof(float);
    size_t sm = smem_bytes<W, S>(fwd, vg, ns);
    if (kind == SOLVE_FORWARD_LEVEL || kind == SOLVE_BACKWARD_LEVEL) {
        solve_level_fn k = solve_level_kernel(W, f, fwd);
        k<<<grid, W * 32, sm, s>>>(T, rows, x, skip);
    } else if (ns) { /* the sweeps without staging tiles with their output persisting in L2 */
        launch_l2_window(T, x, T.n, syncfree_kernel(W, f, fwd, vg, true), grid, W * 32, sm, s, T, xin, x, ticket, epoch,
                         skip);
    } else {
        solve_syncfree_fn k = syncfree_kernel(W, f, fwd, vg, false);
        k<<<grid, W * 32, sm, s>>>(T, xin, x, ticket, epoch, skip);
    }
}

template <typename S>
static void launch_s(int warps, int kind, unsigned grid, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                     const double *xin, double *x, int *ticket, const int *epoch, const int *skip)
{
    if (warps == 1) launch_w<1, S>(kind, grid, s, T, rows, xin, x, ticket, epoch, skip);
    else if (warps == 2) launch_w<2, S>(kind, grid, s, T, rows, xin, x, ticket, epoch, skip);
    else if (warps == 4) launch_w<4, S>(kind, grid, s, T, rows, xin, x, ticket, epoch, skip);
    else launch_w<8, S>(kind, grid, s, T, rows, xin, x, ticket, epoch, skip);
}

void solve_launch(int warps, int kind, unsigned grid, cudaStream_t s, const dev_tiles &T, const int32_t *rows,
                  const double *xin, double *x, int *ticket, const int *epoch, const int *skip)
{
    /* the factor's storage type decides the staging type (solve_configure was told the same) */
    if (T.val32) launch_s<float>(warps, kind, grid, s, T, rows, xin, x, ticket, epoch, skip);
    else launch_s<double>(warps, kind, grid, s, T, rows, xin, x, ticket, epoch, skip);
}
