/* match.c -- maximum-product matching with dual variables (the idea of Duff and Koster's MC64,
 * option 5), its symmetrized scaling (Duff and Pralet) and the 2x2 pairs that static pivoting
 * uses. Putting a large entry of every row on the block diagonal, as a 1x1 or inside a 2x2
 * pivot, is what lets an indefinite matrix be factorized without row interchanges. */
#include "analyse/match.h"
#include "analyse/order.h"
#include "blockildl.h"
#include "core/util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------- column state */

/* Everything the shortest-path search reads or writes about column j, in one 32-byte record:
 * the search jumps between random columns, and one cache line per visit instead of one per
 * array is what makes it fast. d: tentative distance (+inf when untouched); v: dual
 * potential; mcol: matched row or -1; pred: row through which the column was reached;
 * pos: heap slot or -1; done: distance final. */
typedef struct {
    double d, v;
    int32_t mcol, pred, pos, done;
} colstate;

/* ---------------------------------------------------------------- indexed binary heap */

/* Min-heap of columns keyed by c[j].d; c[j].pos = slot of j or -1, so keys can be lowered. */
typedef struct {
    int32_t *h;
    int32_t len;
    colstate *c;
} heap;

static void heap_up(heap *H, int32_t k)
{
    colstate *c = H->c;
    int32_t j = H->h[k];
    double dj = c[j].d;
    while (k > 0) {
        int32_t parent = (k - 1) / 2, q = H->h[parent];
        if (c[q].d <= dj) break;
        H->h[k] = q;
        c[q].pos = k;
        k = parent;
    }
    H->h[k] = j;
    c[j].pos = k;
}

static void heap_down(heap *H, int32_t k)
{
    colstate *c = H->c;
    int32_t j = H->h[k];
    double dj = c[j].d;
    for (;;) {
        int32_t ch = 2 * k + 1;
        if (ch >= H->len) break;
        if (ch + 1 < H->len && c[H->h[ch + 1]].d < c[H->h[ch]].d) ch++;
        if (c[H->h[ch]].d >= dj) break;
        H->h[k] = H->h[ch];
        c[H->h[k]].pos = k;
        k = ch;
    }
    H->h[k] = j;
    c[j].pos = k;
}

/* Insert j, or restore the heap after c[j].d was lowered. */
static void heap_update(heap *H, int32_t j)
{
    if (H->c[j].pos < 0) {
        H->h[H->len] = j;
        H->c[j].pos = H->len++;
    }
    heap_up(H, H->c[j].pos);
}

static int32_t heap_pop(heap *H)
{
    int32_t j = H->h[0];
    H->c[j].pos = -1;
    if (--H->len > 0) {
        H->h[0] = H->h[H->len];
        heap_down(H, 0);
    }
    return j;
}

/* ---------------------------------------------------------------- shortest augmenting paths */

/* State of the primal-dual method: the matching (mrow[i] = column of row i, col[j].mcol =
 * row of column j, -1 when free), dual potentials u (rows), col[j].v (columns) with reduced
 * costs cost - u_i - v_j >= 0 on every edge and = 0 on matched edges, and the Dijkstra
 * workspace (col[j].d, .pred, .done, .pos and the lists below). */
typedef struct {
    const int64_t *rp;
    const int32_t *ci;
    const double *cost; /* [nnz] c_ij, +inf for a stored zero (not an edge) */
    double *u;
    int32_t *mrow;
    colstate *col;      /* [n] */
    int32_t *done_list, ndone;
    int32_t *touched, ntouched;
    heap H;
    double L;           /* length of the shortest path to a free column found so far */
    int32_t jfree;
} mwork;

/* Relax the edges of row i, reached at distance di. Free columns are not queued: they end
 * a path, so only the best one (L, jfree) matters, and nothing at distance >= L can lead to a
 * shorter path because reduced costs are nonnegative. */
static void relax_row(mwork *W, int32_t i, double di)
{
    double ui = W->u[i]; /* not written during the relaxation */
    for (int64_t p = W->rp[i]; p < W->rp[i + 1]; p++) {
        colstate *cj = &W->col[W->ci[p]];
        if (cj->done || W->cost[p] == INFINITY) continue;
        double r = W->cost[p] - ui - cj->v;
        double dn = di + (r > 0.0 ? r : 0.0); /* rounding may leave r a hair below 0 */
        if (dn >= cj->d || dn >= W->L) continue;
        int32_t j = W->ci[p];
        if (cj->d == INFINITY) W->touched[W->ntouched++] = j;
        cj->d = dn;
        cj->pred = i;
        if (cj->mcol < 0) {
            W->L = dn;
            W->jfree = j;
        } else {
            heap_update(&W->H, j);
        }
    }
}

