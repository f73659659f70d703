/* block.c -- cosine-similarity blocking (Saad 2003) of the rows of a symmetric matrix.
 * The pattern P_i of row i is its column set plus the diagonal; the similarity of rows i, j
 * is |P_i & P_j| / sqrt(|P_i| |P_j|). RB keeps a given order and cuts it into runs; BR
 * clusters rows over several coarsening levels and orders the final coarse graph. */

#include "analyse/block.h"
#include "blockildl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyse/order.h"
#include "core/util.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#define BLOCK_MAX_BS 32
/* BR stops lowering its threshold below min(threshold, BR_MIN_THRESHOLD), after
 * BR_MAX_LEVELS threshold steps, or once the mean block has BR_FULL * max_bs rows. */
#define BR_MIN_THRESHOLD 0.1
#define BR_MAX_LEVELS 40
#define BR_FULL 0.75

/* ---------------------------------------------------------------- shared checks */

/* ILDL_SUCCESS if the common arguments are usable, else ILDL_ERR_INVALID_OPTION. */
static int check_common(const ildl_csr *A, int max_bs, double threshold)
{
    if (!A || A->n <= 0 || !A->rowptr || (A->rowptr[A->n] > 0 && !A->col))
        return ILDL_ERR_INVALID_OPTION;
    if (max_bs < 1 || max_bs > BLOCK_MAX_BS) return ILDL_ERR_INVALID_OPTION;
    if (!(threshold >= 0.0 && threshold <= 1.0)) return ILDL_ERR_INVALID_OPTION; /* NaN too */
    return ILDL_SUCCESS;
}

/* 1 if pair is NULL or a valid involution: pair[i] = -1 or pair[pair[i]] = i != pair[i]. */
static int pair_valid(int32_t n, const int32_t *pair)
{
    if (!pair) return 1;
    for (int32_t i = 0; i < n; i++) {
        int32_t p = pair[i];
        if (p == -1) continue;
        if (p < 0 || p >= n || p == i || pair[p] != i) return 0;
    }
    return 1;
}

