/* tiles.h -- the tile store: the one plain struct-of-arrays layout shared by the analyse
 * stage and every backend (CPU reference and CUDA). Everything a backend needs to factor
 * and solve is in here; a GPU copies the arrays as they are.
 *
 * Conventions
 *  - Rows/columns are in the ANALYSED order (scaled, permuted by the ordering and blocking):
 *    analysed row k is original row perm[k]. Block b owns analysed rows bstart[b]..bstart[b+1]-1
 *    (mb = bstart[b+1]-bstart[b] <= 32).
 *  - U is block upper triangular; tile t = (row[t], col[t]) with col >= row. Tiles of a block
 *    row are contiguous (row_ptr), columns ascending, the diagonal tile first.
 *  - A local index inside a tile is r*32 + c (uint16_t), r = local row, c = local column.
 *  - Dense tiles are stored row-major with leading dimension = number of columns of the tile
 *    (mi x mj); diagonal tiles store the strictly upper part of unit U_ii (the rest is 0), or,
 *    once prepared for the solves (diag_inverted), of V_ii = U_ii^{-1}, also unit upper:
 *    every solve with U_ii is then a product with V_ii.
 *  - After factorization, the rows of block b are in pivot order: factored local row r is
 *    analysed local row piv[bstart[b]+r]. Every tile's rows AND columns are in pivot order.
 *  - D is block diagonal with 1x1 and 2x2 pivots: d_diag[k] = D(k,k); for a 2x2 pivot starting
 *    at k, d_off[k] = D(k,k+1) = D(k+1,k), piv_type[k] = 2, piv_type[k+1] = 0; 1x1: type 1.
 */
#ifndef ILDL_ANALYSE_TILES_H
#define ILDL_ANALYSE_TILES_H
#include <stdint.h>
#include "core/csr.h"
#include "core/dense_rules.h" /* ILDL_TILE */
#include "analyse/fill.h"
#include "analyse/levels.h"

enum { ILDL_TILE_DENSE = 0, ILDL_TILE_SPARSE = 1 };

