/* order.c -- orderings of a symmetric graph, all returning perm[new] = old:
 * AMD and METIS nested dissection (fill), reverse Cuthill-McKee (bandwidth) and greedy
 * multicolouring, plain (GMC) or at distance l_f + 1 so that its level sets survive the fill
 * (GMC_FILL): few level sets for the triangular solves and the level-scheduled factor; and
 * AUTO's rules, which choose among them. */
#include "analyse/order.h"
#include "analyse/fill.h"
#include "analyse/levels.h"
#include "blockildl.h"
#include "core/util.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "amd.h"
#include "metis.h"

/* The graph every ordering works on: the pattern of A without self loops, rows sorted. */
typedef struct {
    int32_t n;
    int64_t *ptr; /* [n+1] */
    int32_t *adj; /* [ptr[n]] */
} graph;

static void graph_free(graph *G)
{
    free(G->ptr);
    free(G->adj);
    G->ptr = NULL;
    G->adj = NULL;
}

/* G = (n, rowptr, col) less its diagonal; input order is kept, so sorted rows stay sorted. */
static int graph_strip(int32_t n, const int64_t *rowptr, const int32_t *col, graph *G)
{
    int64_t nz = 0;
    G->n = n;
    G->ptr = ildl_malloc(sizeof(int64_t) * ((size_t)n + 1));
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) nz += (col[p] != i);
    G->adj = ildl_malloc(sizeof(int32_t) * (size_t)nz);
    if (!G->ptr || !G->adj) {
        graph_free(G);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    nz = 0;
    for (int32_t i = 0; i < n; i++) {
        G->ptr[i] = nz;
        for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++)
            if (col[p] != i) G->adj[nz++] = col[p];
    }
    G->ptr[n] = nz;
    return ILDL_SUCCESS;
}

static int32_t degree(const graph *G, int32_t v) { return (int32_t)(G->ptr[v + 1] - G->ptr[v]); }

/* Arguments every public ordering checks; n == 0 is a valid empty ordering. */
static int bad_args(int32_t n, const int64_t *rowptr, const int32_t *col, const int32_t *perm)
{
    return n < 0 || (n > 0 && (!rowptr || !col || !perm));
}

static void identity(int32_t n, int32_t *perm)
{
    for (int32_t k = 0; k < n; k++) perm[k] = k;
}

/* ---------------------------------------------------------------- AMD */

/* AMD through its int interface; the SuiteSparse_long one when nnz does not fit an int. */
int ildl_order_amd(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm)
{
    graph G = {0};
    int *Ap = NULL, *Ai = NULL, *P = NULL;
    SuiteSparse_long *Lp = NULL, *Li = NULL, *LP = NULL;
    double control[AMD_CONTROL];
    int st, rc;
    if (bad_args(n, rowptr, col, perm)) return ILDL_ERR_INTERNAL;
    if (n == 0) return ILDL_SUCCESS;
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    st = graph_strip(n, rowptr, col, &G);
    if (st != ILDL_SUCCESS) return st;
    int64_t nz = G.ptr[n];
    amd_defaults(control);
    st = ILDL_ERR_OUT_OF_MEMORY;
    if (nz <= INT_MAX) {
        Ap = ildl_malloc(sizeof(int) * ((size_t)n + 1));
        Ai = ildl_malloc(sizeof(int) * (size_t)nz);
        P = ildl_malloc(sizeof(int) * (size_t)n);
        if (!Ap || !Ai || !P) goto cleanup;
        for (int32_t i = 0; i <= n; i++) Ap[i] = (int)G.ptr[i];
        for (int64_t p = 0; p < nz; p++) Ai[p] = G.adj[p];
        ildl_profile_lap(&tp, "AMD input (strip, int copy)");
        rc = amd_order(n, Ap, Ai, P, control, NULL);
        ildl_profile_lap(&tp, "AMD amd_order");
        if (rc == AMD_OK || rc == AMD_OK_BUT_JUMBLED)
            for (int32_t k = 0; k < n; k++) perm[k] = P[k];
    } else {
        Lp = ildl_malloc(sizeof(SuiteSparse_long) * ((size_t)n + 1));
        Li = ildl_malloc(sizeof(SuiteSparse_long) * (size_t)nz);
        LP = ildl_malloc(sizeof(SuiteSparse_long) * (size_t)n);
        if (!Lp || !Li || !LP) goto cleanup;
        for (int32_t i = 0; i <= n; i++) Lp[i] = G.ptr[i];
        for (int64_t p = 0; p < nz; p++) Li[p] = G.adj[p];
        ildl_profile_lap(&tp, "AMD input (strip, long copy)");
        rc = (int)amd_l_order(n, Lp, Li, LP, control, NULL);
        ildl_profile_lap(&tp, "AMD amd_l_order");
        if (rc == AMD_OK || rc == AMD_OK_BUT_JUMBLED)
            for (int32_t k = 0; k < n; k++) perm[k] = (int32_t)LP[k];
    }
    if (rc == AMD_OK || rc == AMD_OK_BUT_JUMBLED) st = ILDL_SUCCESS;
    else if (rc == AMD_OUT_OF_MEMORY) st = ILDL_ERR_OUT_OF_MEMORY;
    else st = ILDL_ERR_INTERNAL;
cleanup:
    graph_free(&G);
    free(Ap); free(Ai); free(P);
    free(Lp); free(Li); free(LP);
    return st;
}