/* Dijkstra from free row i0 over alternating paths (row -> column by any edge, column ->
 * its matched row at no cost). On success the duals move so that the path becomes tight and
 * all reduced costs stay >= 0 (u_i += L - dist(i), v_j -= L - dist(j) on the settled part),
 * then the path is flipped. Without an augmenting path nothing changes: no later augmentation
 * can create one from i0 (Berge), so i0 stays unmatched in a maximum-cardinality matching.
 * Returns 1 if i0 got matched. */
static int augment_from(mwork *W, int32_t i0)
{
    colstate *c = W->col;
    W->L = INFINITY;
    W->jfree = -1;
    W->ndone = W->ntouched = 0;
    W->H.len = 0;
    relax_row(W, i0, 0.0);
    while (W->H.len > 0 && c[W->H.h[0]].d < W->L) {
        int32_t j = heap_pop(&W->H);
        c[j].done = 1;
        W->done_list[W->ndone++] = j;
        relax_row(W, c[j].mcol, c[j].d);
    }
    int found = W->jfree >= 0;
    if (found) {
        W->u[i0] += W->L;
        for (int32_t k = 0; k < W->ndone; k++) {
            int32_t j = W->done_list[k];
            double t = W->L - c[j].d;
            c[j].v -= t;
            W->u[c[j].mcol] += t;
        }
        for (int32_t j = W->jfree;;) {
            int32_t i = c[j].pred, jn = W->mrow[i];
            W->mrow[i] = j;
            c[j].mcol = i;
            if (i == i0) break;
            j = jn;
        }
    }
    for (int32_t k = 0; k < W->ntouched; k++) {
        int32_t j = W->touched[k];
        c[j].d = INFINITY;
        c[j].done = 0;
        c[j].pos = -1;
    }
    return found;
}

/* ---------------------------------------------------------------- log of repeated values */

/* A small direct-mapped memo of log: matrices from applications repeat a few values (the
 * generated KKT problems have a handful of distinct magnitudes in millions of entries), and
 * log is a pure function, so a hit returns exactly what the call would. Slots start at
 * a = -1, which no argument (> 0) equals. */
enum { LOG_MEMO_BITS = 8 };
typedef struct { double a, la; } log_memo;

static void log_memo_init(log_memo *m)
{
    for (int k = 0; k < (1 << LOG_MEMO_BITS); k++) m[k] = (log_memo){-1.0, 0.0};
}

/* log(a) for a > 0, through the memo m. */
static double log_memoized(log_memo *m, double a)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    log_memo *slot = &m[(bits * 0x9E3779B97F4A7C15ull) >> (64 - LOG_MEMO_BITS)];
    if (slot->a != a) *slot = (log_memo){a, log(a)};
    return slot->la;
}

/* m[j] = max_i |a_ij| (0 for an empty column). Rows in parallel, each column's maximum
 * raised by compare-and-swap on its bits: for doubles >= 0 the order of the bit patterns
 * (as unsigned integers) is the numeric order, and a maximum does not depend on the order
 * in which values arrive, so m is exactly the serial result. Returns ILDL_SUCCESS or
 * ILDL_ERR_OUT_OF_MEMORY. */
