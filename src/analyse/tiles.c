/* tiles.c -- lay out the tile store (paper Sec. IV-A): copies of the coarse pattern and
 * levels, a CSC view for the pull updates, A's upper triangle sorted into tiles, and the
 * static capacity, format and offset of every tile of U. */
#include "analyse/tiles.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"

/* Copy the coarse pattern into T (row_ptr, row, col, fill_lvl) and build its CSC view. */
static int copy_pattern(const ildl_coarse *C, ildl_tiles *T)
{
    int32_t nb = C->nb;
    int64_t nt = C->nblocks;
    T->ntiles = nt;
    T->row_ptr = ildl_malloc((size_t)(nb + 1) * sizeof(int64_t));
    T->row = ildl_malloc((size_t)nt * sizeof(int32_t));
    T->col = ildl_malloc((size_t)nt * sizeof(int32_t));
    T->fill_lvl = ildl_malloc((size_t)nt * sizeof(int32_t));
    T->col_ptr = ildl_calloc((size_t)nb + 1, sizeof(int64_t));
    T->col_tiles = ildl_malloc((size_t)nt * sizeof(int64_t));
    if (!T->row_ptr || !T->row || !T->col || !T->fill_lvl || !T->col_ptr || !T->col_tiles)
        return ILDL_ERR_OUT_OF_MEMORY;
    memcpy(T->row_ptr, C->row_ptr, (size_t)(nb + 1) * sizeof(int64_t));
    memcpy(T->col, C->col, (size_t)nt * sizeof(int32_t));
    memcpy(T->fill_lvl, C->lvl, (size_t)nt * sizeof(int32_t));
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t i = 0; i < nb; i++) {
        for (int64_t t = C->row_ptr[i]; t < C->row_ptr[i + 1]; t++) T->row[t] = i;
    }
    /* CSC: scanning tiles in id order visits block rows ascending, so columns come out sorted */
    for (int64_t t = 0; t < nt; t++) T->col_ptr[T->col[t] + 1]++;
    for (int32_t j = 0; j < nb; j++) T->col_ptr[j + 1] += T->col_ptr[j];
    for (int64_t t = 0; t < nt; t++) T->col_tiles[T->col_ptr[T->col[t]]++] = t;
    for (int32_t j = nb; j > 0; j--) T->col_ptr[j] = T->col_ptr[j - 1];
    T->col_ptr[0] = 0;
    return ILDL_SUCCESS;
}

/* Copy the level sets into T. */
static int copy_levels(const ildl_levels *L, ildl_tiles *T)
{
    int32_t nb = T->nb;
    T->nlevels = L->nlevels;
    T->level_ptr = ildl_malloc((size_t)(L->nlevels + 1) * sizeof(int32_t));
    T->level_rows = ildl_malloc((size_t)nb * sizeof(int32_t));
    T->row_level = ildl_malloc((size_t)nb * sizeof(int32_t));
    if (!T->level_ptr || !T->level_rows || !T->row_level) return ILDL_ERR_OUT_OF_MEMORY;
    memcpy(T->level_ptr, L->level_ptr, (size_t)(L->nlevels + 1) * sizeof(int32_t));
    memcpy(T->level_rows, L->level_rows, (size_t)nb * sizeof(int32_t));
    memcpy(T->row_level, L->row_level, (size_t)nb * sizeof(int32_t));
    return ILDL_SUCCESS;
}

/* Count the upper entries of block row bi per tile into a_ptr[t+1]; tpos[nb] is workspace
 * holding -1 (and left so). Returns 0, or -1 if an entry has no tile (C not built from Ap). */