/* ---------------------------------------------------------------- METIS */

/* METIS nested dissection. Isolated vertices go first (they cause no fill) and are kept out of
 * METIS, which misbehaves on edgeless graphs; the rest is ordered as one METIS graph. */
int ildl_order_metis(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm)
{
    graph G = {0};
    int32_t *local = NULL, *global = NULL;
    idx_t *xadj = NULL, *adjncy = NULL, *mperm = NULL, *miperm = NULL;
    idx_t options[METIS_NOPTIONS];
    int st;
    if (bad_args(n, rowptr, col, perm)) return ILDL_ERR_INTERNAL;
    if (n == 0) return ILDL_SUCCESS;
    st = graph_strip(n, rowptr, col, &G);
    if (st != ILDL_SUCCESS) return st;
    st = ILDL_ERR_OUT_OF_MEMORY;
    local = ildl_malloc(sizeof(int32_t) * (size_t)n);
    global = ildl_malloc(sizeof(int32_t) * (size_t)n);
    if (!local || !global) goto cleanup;
    int32_t k = 0, m = 0;
    for (int32_t i = 0; i < n; i++) {
        if (degree(&G, i) == 0) {
            perm[k++] = i;
            local[i] = -1;
        } else {
            local[i] = m;
            global[m++] = i;
        }
    }
    if (m == 0) {
        st = ILDL_SUCCESS;
        goto cleanup;
    }
    int64_t nz = G.ptr[n];
    if ((uint64_t)nz > (uint64_t)IDX_MAX) {
        st = ILDL_ERR_NOT_SUPPORTED; /* the graph does not fit METIS's index type */
        goto cleanup;
    }
    xadj = ildl_malloc(sizeof(idx_t) * ((size_t)m + 1));
    adjncy = ildl_malloc(sizeof(idx_t) * (size_t)nz);
    mperm = ildl_malloc(sizeof(idx_t) * (size_t)m);
    miperm = ildl_malloc(sizeof(idx_t) * (size_t)m);
    if (!xadj || !adjncy || !mperm || !miperm) goto cleanup;
    xadj[0] = 0;
    for (int32_t j = 0; j < m; j++) {
        int32_t i = global[j];
        idx_t q = xadj[j];
        for (int64_t p = G.ptr[i]; p < G.ptr[i + 1]; p++) adjncy[q++] = local[G.adj[p]];
        xadj[j + 1] = q;
    }
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t nv = m;
    int rc = METIS_NodeND(&nv, xadj, adjncy, NULL, options, mperm, miperm);
    if (rc == METIS_OK) {
        /* METIS's perm (not iperm) is the elimination order, perm[new] = old */
        for (int32_t j = 0; j < m; j++) perm[k + j] = global[mperm[j]];
        st = ILDL_SUCCESS;
    } else {
        st = (rc == METIS_ERROR_MEMORY) ? ILDL_ERR_OUT_OF_MEMORY : ILDL_ERR_INTERNAL;
    }
cleanup:
    graph_free(&G);
    free(local); free(global);
    free(xadj); free(adjncy); free(mperm); free(miperm);
    return st;
}

