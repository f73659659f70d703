/* drop.c -- dual-threshold dropping of one tile (Saad's ILUT rule applied per block row) and
 * gathering its survivors. The "keep the largest" order is total (magnitude, then local
 * index), so the survivors do not depend on the selection algorithm: a selection here, a
 * threshold search on the GPU, both keep exactly the same entries. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include "cpu/drop.h"
#include "core/dense_rules.h"
#include "cpu/real.h"

#define LD ILDL_TILE

typedef struct {
    ildl_real mag;
    int idx; /* local index r*32+c */
} drop_entry;

/* 1 if s comes before t in the keep order: larger magnitude, then smaller local index. */
static inline int drop_before(const drop_entry *s, const drop_entry *t)
{
    return s->mag > t->mag || (s->mag == t->mag && s->idx < t->idx);
}

/* Reorder e[0..n) so that e[0..k] are the k+1 first in the keep order (Wirth's selection: a
 * sort is not needed, only the set, and the order is strict, so the set is unique). */
static void drop_select(drop_entry *e, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        drop_entry x = e[k];
        int i = lo, j = hi;
        do {
            while (drop_before(&e[i], &x)) i++;
            while (drop_before(&x, &e[j])) j--;
            if (i <= j) {
                drop_entry t = e[i];
                e[i] = e[j];
                e[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < k) lo = i;
        if (k < i) hi = j;
    }
}

/* Tau rule, then keep the keep largest; returns the number of nonzeros left. */
int RN(ildl_drop_tile)(int mi, int mj, ildl_real *tile, const ildl_real *rownorm, double tau, int keep)
{
    drop_entry e[LD * LD];
    int nz = 0;
    assert(mi >= 0 && mi <= LD && mj >= 0 && mj <= LD);
    for (int r = 0; r < mi; r++) {
        ildl_real thr = (ildl_real)tau * rownorm[r];
        for (int c = 0; c < mj; c++) {
            ildl_real v = RABS(tile[r * LD + c]);
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
    if (keep > 0) drop_select(e, nz, keep - 1);
    for (int t = keep; t < nz; t++) tile[e[t].idx] = 0;
    return keep;
}

/* Gather the nonzeros of the tile in ascending local index; returns the count. */
int RN(ildl_tile_compress)(int mi, int mj, const ildl_real *tile, uint16_t *idx, ildl_real *val)
{
    int nz = 0;
    assert(mi >= 0 && mi <= LD && mj >= 0 && mj <= LD);
    for (int r = 0; r < mi; r++) {
        for (int c = 0; c < mj; c++) {
            ildl_real v = tile[r * LD + c];
            if (v != 0) {
                idx[nz] = (uint16_t)(r * LD + c);
                val[nz] = v;
                nz++;
            }
        }
    }
    return nz;
}