static int count_row(const ildl_csr *Ap, const int32_t *blk, int32_t bi, int64_t *tpos,
                     ildl_tiles *T)
{
    int bad = 0;
    for (int64_t t = T->row_ptr[bi]; t < T->row_ptr[bi + 1]; t++) tpos[T->col[t]] = t;
    for (int32_t i = T->bstart[bi]; i < T->bstart[bi + 1] && !bad; i++) {
        for (int64_t p = Ap->rowptr[i]; p < Ap->rowptr[i + 1]; p++) {
            int32_t j = Ap->col[p];
            if (j < i) continue;
            int64_t t = tpos[blk[j]];
            if (t < 0) {
                bad = 1;
                break;
            }
            T->a_ptr[t + 1]++;
        }
    }
    for (int64_t t = T->row_ptr[bi]; t < T->row_ptr[bi + 1]; t++) tpos[T->col[t]] = -1;
    return bad ? -1 : 0;
}

/* Place the upper entries of block row bi into its tiles (a_ptr final); tpos as above.
 * Rows and columns ascending put each tile's entries in ascending local index r*32+c. */
static void place_row(const ildl_csr *Ap, const int64_t *src_index, const int32_t *perm,
                      const int32_t *blk, int32_t bi, int64_t *tpos, ildl_tiles *T)
{
    for (int64_t t = T->row_ptr[bi]; t < T->row_ptr[bi + 1]; t++) tpos[T->col[t]] = T->a_ptr[t];
    for (int32_t i = T->bstart[bi]; i < T->bstart[bi + 1]; i++) {
        int32_t r = i - T->bstart[bi];
        for (int64_t p = Ap->rowptr[i]; p < Ap->rowptr[i + 1]; p++) {
            int32_t j = Ap->col[p];
            if (j < i) continue;
            int32_t bj = blk[j];
            int64_t q = tpos[bj]++;
            T->a_idx[q] = (uint16_t)(r * ILDL_TILE + (j - T->bstart[bj]));
            T->a_val[q] = Ap->val[p];
            T->a_src[q] = src_index ? src_index[p] : p;
            T->a_srow[q] = perm ? perm[i] : i;
            T->a_scol[q] = perm ? perm[j] : j;
        }
    }
    for (int64_t t = T->row_ptr[bi]; t < T->row_ptr[bi + 1]; t++) tpos[T->col[t]] = -1;
}

/* Sort the upper entries of Ap (j >= i) into their tiles; blk[n] maps a row to its block.
 * src_index / perm NULL mean identity. A block row writes only its own tiles, so block
 * rows run in parallel, each thread with its own tile lookup (tpos) over block columns. */
static int load_pattern(const ildl_csr *Ap, const int64_t *src_index, const int32_t *perm,
                        const int32_t *blk, ildl_tiles *T)
{
    int32_t nb = T->nb;
    int64_t nt = T->ntiles;
    int bad = 0, oom = 0;
    T->a_ptr = ildl_calloc((size_t)nt + 1, sizeof(int64_t));
    if (!T->a_ptr) return ILDL_ERR_OUT_OF_MEMORY;
#pragma omp parallel
    {
        int64_t *tpos = ildl_thread_scratch((size_t)nb * sizeof(int64_t), &oom);
        if (tpos)
            for (int32_t b = 0; b < nb; b++) tpos[b] = -1;
#pragma omp for schedule(dynamic, 64) reduction(| : bad)
        for (int32_t bi = 0; bi < nb; bi++)
            if (tpos && count_row(Ap, blk, bi, tpos, T)) bad = 1;
#pragma omp single
        {
            if (!oom && !bad) {
                for (int64_t t = 0; t < nt; t++) T->a_ptr[t + 1] += T->a_ptr[t];
                int64_t na = T->a_ptr[nt];
                T->a_idx = ildl_malloc((size_t)na * sizeof(uint16_t));
                T->a_val = ildl_malloc((size_t)na * sizeof(double));
                T->a_src = ildl_malloc((size_t)na * sizeof(int64_t));
                T->a_srow = ildl_malloc((size_t)na * sizeof(int32_t));
                T->a_scol = ildl_malloc((size_t)na * sizeof(int32_t));
                if (!T->a_idx || !T->a_val || !T->a_src || !T->a_srow || !T->a_scol) oom = 1;
            }
        } /* implicit barrier: a_ptr and the arrays are ready */
        if (!oom && !bad) {
#pragma omp for schedule(dynamic, 64)
            for (int32_t bi = 0; bi < nb; bi++) place_row(Ap, src_index, perm, blk, bi, tpos, T);
        }
        free(tpos);
    }
    if (oom) return ILDL_ERR_OUT_OF_MEMORY;
    return bad ? ILDL_ERR_INTERNAL : ILDL_SUCCESS;
}