/* ---------------------------------------------------------------- RCM */

/* Rooted level structure of root's component: queue gets the component in BFS order, lvl[v]
 * its depth (lvl must be -1 outside; the caller resets it). Returns the component size;
 * *nlev is the number of levels and *last the queue index where the deepest level starts. */
static int32_t level_structure(const graph *G, int32_t root, int32_t *lvl, int32_t *queue,
                               int32_t *nlev, int32_t *last)
{
    int32_t head = 0, tail = 0;
    queue[tail++] = root;
    lvl[root] = 0;
    *last = 0;
    while (head < tail) {
        int32_t v = queue[head++];
        for (int64_t p = G->ptr[v]; p < G->ptr[v + 1]; p++) {
            int32_t u = G->adj[p];
            if (lvl[u] >= 0) continue;
            lvl[u] = lvl[v] + 1;
            if (lvl[u] > lvl[queue[*last]]) *last = tail;
            queue[tail++] = u;
        }
    }
    *nlev = lvl[queue[tail - 1]] + 1;
    return tail;
}

static void reset_levels(const int32_t *queue, int32_t cnt, int32_t *lvl)
{
    for (int32_t k = 0; k < cnt; k++) lvl[queue[k]] = -1;
}

/* Ties are broken by index so the ordering is deterministic. */
static int key_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* George-Liu pseudo-peripheral node of the component containing seed: start at its
 * minimum-degree vertex and move to a minimum-degree vertex of the deepest level while that
 * makes the level structure deeper. */
static int32_t pseudo_peripheral(const graph *G, int32_t seed, int32_t *lvl, int32_t *queue)
{
    int32_t nlev, last, r = seed;
    int32_t cnt = level_structure(G, seed, lvl, queue, &nlev, &last);
    for (int32_t k = 0; k < cnt; k++) {
        int32_t v = queue[k];
        if (degree(G, v) < degree(G, r) || (degree(G, v) == degree(G, r) && v < r)) r = v;
    }
    reset_levels(queue, cnt, lvl);
    cnt = level_structure(G, r, lvl, queue, &nlev, &last);
    for (int32_t it = 0; it < cnt; it++) {
        int32_t x = queue[last];
        for (int32_t k = last + 1; k < cnt; k++) {
            int32_t v = queue[k];
            if (degree(G, v) < degree(G, x) || (degree(G, v) == degree(G, x) && v < x)) x = v;
        }
        int32_t xlev, xlast;
        reset_levels(queue, cnt, lvl);
        level_structure(G, x, lvl, queue, &xlev, &xlast);
        if (xlev <= nlev) break;
        r = x;
        nlev = xlev;
        last = xlast;
    }
    reset_levels(queue, cnt, lvl);
    return r;
}

/* Reverse Cuthill-McKee, one component at a time (components in order of their lowest
 * vertex), then the whole order is reversed. */
int ildl_order_rcm(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm)
{
    graph G = {0};
    int32_t *lvl = NULL, *queue = NULL;
    int64_t *keys = NULL;
    char *placed = NULL;
    int st;
    if (bad_args(n, rowptr, col, perm)) return ILDL_ERR_INTERNAL;
    if (n == 0) return ILDL_SUCCESS;
    st = graph_strip(n, rowptr, col, &G);
    if (st != ILDL_SUCCESS) return st;
    st = ILDL_ERR_OUT_OF_MEMORY;
    lvl = ildl_malloc(sizeof(int32_t) * (size_t)n);
    queue = ildl_malloc(sizeof(int32_t) * (size_t)n);
    keys = ildl_malloc(sizeof(int64_t) * (size_t)n);
    placed = ildl_calloc((size_t)n, 1);
    if (!lvl || !queue || !keys || !placed) goto cleanup;
    for (int32_t i = 0; i < n; i++) lvl[i] = -1;
    int32_t pos = 0;
    for (int32_t seed = 0; seed < n; seed++) {
        if (placed[seed]) continue;
        int32_t r = pseudo_peripheral(&G, seed, lvl, queue);
        int32_t head = pos;
        perm[pos++] = r;
        placed[r] = 1;
        /* perm doubles as the Cuthill-McKee queue */
        while (head < pos) {
            int32_t v = perm[head++], nk = 0;
            for (int64_t p = G.ptr[v]; p < G.ptr[v + 1]; p++) {
                int32_t u = G.adj[p];
                if (placed[u]) continue;
                placed[u] = 1;
                keys[nk++] = (int64_t)degree(&G, u) * n + u;
            }
            qsort(keys, (size_t)nk, sizeof(int64_t), key_cmp);
            for (int32_t k = 0; k < nk; k++) perm[pos++] = (int32_t)(keys[k] % n);
        }
    }
    for (int32_t a = 0, b = n - 1; a < b; a++, b--) {
        int32_t t = perm[a];
        perm[a] = perm[b];
        perm[b] = t;
    }
    st = ILDL_SUCCESS;
cleanup:
    graph_free(&G);
    free(lvl); free(queue); free(keys); free(placed);
    return st;
}

