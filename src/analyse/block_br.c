/* block_br.c -- strategy BR's coarse graph: rows paired by the matching are units, then level
 * after level the vertices are grouped by similarity (block_group.c) and the graph coarsened
 * by the groups (block_coarsen.c), the threshold lowered per level, until blocks are nearly
 * full or nothing more merges; then the rows of every final vertex. The coarse graph is then
 * ordered and expanded (block_br_order.c). */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyse/block.h"
#include "analyse/block_internal.h"
#include "blockildl.h"
#include "core/util.h"

/* BR stops lowering its threshold below min(threshold, BR_MIN_THRESHOLD), after
 * BR_MAX_LEVELS threshold steps, or once the mean block has BR_FULL * max_bs rows. */
#define BR_MIN_THRESHOLD 0.1
#define BR_MAX_LEVELS 40
#define BR_FULL 0.75

/* Longest column walked when collecting candidates on a graph of n vertices. */
static int64_t br_dense_limit(int32_t n)
{
    double lim = 10.0 * sqrt((double)n);
    return lim < 64.0 ? 64 : (int64_t)lim;
}

/* The units (level-0 vertices) inside vertex v of the level-k graph, appended to u[*nu..):
 * lv[k] groups the level-(k-1) vertices into level-k ones (k >= 1). Returns 0, or -1 if more
 * than ILDL_TILE units would be listed (a block never holds more rows than that). */
static int br_units(const groups *lv, int k, int32_t v, int32_t *u, int32_t *nu)
{
    if (k == 0) {
        if (*nu >= ILDL_TILE) return -1;
        u[(*nu)++] = v;
        return 0;
    }
    for (int64_t m = lv[k].head[v]; m < lv[k].head[v + 1]; m++)
        if (br_units(lv, k - 1, lv[k].memb[m], u, nu)) return -1;
    return 0;
}

/* The rows of every vertex of the final graph (level K, nc vertices): vertex v's rows at
 * rows[voff[v]..voff[v+1]) (voff: prefix sums of the weights = rows), its units by ascending
 * number (units are numbered by their first row, so rows ascend), a pair's second row right
 * after its first (lv[0] lists each unit's rows so): an orphaned loop, shared by the
 * threads of the caller's parallel region. *bad (shared, 0 before) becomes 1 if a vertex holds more than ILDL_TILE units (an
 * internal error). */
static void br_vertex_rows(const groups *lv, int K, int32_t nc, const int32_t *voff,
                           int32_t *rows, int *bad)
{
#pragma omp for schedule(dynamic, 1024)
    for (int32_t v = 0; v < nc; v++) {
        int32_t u[ILDL_TILE], nu = 0, q = voff[v];
        if (br_units(lv, K, v, u, &nu)) {
#pragma omp atomic write
            *bad = 1;
            continue;
        }
        for (int32_t a = 1; a < nu; a++) { /* insertion sort: at most 32 units */
            int32_t x = u[a], b = a - 1;
            for (; b >= 0 && u[b] > x; b--) u[b + 1] = u[b];
            u[b + 1] = x;
        }
        for (int32_t a = 0; a < nu; a++)
            for (int64_t m = lv[0].head[u[a]]; m < lv[0].head[u[a] + 1]; m++)
                rows[q++] = lv[0].memb[m];
    }
}

/* Rows per chunk of the parallel passes over all rows (fixed, so chunks do not depend on the
 * thread count). */
#define BR_ROW_CHUNK 65536

/* 1 if row r starts its unit: it has no pair partner, or the partner comes later. */
static inline int unit_start(const int32_t *pair, int32_t r)
{
    return !pair || pair[r] < 0 || pair[r] > r;
}

