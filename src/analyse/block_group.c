/* block_group.c -- one level of BR's grouping (Saad's greedy clustering): each vertex not yet
 * grouped starts a group and takes the ungrouped vertices most similar to it (cosine of the
 * patterns >= t), most similar first, while the group's rows fit in a block. Candidates come
 * from the pattern of G*G'; the candidate order is total, so the groups do not depend on how
 * candidates are sorted or on the number of threads (br_group_parallel). */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyse/block_internal.h"
#include "blockildl.h"
#include "core/util.h"
#ifdef _OPENMP
#include <omp.h>
#endif

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
    if (!cnt || !list || !dense || !cs || ildl_groups_alloc(n, n, M)) {
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
    if (st) ildl_groups_free(M);
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
    if (!S || !R || ildl_groups_alloc(n, n, M)) {
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
    if (st) ildl_groups_free(M);
    return st;
}
#endif

/* br_group on the threads there are (same result): br_group_parallel from 4 threads and two
 * windows of vertices on, once G is a coarsened graph (coarse). On the graph of units it lost
 * (16 threads, device host: control70 14 -> 22 ms, control106 61 -> 97 ms, stokes64 31 -> 36
 * ms): its lists are cheap, most of its vertices are absorbed (86% on control70) and so
 * listed in vain, and each thread's n-sized counters cost page faults; on the coarsened graph
 * it won (28 -> 9, 92 -> 29, 36 -> 11 ms). */
int ildl_br_group_any(const bgraph *G, double t, int cap, int64_t dense_lim, int32_t *map,
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