/* Capacity ceil(r_f * base) clipped to the dense size (base > 0, r_f > 0). */
static int64_t capacity(double fill_factor, double base, int64_t dense)
{
    double x = ceil(fill_factor * base);
    return (x >= (double)dense) ? dense : (int64_t)x;
}

/* Capacity and format of every tile (see tiles.h for the rules). */
static int set_formats(double fill_factor, ildl_tiles *T)
{
    int32_t nb = T->nb;
    int64_t nt = T->ntiles;
    int32_t ndense_rows = (int32_t)(((int64_t)nb + 99) / 100); /* last 1%, at least one */
    T->format = ildl_malloc((size_t)nt * sizeof(uint8_t));
    T->cap = ildl_malloc((size_t)nt * sizeof(int64_t));
    if (!T->format || !T->cap) return ILDL_ERR_OUT_OF_MEMORY;
    if (ndense_rows < 1) ndense_rows = 1;

    /* block rows are independent */
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t bi = 0; bi < nb; bi++) {
        int64_t mi = ildl_tiles_block_size(T, bi), occupied = 0, sum = 0;
        for (int64_t t = T->row_ptr[bi]; t < T->row_ptr[bi + 1]; t++) {
            int64_t na = T->a_ptr[t + 1] - T->a_ptr[t];
            if (T->col[t] != bi && na > 0) {
                occupied++;
                sum += na;
            }
        }
        /* empty (fill) tiles get the mean of the occupied ones: a guess at their final size */
        double base = occupied > 0 ? (double)sum / (double)occupied : 1.0;
        if (base < 1.0) base = 1.0;
        int all_dense = !(fill_factor > 0.0) || bi >= nb - ndense_rows; /* NaN too */
        for (int64_t t = T->row_ptr[bi]; t < T->row_ptr[bi + 1]; t++) {
            int32_t bj = T->col[t];
            int64_t dense = mi * ildl_tiles_block_size(T, bj);
            int64_t na = T->a_ptr[t + 1] - T->a_ptr[t];
            int64_t cap = dense;
            if (!all_dense && bj != bi)
                cap = capacity(fill_factor, na > 0 ? (double)na : base, dense);
            /* sparse pays a 2-byte index per entry and indirect addressing (factor 0.5) */
            int sparse = (double)cap * (double)(sizeof(double) + sizeof(uint16_t)) <
                         0.5 * (double)dense * (double)sizeof(double);
            T->format[t] = sparse ? ILDL_TILE_SPARSE : ILDL_TILE_DENSE;
            T->cap[t] = sparse ? cap : dense;
        }
    }
    return ILDL_SUCCESS;
}