/* Level 0 of BR: each row alone or with its pair partner is one unit, units numbered by their
 * first row; umap[r] = unit of row r, U (allocated here) lists each unit's rows, first row
 * first. The numbering is a prefix count, so it runs in parallel over chunks of rows (count,
 * offsets, fill; then the second rows of pairs) and is the serial numbering for any thread
 * count; the n-sized arrays are also first touched in parallel. One thread takes the single
 * pass instead (half the time of the three). ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
static int br_units_level(int32_t n, const int32_t *pair, int32_t *umap, groups *U)
{
    if (ildl_max_threads() == 1) {
        if (ildl_groups_alloc(n, n, U)) return ILDL_ERR_OUT_OF_MEMORY;
        int32_t nv = 0;
        int64_t nm = 0;
        for (int32_t r = 0; r < n; r++) {
            if (!unit_start(pair, r)) {
                umap[r] = umap[pair[r]];
                continue;
            }
            umap[r] = nv;
            U->head[nv++] = nm;
            U->memb[nm++] = r;
            if (pair && pair[r] > r) U->memb[nm++] = pair[r];
        }
        U->ng = nv;
        U->head[nv] = nm;
        return ILDL_SUCCESS;
    }
    int32_t nch = (int32_t)(((int64_t)n + BR_ROW_CHUNK - 1) / BR_ROW_CHUNK);
    int64_t *cu = ildl_calloc((size_t)nch + 1, sizeof(int64_t)); /* units before chunk c */
    int64_t *cm = ildl_calloc((size_t)nch + 1, sizeof(int64_t)); /* members before chunk c */
    if (!cu || !cm) {
        free(cu);
        free(cm);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int32_t c = 0; c < nch; c++) {
        int32_t lo = c * BR_ROW_CHUNK, hi = n - lo > BR_ROW_CHUNK ? lo + BR_ROW_CHUNK : n;
        int64_t nu = 0, nm = 0;
        for (int32_t r = lo; r < hi; r++)
            if (unit_start(pair, r)) {
                nu++;
                nm += 1 + (pair && pair[r] > r);
            }
        cu[c + 1] = nu;
        cm[c + 1] = nm;
    }
    for (int32_t c = 0; c < nch; c++) {
        cu[c + 1] += cu[c];
        cm[c + 1] += cm[c];
    }
    int st = ildl_groups_alloc((int32_t)cu[nch], n, U);
    if (!st) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int32_t c = 0; c < nch; c++) {
            int32_t lo = c * BR_ROW_CHUNK, hi = n - lo > BR_ROW_CHUNK ? lo + BR_ROW_CHUNK : n;
            int32_t u = (int32_t)cu[c];
            int64_t m = cm[c];
            for (int32_t r = lo; r < hi; r++) {
                if (!unit_start(pair, r)) continue;
                umap[r] = u;
                U->head[u++] = m;
                U->memb[m++] = r;
                if (pair && pair[r] > r) U->memb[m++] = pair[r];
            }
        }
        U->head[cu[nch]] = cm[nch];
#pragma omp parallel for schedule(static)
        for (int32_t r = 0; r < n; r++)
            if (!unit_start(pair, r)) umap[r] = umap[pair[r]]; /* set by the pass above */
    }
    free(cu);
    free(cm);
    return st;
}

/* BR's merging levels on A: the final coarse graph *G (allocated here) and the groups of
 * every merging level lv[0..*K] (lv[0]: the units; the caller frees them with
 * ildl_groups_free). */
static int br_coarsen_levels(const ildl_csr *A, const int32_t *pair, int max_bs, double threshold,
                             double decay, bgraph *G, groups lv[BR_MAX_LEVELS + 1], int *K)
{
    bgraph C = {0};
    groups M = {0};
    int32_t n = A->n, *umap = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *gmap = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int st = ILDL_SUCCESS;
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    *K = 0;
    if (!umap || !gmap) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    /* level 0: each pair is one vertex (unit) of weight 2, so no level can split it */
    st = br_units_level(n, pair, umap, &lv[0]);
    if (st) goto cleanup;
    ildl_profile_lap(&tp, "BR units");
    st = ildl_bgraph_coarsen(n, A->rowptr, A->col, NULL, umap, &lv[0], G);
    if (st) goto cleanup;
    ildl_profile_lap(&tp, "BR units graph (n %d)", (int)G->n);

    /* Threshold schedule (paper Sec. III-A: start at `threshold`, times decay per level).
     * The threshold is lowered after every level, also after one that merged nothing:
     * stopping at the first empty level left many matrices at n one-row blocks, because
     * at 0.8 hardly two rows of a KKT or PDE matrix are that similar, so the lower
     * thresholds the paper relies on were never reached. It does not go below the floor
     * min(threshold, BR_MIN_THRESHOLD); at the floor, levels go on while each merges at
     * least 1% of the vertices. Everything stops after BR_MAX_LEVELS steps or once the mean
     * block has BR_FULL * max_bs rows. An empty level leaves G unchanged, so the steps
     * whose threshold is still above the best similarity it saw (`below`) would be empty
     * too and are skipped. decay = 1 keeps the threshold fixed: stop at the first empty.
     * The groups of every merging level are kept (lv): they expand the final vertices. */
    double t = threshold, floor_t = fmin(threshold, BR_MIN_THRESHOLD);
    for (int level = 0; level < BR_MAX_LEVELS; level++) {
        double below = -1.0;
        st = ildl_br_group_any(G, t, max_bs, br_dense_limit(G->n), gmap, &M, &below, *K >= 1);
        if (st) goto cleanup;
        ildl_profile_lap(&tp, "BR group level %d (n %d -> %d)", level, (int)G->n, (int)M.ng);
        int32_t merged = G->n - M.ng, prev = G->n;
        if (merged > 0) {
            st = ildl_bgraph_coarsen(G->n, G->p, G->i, G->w, gmap, &M, &C);
            if (st) goto cleanup;
            ildl_profile_lap(&tp, "BR coarsen level %d", level);
            ildl_bgraph_free(G);
            *G = C;
            memset(&C, 0, sizeof C);
            lv[++*K] = M;
        } else {
            ildl_groups_free(&M);
            if (decay >= 1.0 || t <= floor_t || below < floor_t)
                break; /* no allowed threshold merges anything more */
        }
        memset(&M, 0, sizeof M);
        if ((double)G->n * BR_FULL * max_bs <= (double)n) break; /* blocks near max_bs */
        if (t <= floor_t && (int64_t)merged * 100 < (int64_t)prev) break; /* stalled */
        double tn = fmax(t * decay, floor_t);
        while (merged == 0 && tn > below && tn > floor_t) {
            tn = fmax(tn * decay, floor_t); /* a step that would be empty */
            level++;
        }
        t = tn;
    }

cleanup:
    ildl_bgraph_free(&C);
    ildl_groups_free(&M);
    free(umap);
    free(gmap);
    return st;
}