/* ------------------------------------- greedy multicolouring: plain (GMC), or surviving the fill (GMC_FILL) */

/* A vertex of more than max(HUB_MIN_DEGREE, HUB_AVG_FACTOR x the average degree) neighbours is a
 * hub: it is left out of the colouring and ordered last (see ildl_order_gmc_fill). */
#define HUB_MIN_DEGREE 64
#define HUB_AVG_FACTOR 8
/* Vertices visited by all the searches together, at most this many per edge (plus a constant)
 * before gmc-fill gives up: distance > 2 on an expander-like graph reaches nearly every vertex
 * from every vertex, n^2 work for an order that would be a chain anyway. */
#define GMC_FILL_WORK_PER_EDGE 256
#define GMC_FILL_WORK_MIN 50000000

/* Colour classes listed in colour order, vertices by index within a class, then the hubs. */
static void list_by_colour(int32_t n, const int32_t *colour, int32_t ncol, int32_t *start, int32_t *perm)
{
    memset(start, 0, sizeof(int32_t) * ((size_t)ncol + 1));
    for (int32_t v = 0; v < n; v++)
        if (colour[v] >= 0) start[colour[v] + 1]++;
    for (int32_t c = 0; c < ncol; c++) start[c + 1] += start[c];
    int32_t pos = start[ncol];
    for (int32_t v = 0; v < n; v++) {
        if (colour[v] >= 0) perm[start[colour[v]]++] = v;
        else perm[pos++] = v;
    }
}

/* Greedy colouring at graph distance `distance` (>= 1), in natural vertex order (each vertex
 * takes the smallest colour no vertex within that distance has yet), paths running through
 * non-hub vertices only (with_hubs; else no vertex is a hub); vertices listed colour by colour,
 * by index within a colour, hubs last. *ncolours, *nhubs (may be NULL): the counts.
 * ILDL_ERR_NOT_SUPPORTED when the searches exceed their work budget (distance too large). */
