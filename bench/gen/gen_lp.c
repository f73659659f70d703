/* gen_lp.c -- LP preprocessing (dependent rows, geometric scaling, slacks) and the
 * interior-point KKT matrix K = [ D A^T ; A -delta I ]. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"
#include "gen.h"

/* ------------------------------------------------------------------ dependent rows */

typedef struct { uint64_t h; int32_t i; } rowkey;

static int rowkey_cmp(const void *a, const void *b)
{
    const rowkey *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* 1 if rows a and b of lp have the same pattern and proportional values. */
static int parallel_rows(const ildl_gen_lp *lp, int32_t a, int32_t b)
{
    int64_t pa = lp->rowptr[a], pb = lp->rowptr[b], len = lp->rowptr[a + 1] - pa;
    if (lp->rowptr[b + 1] - pb != len) return 0;
    double ra = lp->val[pa], rb = lp->val[pb];
    for (int64_t k = 0; k < len; k++) {
        if (lp->col[pa + k] != lp->col[pb + k]) return 0;
        double x = lp->val[pa + k] * rb, y = lp->val[pb + k] * ra;
        if (fabs(x - y) > 1e-12 * fmax(fabs(x), fabs(y))) return 0;
    }
    return 1;
}

/* Keep the rows with keep[i] != 0, in order, in A and the row arrays. */
static void compact_rows(ildl_gen_lp *lp, const unsigned char *keep)
{
    int32_t k = 0;
    int64_t q = 0;
    for (int32_t i = 0; i < lp->m; i++) {
        int64_t a = lp->rowptr[i], b = lp->rowptr[i + 1];
        if (!keep[i]) continue;
        lp->rowptr[k] = q;
        for (int64_t p = a; p < b; p++, q++) {
            lp->col[q] = lp->col[p];
            lp->val[q] = lp->val[p];
        }
        lp->rowtype[k] = lp->rowtype[i];
        lp->rowlo[k] = lp->rowlo[i];
        lp->rowhi[k] = lp->rowhi[i];
        lp->rowid[k] = lp->rowid[i];
        k++;
    }
    lp->rowptr[k] = q;
    lp->m = k;
}

int ildl_gen_lp_reduce(ildl_gen_lp *lp, int32_t *nempty, int32_t *ndup)
{
    int32_t m = lp->m, ne = 0, nd = 0, nk = 0;
    unsigned char *keep = ildl_malloc((size_t)m);
    rowkey *key = ildl_malloc(sizeof(rowkey) * (size_t)m);
    int32_t *rep = ildl_malloc(sizeof(int32_t) * (size_t)m);
    if (!keep || !key || !rep) {
        free(keep);
        free(key);
        free(rep);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    for (int32_t i = 0; i < m; i++) {
        int64_t a = lp->rowptr[i], b = lp->rowptr[i + 1];
        keep[i] = b > a;
        if (!keep[i]) {
            ne++;
            continue;
        }
        /* bucket by pattern only: proportional values cannot be hashed exactly */
        uint64_t h = 1469598103934665603ULL ^ (uint64_t)(b - a);
        for (int64_t p = a; p < b; p++) h = (h ^ (uint64_t)lp->col[p]) * 1099511628211ULL;
        key[nk].h = h;
        key[nk++].i = i;
    }
    qsort(key, (size_t)nk, sizeof(rowkey), rowkey_cmp);
    for (int32_t s = 0; s < nk;) {
        int32_t e = s, nrep = 0;
        while (e < nk && key[e].h == key[s].h) e++;
        for (int32_t t = s; t < e; t++) { /* rows in file order: the first of a kind stays */
            int dup = 0;
            for (int32_t r = 0; r < nrep && !dup; r++) dup = parallel_rows(lp, rep[r], key[t].i);
            if (dup) {
                keep[key[t].i] = 0;
                nd++;
            } else {
                rep[nrep++] = key[t].i;
            }
        }
        s = e;
    }
    compact_rows(lp, keep);
    free(keep);
    free(key);
    free(rep);
    if (nempty) *nempty = ne;
    if (ndup) *ndup = nd;
    return ILDL_SUCCESS;
}

/* ------------------------------------------------------------------ geometric scaling */

int ildl_gen_lp_scale(ildl_gen_lp *lp, int rounds, double *rowscale, double *colscale)
{
    int32_t m = lp->m, n = lp->n;
    double *cmax = ildl_malloc(sizeof(double) * (size_t)n);
    double *cmin = ildl_malloc(sizeof(double) * (size_t)n);
    if (!cmax || !cmin) {
        free(cmax);
        free(cmin);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    if (rowscale)
        for (int32_t i = 0; i < m; i++) rowscale[i] = 1.0;
    if (colscale)
        for (int32_t j = 0; j < n; j++) colscale[j] = 1.0;
    for (int r = 0; r < rounds; r++) {
        for (int32_t i = 0; i < m; i++) {
            int64_t a = lp->rowptr[i], b = lp->rowptr[i + 1];
            if (a == b) continue;
            double mx = 0.0, mn = INFINITY;
            for (int64_t p = a; p < b; p++) {
                mx = fmax(mx, fabs(lp->val[p]));
                mn = fmin(mn, fabs(lp->val[p]));
            }
            /* sqrt of each factor: the product of extreme entries could over/underflow */
            double s = 1.0 / (sqrt(mx) * sqrt(mn));
            for (int64_t p = a; p < b; p++) lp->val[p] *= s;
            lp->rowlo[i] *= s; /* s > 0, so infinite bounds stay infinite */
            lp->rowhi[i] *= s;
            if (rowscale) rowscale[i] *= s;
        }
        for (int32_t j = 0; j < n; j++) cmax[j] = 0.0, cmin[j] = INFINITY;
        for (int64_t p = 0; p < lp->rowptr[m]; p++) {
            int32_t j = lp->col[p];
            cmax[j] = fmax(cmax[j], fabs(lp->val[p]));
            cmin[j] = fmin(cmin[j], fabs(lp->val[p]));
        }
        for (int32_t j = 0; j < n; j++)
            cmax[j] = cmax[j] > 0 ? 1.0 / (sqrt(cmax[j]) * sqrt(cmin[j])) : 1.0;
        for (int64_t p = 0; p < lp->rowptr[m]; p++) lp->val[p] *= cmax[lp->col[p]];
        for (int32_t j = 0; j < n; j++) {
            /* x = C x': objective scales with C, bounds with C^-1 */
            lp->obj[j] *= cmax[j];
            lp->collo[j] /= cmax[j];
            lp->colhi[j] /= cmax[j];
            if (colscale) colscale[j] *= cmax[j];
        }
    }
    free(cmax);
    free(cmin);
    return ILDL_SUCCESS;
}

/* ------------------------------------------------------------------ standard form */

/* Resize the column arrays of lp to n columns. */
static int resize_cols(ildl_gen_lp *lp, int32_t n)
{
    double *o = realloc(lp->obj, sizeof(double) * (size_t)n);
    if (o) lp->obj = o;
    double *l = realloc(lp->collo, sizeof(double) * (size_t)n);
    if (l) lp->collo = l;
    double *h = realloc(lp->colhi, sizeof(double) * (size_t)n);
    if (h) lp->colhi = h;
    unsigned char *t = realloc(lp->is_int, (size_t)n);
    if (t) lp->is_int = t;
    return (o && l && h && t) ? ILDL_SUCCESS : ILDL_ERR_OUT_OF_MEMORY;
}

int ildl_gen_lp_add_slacks(ildl_gen_lp *lp)
{
    int32_t m = lp->m, n = lp->n, ns = 0;
    for (int32_t i = 0; i < m; i++) ns += lp->rowlo[i] < lp->rowhi[i];
    if (ns == 0) return ILDL_SUCCESS;
    if ((int64_t)n + ns > INT32_MAX) return ILDL_ERR_INVALID_OPTION;
    int64_t nnz = lp->rowptr[m];
    int32_t *col = ildl_malloc(sizeof(int32_t) * (size_t)(nnz + ns));
    double *val = ildl_malloc(sizeof(double) * (size_t)(nnz + ns));
    if (!col || !val || resize_cols(lp, n + ns)) {
        free(col);
        free(val);
        return ILDL_ERR_OUT_OF_MEMORY;
    }
    int64_t q = 0;
    int32_t s = n;
    for (int32_t i = 0; i < m; i++) {
        int64_t a = lp->rowptr[i], b = lp->rowptr[i + 1];
        lp->rowptr[i] = q;
        for (int64_t p = a; p < b; p++, q++) col[q] = lp->col[p], val[q] = lp->val[p];
        double lo = lp->rowlo[i], hi = lp->rowhi[i];
        if (!(lo < hi)) continue;
        /* the slack is the last column, so the row stays sorted:
         * a x + s = hi with 0 <= s <= hi - lo, or a x - s = lo with s >= 0 when hi = inf */
        int up = isfinite(hi);
        col[q] = s;
        val[q++] = up ? 1.0 : -1.0;
        lp->obj[s] = 0.0;
        lp->collo[s] = 0.0;
        lp->colhi[s] = up ? hi - lo : INFINITY;
        lp->is_int[s] = 0;
        lp->rowlo[i] = lp->rowhi[i] = up ? hi : lo;
        lp->rowtype[i] = 'E';
        s++;
    }
    lp->rowptr[m] = q;
    free(lp->col);
    free(lp->val);
    lp->col = col;
    lp->val = val;
    lp->n = n + ns;
    return ILDL_SUCCESS;
}

/* ------------------------------------------------------------------ KKT */

typedef struct {
    int32_t m, n;
    const int64_t *rp; /* A by rows */
    const int32_t *ci;
    const double *av;
    const int64_t *cp; /* A by columns (A^T by rows) */
    const int32_t *ri;
    const double *tv;
    const double *d;
    double delta;
} kkt_ctx;

static int kkt_row(const void *vctx, int32_t r, int32_t *col, double *val)
{
    const kkt_ctx *c = vctx;
    int len = 0;
    if (r < c->n) {
        col[len] = r, val[len++] = c->d[r];
        for (int64_t p = c->cp[r]; p < c->cp[r + 1]; p++)
            col[len] = c->n + c->ri[p], val[len++] = c->tv[p];
    } else {
        int32_t i = r - c->n;
        for (int64_t p = c->rp[i]; p < c->rp[i + 1]; p++)
            col[len] = c->ci[p], val[len++] = c->av[p];
        if (c->delta != 0.0) col[len] = r, val[len++] = -c->delta;
    }
    return len;
}

int ildl_gen_kkt_lp(const ildl_gen_lp *lp, uint64_t seed, double delta, ildl_csr *K,
                    ildl_gen_info *info, char *msg, size_t msglen)
{
    return ildl_gen_kkt_lp_decades(lp, seed, delta, ILDL_GEN_KKT_DECADES, K, info, msg, msglen);
}

int ildl_gen_kkt_lp_decades(const ildl_gen_lp *lp, uint64_t seed, double delta, double decades,
                            ildl_csr *K, ildl_gen_info *info, char *msg, size_t msglen)
{
    ildl_msg(msg, msglen, "%s", "");
    if (!lp || !K) return ILDL_ERR_NULL_ARGUMENT;
    memset(K, 0, sizeof *K);
    int32_t m = lp->m, n = lp->n;
    if (m < 1 || n < 1) {
        ildl_msg(msg, msglen, "kkt-lp: the LP has %d constraint rows and %d columns", (int)m,
                 (int)n);
        return ILDL_ERR_EMPTY;
    }
    if ((int64_t)m + n > INT32_MAX) {
        ildl_msg(msg, msglen, "kkt-lp: m + n = %lld too large", (long long)m + n);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (!(delta >= 0) || !isfinite(delta)) {
        ildl_msg(msg, msglen, "kkt-lp: delta = %g must be >= 0 and finite", delta);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (!(decades >= 0.0 && decades <= ILDL_GEN_KKT_DECADES_MAX)) { /* NaN fails too */
        ildl_msg(msg, msglen, "kkt-lp: decades = %g must be in [0, %g]", decades,
                 ILDL_GEN_KKT_DECADES_MAX);
        return ILDL_ERR_INVALID_OPTION;
    }
    int st = ILDL_ERR_OUT_OF_MEMORY;
    int64_t nnz = lp->rowptr[m], maxrow = 0;
    int64_t *cp = ildl_calloc((size_t)n + 1, sizeof(int64_t));
    int32_t *ri = ildl_malloc(sizeof(int32_t) * (size_t)nnz);
    double *tv = ildl_malloc(sizeof(double) * (size_t)nnz);
    double *d = ildl_malloc(sizeof(double) * (size_t)n);
    int64_t *next = ildl_malloc(sizeof(int64_t) * (size_t)n);
    if (!cp || !ri || !tv || !d || !next) {
        ildl_msg(msg, msglen, "kkt-lp: out of memory");
        goto cleanup;
    }
    for (int32_t i = 0; i < m; i++) {
        if (lp->rowptr[i + 1] == lp->rowptr[i] && delta == 0.0) {
            ildl_msg(msg, msglen, "kkt-lp: row %d of A is empty (K singular)", (int)i + 1);
            st = ILDL_ERR_SINGULAR;
            goto cleanup;
        }
        if (lp->rowptr[i + 1] - lp->rowptr[i] > maxrow) maxrow = lp->rowptr[i + 1] - lp->rowptr[i];
    }
    /* transpose by counting; rows visited in order, so each column lists rows ascending */
    for (int64_t p = 0; p < nnz; p++) cp[lp->col[p] + 1]++;
    for (int32_t j = 0; j < n; j++) {
        if (cp[j + 1] > maxrow) maxrow = cp[j + 1];
        cp[j + 1] += cp[j];
    }
    memcpy(next, cp, sizeof(int64_t) * (size_t)n);
    for (int32_t i = 0; i < m; i++)
        for (int64_t p = lp->rowptr[i]; p < lp->rowptr[i + 1]; p++) {
            int64_t q = next[lp->col[p]]++;
            ri[q] = i;
            tv[q] = lp->val[p];
        }
    /* d_j = 10^(-decades u): log-uniform over that many decades (six, the default, like a
     * late interior-point iterate). -decades * u is the product -6.0 * u was before the
     * option existed, so the default gives the same bits as then. */
    ildl_gen_rng rng;
    ildl_gen_rng_seed(seed, &rng);
    for (int32_t j = 0; j < n; j++) d[j] = pow(10.0, -decades * ildl_gen_rng_uniform(&rng));
    kkt_ctx c = {m, n, lp->rowptr, lp->col, lp->val, cp, ri, tv, d, delta};
    if (maxrow + 1 > INT32_MAX) {
        st = ILDL_ERR_INVALID_OPTION;
        goto cleanup;
    }
    st = ildl_gen_build(n + m, (int)maxrow + 1, kkt_row, &c, K);
    if (st) {
        ildl_msg(msg, msglen, "kkt-lp: %s", st == ILDL_ERR_OUT_OF_MEMORY ? "out of memory"
                                                                        : "internal error");
        goto cleanup;
    }
    if (info) {
        info->n = K->n;
        info->nnz = K->rowptr[K->n];
        info->inertia[0] = n;
        info->inertia[1] = m;
        info->inertia[2] = 0;
        info->inertia_status = delta > 0 ? ILDL_GEN_INERTIA_EXACT
                               : m <= n  ? ILDL_GEN_INERTIA_IF_FULL_RANK
                                         : ILDL_GEN_INERTIA_UNKNOWN;
        info->param = delta;
    }
cleanup:
    free(cp);
    free(ri);
    free(tv);
    free(d);
    free(next);
    return st;
}

void ildl_gen_kkt_defaults(ildl_gen_kkt_opts *o)
{
    o->seed = 1;
    o->delta = 0.0;
    o->scale_rounds = 4;
    o->slacks = 0;
    o->dialect = ILDL_GEN_MPS_AUTO;
    o->decades = ILDL_GEN_KKT_DECADES;
}

int ildl_gen_kkt_lp_file(const char *path, const ildl_gen_kkt_opts *o, ildl_csr *K,
                         ildl_gen_info *info, ildl_gen_lp_stats *stats, char *msg,
                         size_t msglen)
{
    ildl_gen_kkt_opts def;
    ildl_gen_lp lp;
    int32_t ne = 0, nd = 0;
    if (!o) {
        ildl_gen_kkt_defaults(&def);
        o = &def;
    }
    if (K) memset(K, 0, sizeof *K);
    int st = ildl_gen_mps_read(path, o->dialect, &lp, msg, msglen);
    if (st) return st;
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->m_read = lp.m;
        stats->n_read = lp.n;
    }
    st = ildl_gen_lp_reduce(&lp, &ne, &nd);
    if (!st) st = ildl_gen_lp_scale(&lp, o->scale_rounds, NULL, NULL);
    if (!st && o->slacks) st = ildl_gen_lp_add_slacks(&lp);
    if (st) {
        ildl_msg(msg, msglen, "kkt-lp: %s", st == ILDL_ERR_OUT_OF_MEMORY ? "out of memory"
                                                                        : "too many columns");
        goto cleanup;
    }
    if (stats) {
        stats->empty_rows = ne;
        stats->dup_rows = nd;
        stats->m = lp.m;
        stats->n = lp.n;
        stats->nnz_a = lp.rowptr[lp.m];
    }
    st = ildl_gen_kkt_lp_decades(&lp, o->seed, o->delta, o->decades, K, info, msg, msglen);
cleanup:
    ildl_gen_lp_free(&lp);
    return st;
}