/* Checks shared by the BR entry points. */
static int br_check(const ildl_csr *A, const int32_t *pair, int max_bs, double threshold,
                    double decay)
{
    int st = ildl_block_check(A, max_bs, threshold);
    if (st) return st;
    if (!(decay >= 0.0 && decay <= 1.0) || !ildl_block_pair_valid(A->n, pair))
        return ILDL_ERR_INVALID_OPTION;
    return ILDL_SUCCESS;
}

/* The rows of every vertex of G (voff[G->n + 1], rows[n], allocated here) by one parallel
 * region of its own. */
static int br_rows_alone(const groups *lv, int K, const bgraph *G, int32_t n, int32_t **voff,
                         int32_t **rows)
{
    int bad = 0;
    *voff = ildl_malloc(sizeof(int32_t) * ((size_t)G->n + 1));
    *rows = ildl_malloc(sizeof(int32_t) * ((size_t)n > 0 ? (size_t)n : 1));
    if (!*voff || !*rows) return ILDL_ERR_OUT_OF_MEMORY;
    (*voff)[0] = 0;
    for (int32_t v = 0; v < G->n; v++) (*voff)[v + 1] = (*voff)[v] + G->w[v];
#pragma omp parallel
    br_vertex_rows(lv, K, G->n, *voff, *rows, &bad);
    return bad ? ILDL_ERR_INTERNAL : ILDL_SUCCESS;
}

/* BR's coarse graph (block.h). */
int ildl_block_br_graph(const ildl_csr *A, const int32_t *pair, int max_bs, double threshold,
                        double decay, ildl_br_graph *g)
{
    bgraph G = {0};
    groups lv[BR_MAX_LEVELS + 1];
    int K = 0;
    memset(lv, 0, sizeof lv);
    if (!g) return ILDL_ERR_INVALID_OPTION;
    memset(g, 0, sizeof *g);
    int st = br_check(A, pair, max_bs, threshold, decay);
    if (st) return st;
    if (max_bs < 2) pair = NULL; /* a pair cannot share a block of one row */
    st = br_coarsen_levels(A, pair, max_bs, threshold, decay, &G, lv, &K);
    if (!st) st = br_rows_alone(lv, K, &G, A->n, &g->voff, &g->rows);
    for (int k = 0; k <= K; k++) ildl_groups_free(&lv[k]);
    g->n = A->n;
    g->nv = G.n;
    g->p = G.p;
    g->i = G.i;
    g->w = G.w;
    if (st) ildl_br_graph_free(g);
    return st;
}

/* Free what ildl_block_br_graph allocated in g (block.h). */
void ildl_br_graph_free(ildl_br_graph *g)
{
    if (!g) return;
    free(g->p);
    free(g->i);
    free(g->w);
    free(g->voff);
    free(g->rows);
    memset(g, 0, sizeof *g);
}
