/* fixed_point.cu -- the fixed-point (Jacobi-sweep) block factorization on the GPU, the mirror
 * of src/cpu/fixed_point.c (its header has the method, the state and the orders). A sweep is
 * two launches whatever the depth of the block graph:
 *   k_fp_diag   one 32x32-thread block per block row: A_ii(p_i, p_i) minus the old state's
 *               updates, factored (none/BK/Rook, the phase-A device rules): new U_ii, D_i, p_i;
 *   k_fp_offd   one block per off-diagonal tile: A_ij(p_i, p_j) minus the old updates, rows
 *               and columns into the new orders, solved by warp 0 (factor_solve.cuh);
 * then k_fp_resid the residual's per-tile sums, and, per chunk of the ordinary driver
 * (factor.cu), k_fp_load puts the last state into the in-flight slots where phase A's pulls
 * would have put the tiles: tau-dropping, capacities, storage and the solves are the
 * block-iLDL^T's. Double precision only. */
#include "cuda/context.cuh"
#include "cuda/dense_factor.cuh"
#include "cuda/factor_phases.cuh"
#include "cuda/factor_pull.cuh"
#include "cuda/factor_solve.cuh"
extern "C" {
#include "cpu/fixed_point.h"
#include "cuda/cuda_backend.h"
}

/* One copy of the state (cpu/fixed_point.h) as the kernels see it. */
struct fp_copy {
    double *u;
    int32_t *perm;
    double *dd, *de;
    int8_t *ty;
};

static fp_copy copy_of(const ildl_cuda_ctx *c, int k)
{
    fp_copy f = {c->fp.d_u[k], c->fp.d_perm[k], c->fp.d_dd[k], c->fp.d_de[k], c->fp.d_ty[k]};
    return f;
}

/* sU = state tile t (mk x m, ld 32) of copy s; zeros elsewhere are not needed: readers stay
 * inside mk x m. unit: 1 on the diagonal (U_ii with its unit diagonal). No barrier. */
__device__ __forceinline__ void d_fp_tile(const fp_copy &s, const int64_t *soff, int64_t t, int mk, int m,
                                          double *sU, bool unit)
{
    int l = threadIdx.y, c = threadIdx.x;
    if (l < mk && c < m) {
        double v = s.u[soff[t] + (int64_t)l * m + c];
        if (unit && l == c) v = 1.0;
        sU[l * LD + c] = v;
    }
}

/* sDU = D_k sJ (mk x m) with D_k of copy s at block start bk (apply_d's order). No barrier. */
__device__ __forceinline__ void d_fp_apply_d(const fp_copy &s, int32_t bk, int mk, int m, const double *sJ,
                                             double *sDU)
{
    int l = threadIdx.y, c = threadIdx.x;
    if (l < mk && c < m) {
        int8_t ty = s.ty[bk + l];
        double dd = s.dd[bk + l], v;
        if (ty == 2 && l + 1 < mk) v = dd * sJ[l * LD + c] + s.de[bk + l] * sJ[(l + 1) * LD + c];
        else if (ty == 0 && l > 0 && s.ty[bk + l - 1] == 2) v = s.de[bk + l - 1] * sJ[(l - 1) * LD + c] + dd * sJ[l * LD + c];
        else v = dd * sJ[l * LD + c];
        sDU[l * LD + c] = v;
    }
}

/* The tile store's view of copy s: its tiles as dense stored tiles (offsets soff, leading
 * dimension m_j, as a dense tile of the store) and its D, so that the pulls of the
 * block-iLDL^T (factor_pull.cuh: the same products and sums in the same order, with their
 * loads in flight two updates at a time) read the state. */
__device__ __forceinline__ dev_tiles d_fp_view(const dev_tiles &T, const fp_copy &s, const int64_t *soff,
                                               const uint8_t *dense)
{
    dev_tiles V = T;
    V.val = s.u;
    V.off = const_cast<int64_t *>(soff);
    V.format = dense;
    V.d_diag = s.dd;
    V.d_off = s.de;
    V.piv_type = s.ty;
    return V;
}

/* Dynamic shared memory of k_fp_offd and k_fp_resid: the tile and six update tiles. */
constexpr size_t FP_SMEM = (size_t)7 * TILE * sizeof(double);