/* Storage order (level of the block row, then tile id), static offsets and total_cap. */
static int set_offsets(ildl_tiles *T)
{
    int64_t nt = T->ntiles;
    int32_t nl = T->nlevels;
    int64_t *start = ildl_calloc((size_t)nl + 1, sizeof(int64_t));
    T->cap_off = ildl_malloc((size_t)nt * sizeof(int64_t));
    T->tile_order = ildl_malloc((size_t)nt * sizeof(int64_t));
    if (!start || !T->cap_off || !T->tile_order) {
        free(start);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    for (int64_t t = 0; t < nt; t++) start[T->row_level[T->row[t]] + 1]++;
    for (int32_t l = 0; l < nl; l++) start[l + 1] += start[l];
    for (int64_t t = 0; t < nt; t++) T->tile_order[start[T->row_level[T->row[t]]]++] = t;
    free(start);
    int64_t off = 0;
    for (int64_t s = 0; s < nt; s++) {
        int64_t t = T->tile_order[s];
        T->cap_off[t] = off;
        off += T->cap[t];
    }
    T->total_cap = off;
    return ILDL_SUCCESS;
}

/* Sort seq[0..m) (tile ids) by key[dep(t)] (ascending, or descending if desc), then by dep. */
static void sort_by_level(int64_t *seq, int64_t m, const int32_t *dep, const int32_t *key, int desc)
{
    for (int64_t a = 1; a < m; a++) { /* rows have tens of tiles: insertion sort */
        int64_t t = seq[a];
        int32_t kt = desc ? -key[dep[t]] : key[dep[t]], dt = dep[t];
        int64_t b = a - 1;
        for (; b >= 0; b--) {
            int64_t u = seq[b];
            int32_t ku = desc ? -key[dep[u]] : key[dep[u]];
            if (ku < kt || (ku == kt && dep[u] < dt)) break;
            seq[b + 1] = u;
        }
        seq[b + 1] = t;
    }
}

/* fwd_seq and bwd_seq (see tiles.h): per block row, independent, so in parallel. */
static int set_solve_order(ildl_tiles *T)
{
    int64_t nt = T->ntiles;
    T->fwd_seq = ildl_malloc((size_t)nt * sizeof(int64_t));
    T->bwd_seq = ildl_malloc((size_t)nt * sizeof(int64_t));
    if (!T->fwd_seq || !T->bwd_seq) return ILDL_ERR_OUT_OF_MEMORY;
    memcpy(T->fwd_seq, T->col_tiles, (size_t)nt * sizeof(int64_t));
    for (int64_t t = 0; t < nt; t++) T->bwd_seq[t] = t;
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t i = 0; i < T->nb; i++) {
        int64_t q0 = T->col_ptr[i], q = ildl_tiles_col_diag(T, i);
        sort_by_level(T->fwd_seq + q0, q - q0, T->row, T->row_level, 0);
        int64_t t0 = T->row_ptr[i] + 1;
        sort_by_level(T->bwd_seq + t0, T->row_ptr[i + 1] - t0, T->col, T->row_level, 1);
    }
    return ILDL_SUCCESS;
}

int ildl_tiles_set_precision(ildl_tiles *T, int single)
{
    if (single ? T->val32 != NULL : T->val != NULL) return ILDL_SUCCESS;
    /* the old values go first, so the two arrays never need to fit at once */
    free(T->val);
    free(T->val32);
    T->val = NULL;
    T->val32 = NULL;
    T->diag_inverted = 0;
    size_t m = (size_t)(T->total_cap > 0 ? T->total_cap : 1);
    void *v = ildl_calloc(m, single ? sizeof(float) : sizeof(double));
    if (!v) return ILDL_ERR_OUT_OF_MEMORY;
    if (single) T->val32 = v;
    else T->val = v;
    return ILDL_SUCCESS;
}

/* Factor storage: val/idx of total_cap, per-tile off/nnz, per-row pivots and D. */
static int alloc_factor(ildl_tiles *T)
{
    int64_t nt = T->ntiles;
    int32_t n = T->n;
    T->off = ildl_malloc((size_t)nt * sizeof(int64_t));
    T->nnz = ildl_calloc((size_t)nt, sizeof(int64_t));
    T->val = ildl_calloc((size_t)T->total_cap, sizeof(double));
    T->idx = ildl_calloc((size_t)T->total_cap, sizeof(uint16_t));
    T->piv = ildl_malloc((size_t)n * sizeof(int32_t));
    T->d_diag = ildl_calloc((size_t)n, sizeof(double));
    T->d_off = ildl_calloc((size_t)n, sizeof(double));
    T->piv_type = ildl_calloc((size_t)n, sizeof(int8_t));
    if (!T->off || !T->nnz || !T->val || !T->idx || !T->piv || !T->d_diag || !T->d_off ||
        !T->piv_type)
        return ILDL_ERR_OUT_OF_MEMORY;
    memcpy(T->off, T->cap_off, (size_t)nt * sizeof(int64_t));
    /* identity pivot order until a factorization writes its own */
    for (int32_t b = 0; b < T->nb; b++) {
        for (int32_t k = T->bstart[b]; k < T->bstart[b + 1]; k++) T->piv[k] = k - T->bstart[b];
    }
    return ILDL_SUCCESS;
}