static int colour_order(int32_t n, const int64_t *rowptr, const int32_t *col, int distance, int with_hubs,
                        int32_t *perm, int32_t *ncolours, int32_t *nhubs)
{
    graph G = {0};
    int32_t *colour = NULL, *forbid = NULL, *seen = NULL, *queue = NULL, *start = NULL;
    int st;
    if (bad_args(n, rowptr, col, perm) || distance < 1) return ILDL_ERR_INTERNAL;
    if (ncolours) *ncolours = 0;
    if (nhubs) *nhubs = 0;
    if (n == 0) return ILDL_SUCCESS;
    st = graph_strip(n, rowptr, col, &G);
    if (st != ILDL_SUCCESS) return st;
    st = ILDL_ERR_OUT_OF_MEMORY;
    colour = ildl_malloc(sizeof(int32_t) * (size_t)n);
    forbid = ildl_malloc(sizeof(int32_t) * ((size_t)n + 1));
    seen = ildl_malloc(sizeof(int32_t) * (size_t)n);
    queue = ildl_malloc(sizeof(int32_t) * (size_t)n);
    if (!colour || !forbid || !seen || !queue) goto cleanup;
    int64_t hub_deg = (int64_t)HUB_AVG_FACTOR * ((G.ptr[n] + n - 1) / n);
    if (hub_deg < HUB_MIN_DEGREE) hub_deg = HUB_MIN_DEGREE;
    if (!with_hubs) hub_deg = INT64_MAX;
    int32_t hubs = 0;
    for (int32_t v = 0; v < n; v++) {
        int hub = degree(&G, v) > hub_deg;
        colour[v] = hub ? -2 : -1; /* -2: hub, never coloured; -1: not yet coloured */
        hubs += hub;
        seen[v] = -1;
        forbid[v] = -1;
    }
    forbid[n] = -1;
    int64_t work = 0, budget = (int64_t)GMC_FILL_WORK_PER_EDGE * G.ptr[n] + GMC_FILL_WORK_MIN;
    int32_t ncol = 0;
    for (int32_t v = 0; v < n; v++) {
        if (colour[v] == -2) continue;
        /* breadth-first to `distance` edges; seen[] == v and forbid[] == v mark this search,
         * so neither is ever cleared */
        int32_t head = 0, tail = 0;
        queue[tail++] = v;
        seen[v] = v;
        for (int d = 0; d < distance && head < tail; d++) {
            int32_t end = tail;
            for (; head < end; head++) {
                int32_t u = queue[head];
                for (int64_t p = G.ptr[u]; p < G.ptr[u + 1]; p++) {
                    int32_t w = G.adj[p];
                    if (seen[w] == v || colour[w] == -2) continue;
                    seen[w] = v;
                    queue[tail++] = w;
                    if (colour[w] >= 0) forbid[colour[w]] = v;
                }
                work += G.ptr[u + 1] - G.ptr[u];
            }
        }
        if (work > budget) {
            st = ILDL_ERR_NOT_SUPPORTED;
            goto cleanup;
        }
        int32_t c = 0;
        while (forbid[c] == v) c++;
        colour[v] = c;
        if (c + 1 > ncol) ncol = c + 1;
    }
    start = ildl_malloc(sizeof(int32_t) * ((size_t)ncol + 1));
    if (!start) goto cleanup;
    list_by_colour(n, colour, ncol, start, perm);
    if (ncolours) *ncolours = ncol;
    if (nhubs) *nhubs = hubs;
    st = ILDL_SUCCESS;
cleanup:
    graph_free(&G);
    free(colour); free(forbid); free(seen); free(queue); free(start);
    return st;
}

/* Plain GMC: distance 1, no hubs. Deterministic, linear time, and red-black on structured
 * grids. A colour class is an independent set, so the lower triangle has at most (number of
 * colours) level sets; after fill it has more (ildl_order_gmc_fill is the one that keeps them). */
int ildl_order_gmc(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm)
{
    return colour_order(n, rowptr, col, 1, 0, perm, NULL, NULL);
}

/* Why distance l_f + 1: level-of-fill l_f joins i and j only through a path of at most l_f + 1
 * edges whose inner vertices all come before both, so two vertices of one colour stay unjoined
 * after fill (a path through a hub cannot join them: the hub comes after both), and every colour
 * class is one level set: at most (colours + hubs) levels, where plain GMC loses its levels to
 * the fill. Hubs: see HUB_MIN_DEGREE. */
int ildl_order_gmc_fill(int32_t n, const int64_t *rowptr, const int32_t *col, int distance,
                        int32_t *perm, int32_t *ncolours, int32_t *nhubs)
{
    return colour_order(n, rowptr, col, distance, 1, perm, ncolours, nhubs);
}

/* ---------------------------------------------------------------- AUTO */

/* Depth of graph (n, rowptr, col) eliminated in the order perm: the number of level sets of a
 * triangular solve with its pattern, 1 + the longest chain of edges towards earlier vertices.
 * work: 2n int32. */
static int32_t order_depth(int32_t n, const int64_t *rowptr, const int32_t *col, const int32_t *perm,
                           int32_t *work)
{
    int32_t *pinv = work, *lev = work + n, depth = 0;
    for (int32_t k = 0; k < n; k++) pinv[perm[k]] = k;
    for (int32_t k = 0; k < n; k++) {
        int32_t v = perm[k], l = 0;
        for (int64_t p = rowptr[v]; p < rowptr[v + 1]; p++) {
            int32_t j = pinv[col[p]];
            if (j < k && lev[j] > l) l = lev[j];
        }
        lev[k] = l + 1;
        if (l + 1 > depth) depth = l + 1;
    }
    return depth;
}