void ildl_blocking_free(ildl_blocking *b)
{
    if (!b) return;
    free(b->perm);
    free(b->bstart);
    memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------- strategy RB */

/* Mark P_r (row r of A plus its diagonal) with stamp; returns |P_r|. */
static int64_t mark_row(const ildl_csr *A, int32_t r, int32_t *mark, int32_t stamp)
{
    int64_t len = A->rowptr[r + 1] - A->rowptr[r];
    int hasdiag = 0;
    for (int64_t q = A->rowptr[r]; q < A->rowptr[r + 1]; q++) {
        mark[A->col[q]] = stamp;
        hasdiag |= (A->col[q] == r);
    }
    mark[r] = stamp;
    return len + !hasdiag;
}

/* 1 if cos(P_r, marked pattern of size sf) >= threshold. */
static int rb_similar(const ildl_csr *A, int32_t r, const int32_t *mark, int32_t stamp,
                      int64_t sf, double threshold)
{
    int64_t hits = 0, len = A->rowptr[r + 1] - A->rowptr[r];
    int hasdiag = 0;
    for (int64_t q = A->rowptr[r]; q < A->rowptr[r + 1]; q++) {
        int32_t c = A->col[q];
        hits += (mark[c] == stamp);
        hasdiag |= (c == r);
    }
    if (!hasdiag) {
        hits += (mark[r] == stamp);
        len++;
    }
    return (double)hits / sqrt((double)sf * (double)len) >= threshold;
}

/* Rows of the indivisible unit starting at position k of order: 2 for an adjacent pair. */
static int rb_unit(int32_t n, const int32_t *order, const int32_t *pair, int32_t k)
{
    return (pair && k + 1 < n && pair[order[k]] == order[k + 1]) ? 2 : 1;
}

int ildl_block_rb(const ildl_csr *A, const int32_t *order, const int32_t *pair, int max_bs,
                  double threshold, ildl_blocking *out)
{
    int32_t *mark = NULL, *bstart = NULL;
    if (out) memset(out, 0, sizeof *out);
    if (!out) return ILDL_ERR_INVALID_OPTION;
    int st = check_common(A, max_bs, threshold);
    if (st) return st;
    int32_t n = A->n;
    if (!order || !pair_valid(n, pair)) return ILDL_ERR_INVALID_OPTION;
    /* a pair cannot share a block of one row, so 1-row blocks ignore pairs */
    if (max_bs < 2) pair = NULL;
    mark = ildl_malloc(sizeof(int32_t) * (size_t)n);
    bstart = ildl_malloc(sizeof(int32_t) * ((size_t)n + 1));
    out->perm = ildl_malloc(sizeof(int32_t) * (size_t)n);
    if (!mark || !bstart || !out->perm) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    for (int32_t i = 0; i < n; i++) mark[i] = -1;
    for (int32_t k = 0; k < n; k++) {
        int32_t r = order[k];
        if (r < 0 || r >= n || mark[r] == 0) {
            st = ILDL_ERR_INVALID_OPTION;
            goto cleanup;
        }
        mark[r] = 0;
    }
    for (int32_t i = 0; i < n; i++) mark[i] = -1;

    int32_t nb = 0, k = 0;
    while (k < n) {
        /* stamp = the block's start position, unique per block */
        int64_t sf = mark_row(A, order[k], mark, k);
        int32_t stamp = k, size = rb_unit(n, order, pair, k);
        bstart[nb++] = k;
        k += size;
        while (k < n) {
            int u = rb_unit(n, order, pair, k);
            if (size + u > max_bs) break;
            if (!rb_similar(A, order[k], mark, stamp, sf, threshold)) break;
            if (u == 2 && !rb_similar(A, order[k + 1], mark, stamp, sf, threshold)) break;
            size += u;
            k += u;
        }
    }
    bstart[nb] = n;
    memcpy(out->perm, order, sizeof(int32_t) * (size_t)n);
    out->n = n;
    out->nb = nb;
    int32_t *shrunk = realloc(bstart, sizeof(int32_t) * ((size_t)nb + 1));
    out->bstart = shrunk ? shrunk : bstart; /* shrinking failed: keep the larger array */
    bstart = NULL;

cleanup:
    free(mark);
    free(bstart);
    if (st) ildl_blocking_free(out);
    return st;
}

/* ---------------------------------------------------------------- strategy BR */

/* A symmetric pattern with self loops and sorted rows; vertex v stands for w[v] rows. */
typedef struct bgraph {
    int32_t n;
    int64_t *p;  /* [n+1] */
    int32_t *i;  /* [p[n]] */
    int32_t *w;  /* [n] */
} bgraph;

static void bgraph_free(bgraph *G)
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

/* Vertices grouped: group g has the members memb[head[g]..head[g+1]) (any order), ng groups. */
typedef struct {
    int32_t ng;
    int64_t *head; /* [ng+1] */
    int32_t *memb; /* [head[ng]] */
} groups;

static void groups_free(groups *M)
{
    free(M->head);
    free(M->memb);
    memset(M, 0, sizeof *M);
}

/* Room for ng groups over nv vertices. ILDL_SUCCESS or ILDL_ERR_OUT_OF_MEMORY. */
static int groups_alloc(int32_t ng, int32_t nv, groups *M)
{
    M->ng = ng;
    M->head = ildl_malloc(sizeof(int64_t) * ((size_t)ng + 1));
    M->memb = ildl_malloc(sizeof(int32_t) * ((size_t)nv > 0 ? (size_t)nv : 1));
    if (M->head && M->memb) return ILDL_SUCCESS;
    groups_free(M);
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
static int bgraph_coarsen(int32_t n, const int64_t *p, const int32_t *ci, const int32_t *w,
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
    if (st) bgraph_free(C);
    return st;
}

typedef struct { double s; int32_t j; } cand;

/* The candidate order: decreasing similarity, then increasing index. A strict total order
 * (the j are distinct), so every correct sort or selection yields the same sequence. */

/* 1 if x comes before y in the candidate order. */
static inline int cand_first(cand x, cand y)
{
    return x.s > y.s || (x.s == y.s && x.j < y.j);
}

/* Sort cs[0..nc) into the candidate order by insertion (for the usual few candidates). */
static void sort_cands(cand *cs, int32_t nc)
{
    for (int32_t k = 1; k < nc; k++) {
        cand x = cs[k];
        int32_t j = k - 1;
        for (; j >= 0 && cand_first(x, cs[j]); j--) cs[j + 1] = cs[j];
        cs[j + 1] = x;
    }
}

/* Restore the heap (the first in candidate order on top) below slot k of h[0..len). */
static void cand_sift(cand *h, int32_t len, int32_t k)
{
    cand x = h[k];
    for (;;) {
        int32_t c = 2 * k + 1;
        if (c >= len) break;
        if (c + 1 < len && cand_first(h[c + 1], h[c])) c++;
        if (!cand_first(h[c], x)) break;
        h[k] = h[c];
        k = c;
    }
    h[k] = x;
}

/* Candidates cs[0..nc) one at a time in candidate order. Up to CAND_SORT_MAX candidates are
 * sorted by insertion first; more go to a heap (O(nc) to build, O(log nc) per candidate
 * taken), as a group may fill after a few of many. The order is total, so either way the
 * sequence is the sorted one. The insertion sort wins up to a few dozen: a heap pop takes
 * about log2(nc) unpredictable branches, and on the coarse levels most candidates are popped
 * (control106's level 1: 25 candidates per group on average, 18.5 popped; level-1 grouping
 * 0.25-0.27 -> 0.14-0.20 s on one thread with the bound raised from 16 to 64). */
#define CAND_SORT_MAX 64
typedef struct {
    cand *h;
    int32_t len, next, sorted; /* sorted: h is in order (few candidates), next its cursor */
} cand_queue;

static void cand_queue_init(cand_queue *q, cand *cs, int32_t nc)
{
    q->h = cs;
    q->len = nc;
    q->next = 0;
    q->sorted = nc <= CAND_SORT_MAX;
    if (q->sorted) {
        sort_cands(cs, nc);
        return;
    }
    for (int32_t k = nc / 2 - 1; k >= 0; k--) cand_sift(cs, nc, k);
}

/* Next candidate into *c; 0 when none is left. */
static int cand_queue_pop(cand_queue *q, cand *c)
{
    if (q->sorted) {
        if (q->next >= q->len) return 0;
        *c = q->h[q->next++];
        return 1;
    }
    if (q->len == 0) return 0;
    *c = q->h[0];
    q->h[0] = q->h[--q->len];
    if (q->len > 0) cand_sift(q->h, q->len, 0);
    return 1;
}

/* 1 if j is in the sorted list ci[lo..hi). */
static int sorted_has(const int32_t *ci, int64_t lo, int64_t hi, int32_t j)
{
    int64_t end = hi;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ci[mid] < j) lo = mid + 1;
        else hi = mid;
    }
    return lo < end && ci[lo] == j;
}