/* b = A_ij(pi, pj) for tile t (mi x mj; zeros elsewhere); w: a scratch tile. Ends with a barrier. */
__device__ void d_fp_load_a(const dev_tiles &T, int64_t t, int mi, int mj, const int32_t *pi, const int32_t *pj,
                            double *b, double *w)
{
    int r = threadIdx.y, c = threadIdx.x;
    d_zero_tile<double>(w);
    d_load_a<double>(T, t, T.row[t] == T.col[t], w);
    b[r * LD + c] = (r < mi && c < mj) ? w[pi[r] * LD + pj[c]] : 0.0;
    __syncthreads();
}

/* Phase 1 of a sweep: block row blockIdx.x's diagonal block from copy a into copy z. */
__global__ void __launch_bounds__(1024) k_fp_diag(dev_tiles T, fp_copy a, fp_copy z, const int64_t *soff,
                                                  const uint8_t *dense, int32_t *q, int32_t *npert, int32_t *n2x2,
                                                  int pivoting, const int8_t *pair_hint, int32_t *block_perturbed,
                                                  double tol, double perturb, int first)
{
    __shared__ double W[TILE], win[4 * TILE]; /* the pulls' windows, then dd_factor's scratch */
    __shared__ ildl_dense_result res;
    double *const sU = win, *const sDU = win + TILE, *const sU2 = win + 2 * TILE, *const sDU2 = win + 3 * TILE;
    double *const up[6] = {sU, sU, sDU, sU2, sU2, sDU2}; /* U_ki is U_kj: one window per update */
    int r = threadIdx.y, c = threadIdx.x, tid = r * LD + c;
    int32_t i = blockIdx.x, b = T.bstart[i];
    int mi = dev_bsize(T, i);
    int64_t td = T.row_ptr[i];
    d_fp_load_a(T, td, mi, mi, a.perm + b, a.perm + b, W, sU);
    if (!first) d_pull_diag_all<double>(d_fp_view(T, a, soff, dense), i, mi, W, up);
    ildl_dense_params dp;
    dp.pivot_tol = tol;
    dp.perturb = perturb;
    dp.pair_hint = pair_hint ? pair_hint + b : NULL;
    dd_factor(pivoting, mi, W, win, &dp, &res);
    if (tid < mi) {
        int p = res.perm[tid];
        q[b + tid] = p;
        z.perm[b + tid] = a.perm[b + p];
        z.dd[b + tid] = res.d_diag[tid];
        z.de[b + tid] = res.d_off[tid];
        z.ty[b + tid] = res.type[tid];
    }
    if (r < mi && c < mi) z.u[soff[td] + (int64_t)r * mi + c] = W[tid];
    if (tid == 0) {
        npert[i] = res.nperturbed;
        n2x2[i] = res.n2x2;
        if (first && block_perturbed) block_perturbed[i] = res.nperturbed;
    }
}

/* Phase 2: off-diagonal tile offd[blockIdx.x] = (i,j) from copy a (updates) and copy z (the new
 * diagonal blocks and orders) into copy z. */
__global__ void __launch_bounds__(1024, 2) k_fp_offd(dev_tiles T, fp_copy a, fp_copy z, const int64_t *soff,
                                                     const uint8_t *dense, const int32_t *q, const int64_t *offd,
                                                     int first)
{
    extern __shared__ __align__(16) unsigned char fp_smem_raw[]; /* FP_SMEM */
    double *C = reinterpret_cast<double *>(fp_smem_raw), *up[6];
    for (int k = 0; k < 6; k++) up[k] = C + (1 + k) * TILE;
    __shared__ pull_list L;
    int r = threadIdx.y, c = threadIdx.x;
    int64_t t = offd[blockIdx.x];
    int32_t i = T.row[t], j = T.col[t], bi = T.bstart[i], bj = T.bstart[j];
    int mi = dev_bsize(T, i), mj = dev_bsize(T, j);
    d_fp_load_a(T, t, mi, mj, a.perm + bi, a.perm + bj, C, up[0]);
    if (!first) d_pull_offd_all<double>(d_fp_view(T, a, soff, dense), i, j, mi, mj, C, up, &L);
    /* the new orders, rows and columns in sync; U_ii of the new state beside it */
    double *C2 = up[0], *U = up[1], *w = up[2];
    C2[r * LD + c] = (r < mi && c < mj) ? C[q[bi + r] * LD + q[bj + c]] : 0.0;
    d_fp_tile(z, soff, T.row_ptr[i], mi, mi, U, false);
    __syncthreads();
    if (r == 0) { /* warp 0 solves */
        int mytype = c < mi ? z.ty[bi + c] : 0;
        double mydd = c < mi ? z.dd[bi + c] : 0.0, mydo = c < mi ? z.de[bi + c] : 0.0;
        d_offdiag_solve_warp<double>(mi, mj, U, w, c, mytype, mydd, mydo, C2);
    }
    __syncthreads();
    if (r < mi && c < mj) z.u[soff[t] + (int64_t)r * mj + c] = C2[r * LD + c];
}