/* Below this many vertices a deep graph costs little either way: AUTO keeps AMD. */
#define AUTO_MIN_VERTICES 64

/* AUTO: AMD (fewest entries, most robust in docs/preprocessing.md), unless AMD leaves the
 * graph nearly a path (depth >= 3/4 of the vertices, as on banded or staircase problems whose
 * block graph is a chain): then METIS, whose nested dissection cuts such chains to a handful of
 * level sets (1110 -> 6 on bloweya), if it is really shallower. *used: the method kept. */
static int order_auto(int32_t n, const int64_t *rowptr, const int32_t *col, int32_t *perm,
                      int *used)
{
    *used = ILDL_ORDER_AMD;
    int st = ildl_order_amd(n, rowptr, col, perm);
    if (st || n < AUTO_MIN_VERTICES) return st;
    int32_t *work = ildl_malloc(sizeof(int32_t) * 3 * (size_t)n);
    if (!work) return ILDL_SUCCESS; /* no room to compare: AMD's order stands */
    int32_t *alt = work + 2 * (size_t)n;
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE lap */
    int32_t d_amd = order_depth(n, rowptr, col, perm, work);
    ildl_profile_lap(&tp, "AUTO depth of AMD's order");
    if ((int64_t)d_amd * 4 >= (int64_t)n * 3) {
        /* METIS is only a possible improvement here: whatever stops it (too large for its
         * index type, its own memory, a library error), AMD's order stands */
        if (ildl_order_metis(n, rowptr, col, alt) == ILDL_SUCCESS &&
            order_depth(n, rowptr, col, alt, work) < d_amd) {
            memcpy(perm, alt, sizeof(int32_t) * (size_t)n);
            *used = ILDL_ORDER_METIS;
        }
    }
    free(work);
    return st;
}

/* AUTO's colouring rule is only for graphs of at least this many vertices: on the shared
 * suite's small KKT matrices (a few hundred blocks) GMC_FILL often needs several times AMD's
 * iterations, while from about a thousand blocks on, where it is at least 4x shallower, it kept
 * them (docs/ordering.md); and the per-level cost it saves grows with the graph. */
#define AUTO_COLOUR_MIN_VERTICES 1000
/* ... and only when the colouring's bound on the levels is at most 1/AUTO_COLOUR_GAIN of the
 * depth of the order it replaces. */
#define AUTO_COLOUR_GAIN 4

/* Depth of the order perm after level-1 fill of graph (n, rowptr, col): edges k-j, plus fill
 * k-j wherever some m before both is adjacent to both; the levels a triangular solve with the
 * filled pattern has. Linear time: the later neighbours of a vertex m become a clique, so
 * vertex k depends, through m, on every neighbour of m placed between m and k; pm[m] keeps the
 * highest level among those placed so far. work: 3n int32. */
int32_t ildl_order_depth_fill1(int32_t n, const int64_t *rowptr, const int32_t *col, const int32_t *perm,
                               int32_t *work)
{
    int32_t *pinv = work, *lev = work + n, *pm = work + 2 * (size_t)n, depth = 0;
    for (int32_t k = 0; k < n; k++) {
        pinv[perm[k]] = k;
        pm[k] = 0;
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t v = perm[k], l = 0;
        for (int64_t p = rowptr[v]; p < rowptr[v + 1]; p++) {
            int32_t m = pinv[col[p]];
            if (m >= k) continue;
            if (lev[m] > l) l = lev[m];
            if (pm[m] > l) l = pm[m];
        }
        lev[k] = l + 1;
        if (l + 1 > depth) depth = l + 1;
        for (int64_t p = rowptr[v]; p < rowptr[v + 1]; p++) {
            int32_t m = pinv[col[p]];
            if (m < k && pm[m] < l + 1) pm[m] = l + 1;
        }
    }
    return depth;
}

/* Depth of the order perm after level-of-fill lf >= 2, by the analysis's own symbolic fill and
 * level sets on the permuted graph (one vertex per block): what the analysis will find later.
 * Returns -1 when out of memory. */