/* One level of Saad's greedy grouping on G: each unassigned vertex i (in order) starts a
 * group and takes the unassigned vertices j with cos(P_i, P_j) >= t, most similar first,
 * while the summed weight stays <= cap. map[v] receives the group, M the groups (allocated
 * here; the caller frees them), *below the largest similarity < t of a pair that would fit
 * under cap on its own (-1 if none): when nothing merges, no threshold above *below can merge anything either.
 * Candidates come from the pattern of G*G' row i; columns longer than dense_lim are not
 * walked (that would be quadratic) but still counted for the candidates found otherwise. */
static int br_group(const bgraph *G, double t, int cap, int64_t dense_lim, int32_t *map,
                    groups *M, double *below)
{
    int st = ILDL_SUCCESS;
    int32_t n = G->n, ngr = 0;
    int64_t nm = 0; /* members listed so far */
    uint32_t *cnt = ildl_malloc(sizeof(uint32_t) * (size_t)n);
    int32_t *list = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *dense = ildl_malloc(sizeof(int32_t) * (size_t)n);
    cand *cs = ildl_malloc(sizeof(cand) * (size_t)n);
    if (!cnt || !list || !dense || !cs || groups_alloc(n, n, M)) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    double bl = -1.0;
    /* in parallel: the walk below would otherwise take these pages' first-touch faults */
#pragma omp parallel for schedule(static)
    for (int32_t v = 0; v < n; v++) {
        map[v] = -1;
        cnt[v] = 0;
    }
    for (int32_t i = 0; i < n; i++) {
        if (map[i] >= 0) continue;
        int32_t g = ngr++;
        int64_t wt = G->w[i];
        map[i] = g;
        M->head[g] = nm;
        M->memb[nm++] = i; /* groups are formed one after the other: M is their CSR */
        if (wt >= cap) continue;
        int32_t nl = 0, nd = 0;
        for (int64_t e = G->p[i]; e < G->p[i + 1]; e++) {
            int32_t c = G->i[e];
            if (G->p[c + 1] - G->p[c] > dense_lim) {
                dense[nd++] = c;
                continue;
            }
            /* Without branches (whether j is new is unpredictable): every j is counted, and
             * listed on its first visit if unassigned (not i itself nor an earlier group).
             * An unassigned j's count is 0 before the walk and reset after it; an assigned
             * one's is never read again, so its (unsigned) count may grow and wrap. list has
             * room: nl < n as i is never listed. */
            for (int64_t f = G->p[c]; f < G->p[c + 1]; f++) {
                int32_t j = G->i[f];
                uint32_t seen = cnt[j]++;
                list[nl] = j;
                nl += (seen == 0) & (map[j] < 0);
            }
        }
        double si = (double)(G->p[i + 1] - G->p[i]);
        int32_t nc = 0, wmin = cap + 1; /* wmin: lightest candidate */
        for (int32_t k = 0; k < nl; k++) {
            int32_t j = list[k];
            int64_t hits = cnt[j];
            cnt[j] = 0;
            /* by symmetry, dense column d is in P_j iff j is in P_d */
            for (int32_t k2 = 0; k2 < nd; k2++)
                hits += sorted_has(G->i, G->p[dense[k2]], G->p[dense[k2] + 1], j);
            double s = (double)hits / sqrt(si * (double)(G->p[j + 1] - G->p[j]));
            if (s >= t) {
                cs[nc++] = (cand){s, j};
                if (G->w[j] < wmin) wmin = G->w[j];
            } else if (s > bl && G->w[i] + G->w[j] <= cap) {
                bl = s;
            }
        }
        cand_queue q;
        cand c;
        cand_queue_init(&q, cs, nc);
        /* once even the lightest candidate cannot fit, every later pop would be skipped:
         * stop there (on coarse levels most of a group's candidates are such pops) */
        while (wt + wmin <= cap && cand_queue_pop(&q, &c)) {
            if (wt + G->w[c.j] > cap) continue; /* a lighter candidate may still fit */
            map[c.j] = g;
            M->memb[nm++] = c.j;
            wt += G->w[c.j];
        }
    }
    M->ng = ngr;
    M->head[ngr] = nm;
    *below = bl;

cleanup:
    free(cnt);
    free(list);
    free(dense);
    free(cs);
    if (st) groups_free(M);
    return st;
}