/* The residual's sum of squares of tile blockIdx.x (cpu/fixed_point.h): the updates of k < i
 * as the sweeps pull them, then U_ii^T D_i U_ij; thread 0 sums in the reference's order. */
__global__ void __launch_bounds__(1024, 2) k_fp_resid(dev_tiles T, fp_copy a, const int64_t *soff,
                                                      const uint8_t *dense, double *tile_sq)
{
    extern __shared__ __align__(16) unsigned char fp_smem_raw[]; /* FP_SMEM */
    double *R = reinterpret_cast<double *>(fp_smem_raw), *up[6];
    for (int k = 0; k < 6; k++) up[k] = R + (1 + k) * TILE;
    __shared__ pull_list L;
    int64_t t = blockIdx.x;
    int32_t i = T.row[t], j = T.col[t], bi = T.bstart[i];
    int mi = dev_bsize(T, i), mj = dev_bsize(T, j);
    bool diag = i == j;
    d_fp_load_a(T, t, mi, mj, a.perm + bi, a.perm + T.bstart[j], R, up[0]);
    dev_tiles V = d_fp_view(T, a, soff, dense);
    if (diag) {
        double *const upd[6] = {up[0], up[0], up[1], up[3], up[3], up[4]};
        d_pull_diag_all<double>(V, i, mi, R, upd);
    } else {
        d_pull_offd_all<double>(V, i, j, mi, mj, R, up, &L);
    }
    /* - U_ii^T D_i U_ij, U_ii with its unit diagonal */
    double *sU = up[0], *sJ = up[1], *sDU = up[2];
    d_fp_tile(a, soff, t, mi, mj, sJ, diag);
    if (!diag) d_fp_tile(a, soff, T.row_ptr[i], mi, mi, sU, true);
    __syncthreads();
    d_fp_apply_d(a, bi, mi, mj, sJ, sDU);
    __syncthreads();
    d_sub_utdu<double>(mi, mi, mj, diag ? sJ : sU, sDU, R, diag);
    if (diag) d_mirror_upper(mi, R);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        double acc = 0.0;
        for (int rr = 0; rr < mi; rr++)
            for (int cc = 0; cc < mj; cc++) acc += R[rr * LD + cc] * R[rr * LD + cc];
        tile_sq[t] = acc;
    }
}

/* The last state of block row rows[blockIdx.x] into its in-flight slots, as ildl_fp_fill_row:
 * U_ii, the off-diagonal tiles with their columns in block j's analysed order, the pivots
 * into T and res. */
