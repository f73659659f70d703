/* fuzz_matrix.c -- libFuzzer harness of the matrix descriptor: ildl_setup_matrix and
 * ildl_factor_matrix on small matrices in every layout (CSR/COO, 32/64-bit, base 0/1,
 * FULL/LOWER/UPPER, duplicates refused/summed), with out-of-range indices, entries outside the
 * view, duplicates, NaN/Inf, broken row pointers and unknown enumeration values.
 *
 * Input (bytes past the end read as 0):
 *   layout u8: bit 0 COO, 1 base 1, 2-3 view (3: an unknown view), 4 duplicates summed,
 *          5 64-bit row pointers, 6 64-bit indices, 7 one more field broken (next byte % 6:
 *          format, base, duplicates, offset type, index type 99, or nnz = -1)
 *   n u8 (1 + byte % 12), count u8 (byte % 48), then count x (row u8, col u8, value u8):
 *          an index is byte % (n + 2) - 1 + base (so one below and one above the range occur);
 *          value: one of 16 specials (NaN, Inf, 0, -0, 1e300, ...) or int8 / 8
 *   rowptr u8: CSR only, nonzero: row pointer (byte % (n + 1)) decreased by one
 *   drop u8: the sub-pattern for ildl_factor_matrix keeps entry k when bit k % 8 is set
 *   phases u8: bit 0: ildl_analyse_matrix instead of ildl_setup_matrix (its first ildl_factor
 *          makes the backend's state)
 * Oracles (abort with a message):
 *   M1 every status is one the call documents, never INTERNAL; ildl_last_error says something
 *   M2 the caller's arrays are unchanged
 *   M3 a descriptor the harness knows valid gets the status ildl_setup gets on the full pattern
 *      the harness builds itself (entries mirrored, duplicates summed in order); an invalid one
 *      is refused
 *   M4 when both set up: factor and solve give the same status, iterations and x bits
 *   M5 ildl_factor_matrix on a sub-pattern agrees with ildl_factor on the full pattern's
 *      values with the missing entries 0 (same status; same x bits when both solve)
 *   M6 a handle of ildl_analyse_matrix refuses ildl_solve and ildl_apply before its first
 *      ildl_factor (CALL_ORDER), holds no device memory, and is then as ildl_setup_matrix's
 *      (M3-M5 hold for it) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"

typedef struct { const uint8_t *p; size_t n, at; } stream;
static uint8_t u8(stream *s) { return s->at < s->n ? s->p[s->at++] : 0; }

static void fail(const char *oracle, const char *what)
{
    fprintf(stderr, "fuzz_matrix: oracle %s failed: %s\n", oracle, what);
    abort();
}

static double value_of(uint8_t b)
{
    static const double special[16] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 1e300, -1e300, 1e-300, 4.0, -3.0,
                                       1e10, 1e-10, 0.25, 0, 0};
    if (b < 14) return special[b];
    if (b == 14) return NAN;
    if (b == 15) return INFINITY;
    return (double)(int8_t)b / 8.0;
}

enum { MAXN = 12, MAXE = 48 };

typedef struct {
    int64_t n, ne;
    int64_t ri[MAXE], cj[MAXE]; /* as given, base included */
    double v[MAXE];
    int valid;                  /* the harness's verdict on the descriptor */
} entries;

static int documented_setup(int st)
{
    switch (st) {
    case ILDL_SUCCESS: case ILDL_ERR_NULL_ARGUMENT: case ILDL_ERR_INVALID_OPTION: case ILDL_ERR_EMPTY:
    case ILDL_ERR_INDEX_RANGE: case ILDL_ERR_DUPLICATE: case ILDL_ERR_NAN_INF: case ILDL_ERR_NOT_SYMMETRIC:
    case ILDL_ERR_SINGULAR: case ILDL_ERR_NOT_SUPPORTED: case ILDL_ERR_OUT_OF_MEMORY:
        return 1;
    default:
        return 0;
    }
}

/* The full pattern of the entries as the harness reads the descriptor: dense n x n, present
 * flags; 0-based CSR out. */