#ifdef _OPENMP
/* ---- br_group on several threads: the same groups, most of the work in parallel.
 * The greedy grouping is sequential only through map: vertex i's candidates are the j > i still
 * unassigned when i starts its group (every j < i is assigned by then). Whatever is unassigned
 * at the start of a window of vertices includes them, so the threads list every vertex's
 * candidates from the map as it was when the window started (walk, similarities, candidate
 * order: the expensive part), and one thread then forms the window's groups from these lists,
 * skipping what an earlier group of the window took. Lists of vertices that an earlier group
 * of their own window absorbs are wasted work. */

/* Vertices per window: a window's lists are computed together, then consumed in order. */
#define BR_WINDOW 4096

/* qsort's view of the candidate order. */
static int cand_cmp(const void *a, const void *b)
{
    cand x = *(const cand *)a, y = *(const cand *)b;
    return cand_first(x, y) ? -1 : (cand_first(y, x) ? 1 : 0);
}

/* One thread's scratch; out holds its lists of the current window. */
typedef struct {
    uint32_t *cnt;        /* [n], zero between walks */
    int32_t *list, *dense; /* [maxwalk], [maxdeg] */
    cand *cs;              /* [maxwalk] */
    int32_t *out;
    int64_t nout, cap_out;
} br_scratch;