static int column_max_abs(const ildl_csr *A, double *m)
{
    int32_t n = A->n;
    if (ildl_max_threads() == 1) { /* one thread: plain stores beat compare-and-swap */
        for (int32_t j = 0; j < n; j++) m[j] = 0.0;
        for (int64_t p = 0; p < A->rowptr[n]; p++)
            if (fabs(A->val[p]) > m[A->col[p]]) m[A->col[p]] = fabs(A->val[p]);
        return ILDL_SUCCESS;
    }
    uint64_t *bits = ildl_malloc(sizeof(uint64_t) * ((size_t)n > 0 ? (size_t)n : 1));
    if (!bits) return ILDL_ERR_OUT_OF_MEMORY;
#pragma omp parallel for schedule(static)
    for (int32_t j = 0; j < n; j++) bits[j] = 0; /* the bits of +0.0 */
#pragma omp parallel for schedule(dynamic, 4096)
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double a = fabs(A->val[p]);
            if (!(a > 0.0)) continue; /* cannot raise a maximum (NaN neither, as before) */
            uint64_t b, cur;
            memcpy(&b, &a, sizeof b);
            uint64_t *slot = &bits[A->col[p]];
            cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
            while (b > cur &&
                   !__atomic_compare_exchange_n(slot, &cur, b, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ; /* cur now holds the newer value: retry while ours is still larger */
        }
#pragma omp parallel for schedule(static)
    for (int32_t j = 0; j < n; j++) memcpy(&m[j], &bits[j], sizeof(double));
    free(bits);
    return ILDL_SUCCESS;
}

/* Cheap start: rows in order, each matched to the first column of a tight edge (reduced
 * cost <= 0) that is still free. The search for a row's first tight edge does not depend on
 * the other rows, so it runs in parallel (first[i]: its offset in row i, -1 if none); only
 * the claims, in row order, stay serial, and a row whose first tight column is taken goes
 * on scanning from there, as the serial loop would. With one thread the claims scan each
 * row from its start (first[i] = 0), which is the serial loop itself, without a pre-pass. */
static void cheap_start(const ildl_csr *A, const double *cost, const double *u, int32_t *first,
                        colstate *col, int32_t *match)
{
    int32_t n = A->n;
    int pre = ildl_max_threads() > 1;
#pragma omp parallel for schedule(dynamic, 4096)
    for (int32_t i = 0; i < n; i++) {
        first[i] = pre ? -1 : 0;
        if (!pre) continue;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (cost[p] < INFINITY && cost[p] - u[i] <= 0.0) {
                first[i] = (int32_t)(p - A->rowptr[i]);
                break;
            }
    }
    for (int32_t i = 0; i < n; i++) {
        match[i] = -1;
        if (first[i] < 0) continue;
        for (int64_t p = A->rowptr[i] + first[i]; p < A->rowptr[i + 1]; p++) {
            int32_t j = A->col[p];
            if (cost[p] < INFINITY && cost[p] - u[i] <= 0.0 && col[j].mcol < 0) {
                match[i] = j;
                col[j].mcol = i;
                break;
            }
        }
    }
}

int ildl_match_maxprod(const ildl_csr *A, int32_t *match, double *logr, double *logc,
                       int32_t *n_unmatched)
{
    int32_t n = A->n;
    int64_t nnz = A->rowptr[n];
    mwork W;
    memset(&W, 0, sizeof W);
    double *cost = ildl_malloc(sizeof(double) * (size_t)nnz);
    double *lcm = ildl_malloc(sizeof(double) * (size_t)n);
    W.u = ildl_malloc(sizeof(double) * (size_t)n);
    /* 64-byte aligned, so that a record never straddles two cache lines */
    size_t cbytes = ((sizeof(colstate) * (size_t)n + 63) / 64) * 64;
    W.col = aligned_alloc(64, cbytes > 0 ? cbytes : 64);
    W.done_list = ildl_malloc(sizeof(int32_t) * (size_t)n);
    W.touched = ildl_malloc(sizeof(int32_t) * (size_t)n);
    W.H.h = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int st = ILDL_ERR_OUT_OF_MEMORY;
    if (!cost || !lcm || !W.u || !W.col || !W.done_list || !W.touched || !W.H.h) goto cleanup;
    W.rp = A->rowptr;
    W.ci = A->col;
    W.cost = cost;
    W.mrow = match;
    W.H.c = W.col;

    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    /* column maxima, then costs: c_ij >= 0 with a 0 in every column that has an edge */
    if (column_max_abs(A, lcm)) goto cleanup;
    ildl_profile_lap(&tp, "match column maxima");
    /* logs per column and per entry in parallel: rows are independent (each thread has its
     * own memo of log, which changes no value) */
#pragma omp parallel
    {
        log_memo memo[1 << LOG_MEMO_BITS];
        log_memo_init(memo);
#pragma omp for schedule(static)
        for (int32_t j = 0; j < n; j++) lcm[j] = lcm[j] > 0.0 ? log_memoized(memo, lcm[j]) : 0.0;
#pragma omp for schedule(dynamic, 4096)
        for (int32_t i = 0; i < n; i++) {
            double umin = INFINITY;
            for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
                double a = fabs(A->val[p]);
                cost[p] = a > 0.0 ? lcm[A->col[p]] - log_memoized(memo, a) : INFINITY;
                if (cost[p] < umin) umin = cost[p];
            }
            /* v = 0 is feasible as every column's minimum cost is 0; u_i = its row minimum */
            W.u[i] = umin < INFINITY ? umin : 0.0;
        }
    }
#pragma omp parallel for schedule(static)
    for (int32_t j = 0; j < n; j++)
        W.col[j] = (colstate){.d = INFINITY, .v = 0.0, .mcol = -1, .pred = 0, .pos = -1, .done = 0};
    ildl_profile_lap(&tp, "match costs (logs)");

    cheap_start(A, cost, W.u, W.touched, W.col, match);
    ildl_profile_lap(&tp, "match cheap start");
    int32_t unmatched = 0;
    for (int32_t i = 0; i < n; i++)
        if (match[i] < 0 && !augment_from(&W, i)) unmatched++;
    *n_unmatched = unmatched;
    ildl_profile_lap(&tp, "match shortest paths");
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) {
        if (logr) logr[i] = W.u[i];
        if (logc) logc[i] = W.col[i].v - lcm[i];
    }
    st = ILDL_SUCCESS;