__global__ void __launch_bounds__(1024) k_fp_load(dev_tiles T, fp_copy a, const int64_t *soff, const int32_t *npert,
                                                  const int32_t *n2x2, const int32_t *rows, const int32_t *rowbase,
                                                  double *inflight, ildl_dense_result *res_out)
{
    int r = threadIdx.y, c = threadIdx.x, tid = r * LD + c;
    int32_t i = rows[blockIdx.x], b = T.bstart[i];
    int mi = dev_bsize(T, i);
    int64_t t0 = T.row_ptr[i], nt = T.row_ptr[i + 1] - t0;
    double *slot = inflight + (int64_t)rowbase[blockIdx.x] * TILE;
    ildl_dense_result *o = res_out + blockIdx.x;
    if (tid < LD) {
        bool in = tid < mi;
        int32_t p = in ? a.perm[b + tid] : 0;
        double dd = in ? a.dd[b + tid] : 0.0, de = in ? a.de[b + tid] : 0.0;
        int8_t ty = in ? a.ty[b + tid] : 0;
        o->perm[tid] = p;
        o->d_diag[tid] = dd;
        o->d_off[tid] = de;
        o->type[tid] = ty;
        if (in) {
            T.piv[b + tid] = p;
            T.d_diag[b + tid] = dd;
            T.d_off[b + tid] = de;
            T.piv_type[b + tid] = ty;
        }
        if (tid == 0) {
            o->n2x2 = n2x2[i];
            o->nperturbed = npert[i];
        }
    }
    slot[tid] = (r < mi && c < mi) ? a.u[soff[t0] + (int64_t)r * mi + c] : 0.0;
    for (int64_t s = 1; s < nt; s++) {
        int64_t t = t0 + s;
        int32_t bj = T.bstart[T.col[t]];
        int mj = dev_bsize(T, T.col[t]);
        double *d = slot + s * TILE;
        if (r < mi && c < mj) d[r * LD + a.perm[bj + c]] = a.u[soff[t] + (int64_t)r * mj + c];
        else d[tid] = 0.0;
    }
}

/* ------------------------------------------------------------ host side */

extern "C" size_t ildl_cuda_fp_bytes(const ildl_tiles *T)
{
    /* what ildl_cuda_fp_setup allocates (alloc's rounding: at least one element each) */
    int64_t len = 0, nofd = 0;
    for (int64_t t = 0; t < T->ntiles; t++) {
        len += (int64_t)ildl_tiles_block_size(T, T->row[t]) * ildl_tiles_block_size(T, T->col[t]);
        nofd += T->row[t] != T->col[t];
    }
    size_t n = (size_t)(T->n > 0 ? T->n : 1), nb = (size_t)(T->nb > 0 ? T->nb : 1);
    size_t nt = (size_t)(T->ntiles > 0 ? T->ntiles : 1), l = (size_t)(len > 0 ? len : 1);
    size_t no = (size_t)(nofd > 0 ? nofd : 1);
    return 2 * (sizeof(double) * l + sizeof(int32_t) * n + 2 * sizeof(double) * n + n) + sizeof(int32_t) * n +
           2 * sizeof(int32_t) * nb + sizeof(int64_t) * nt + sizeof(int64_t) * no + sizeof(double) * nt + nt;
}