/* A window vertex's list: S[tid].out[off .. off+len); bl as br_group's *below, for this i. */
typedef struct {
    int64_t off;
    double bl;
    int32_t tid, len; /* len -1: assigned when the window started, no list */
} br_list;

/* Vertex i's candidates (unassigned j > i by map, cos >= t) in candidate order, appended to
 * S->out, into *r. ILDL_ERR_OUT_OF_MEMORY if out cannot grow. */
static int br_candidates(const bgraph *G, double t, int cap, int64_t dense_lim, const int32_t *map,
                         int32_t i, br_scratch *S, br_list *r)
{
    int32_t nl = 0, nd = 0, nc = 0;
    for (int64_t e = G->p[i]; e < G->p[i + 1]; e++) {
        int32_t c = G->i[e];
        if (G->p[c + 1] - G->p[c] > dense_lim) {
            S->dense[nd++] = c;
            continue;
        }
        for (int64_t f = G->p[c]; f < G->p[c + 1]; f++) { /* every j listed once, all reset below */
            int32_t j = G->i[f];
            uint32_t seen = S->cnt[j]++;
            S->list[nl] = j;
            nl += seen == 0;
        }
    }
    double si = (double)(G->p[i + 1] - G->p[i]), bl = -1.0;
    for (int32_t k = 0; k < nl; k++) {
        int32_t j = S->list[k];
        int64_t hits = S->cnt[j];
        S->cnt[j] = 0;
        if (j <= i || map[j] >= 0) continue;
        for (int32_t k2 = 0; k2 < nd; k2++)
            hits += sorted_has(G->i, G->p[S->dense[k2]], G->p[S->dense[k2] + 1], j);
        double s = (double)hits / sqrt(si * (double)(G->p[j + 1] - G->p[j]));
        if (s >= t) S->cs[nc++] = (cand){s, j};
        else if (s > bl && G->w[i] + G->w[j] <= cap) bl = s;
    }
    if (nc <= CAND_SORT_MAX) sort_cands(S->cs, nc);
    else qsort(S->cs, (size_t)nc, sizeof(cand), cand_cmp);
    if (S->nout + nc > S->cap_out) {
        int64_t want = 2 * (S->nout + nc) + 4096;
        int32_t *o = realloc(S->out, sizeof(int32_t) * (size_t)want);
        if (!o) return ILDL_ERR_OUT_OF_MEMORY;
        S->out = o;
        S->cap_out = want;
    }
    r->off = S->nout;
    r->len = nc;
    r->bl = bl;
    for (int32_t k = 0; k < nc; k++) S->out[S->nout++] = S->cs[k].j;
    return ILDL_SUCCESS;
}

/* br_group's result (the same groups and map; *below exact when nothing merged, the only case
 * its caller reads it) with the lists computed by nthreads threads. */