cleanup:
    free(cost); free(lcm);
    free(W.u); free(W.col);
    free(W.done_list); free(W.touched); free(W.H.h);
    return st;
}

/* ---------------------------------------------------------------- pairs */

/* a_ij, or 0 when (i,j) is not stored (columns sorted: binary search). */
static double entry(const ildl_csr *A, int32_t i, int32_t j)
{
    int64_t lo = A->rowptr[i], hi = A->rowptr[i + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (A->col[mid] < j) lo = mid + 1;
        else hi = mid;
    }
    return (lo < A->rowptr[i + 1] && A->col[lo] == j) ? A->val[lo] : 0.0;
}

/* log |s_i a_ij s_j|, floored so that a zero pivot scores very low but finite. */
static double log_scaled(const ildl_csr *A, const double *s, int32_t i, int32_t j)
{
    return log(fmax(fabs(s[i] * entry(A, i, j) * s[j]), 1e-300));
}

/* Pair c[(t0 + 2m) % L] with c[(t0 + 2m + 1) % L] for m < L/2. */
static void pair_cycle(const int32_t *c, int32_t L, int32_t t0, int32_t *pair)
{
    for (int32_t m = 0; m < L / 2; m++) {
        int32_t x = c[(t0 + 2 * m) % L], y = c[(t0 + 2 * m + 1) % L];
        pair[x] = y;
        pair[y] = x;
    }
}

/* Cut the cycle c[0..L-1] (c[k+1] = match[c[k]]) into pairs of consecutive members, picking
 * the cut with the best score. e[k] scores the pair (c[k], c[k+1]); an odd cycle leaves one
 * 1x1 at t, scored g(t); moving t by 2 swaps exactly one pair, so all L cuts cost O(L). */
static void split_cycle(const ildl_csr *A, const double *s, const int32_t *c, int32_t L,
                        double *e, int32_t *pair)
{
    if (L == 2) { /* both cuts make the same pair: no scores needed */
        pair_cycle(c, L, 0, pair);
        return;
    }
    for (int32_t k = 0; k < L; k++) e[k] = log_scaled(A, s, c[k], c[(k + 1) % L]);
    if (L % 2 == 0) {
        double even = 0.0, odd = 0.0;
        for (int32_t k = 0; k < L; k += 2) {
            even += e[k];
            odd += e[k + 1];
        }
        pair_cycle(c, L, odd > even ? 1 : 0, pair);
        return;
    }
    double S = 0.0; /* sum of e over the pairs when the 1x1 sits at t */
    for (int32_t k = 1; k < L - 1; k += 2) S += e[k];
    double best = -INFINITY;
    int32_t tbest = 0;
    for (int32_t step = 0, t = 0; step < L; step++) {
        double score = S + log_scaled(A, s, c[t], c[t]);
        if (score > best) {
            best = score;
            tbest = t;
        }
        int32_t t2 = (t + 2) % L;
        S += e[t] - e[(t + 1) % L];
        t = t2;
    }
    pair_cycle(c, L, (tbest + 1) % L, pair);
}

