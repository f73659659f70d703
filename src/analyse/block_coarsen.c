/* block_coarsen.c -- BR's coarse graphs: a symmetric pattern coarsened by a grouping of its
 * vertices (an edge between two groups iff one between their members, weights summed), in
 * parallel with the same result on any number of threads; and the graph and grouping types'
 * allocation (block_internal.h). */

#include <stdlib.h>
#include <string.h>
#include "analyse/block_internal.h"
#include "blockildl.h"
#include "core/util.h"

/* Free G's arrays (block_internal.h). */
void ildl_bgraph_free(bgraph *G)
{
    free(G->p);
    free(G->i);
    free(G->w);
    memset(G, 0, sizeof *G);
}

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sort the distinct values v[0..m) ascending: insertion sort when short, else qsort. */
static void sort_int32(int32_t *v, int64_t m)
{
    if (m > 32) {
        qsort(v, (size_t)m, sizeof(int32_t), cmp_int32);
        return;
    }
    for (int64_t k = 1; k < m; k++) {
        int32_t x = v[k];
        int64_t j = k - 1;
        for (; j >= 0 && v[j] > x; j--) v[j + 1] = v[j];
        v[j + 1] = x;
    }
}

/* Coarse row g into row[0..): g, then the groups of the neighbours of its members memb[lo..hi),
 * each once (mark[h] == g once listed; mark must never hold g beforehand), sorted. Returns
 * the count. */
static int64_t coarse_row(const int64_t *p, const int32_t *ci, const int32_t *map,
                          const int32_t *memb, int64_t lo, int64_t hi, int32_t g,
                          int32_t *mark, int32_t *row)
{
    int64_t q = 0;
    mark[g] = g;
    row[q++] = g;
    for (int64_t m = lo; m < hi; m++) {
        int32_t v = memb[m];
        for (int64_t e = p[v]; e < p[v + 1]; e++) {
            int32_t h = map[ci[e]];
            if (mark[h] != g) {
                mark[h] = g;
                row[q++] = h;
            }
        }
    }
    sort_int32(row, q);
    return q;
}

/* Free M's arrays (block_internal.h). */
void ildl_groups_free(groups *M)
{
    free(M->head);
    free(M->memb);
    memset(M, 0, sizeof *M);
}

/* Room for ng groups over nv vertices. ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
int ildl_groups_alloc(int32_t ng, int32_t nv, groups *M)
{
    M->ng = ng;
    M->head = ildl_malloc(sizeof(int64_t) * ((size_t)ng + 1));
    M->memb = ildl_malloc(sizeof(int32_t) * ((size_t)nv > 0 ? (size_t)nv : 1));
    if (M->head && M->memb) return ILDL_SUCCESS;
    ildl_groups_free(M);
    return ILDL_ERR_OUT_OF_MEMORY;
}

/* Coarsen the symmetric pattern (n, p, ci) (self loops optional, w NULL = unit weights) by
 * map[v] in 0..nc-1, whose groups M lists: C has an edge g-h iff some v in g and u in h are
 * adjacent, plus every self loop g-g, and weights summed; rows sorted. Each coarse row and
 * weight depends only on the input (a row is sorted and a weight is an integer sum, so the
 * members' order does not matter either), so groups are handled in parallel, each row in
 * its own slot of a scratch array (slot g has room for 1 + the members' degrees), then
 * packed: the result is the same for any thread count. The groups come from whoever made
 * map, which knows them anyway: no serial bucket sort of the n vertices here. */
int ildl_bgraph_coarsen(int32_t n, const int64_t *p, const int32_t *ci, const int32_t *w,
                        const int32_t *map, const groups *M, bgraph *C)
{
    int st = ILDL_SUCCESS, oom = 0;
    int32_t nc = M->ng;
    int64_t *slot = NULL;
    int32_t *scratch = NULL;
    memset(C, 0, sizeof *C);
    double tq = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    slot = ildl_calloc((size_t)nc + 1, sizeof(int64_t));
    scratch = ildl_malloc(sizeof(int32_t) * ((size_t)p[n] + (size_t)nc));
    C->p = ildl_calloc((size_t)nc + 1, sizeof(int64_t));
    C->w = ildl_calloc((size_t)nc, sizeof(int32_t));
    if (!slot || !scratch || !C->p || !C->w) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    /* weights and slot sizes per group, then the slots' offsets */
#pragma omp parallel for schedule(dynamic, 4096)
    for (int32_t g = 0; g < nc; g++) {
        int64_t deg = 1, wg = 0;
        for (int64_t m = M->head[g]; m < M->head[g + 1]; m++) {
            int32_t v = M->memb[m];
            deg += p[v + 1] - p[v];
            wg += w ? w[v] : 1;
        }
        slot[g + 1] = deg;
        C->w[g] = (int32_t)wg;
    }
    ildl_profile_lap(&tq, "  coarsen: alloc+weights");
    for (int32_t g = 0; g < nc; g++) slot[g + 1] += slot[g];
    ildl_profile_lap(&tq, "  coarsen: prefix");
    /* rows into their slots; lengths at C->p[g + 1] */
#pragma omp parallel
    {
        int32_t *mark = ildl_thread_scratch(sizeof(int32_t) * (size_t)nc, &oom);
        if (mark)
            for (int32_t g = 0; g < nc; g++) mark[g] = -1;
#pragma omp for schedule(dynamic, 1024)
        for (int32_t g = 0; g < nc; g++)
            if (mark)
                C->p[g + 1] = coarse_row(p, ci, map, M->memb, M->head[g], M->head[g + 1], g,
                                         mark, scratch + slot[g]);
        free(mark);
    }
    if (oom) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    ildl_profile_lap(&tq, "  coarsen: rows");
    for (int32_t g = 0; g < nc; g++) C->p[g + 1] += C->p[g];
    C->n = nc;
    C->i = ildl_malloc(sizeof(int32_t) * (size_t)C->p[nc]);
    if (!C->i) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
#pragma omp parallel for schedule(static)
    for (int32_t g = 0; g < nc; g++)
        memcpy(C->i + C->p[g], scratch + slot[g], sizeof(int32_t) * (size_t)(C->p[g + 1] - C->p[g]));
    ildl_profile_lap(&tq, "  coarsen: pack");

cleanup:
    free(slot);
    free(scratch);
    if (st) ildl_bgraph_free(C);
    return st;
}
