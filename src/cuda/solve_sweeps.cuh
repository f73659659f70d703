/* solve_sweeps.cuh -- the bodies of the persistent sync-free kernels: blocks take work items
 * (a block row, or a chunk of a split row) by an atomic ticket until none is left. Taking
 * them by ticket (not by blockIdx) in a topological order guarantees that every row a block
 * waits for was claimed earlier by a running block: no deadlock even when the grid is not
 * resident all at once. */
#ifndef ILDL_CUDA_SOLVE_SWEEPS_CUH
#define ILDL_CUDA_SOLVE_SWEEPS_CUH
#include "cuda/solve_rows.cuh"

/* The next ticket for the whole block (uniform), or >= nb when the work is done. */
__device__ __forceinline__ int sf_take(int *ticket, int *slot)
{
    __syncthreads(); /* the previous row's reads of *slot are over */
    if (threadIdx.x == 0) *slot = atomicAdd(ticket, 1);
    __syncthreads();
    return *slot;
}

/* The sync-free sweeps' bodies; NS: without staging tiles (more blocks fit an SM). */
template <int W, typename S, bool VG, bool NS>
__device__ __forceinline__ void forward_syncfree(const dev_tiles &T, const double *xin, double *x, int *ticket,
                                                 const int *epoch, const int *skip)
{
    extern __shared__ double smem[];
    __shared__ int slot;
    if (*skip) return; /* SQMR has halted: this iteration is discarded */
    int ep = *epoch;
    for (;;) {
        int t = sf_take(ticket, &slot);
        if (t >= T.sf_nitems_f) break;
        const sf_rowrec rec = T.sf_rec_f[t];
        int32_t i = rec.i, chunk = (rec.mc >> 8) - 1;
        /* the row's data from T, not the record: the record made this kernel 17-21% slower
         * (its code, not its loads); the ticket's row still comes from it */
        row_at ra = row_from_tiles<true>(T, i);
        const double *xr = xin;
        if (chunk >= 0) { /* an item of a split row */
            int last = (int)((ra.qend - ra.q0 - 1) / T.sf_chunk);
            if (chunk < last) { /* partial sums; the last of these to finish sums them up */
                row_chunk<W, S, true, VG, NS>(T, i, chunk, xin, x, smem, ep);
                continue;
            }
            /* the last item: the row's rest as a whole row, from the others' running sum
             * (row_forward reads its input at xr + b0: here the row's first scratch slot) */
            sf_wait_ready(T.sf_ready + i, ep);
            ra.q0 += (int64_t)last * T.sf_chunk;
            xr = T.sf_scratch + T.sf_scr_f[i] * LD - ra.b0;
        }
        unsigned long long t_claim = trace_row_begin();
        row_forward<W, true, S, VG, NS>(T, ra, xr, x, smem);
        trace_row_end(0, T.nb, trace_pos(T.sf_items_f, t), i, t_claim);
    }
}

template <int W, typename S, bool NS>
__device__ __forceinline__ void backward_syncfree(const dev_tiles &T, const double *xin, double *x, int *ticket,
                                                  const int *epoch, const int *skip)
{
    extern __shared__ double smem[];
    __shared__ int slot;
    if (*skip) return; /* SQMR has halted: this iteration is discarded */
    int ep = *epoch;
    for (;;) {
        int t = sf_take(ticket, &slot);
        if (t >= T.sf_nitems_b) break;
        const sf_rowrec rec = T.sf_rec_b[t];
        int32_t i = rec.i, chunk = (rec.mc >> 8) - 1;
        if (chunk >= 0) { /* a chunk of a split row */
            row_chunk<W, S, false, false, NS>(T, i, chunk, xin, x, smem, ep);
            continue;
        }
        unsigned long long t_claim = trace_row_begin();
        row_backward<W, true, S, NS>(T, row_from_rec(rec), xin, x, smem);
        trace_row_end(1, T.nb, T.nb - 1 - trace_pos(T.sf_items_b, t), i, t_claim);
    }
}

#endif