int ildl_match_pairs(const ildl_csr *A, const int32_t *match, const double *s, int32_t *pair)
{
    int32_t n = A->n;
    int32_t *inv = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *c = ildl_malloc(sizeof(int32_t) * (size_t)n);
    double *e = ildl_malloc(sizeof(double) * (size_t)n);
    char *seen = ildl_calloc((size_t)n, 1);
    int st = ILDL_ERR_OUT_OF_MEMORY;
    if (!inv || !c || !e || !seen) goto cleanup;
    for (int32_t i = 0; i < n; i++) pair[i] = inv[i] = -1;
    for (int32_t i = 0; i < n; i++)
        if (match[i] >= 0) inv[match[i]] = i;
    /* chains of a partial matching start at a column nobody is matched to; pair greedily */
    for (int32_t x = 0; x < n; x++) {
        if (inv[x] >= 0) continue;
        for (int32_t y = x; y >= 0 && !seen[y];) {
            int32_t z = match[y];
            seen[y] = 1;
            if (z >= 0 && !seen[z]) {
                pair[y] = z;
                pair[z] = y;
                seen[z] = 1;
                y = match[z];
            } else {
                y = -1;
            }
        }
    }
    /* what is left is cycles */
    for (int32_t x = 0; x < n; x++) {
        if (seen[x]) continue;
        int32_t L = 0;
        for (int32_t y = x; !seen[y]; y = match[y]) {
            seen[y] = 1;
            c[L++] = y;
        }
        if (L >= 2) split_cycle(A, s, c, L, e, pair);
    }
    st = ILDL_SUCCESS;

cleanup:
    free(inv); free(c); free(e); free(seen);
    return st;
}

/* ---------------------------------------------------------------- symmetric scaling */

/* m[i] = max_j |s_i a_ij s_j|. */
static void scaled_row_max(const ildl_csr *A, const double *s, double *m)
{
#pragma omp parallel for schedule(dynamic, 4096)
    for (int32_t i = 0; i < A->n; i++) {
        double mi = 0.0;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double a = fabs(s[i] * A->val[p] * s[A->col[p]]);
            if (a > mi) mi = a;
        }
        m[i] = mi;
    }
}

/* Ruiz sweeps that only lift rows with maximum m_i < 1: with all m <= 1 and a symmetric,
 * |a_ij| / sqrt(m_i m_j) <= min(m_i, m_j) / sqrt(m_i m_j) <= 1, so no entry exceeds 1 and
 * entries already at 1 stay there. Then rows that rounding left above 1 are divided by their
 * maximum: each entry of such a row was <= m_i, so it ends <= 1 too. */
static void lift_and_clip(const ildl_csr *A, double *s, double *m)
{
    const int max_sweeps = 20;
    const double tol = 1e-3;
    for (int sweep = 0; sweep < max_sweeps; sweep++) {
        scaled_row_max(A, s, m);
        double err = 0.0; /* a maximum: exact in any order */
#pragma omp parallel for schedule(static) reduction(max : err)
        for (int32_t i = 0; i < A->n; i++)
            if (m[i] > 0.0 && 1.0 - m[i] > err) err = 1.0 - m[i];
        if (err <= tol) break;
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < A->n; i++) {
            if (!(m[i] > 0.0 && m[i] < 1.0)) continue;
            double t = s[i] / sqrt(m[i]);
            if (isfinite(t)) s[i] = t;
        }
    }
    scaled_row_max(A, s, m);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < A->n; i++)
        if (m[i] > 1.0) s[i] /= m[i];
}

int ildl_match_scale(const ildl_csr *A, double *s, int32_t *pair, int32_t *n_unmatched)
{
    int32_t n = A->n;
    int32_t *match = ildl_malloc(sizeof(int32_t) * (size_t)n);
    double *lr = ildl_malloc(sizeof(double) * (size_t)n);
    double *lc = ildl_malloc(sizeof(double) * (size_t)n);
    int st = ILDL_ERR_OUT_OF_MEMORY;
    if (!match || !lr || !lc) goto cleanup;
    double tp = ildl_wtime(); /* ILDL_SETUP_PROFILE laps */
    st = ildl_match_maxprod(A, match, lr, lc, n_unmatched);
    if (st) goto cleanup;
    ildl_profile_lap(&tp, "match total (maxprod)");
    /* sqrt(r_i c_i) in the log domain: r and c alone may overflow where their product does not */
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) {
        double t = exp(0.5 * (lr[i] + lc[i]));
        s[i] = (isfinite(t) && t > 0.0) ? t : 1.0;
    }
    lift_and_clip(A, s, lr);
    ildl_profile_lap(&tp, "match scaling sweeps");
    st = ildl_match_pairs(A, match, s, pair);
    ildl_profile_lap(&tp, "match pairs");