static int br_group_parallel(const bgraph *G, double t, int cap, int64_t dense_lim, int32_t *map,
                             groups *M, double *below, int nthreads)
{
    int st = ILDL_SUCCESS, oom = 0;
    int32_t n = G->n, ngr = 0;
    int64_t nm = 0, maxwalk = 1, maxdeg = 1;
    double bl = -1.0;
    br_scratch *S = ildl_calloc((size_t)nthreads, sizeof(br_scratch));
    br_list *R = ildl_malloc(sizeof(br_list) * BR_WINDOW);
    if (!S || !R || groups_alloc(n, n, M)) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    /* scratch sizes: the longest walk (distinct j's at most) and the largest degree */
#pragma omp parallel for schedule(static) reduction(max : maxwalk, maxdeg)
    for (int32_t i = 0; i < n; i++) {
        int64_t wlk = 0, deg = G->p[i + 1] - G->p[i];
        for (int64_t e = G->p[i]; e < G->p[i + 1]; e++) {
            int64_t dc = G->p[G->i[e] + 1] - G->p[G->i[e]];
            if (dc <= dense_lim) wlk += dc;
        }
        if (wlk > n) wlk = n;
        if (wlk > maxwalk) maxwalk = wlk;
        if (deg > maxdeg) maxdeg = deg;
        map[i] = -1;
    }
    for (int k = 0; k < nthreads; k++) {
        S[k].cnt = ildl_calloc((size_t)n, sizeof(uint32_t));
        S[k].list = ildl_malloc(sizeof(int32_t) * (size_t)maxwalk);
        S[k].dense = ildl_malloc(sizeof(int32_t) * (size_t)maxdeg);
        S[k].cs = ildl_malloc(sizeof(cand) * (size_t)maxwalk);
        if (!S[k].cnt || !S[k].list || !S[k].dense || !S[k].cs) {
            st = ILDL_ERR_OUT_OF_MEMORY;
            goto cleanup;
        }
    }
#pragma omp parallel num_threads(nthreads)
    {
        br_scratch *me = &S[omp_get_thread_num()];
        for (int32_t w0 = 0; w0 < n; w0 += BR_WINDOW) {
            int32_t w1 = n - w0 > BR_WINDOW ? w0 + BR_WINDOW : n;
            me->nout = 0;
#pragma omp for schedule(dynamic, 16)
            for (int32_t i = w0; i < w1; i++) {
                br_list *r = &R[i - w0];
                r->tid = (int32_t)(me - S);
                r->len = -1;
                if (map[i] >= 0) continue;
                if (br_candidates(G, t, cap, dense_lim, map, i, me, r)) {
#pragma omp atomic write
                    oom = 1;
                }
            }
            if (oom) break; /* read after the loop's barrier: every thread sees the same */
#pragma omp single
            for (int32_t i = w0; i < w1; i++) { /* the window's groups, in order */
                if (map[i] >= 0) continue;
                int32_t g = ngr++;
                int64_t wt = G->w[i];
                map[i] = g;
                M->head[g] = nm;
                M->memb[nm++] = i;
                if (wt >= cap) continue;
                const br_list *r = &R[i - w0];
                if (r->bl > bl) bl = r->bl;
                const int32_t *L = S[r->tid].out + r->off;
                for (int32_t k = 0; k < r->len && wt < cap; k++) {
                    int32_t j = L[k];
                    if (map[j] >= 0 || wt + G->w[j] > cap) continue; /* taken in this window; too heavy */
                    map[j] = g;
                    M->memb[nm++] = j;
                    wt += G->w[j];
                }
            }
        }
    }
    if (oom) {
        st = ILDL_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    M->ng = ngr;
    M->head[ngr] = nm;
    *below = bl;

cleanup:
    if (S)
        for (int k = 0; k < nthreads; k++) {
            free(S[k].cnt);
            free(S[k].list);
            free(S[k].dense);
            free(S[k].cs);
            free(S[k].out);
        }
    free(S);
    free(R);
    if (st) groups_free(M);
    return st;
}
#endif

/* br_group on the threads there are (same result): br_group_parallel from 4 threads and two
 * windows of vertices on, once G is a coarsened graph (coarse). On the graph of units it lost
 * (16 threads, device host: control70 14 -> 22 ms, control106 61 -> 97 ms, stokes64 31 -> 36
 * ms): its lists are cheap, most of its vertices are absorbed (86% on control70) and so
 * listed in vain, and each thread's n-sized counters cost page faults; on the coarsened graph
 * it won (28 -> 9, 92 -> 29, 36 -> 11 ms). */
static int br_group_any(const bgraph *G, double t, int cap, int64_t dense_lim, int32_t *map,
                        groups *M, double *below, int coarse)
{
#ifdef _OPENMP
    int nthreads = ildl_max_threads();
    if (coarse && nthreads >= 4 && G->n >= 2 * BR_WINDOW)
        return br_group_parallel(G, t, cap, dense_lim, map, M, below, nthreads);
#else
    (void)coarse;
#endif
    return br_group(G, t, cap, dense_lim, map, M, below);
}

/* Longest column walked when collecting candidates on a graph of n vertices. */
static int64_t br_dense_limit(int32_t n)
{
    double lim = 10.0 * sqrt((double)n);
    return lim < 64.0 ? 64 : (int64_t)lim;
}

/* The units (level-0 vertices) inside vertex v of the level-k graph, appended to u[*nu..):
 * lv[k] groups the level-(k-1) vertices into level-k ones (k >= 1). Returns 0, or -1 if more
 * than BLOCK_MAX_BS units would be listed (a block never holds more rows than that). */
static int br_units(const groups *lv, int k, int32_t v, int32_t *u, int32_t *nu)
{
    if (k == 0) {
        if (*nu >= BLOCK_MAX_BS) return -1;
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
 * threads of the caller's parallel region. *bad (shared, 0 before) becomes 1 if a vertex holds more than BLOCK_MAX_BS units (an
 * internal error). */
static void br_vertex_rows(const groups *lv, int K, int32_t nc, const int32_t *voff,
                           int32_t *rows, int *bad)
{
#pragma omp for schedule(dynamic, 1024)
    for (int32_t v = 0; v < nc; v++) {
        int32_t u[BLOCK_MAX_BS], nu = 0, q = voff[v];
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

/* Expand the ordered vertices of the final graph (nc vertices, weights w = rows, rows as
 * br_vertex_rows lists them) into the blocking: perm lists the rows of vertex operm[0], then
 * operm[1], ...; block k is vertex operm[k]. Each block's rows are copied in parallel. */
static int br_expand(int32_t n, int32_t nc, const int32_t *w, const int32_t *operm,
                     const int32_t *voff, const int32_t *rows, ildl_blocking *out)
{
    out->perm = ildl_malloc(sizeof(int32_t) * (size_t)n);
    out->bstart = ildl_malloc(sizeof(int32_t) * ((size_t)nc + 1));
    if (!out->perm || !out->bstart) return ILDL_ERR_OUT_OF_MEMORY;
    out->bstart[0] = 0;
    for (int32_t k = 0; k < nc; k++) out->bstart[k + 1] = out->bstart[k] + w[operm[k]];
#pragma omp parallel for schedule(static)
    for (int32_t k = 0; k < nc; k++)
        memcpy(out->perm + out->bstart[k], rows + voff[operm[k]],
               sizeof(int32_t) * (size_t)w[operm[k]]);
    out->n = n;
    out->nb = nc;
    return ILDL_SUCCESS;
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
        if (groups_alloc(n, n, U)) return ILDL_ERR_OUT_OF_MEMORY;
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
    int st = groups_alloc((int32_t)cu[nch], n, U);
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
 * every merging level lv[0..*K] (lv[0]: the units; the caller frees them with groups_free). */
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
    st = bgraph_coarsen(n, A->rowptr, A->col, NULL, umap, &lv[0], G);
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
        st = br_group_any(G, t, max_bs, br_dense_limit(G->n), gmap, &M, &below, *K >= 1);
        if (st) goto cleanup;
        ildl_profile_lap(&tp, "BR group level %d (n %d -> %d)", level, (int)G->n, (int)M.ng);
        int32_t merged = G->n - M.ng, prev = G->n;
        if (merged > 0) {
            st = bgraph_coarsen(G->n, G->p, G->i, G->w, gmap, &M, &C);
            if (st) goto cleanup;
            ildl_profile_lap(&tp, "BR coarsen level %d", level);
            bgraph_free(G);
            *G = C;
            memset(&C, 0, sizeof C);
            lv[++*K] = M;
        } else {
            groups_free(&M);
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
    bgraph_free(&C);
    groups_free(&M);
    free(umap);
    free(gmap);
    return st;
}

/* Checks shared by the BR entry points. */
static int br_check(const ildl_csr *A, const int32_t *pair, int max_bs, double threshold,
                    double decay)
{
    int st = check_common(A, max_bs, threshold);
    if (st) return st;
    if (!(decay >= 0.0 && decay <= 1.0) || !pair_valid(A->n, pair)) return ILDL_ERR_INVALID_OPTION;
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
    for (int k = 0; k <= K; k++) groups_free(&lv[k]);
    g->n = A->n;
    g->nv = G.n;
    g->p = G.p;
    g->i = G.i;
    g->w = G.w;
    if (st) ildl_br_graph_free(g);
    return st;
}

int ildl_block_br_expand(const ildl_br_graph *g, const int32_t *operm, int used, ildl_blocking *out)
{
    memset(out, 0, sizeof *out);
    int st = br_expand(g->n, g->nv, g->w, operm, g->voff, g->rows, out);
    if (st) ildl_blocking_free(out);
    else out->ordering_used = used;
    return st;
}

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

int ildl_block_br_order(const ildl_br_graph *g, int ordering, int fill_level, ildl_blocking *out,
                        char *msg, size_t msglen)
{
    int used = ordering, st;
    memset(out, 0, sizeof *out);
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    int32_t *operm = ildl_malloc(sizeof(int32_t) * ((size_t)g->nv > 0 ? (size_t)g->nv : 1));
    if (!operm) return ILDL_ERR_OUT_OF_MEMORY;
    /* BR orders the block graph, so AUTO may colour it (ildl_order_auto_colour): the colouring
     * is a task beside AMD (sequential library code), taken by another thread */
    ildl_colouring pre = {0};
    int colour = ordering == ILDL_ORDER_AUTO && ildl_order_auto_colour_wanted(g->nv, fill_level);
    if (colour) {
        pre.perm = ildl_malloc(sizeof(int32_t) * (size_t)g->nv);
        colour = pre.perm != NULL; /* else the rule computes it itself, or gives up */
    }
#pragma omp parallel if (colour)
#pragma omp single
    {
        if (colour) {
#pragma omp task shared(pre)
            pre.status = ildl_order_gmc_fill(g->nv, g->p, g->i, fill_level + 1, pre.perm, &pre.ncolours,
                                             &pre.nhubs);
        }
        st = ildl_order_graph(g->nv, g->p, g->i, ordering, fill_level, operm, &used, msg, msglen);
#pragma omp taskwait
        if (!st && ordering == ILDL_ORDER_AUTO)
            st = ildl_order_auto_colour(g->nv, g->p, g->i, fill_level, colour ? &pre : NULL, operm, &used);
    }
    free(pre.perm);
    ildl_profile_lap(&tp, "BR order (n %d, nnz %lld)", (int)g->nv, (long long)g->p[g->nv]);
    if (!st) st = ildl_block_br_expand(g, operm, used, out);
    ildl_profile_lap(&tp, "BR expand");
    free(operm);
    return st;
}

int ildl_block_br(const ildl_csr *A, int ordering, int fill_level, const int32_t *pair, int max_bs,
                  double threshold, double decay, ildl_blocking *out)
{
    ildl_br_graph g;
    char msg[256];
    if (!out) return ILDL_ERR_INVALID_OPTION;
    memset(out, 0, sizeof *out);
    int st = ildl_block_br_graph(A, pair, max_bs, threshold, decay, &g);
    if (!st) st = ildl_block_br_order(&g, ordering, fill_level, out, msg, sizeof msg);
    ildl_br_graph_free(&g);
    return st;
}