static void full_pattern(const entries *E, int base, int view, int64_t *rowptr, int32_t *col, double *val)
{
    static double d[MAXN][MAXN];
    static int have[MAXN][MAXN];
    memset(have, 0, sizeof have);
    for (int64_t k = 0; k < E->ne; k++) {
        int64_t i = E->ri[k] - base, j = E->cj[k] - base;
        for (int side = 0; side < 2; side++) {
            if (side && (view == ILDL_VIEW_FULL || i == j)) break;
            int64_t a = side ? j : i, b = side ? i : j;
            if (have[a][b]) d[a][b] += E->v[k];
            else { d[a][b] = E->v[k]; have[a][b] = 1; }
        }
    }
    int64_t p = 0;
    for (int64_t i = 0; i < E->n; i++) {
        rowptr[i] = p;
        for (int64_t j = 0; j < E->n; j++)
            if (have[i][j]) { col[p] = (int32_t)j; val[p++] = d[i][j]; }
    }
    rowptr[E->n] = p;
}

static void options(ildl_options *o)
{
    ildl_options_default(o);
    o->backend = ILDL_BACKEND_CPU;
    o->num_threads = 1;
    o->max_iter = 40;
    o->escalation = ILDL_ESCALATE_NONE;
}

/* Solve on h with b = 1: status, iterations, x. */
static int solve(ildl_handle *h, int64_t n, double *x, int *its)
{
    double b[MAXN];
    for (int64_t i = 0; i < n; i++) b[i] = 1.0;
    int st = ildl_solve(h, b, x);
    ildl_info info;
    ildl_get_info(h, &info);
    *its = info.iterations;
    if (st != ILDL_SUCCESS && st != ILDL_ERR_NOT_CONVERGED && st != ILDL_ERR_BREAKDOWN) fail("M1", "ildl_solve status");
    return st;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("OMP_NUM_THREADS", "1", 0);
    setenv("OMP_WAIT_POLICY", "passive", 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stream s = {data, size, 0};
    uint8_t lay = u8(&s);
    ildl_matrix m;
    ildl_matrix_init(&m);
    m.format = lay & 1 ? ILDL_FORMAT_COO : ILDL_FORMAT_CSR;
    m.base = lay >> 1 & 1;
    m.view = lay >> 2 & 3;
    m.duplicates = lay >> 4 & 1 ? ILDL_DUPLICATES_SUM : ILDL_DUPLICATES_REFUSE;
    m.offset_type = lay >> 5 & 1 ? ILDL_INDEX_64 : ILDL_INDEX_32;
    m.index_type = lay >> 6 & 1 ? ILDL_INDEX_64 : ILDL_INDEX_32;
    entries E;
    E.valid = m.view <= ILDL_VIEW_UPPER;
    int broken = -1;
    if (lay >> 7) {
        broken = u8(&s) % 6;
        E.valid = 0;
    }
    E.n = 1 + u8(&s) % MAXN;
    int count = u8(&s) % MAXE;
    E.ne = 0;
    for (int k = 0; k < count; k++) {
        int64_t i = (int64_t)(u8(&s) % (E.n + 2)) - 1 + m.base, j = (int64_t)(u8(&s) % (E.n + 2)) - 1 + m.base;
        double v = value_of(u8(&s));
        E.ri[E.ne] = i;
        E.cj[E.ne] = j;
        E.v[E.ne++] = v;
    }
    /* CSR needs rows in order: sort the entries by row (stable), out-of-range rows to the end
     * (they make the descriptor invalid: the pointers then cover only rows in range) */
    if (m.format == ILDL_FORMAT_CSR) {
        for (int64_t a = 1; a < E.ne; a++)
            for (int64_t b = a; b > 0 && E.ri[b - 1] > E.ri[b]; b--) {
                int64_t ti = E.ri[b], tj = E.cj[b];
                double tv = E.v[b];
                E.ri[b] = E.ri[b - 1]; E.cj[b] = E.cj[b - 1]; E.v[b] = E.v[b - 1];
                E.ri[b - 1] = ti; E.cj[b - 1] = tj; E.v[b - 1] = tv;
            }
    }
    /* the caller's arrays in the descriptor's widths */
    int32_t r32[MAXE + MAXN + 1], c32[MAXE];
    int64_t r64[MAXE + MAXN + 1], c64[MAXE];
    for (int64_t k = 0; k < E.ne; k++) {
        c32[k] = (int32_t)E.cj[k];
        c64[k] = E.cj[k];
        r32[k] = (int32_t)E.ri[k];
        r64[k] = E.ri[k];
    }
    if (m.format == ILDL_FORMAT_CSR) {
        int64_t p = 0;
        for (int64_t i = 0; i <= E.n; i++) {
            while (p < E.ne && E.ri[p] - m.base < i) p++;
            r64[i] = p + m.base;
        }
        uint8_t dec = u8(&s);
        if (dec) r64[dec % (E.n + 1)] -= 1;
        for (int64_t i = 0; i <= E.n; i++) r32[i] = (int32_t)r64[i];
        /* pointers that start at the base, never decrease and cover every entry say each
         * entry's row (a moved pointer moves entries between rows); others are invalid */
        int good = r64[0] == m.base && r64[E.n] - m.base == E.ne;
        for (int64_t i = 0; i < E.n; i++) good &= r64[i + 1] >= r64[i];
        if (good) {
            for (int64_t i = 0; i < E.n; i++)
                for (int64_t k = r64[i] - m.base; k < r64[i + 1] - m.base; k++) E.ri[k] = i + m.base;
        } else {
            E.valid = 0;
        }
        m.rows = m.offset_type == ILDL_INDEX_64 ? (const void *)r64 : (const void *)r32;
    } else {
        m.rows = m.index_type == ILDL_INDEX_64 ? (const void *)r64 : (const void *)r32;
    }
    m.cols = m.index_type == ILDL_INDEX_64 ? (const void *)c64 : (const void *)c32;
    /* each entry in range, in the view, finite; no position twice (after mirroring) unless summed */
    static int seen[MAXN][MAXN];
    memset(seen, 0, sizeof seen);
    for (int64_t k = 0; k < E.ne && E.valid; k++) {
        int64_t i = E.ri[k] - m.base, j = E.cj[k] - m.base;
        if (i < 0 || i >= E.n || j < 0 || j >= E.n || !isfinite(E.v[k])) { E.valid = 0; break; }
        if ((m.view == ILDL_VIEW_LOWER && i < j) || (m.view == ILDL_VIEW_UPPER && i > j)) { E.valid = 0; break; }
        if (m.duplicates == ILDL_DUPLICATES_REFUSE) {
            if (seen[i][j]++) E.valid = 0;
            if (m.view != ILDL_VIEW_FULL && i != j && seen[j][i]++) E.valid = 0;
        }
    }
    m.values = E.v;
    m.n = E.n;
    m.nnz = m.format == ILDL_FORMAT_CSR ? r64[E.n] - m.base : E.ne;
    if (m.format == ILDL_FORMAT_CSR && m.nnz != E.ne) m.nnz = E.ne; /* as the caller would claim */
    switch (broken) {
    case 0: m.format = 7; break;
    case 1: m.base = 2; break;
    case 2: m.duplicates = -1; break;
    case 3: m.offset_type = 99; break;
    case 4: m.index_type = 99; break;
    case 5: m.nnz = -1; break;
    default: break;
    }
    uint8_t drop = u8(&s), phases = u8(&s);
    /* copies for M2 */
    int32_t r32c[MAXE + MAXN + 1], c32c[MAXE];
    int64_t r64c[MAXE + MAXN + 1], c64c[MAXE];
    double vc[MAXE];
    memcpy(r32c, r32, sizeof r32); memcpy(c32c, c32, sizeof c32); memcpy(r64c, r64, sizeof r64);
    memcpy(c64c, c64, sizeof c64); memcpy(vc, E.v, sizeof E.v);
    ildl_options o;
    options(&o);
    ildl_handle *h = NULL, *g = NULL;
    int st = phases & 1 ? ildl_analyse_matrix(&m, &o, &h) : ildl_setup_matrix(&m, &o, &h);
    if (!documented_setup(st)) fail("M1", "ildl_setup_matrix status");
    if (!st && (phases & 1)) {
        double z[MAXN], r[MAXN];
        for (int i = 0; i < MAXN; i++) r[i] = 1.0;
        ildl_info info;
        if (ildl_solve(h, r, z) != ILDL_ERR_CALL_ORDER) fail("M6", "ildl_solve before the first factor");
        if (ildl_apply(h, r, z, ILDL_MEMORY_HOST, NULL) != ILDL_ERR_CALL_ORDER) fail("M6", "ildl_apply before it");
        if (ildl_get_info(h, &info) || info.device_bytes != 0) fail("M6", "device memory after the analysis");
    }
    if (st && (!ildl_last_error(NULL) || !ildl_last_error(NULL)[0])) fail("M1", "no message");
    if (st && h) fail("M1", "a handle after a failure");
    if (memcmp(r32c, r32, sizeof r32) || memcmp(c32c, c32, sizeof c32) || memcmp(r64c, r64, sizeof r64) ||
        memcmp(c64c, c64, sizeof c64) || memcmp(vc, E.v, sizeof E.v))
        fail("M2", "the caller's arrays changed");
    if (getenv("FUZZ_MATRIX_VERBOSE")) {
        fprintf(stderr, "format %d base %d view %d dup %d types %d/%d n %lld nnz %lld valid %d status %d (%s)\n",
                m.format, m.base, m.view, m.duplicates, m.offset_type, m.index_type, (long long)m.n,
                (long long)m.nnz, E.valid, st, st ? ildl_last_error(NULL) : "");
        if (m.format == ILDL_FORMAT_CSR)
            for (int64_t i = 0; i <= E.n; i++) fprintf(stderr, "rowptr[%lld] = %lld\n", (long long)i, (long long)r64[i]);
        for (int64_t k = 0; k < E.ne; k++)
            fprintf(stderr, "entry %lld: (%lld,%lld) %g\n", (long long)k, (long long)E.ri[k], (long long)E.cj[k], E.v[k]);
    }
    if (!E.valid) {
        /* refused; where it has several faults, the first one checked is reported (ildl_setup's
         * own layout is checked by its own validation, which finds an empty row before a
         * duplicate) */
        if (st == ILDL_SUCCESS) fail("M3", "an invalid descriptor was accepted");
        ildl_destroy(h);
        return 0;
    }
    int64_t rowptr[MAXN + 1];
    int32_t col[2 * MAXE];
    double val[2 * MAXE];
    full_pattern(&E, m.base, m.view, rowptr, col, val);
    int stf = ildl_setup((int32_t)E.n, rowptr, col, val, &o, &g);
    if (stf != st) {
        fprintf(stderr, "descriptor %d (%s), full pattern %d\n", st, st ? ildl_last_error(NULL) : "", stf);
        fail("M3", "a valid descriptor and its full pattern differ");
    }
    if (st) return 0;
    double x1[MAXN], x2[MAXN];
    int s1 = ildl_factor(h, NULL), s2 = ildl_factor(g, NULL), i1 = 0, i2 = 0;
    if (s1 != s2) fail("M4", "factor statuses differ");
    if (!s1) {
        s1 = solve(h, E.n, x1, &i1);
        s2 = solve(g, E.n, x2, &i2);
        if (s1 != s2 || i1 != i2 || memcmp(x1, x2, sizeof(double) * (size_t)E.n)) fail("M4", "solves differ");
    }
    /* M5: the sub-pattern of the entries whose bit is set (COO, the same base and view) */
    entries S = E;
    S.ne = 0;
    for (int64_t k = 0; k < E.ne; k++)
        if (drop >> (k % 8) & 1) { S.ri[S.ne] = E.ri[k]; S.cj[S.ne] = E.cj[k]; S.v[S.ne++] = E.v[k]; }
    ildl_matrix sm = m;
    sm.format = ILDL_FORMAT_COO;
    sm.index_type = ILDL_INDEX_64;
    sm.nnz = S.ne;
    sm.rows = S.ri;
    sm.cols = S.cj;
    sm.values = S.v;
    /* the full pattern's values with what the sub-pattern gives, 0 elsewhere */
    int64_t srow[MAXN + 1];
    int32_t scol[2 * MAXE];
    double sval[2 * MAXE], fullv[2 * MAXE];
    full_pattern(&S, m.base, m.view, srow, scol, sval);
    for (int64_t i = 0; i < E.n; i++)
        for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
            fullv[p] = 0.0;
            for (int64_t q = srow[i]; q < srow[i + 1]; q++)
                if (scol[q] == col[p]) fullv[p] = sval[q];
        }
    s1 = ildl_factor_matrix(h, &sm);
    s2 = ildl_factor(g, fullv);
    if (s1 != s2) {
        fprintf(stderr, "factor_matrix %d (%s), factor %d (%s)\n", s1, ildl_last_error(h), s2, ildl_last_error(g));
        fail("M5", "sub-pattern statuses differ");
    }
    if (!s1) {
        s1 = solve(h, E.n, x1, &i1);
        s2 = solve(g, E.n, x2, &i2);
        if (s1 != s2 || i1 != i2 || memcmp(x1, x2, sizeof(double) * (size_t)E.n)) fail("M5", "solves differ");
    }
    ildl_destroy(h);
    ildl_destroy(g);
    return 0;
}