typedef struct ildl_tiles {
    int32_t n, nb;
    int32_t *bstart;      /* [nb+1] */

    /* coarse pattern (owned copies) */
    int64_t ntiles;
    int64_t *row_ptr;     /* [nb+1] tiles of block row i: row_ptr[i]..row_ptr[i+1]-1 */
    int32_t *row;         /* [ntiles] block row of tile t */
    int32_t *col;         /* [ntiles] block column of tile t */
    int32_t *fill_lvl;    /* [ntiles] level of fill (0 = from A) */
    int64_t *col_ptr;     /* [nb+1] CSC view: tiles of block column j ... */
    int64_t *col_tiles;   /* [ntiles] ... col_tiles[col_ptr[j]..col_ptr[j+1]-1], rows ascending */

    /* level sets (owned copies) */
    int32_t nlevels;
    int32_t *level_ptr;   /* [nlevels+1] */
    int32_t *level_rows;  /* [nb] */
    int32_t *row_level;   /* [nb] */

    /* A in tile layout: the entries of the scaled, permuted upper triangle, per tile, in
     * ascending local index; refilled by every factorization from the user's values. */
    int64_t *a_ptr;       /* [ntiles+1] */
    uint16_t *a_idx;      /* [a_ptr[ntiles]] local index r*32+c */
    double *a_val;        /* [a_ptr[ntiles]] scaled values */
    int64_t *a_src;       /* [a_ptr[ntiles]] index of the entry in the user's CSR values */
    int32_t *a_srow;      /* [a_ptr[ntiles]] original row of the entry (for scaling) */
    int32_t *a_scol;      /* [a_ptr[ntiles]] original column of the entry */

    /* factor storage: static layout made by the analyse stage */
    uint8_t *format;      /* [ntiles] ILDL_TILE_DENSE or ILDL_TILE_SPARSE */
    int64_t *cap;         /* [ntiles] capacity in entries (dense: mi*mj) */
    int64_t *cap_off;     /* [ntiles] static offset: tiles ordered by the level of their block
                           * row, then by tile id; cap_off[t] = sum of cap of earlier tiles */
    int64_t *tile_order;  /* [ntiles] tile ids in storage order (level, then id) */
    /* the order in which the solves subtract a block row's off-diagonal tiles: by when the
     * block they depend on is solved, earliest first, so that on the GPU the last wait of a
     * row comes last (the CPU reference uses the same order, so results stay bit-identical) */
    int64_t *fwd_seq;     /* [ntiles] for column i, fwd_seq[col_ptr[i]..]: the tiles (k,i), k < i,
                           * by level of k ascending, then k; then the rest of col_tiles */
    int64_t *bwd_seq;     /* [ntiles] for row i, bwd_seq[row_ptr[i]] = the diagonal tile, then
                           * the tiles (i,j), j > i, by level of j DEScending, then j */
    int64_t total_cap;    /* sum of cap */

    /* factor storage: written by a factorization */
    int64_t *off;         /* [ntiles] actual offset of tile t in val/idx */
    int64_t *nnz;         /* [ntiles] entries stored (dense: mi*mj) */
    double *val;          /* [total_cap] the factor in double precision, or NULL ... */
    float *val32;         /* [total_cap] ... in single precision (ildl_tiles_set_precision);
                           * exactly one of the two is allocated. D stays in double arrays:
                           * a single-precision factorization stores float values there */
    uint16_t *idx;        /* [total_cap] local indices of sparse tiles (ascending) */
    int32_t *piv;         /* [n] pivot order inside each block (see above) */
    double *d_diag;       /* [n] */
    double *d_off;        /* [n] */
    int8_t *piv_type;     /* [n] */
    int diag_inverted;    /* the diagonal tiles hold V_ii = U_ii^{-1} (ildl_cpu_invert_diagonal,
                           * or the CUDA factorization), not U_ii */
    uint8_t *chunk_f;     /* [ntiles] the forward solve's chunk code of each tile
                           * (ildl_sparse_chunk_code; 0 for a dense one), set by the CPU
                           * factorization so that every solve need not find it again (a pass
                           * over the tile's indices made the CPU solve ~35% slower), or NULL */
} ildl_tiles;

/* Lay out the tile store for Ap (the scaled, permuted matrix, full pattern, sorted; its
 * entries' positions in the user's CSR in src_index[nnz], original coordinates by perm) with
 * blocks bstart, pattern C and levels L. Capacities: cap = ceil(r_f * nnz(A_ij)); for fill
 * tiles the mean nnz of occupied off-diagonal tiles in the same block row (at least 1) times
 * r_f; r_f <= 0 means unlimited (every tile dense). cap never exceeds mi*mj.
 * Format: sparse iff cap*(sizeof(double)+sizeof(uint16_t)) < 0.5 * mi*mj*sizeof(double)
 * (the 0.5 compensates the indirect addressing of sparse tiles), else dense; diagonal tiles
 * and the tiles of the last 1% of block rows (at least the last one) are dense; a dense
 * tile's cap is mi*mj. Copies the coarse pattern and levels. max_entries > 0: where total_cap
 * would exceed it, nothing of the factor's storage is allocated and ILDL_ERR_OUT_OF_MEMORY is
 * returned with out empty but for out->total_cap, the entries needed.
 * Returns ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_tiles_build(const ildl_csr *Ap, const int64_t *src_index, const int32_t *perm,
                     int32_t nb, const int32_t *bstart, const ildl_coarse *C,
                     const ildl_levels *L, double fill_factor, int64_t max_entries, ildl_tiles *out);

/* Refill a_val from the user's values and the scaling s (original indexing):
 * a_val[k] = s[a_srow[k]] * values[a_src[k]] * s[a_scol[k]]. */
void ildl_tiles_load_values(ildl_tiles *T, const double *values, const double *s);

/* Rows in block b. */
static inline int ildl_tiles_block_size(const ildl_tiles *T, int32_t b)
{
    return T->bstart[b + 1] - T->bstart[b];
}

/* The next k < i present in both block columns i and j, from positions *qi < ei, *qj < ej of
 * col_tiles (advanced past it): its tiles (k,i) and (k,j) into *ti, *tj; 0 when there is none.
 * The merge every pull of an off-diagonal tile (i,j) walks, k ascending (the GPU's
 * d_next_common walks it the same way). */