static int32_t order_depth_fill(int32_t n, const int64_t *rowptr, const int32_t *col, const int32_t *perm,
                                int lf)
{
    ildl_csr P = {0};
    ildl_coarse C = {0};
    ildl_levels L = {0};
    int32_t depth = -1, *pinv = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *bstart = ildl_malloc(sizeof(int32_t) * ((size_t)n + 1));
    int64_t *next = ildl_malloc(sizeof(int64_t) * (size_t)n);
    if (!pinv || !bstart || !next || ildl_csr_alloc(n, rowptr[n], &P) != ILDL_SUCCESS) goto cleanup;
    for (int32_t k = 0; k < n; k++) pinv[perm[k]] = k;
    for (int32_t k = 0; k <= n; k++) bstart[k] = k;
    /* the permuted pattern with sorted rows, without sorting: the pattern is symmetric, so
     * walking the new columns j in order and adding j to the row of each neighbour of perm[j]
     * fills every row in ascending order (the fill reads only the pattern; values unused) */
    P.rowptr[0] = 0;
    for (int32_t k = 0; k < n; k++) P.rowptr[k + 1] = P.rowptr[k] + (rowptr[perm[k] + 1] - rowptr[perm[k]]);
    for (int32_t k = 0; k < n; k++) next[k] = P.rowptr[k];
    for (int32_t j = 0; j < n; j++) {
        int32_t v = perm[j];
        for (int64_t p = rowptr[v]; p < rowptr[v + 1]; p++) P.col[next[pinv[col[p]]]++] = j;
    }
    if (ildl_coarse_build(&P, n, bstart, lf, &C) == ILDL_SUCCESS && ildl_levels_compute(&C, &L) == ILDL_SUCCESS)
        depth = L.nlevels;
cleanup:
    ildl_levels_free(&L);
    ildl_coarse_free(&C);
    ildl_csr_free(&P);
    free(pinv); free(bstart); free(next);
    return depth;
}

int ildl_order_auto_colour_wanted(int32_t n, int fill_level)
{
    return n >= AUTO_COLOUR_MIN_VERTICES && fill_level >= 0;
}

int32_t ildl_order_depth_after_fill(int32_t n, const int64_t *rowptr, const int32_t *col,
                                    const int32_t *perm, int fill_level)
{
    /* at level 0 the graph's own depth, at level 1 in linear time, above by the analysis's
     * symbolic fill (if that runs out of memory, the level-1 depth: a lower bound) */
    int32_t depth = fill_level >= 2 ? order_depth_fill(n, rowptr, col, perm, fill_level) : -1;
    if (depth >= 0) return depth;
    int32_t *work = ildl_malloc(sizeof(int32_t) * 3 * ((size_t)n > 0 ? (size_t)n : 1));
    if (!work) return -1;
    depth = fill_level >= 1 ? ildl_order_depth_fill1(n, rowptr, col, perm, work)
                            : order_depth(n, rowptr, col, perm, work);
    free(work);
    return depth;
}

int ildl_order_auto_prefers_colouring(const ildl_colouring *c, int32_t depth)
{
    return c->status == ILDL_SUCCESS && ((int64_t)c->ncolours + c->nhubs) * AUTO_COLOUR_GAIN <= depth;
}

int ildl_order_auto_colour(int32_t n, const int64_t *rowptr, const int32_t *col, int fill_level,
                           const ildl_colouring *pre, int32_t *perm, int *used)
{
    if (!ildl_order_auto_colour_wanted(n, fill_level)) return ILDL_SUCCESS;
    ildl_colouring own = {0};
    if (!pre) { /* computed here: like METIS in order_auto, only a possible improvement, so
                 * whatever stops it (its work budget, memory) leaves the order standing */
        own.perm = ildl_malloc(sizeof(int32_t) * (size_t)n);
        if (!own.perm) return ILDL_SUCCESS; /* no room to compare: the order stands */
        own.status = ildl_order_gmc_fill(n, rowptr, col, fill_level + 1, own.perm, &own.ncolours, &own.nhubs);
        pre = &own;
    }
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE lap */
    int32_t depth = ildl_order_depth_after_fill(n, rowptr, col, perm, fill_level);
    if (ildl_order_auto_prefers_colouring(pre, depth)) {
        memcpy(perm, pre->perm, sizeof(int32_t) * (size_t)n);
        if (used) *used = ILDL_ORDER_GMC_FILL;
    }
    ildl_profile_lap(&tp, "AUTO colouring rule (depth %d, colours %d + hubs %d)", (int)depth,
                     (int)pre->ncolours, (int)pre->nhubs);
    free(own.perm);
    return ILDL_SUCCESS;
}