int ildl_tiles_build(const ildl_csr *Ap, const int64_t *src_index, const int32_t *perm,
                     int32_t nb, const int32_t *bstart, const ildl_coarse *C,
                     const ildl_levels *L, double fill_factor, int64_t max_entries, ildl_tiles *out)
{
    int status = ILDL_ERR_OUT_OF_MEMORY;
    int64_t need = -1;
    int32_t n = Ap->n, *blk = NULL;
    memset(out, 0, sizeof(*out));
    out->n = n;
    out->nb = nb;

    out->bstart = ildl_malloc((size_t)(nb + 1) * sizeof(int32_t));
    blk = ildl_malloc((size_t)n * sizeof(int32_t));
    if (!out->bstart || !blk) goto cleanup;
    memcpy(out->bstart, bstart, (size_t)(nb + 1) * sizeof(int32_t));
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t b = 0; b < nb; b++)
        for (int32_t i = bstart[b]; i < bstart[b + 1]; i++) blk[i] = b;

    if ((status = copy_pattern(C, out)) != ILDL_SUCCESS) goto cleanup;
    if ((status = copy_levels(L, out)) != ILDL_SUCCESS) goto cleanup;
    if ((status = load_pattern(Ap, src_index, perm, blk, out)) != ILDL_SUCCESS)
        goto cleanup;
    if ((status = set_formats(fill_factor, out)) != ILDL_SUCCESS) goto cleanup;
    if ((status = set_offsets(out)) != ILDL_SUCCESS) goto cleanup;
    if (max_entries > 0 && out->total_cap > max_entries) { /* before the factor's storage */
        need = out->total_cap;
        status = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    if ((status = set_solve_order(out)) != ILDL_SUCCESS) goto cleanup;
    status = alloc_factor(out);

cleanup:
    free(blk);
    if (status != ILDL_SUCCESS) ildl_tiles_free(out);
    if (need >= 0) out->total_cap = need;
    return status;
}

void ildl_tiles_load_values(ildl_tiles *T, const double *values, const double *s)
{
    int64_t na = T->a_ptr[T->ntiles];
    /* every refactorization passes here; each entry is written once, so any thread count
     * gives the same bits */
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < na; k++) {
        double v = values[T->a_src[k]];
        T->a_val[k] = s ? s[T->a_srow[k]] * v * s[T->a_scol[k]] : v;
    }
}

void ildl_tiles_free(ildl_tiles *T)
{
    if (!T) return;
    free(T->bstart);
    free(T->row_ptr);
    free(T->row);
    free(T->col);
    free(T->fill_lvl);
    free(T->col_ptr);
    free(T->col_tiles);
    free(T->level_ptr);
    free(T->level_rows);
    free(T->row_level);
    free(T->a_ptr);
    free(T->a_idx);
    free(T->a_val);
    free(T->a_src);
    free(T->a_srow);
    free(T->a_scol);
    free(T->format);
    free(T->cap);
    free(T->cap_off);
    free(T->fwd_seq);
    free(T->bwd_seq);
    free(T->tile_order);
    free(T->chunk_f);
    free(T->off);
    free(T->nnz);
    free(T->val);
    free(T->val32);
    free(T->idx);
    free(T->piv);
    free(T->d_diag);
    free(T->d_off);
    free(T->piv_type);
    memset(T, 0, sizeof(*T));
}
