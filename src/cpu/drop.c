/* drop.c -- dual-threshold dropping of one tile (Saad's ILUT rule applied per block row) and
 * gathering its survivors. The "keep the largest" order is total (magnitude, then local
 * index), so the survivors do not depend on the sort algorithm: a radix sort on the GPU
 * keeps exactly the same entries. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include "cpu/drop.h"

#define LD 32

typedef struct {
    double mag;
    int idx; /* local index r*32+c */
} drop_entry;

/* Larger magnitude first; equal magnitudes: smaller local index first. */
static int drop_cmp(const void *x, const void *y)
{
    const drop_entry *s = x, *t = y;
    if (s->mag != t->mag) return s->mag > t->mag ? -1 : 1;
    return (s->idx > t->idx) - (s->idx < t->idx);
}

/* Tau rule, then keep the keep largest; returns the number of nonzeros left. */
int ildl_drop_tile(int mi, int mj, double *tile, const double *rownorm, double tau, int keep)
{
    drop_entry e[LD * LD];
    int nz = 0;
    assert(mi >= 0 && mi <= LD && mj >= 0 && mj <= LD);
    for (int r = 0; r < mi; r++) {
        double thr = tau * rownorm[r];
        for (int c = 0; c < mj; c++) {
            double v = fabs(tile[r * LD + c]);
            if (v <= thr || v == 0) {
                tile[r * LD + c] = 0; /* also turns -0 into +0 */
            } else {
                e[nz].mag = v;
                e[nz].idx = r * LD + c;
                nz++;
            }
        }
    }
    if (keep < 0 || nz <= keep) return nz;
    qsort(e, (size_t)nz, sizeof(drop_entry), drop_cmp);
    for (int t = keep; t < nz; t++) tile[e[t].idx] = 0;
    return keep;
}

/* Gather the nonzeros of the tile in ascending local index; returns the count. */
int ildl_tile_compress(int mi, int mj, const double *tile, uint16_t *idx, double *val)
{
    int nz = 0;
    assert(mi >= 0 && mi <= LD && mj >= 0 && mj <= LD);
    for (int r = 0; r < mi; r++) {
        for (int c = 0; c < mj; c++) {
            double v = tile[r * LD + c];
            if (v != 0) {
                idx[nz] = (uint16_t)(r * LD + c);
                val[nz] = v;
                nz++;
            }
        }
    }
    return nz;
}