cleanup:
    free(match); free(lr); free(lc);
    return st;
}

/* ---------------------------------------------------------------- pair-preserving order */

int ildl_match_order(const ildl_csr *A, const int32_t *pair, int method, int fill_level,
                     int32_t *order,
                     int *used, char *msg, size_t msglen)
{
    int32_t n = A->n;
    if (!pair) return ildl_order_graph(n, A->rowptr, A->col, method, fill_level, order, used, msg, msglen);
    int32_t *uid = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *first = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *mark = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *uperm = ildl_malloc(sizeof(int32_t) * (size_t)n);
    int64_t *qp = ildl_calloc((size_t)n + 1, sizeof(int64_t));
    int64_t *tp = ildl_calloc((size_t)n + 1, sizeof(int64_t));
    int32_t *qi = NULL, *ti = NULL;
    int st = ILDL_ERR_OUT_OF_MEMORY;
    if (!uid || !first || !mark || !uperm || !qp || !tp) goto cleanup;

    /* units: a 1x1 row or a pair, numbered by their smaller row */
    int32_t nu = 0;
    for (int32_t i = 0; i < n; i++) {
        if (pair[i] >= 0 && pair[i] < i) {
            uid[i] = uid[pair[i]];
        } else {
            first[nu] = i;
            uid[i] = nu++;
        }
    }
    /* quotient graph: two passes (count, fill) with a marker against duplicate neighbours */
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t w = 0; w < nu; w++) mark[w] = -1;
        for (int32_t u = 0; u < nu; u++) {
            int64_t q = pass ? qp[u] : 0;
            int32_t rows[2] = {first[u], pair[first[u]]};
            mark[u] = u; /* no self loop */
            for (int k = 0; k < 2 && rows[k] >= 0; k++)
                for (int64_t p = A->rowptr[rows[k]]; p < A->rowptr[rows[k] + 1]; p++) {
                    int32_t w = uid[A->col[p]];
                    if (mark[w] == u) continue;
                    mark[w] = u;
                    if (pass) qi[q] = w;
                    q++;
                }
            if (!pass) qp[u + 1] = qp[u] + q;
        }
        if (!pass) {
            qi = ildl_malloc(sizeof(int32_t) * (size_t)qp[nu]);
            ti = ildl_malloc(sizeof(int32_t) * (size_t)qp[nu]);
            if (!qi || !ti) goto cleanup;
        }
    }
    /* the quotient of a symmetric pattern is symmetric, so its transpose is the same graph
     * with every row sorted, which the orderings expect */
    for (int64_t p = 0; p < qp[nu]; p++) tp[qi[p] + 1]++;
    for (int32_t u = 0; u < nu; u++) tp[u + 1] += tp[u];
    for (int32_t u = 0; u < nu; u++) mark[u] = 0;
    for (int32_t u = 0; u < nu; u++)
        for (int64_t p = qp[u]; p < qp[u + 1]; p++) {
            int32_t w = qi[p];
            ti[tp[w] + mark[w]++] = u;
        }
    st = ildl_order_graph(nu, tp, ti, method, fill_level, uperm, used, msg, msglen);
    if (st) goto cleanup;
    for (int32_t k = 0, pos = 0; k < nu; k++) {
        int32_t r = first[uperm[k]];
        order[pos++] = r;
        if (pair[r] >= 0) order[pos++] = pair[r];
    }

cleanup:
    free(uid); free(first); free(mark); free(uperm);
    free(qp); free(tp); free(qi); free(ti);
    return st;
}

void ildl_match_pair_hint(int32_t n, const int32_t *pair, const int32_t *perm, int32_t nb,
                          const int32_t *bstart, int8_t *hint)
{
    for (int32_t k = 0; k < n; k++) hint[k] = 0;
    if (!pair) return;
    /* blocks are independent */
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t b = 0; b < nb; b++)
        for (int32_t k = bstart[b]; k < bstart[b + 1];) {
            if (k + 1 < bstart[b + 1] && pair[perm[k]] == perm[k + 1]) {
                hint[k] = 1;
                k += 2;
            } else {
                k++;
            }
        }
}