/* ---------------------------------------------------------------- dispatch and checks */

int ildl_order_graph(int32_t n, const int64_t *rowptr, const int32_t *col, int method,
                     int fill_level, int32_t *perm, int *used, char *msg, size_t msglen)
{
    const char *name;
    int st, kept = method;
    switch (method) {
    case ILDL_ORDER_AMD: name = "AMD"; st = ildl_order_amd(n, rowptr, col, perm); break;
    case ILDL_ORDER_RCM: name = "RCM"; st = ildl_order_rcm(n, rowptr, col, perm); break;
    case ILDL_ORDER_GMC: name = "GMC"; st = ildl_order_gmc(n, rowptr, col, perm); break;
    case ILDL_ORDER_METIS: name = "METIS"; st = ildl_order_metis(n, rowptr, col, perm); break;
    case ILDL_ORDER_GMC_FILL:
        name = "GMC-FILL";
        if (fill_level < 0) {
            ildl_msg(msg, msglen, "GMC-FILL ordering: fill level %d, must be >= 0", fill_level);
            return ILDL_ERR_INVALID_OPTION;
        }
        st = ildl_order_gmc_fill(n, rowptr, col, fill_level + 1, perm, NULL, NULL);
        break;
    case ILDL_ORDER_AUTO:
        name = "AUTO (AMD or METIS)";
        if (bad_args(n, rowptr, col, perm)) {
            st = ILDL_ERR_INTERNAL;
            break;
        }
        st = order_auto(n, rowptr, col, perm, &kept);
        break;
    case ILDL_ORDER_NATURAL:
        if (n < 0 || (n > 0 && !perm)) {
            ildl_msg(msg, msglen, "natural ordering: invalid arguments (n = %d)", (int)n);
            return ILDL_ERR_INTERNAL;
        }
        identity(n, perm);
        if (used) *used = method;
        return ILDL_SUCCESS;
    default:
        ildl_msg(msg, msglen, "ordering method %d is not one of AMD (%d), RCM (%d), GMC (%d), "
                 "METIS (%d), NATURAL (%d), AUTO (%d), GMC_FILL (%d)", method, ILDL_ORDER_AMD,
                 ILDL_ORDER_RCM, ILDL_ORDER_GMC, ILDL_ORDER_METIS, ILDL_ORDER_NATURAL,
                 ILDL_ORDER_AUTO, ILDL_ORDER_GMC_FILL);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (st == ILDL_ERR_OUT_OF_MEMORY)
        ildl_msg(msg, msglen, "%s ordering: out of memory (n = %d)", name, (int)n);
    else if (st == ILDL_ERR_NOT_SUPPORTED && method == ILDL_ORDER_GMC_FILL)
        ildl_msg(msg, msglen, "GMC-FILL ordering: colouring at distance %d (fill level %d + 1) "
                 "reaches too much of this graph (n = %d); use a lower fill level or another "
                 "ordering", fill_level + 1, fill_level, (int)n);
    else if (st == ILDL_ERR_NOT_SUPPORTED)
        ildl_msg(msg, msglen, "%s ordering: graph too large for the library's index type", name);
    else if (st != ILDL_SUCCESS)
        ildl_msg(msg, msglen, "%s ordering failed (invalid graph or library error, n = %d)", name,
                 (int)n);
    if (!st && used) *used = kept;
    return st;
}

int ildl_is_permutation(int32_t n, const int32_t *perm)
{
    if (n < 0 || (n > 0 && !perm)) return 0;
    char *seen = ildl_calloc((size_t)n, 1);
    int ok = seen != NULL;
    for (int32_t k = 0; ok && k < n; k++) {
        int32_t i = perm[k];
        if (i < 0 || i >= n || seen[i]) ok = 0;
        else seen[i] = 1;
    }
    free(seen);
    return ok;
}