static inline int ildl_tiles_next_common(const ildl_tiles *T, int32_t i, int64_t *qi, int64_t ei, int64_t *qj,
                                         int64_t ej, int64_t *ti, int64_t *tj)
{
    while (*qi < ei && *qj < ej) {
        int64_t a = T->col_tiles[*qi], b = T->col_tiles[*qj];
        int32_t ki = T->row[a], kj = T->row[b];
        if (ki >= i || kj >= i) return 0;
        if (ki < kj) (*qi)++;
        else if (kj < ki) (*qj)++;
        else {
            *ti = a;
            *tj = b;
            (*qi)++;
            (*qj)++;
            return 1;
        }
    }
    return 0;
}

/* 1 when no tile is sparse (a complete analysis: fill_factor <= 0): every tile stores all its
 * entries at its capacity offset, and with tau = 0 nothing is dropped (src/cpu/factor.c). */
static inline int ildl_tiles_all_dense(const ildl_tiles *T)
{
    for (int64_t t = 0; t < T->ntiles; t++)
        if (T->format[t] == ILDL_TILE_SPARSE) return 0;
    return 1;
}

/* The diagonal tile's place in block column j's list: col_tiles[col_ptr[j] .. this) are the
 * tiles (k, j), k < j (rows ascend). */
static inline int64_t ildl_tiles_col_diag(const ildl_tiles *T, int32_t j)
{
    int64_t p = T->col_ptr[j];
    while (p < T->col_ptr[j + 1] && T->row[T->col_tiles[p]] < j) p++;
    return p;
}

/* The solves sum a sparse tile's outputs in chunks: output o's sum is taken over the inputs in
 * ranges of W (inputs 0..W-1, W..2W-1, ...), each range summed from 0 in ascending order, the
 * ranges' sums added in ascending order; empty ranges add nothing. On the GPU one lane sums one
 * (output, range) chunk, so a tile costs as many steps as its fullest chunk instead of its fullest
 * output (control70: 11.2 forward steps a tile become 6.3). Forward only (outputs: columns,
 * inputs: rows); backward the code is 0. W is the smallest of 8 and 16 whose non-empty chunks
 * fit the 32 lanes of a warp, else 32 (one chunk per output, the plain sum). Returned as its
 * code: W = 32 >> code. Shared by the CPU reference and the CUDA kernels, so both cut every
 * tile alike. */
#ifdef __CUDACC__
#define ILDL_HOST_DEVICE __host__ __device__
#else
#define ILDL_HOST_DEVICE
#endif
static inline ILDL_HOST_DEVICE int ildl_popcount32(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __popc(x);
#else
    return __builtin_popcount(x);
#endif
}
static inline ILDL_HOST_DEVICE int ildl_sparse_chunk_code(int64_t nz, const uint16_t *idx, int forward)
{
    if (!forward) return 0; /* chunked, the backward sweep was 2-5% slower: few steps to save */
    uint32_t occ[4] = {0, 0, 0, 0}; /* outputs with an entry among the inputs 8g..8g+7 */
    for (int64_t e = 0; e < nz; e++) occ[idx[e] >> 8] |= 1u << (idx[e] & 31); /* row >> 3, column */
    int c8 = ildl_popcount32(occ[0]) + ildl_popcount32(occ[1]) + ildl_popcount32(occ[2]) + ildl_popcount32(occ[3]);
    if (c8 <= 32) return 2;
    int c16 = ildl_popcount32(occ[0] | occ[1]) + ildl_popcount32(occ[2] | occ[3]);
    return c16 <= 32 ? 1 : 0;
}

/* Keep the factor values in single (single != 0: val32) or double precision (val); frees the
 * other array first (the factor values are gone: factor again). Returns ILDL_SUCCESS or
 * ILDL_ERR_OUT_OF_MEMORY (then T holds neither array and cannot be factored). */
int ildl_tiles_set_precision(ildl_tiles *T, int single);

void ildl_tiles_free(ildl_tiles *T);

#endif