extern "C" int ildl_cuda_fp_setup(ildl_cuda_ctx *c, const ildl_tiles *T)
{
    device_scope scope; /* the caller's context back on return */
    ildl_cuda_clear_message();
    int status = ILDL_SUCCESS;
    int64_t len = 0, nofd = 0;
    int64_t *soff = NULL, *offd = NULL;
    size_t n = (size_t)T->n, nb = (size_t)T->nb, nt = (size_t)T->ntiles;
    CU(cudaSetDevice(c->device));
    soff = (int64_t *)malloc(sizeof(int64_t) * (nt ? nt : 1));
    offd = (int64_t *)malloc(sizeof(int64_t) * (nt ? nt : 1));
    if (!soff || !offd) {
        status = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    for (int64_t t = 0; t < T->ntiles; t++) {
        soff[t] = len;
        len += (int64_t)ildl_tiles_block_size(T, T->row[t]) * ildl_tiles_block_size(T, T->col[t]);
        if (T->row[t] != T->col[t]) offd[nofd++] = t;
    }
    for (int k = 0; k < 2; k++) {
        CU(alloc(&c->fp.d_u[k], (size_t)len, c));
        CU(alloc(&c->fp.d_perm[k], n, c));
        CU(alloc(&c->fp.d_dd[k], n, c));
        CU(alloc(&c->fp.d_de[k], n, c));
        CU(alloc(&c->fp.d_ty[k], n, c));
    }
    CU(alloc(&c->fp.d_q, n, c));
    CU(alloc(&c->fp.d_npert, nb, c));
    CU(alloc(&c->fp.d_n2x2, nb, c));
    CU(upload(&c->fp.d_soff, soff, nt, c));
    CU(upload(&c->fp.d_offd, offd, (size_t)nofd, c));
    CU(alloc(&c->fp.d_tile_sq, nt, c));
    CU(alloc(&c->fp.d_dense, nt, c));
    if (!c->plan_only && nt) CU(cudaMemset(c->fp.d_dense, ILDL_TILE_DENSE, nt));
    c->fp.nofd = nofd;
    c->fp.on = 1;
cleanup:
    free(soff);
    free(offd);
    return status; /* what was allocated is freed with the context */
}

/* The initial state of cpu/fixed_point.h into copy 0: identity orders, D = I (U is not read by
 * sweep 1). */
__global__ void k_fp_init(dev_tiles T, fp_copy s)
{
    int32_t i = blockIdx.x;
    int k = threadIdx.x;
    if (k < dev_bsize(T, i)) {
        int32_t b = T.bstart[i];
        s.perm[b + k] = k;
        s.dd[b + k] = 1.0;
        s.de[b + k] = 0.0;
        s.ty[b + k] = 1;
    }
}

int fp_sweeps_run(ildl_cuda_ctx *c, const factor_params_d &prm, cudaStream_t s)
{
    int status = ILDL_SUCCESS;
    int cur = 0;
    if (c->fp.sweeps < 1 || c->fp.sweeps > ILDL_MAX_FP_SWEEPS) return ILDL_ERR_INTERNAL;
    k_fp_init<<<c->nb, LD, 0, s>>>(c->T, copy_of(c, 0));
    CU_LAUNCH();
    for (int sw = 1; sw <= c->fp.sweeps; sw++) {
        fp_copy a = copy_of(c, cur), z = copy_of(c, 1 - cur);
        k_fp_diag<<<c->nb, dim3(LD, LD), 0, s>>>(c->T, a, z, c->fp.d_soff, c->fp.d_dense, c->fp.d_q, c->fp.d_npert,
                                                 c->fp.d_n2x2, prm.pivoting, prm.pair_hint, prm.block_perturbed,
                                                 c->fp.tol[sw - 1], c->fp.perturb[sw - 1], sw == 1);
        CU_LAUNCH();
        if (c->fp.nofd > 0) {
            k_fp_offd<<<(unsigned)c->fp.nofd, dim3(LD, LD), FP_SMEM, s>>>(c->T, a, z, c->fp.d_soff, c->fp.d_dense,
                                                                           c->fp.d_q, c->fp.d_offd, sw == 1);
            CU_LAUNCH();
        }
        cur = 1 - cur;
    }
    c->fp.cur = cur;
    if (c->T.ntiles > 0) {
        k_fp_resid<<<(unsigned)c->T.ntiles, dim3(LD, LD), FP_SMEM, s>>>(c->T, copy_of(c, cur), c->fp.d_soff,
                                                                        c->fp.d_dense, c->fp.d_tile_sq);
        CU_LAUNCH();
    }
cleanup:
    return status;
}

void fp_load_launch(int32_t nrows, cudaStream_t s, ildl_cuda_ctx *c, const int32_t *rows, const int32_t *rowbase,
                    double *inflight)
{
    k_fp_load<<<nrows, dim3(LD, LD), 0, s>>>(c->T, copy_of(c, c->fp.cur), c->fp.d_soff, c->fp.d_npert,
                                             c->fp.d_n2x2, rows, rowbase, inflight, c->fac.d_res);
}

int fp_residual_download(ildl_cuda_ctx *c, double *tile_sq, cudaStream_t s)
{
    int status = ILDL_SUCCESS;
    if (c->T.ntiles > 0)
        CU(cudaMemcpyAsync(tile_sq, c->fp.d_tile_sq, sizeof(double) * (size_t)c->T.ntiles, cudaMemcpyDeviceToHost, s));
cleanup:
    return status;
}

cudaError_t fp_configure(void)
{
    cudaError_t e = cudaFuncSetAttribute(k_fp_offd, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)FP_SMEM);
    if (e == cudaSuccess) e = cudaFuncSetAttribute(k_fp_resid, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)FP_SMEM);
    return e;
}
