/* fuzz_api.c -- libFuzzer harness of the public API: ildl_setup -> ildl_factor -> ildl_solve
 * -> ildl_apply (host vectors, CPU backend) on a small CSR matrix built from the input.
 *
 * Input encoding (docs/reliability.md; tests/fuzz/make_corpus.py writes inputs from a
 * readable description). The input is read as a byte stream; bytes past its end read as 0.
 *   n        u8: n = 1 + byte % 64
 *   options  u8: count = byte % 5, then count x (field u8, value): field = byte % NFIELDS
 *            (table g_fields); an int value is (sel u8, payload) and a double value is a VALUE
 *   base     u8: kind = byte % 8 (none, diagonal, tridiagonal, band 2, arrow, saddle point,
 *            dense, random pattern), then VALUE diag, VALUE off (and for kind 7 u8 seed,
 *            u8 density): a symmetric matrix
 *   entries  u8: count = byte % 33, then count x (u8 i, u8 j, u8 flags, VALUE unless
 *            removing, VALUE of (j,i) if asymmetric): flags 1 asymmetric value, 2 add to the
 *            existing entry, 4 one-sided (only (i,j)), 8 remove (i,j) and (j,i)
 *   layout   u8: 0 sorted rows, 1 rows reversed, 2 rows shuffled (then u8 seed), 3 sorted
 *   corrupt  u8: count = byte % 5, then count x (op u8, params): see corrupt()
 *   rhs      u8: mode = byte % 6 (VALUE v for all, v*(i+1), n VALUEs, row sums of A,
 *            v*(i+1) alternating in sign, zero), then u8 count = byte % 4 overrides (u8 i, VALUE)
 *   x0       u8: mode = byte % 3 (zero, VALUE for all, n VALUEs): the initial guess
 *            (used when use_initial_guess is set)
 *   factor   u8: mode = byte % 4 (NULL, a copy of setup's values, values * 2^e with e = int8
 *            u8 % 40, setup's values with entry u16 % nnz set to VALUE)
 *   flags    u8: 1 solve twice (bitwise the same), 2 factor(h, NULL) again and solve again
 * VALUE: tag u8; tag % 4 == 0: int8 a + b/256 (two more bytes); 1: special[u8 % 32];
 *   2: (-1)^(tag>>5 & 1) * (1 + a/256) * 2^(int8 b * 8 + (tag>>2 & 7)); 3: 8 raw bytes (LE).
 *
 * Oracles (docs/reliability.md): abort() with a message naming the oracle.
 *   A1 every status is a documented ILDL_* code (0..20) of the function that returned it, and
 *      never ILDL_ERR_INTERNAL; ildl_last_error is never NULL and not empty after a failure
 *   A2 the caller's arrays (rowptr, colind, values, b, new values, r) are unchanged
 *   A3 ildl_solve's reported true residual (SUCCESS, NOT_CONVERGED, BREAKDOWN) agrees with
 *      ||b - A x|| / ||b|| recomputed in long double from the caller's CSR, within a
 *      rounding-error bound; x is finite
 *   A4 SUCCESS <=> converged; SUCCESS => reported <= tol and recomputed <= tol + bound;
 *      NOT_CONVERGED/BREAKDOWN => reported > tol
 *   A5 ildl_apply: z aliasing r -> INVALID_OPTION, x aliasing b in ildl_solve -> INVALID_OPTION,
 *      an unknown where -> INVALID_OPTION, device memory -> NOT_SUPPORTED, two applies agree,
 *      ildl_apply_multi's columns are ildl_apply's bits (NaN for NaN)
 *   A6 setup's validation agrees with the harness's: an invalid CSR is refused, a valid one
 *      (symmetric to 1e-12) is not refused for a reason of the matrix; new values in
 *      ildl_factor: NaN/Inf -> NAN_INF, clearly asymmetric -> NOT_SYMMETRIC
 *   A7 call order: ildl_solve/ildl_apply before a (successful) factor -> CALL_ORDER
 *   A8 ildl_info: n, nnz, backend after setup; inertia sums to n after a factorization (block-Jacobi:
 *      inertia 0, its inverses' entries)
 *   A9 a second solve of the same system gives the same bits; it starts on the ladder's rung the
 *      first reached, so its iterations are the first's on that rung (where the rung by cost
 *      took a higher rung before it, a third solve gives the second's bits); ildl_solve_multi
 *      of b twice then gives each column the second solve's status, iterations and bits
 *   A10 ildl_solve returns NAN_INF exactly when b or the initial guess has a NaN/Inf (an initial
 *      guess whose A x0 overflows is not used)
 *   A11 setup refuses an option outside the range blockildl.h documents
 *   A12 progress_fn: iterations numbered 1, 2, 3, ... never more than info.iterations;
 *      log_fn lines are NUL-terminated
 *
 * num_threads: values the library accepts (<= ILDL_MAX_THREADS) are clamped to 64 threads
 * (fast executions); larger ones are passed as they are: setup must refuse them (A11). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, pwrite, ftruncate, setenv */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"

#define NMAX 64
#define MAX_ITER_CAP 200 /* keeps executions fast */

/* ------------------------------------------------------------------ failure */

/* FUZZ_API_VERBOSE=1 in the environment: print each decoded input and the statuses of its
 * calls to stderr (to read a reproducer: FUZZ_API_VERBOSE=1 ./fuzz_api FILE) */
static int g_verbose;
static const char *g_ctx = "";  /* what the harness was doing, for the message */
static const char *g_csr = "";  /* the harness's verdict on the CSR given to ildl_setup */

static void fail(const char *oracle, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *oracle, const char *fmt, ...)
{
    char d[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d, sizeof d, fmt, ap);
    va_end(ap);
    fprintf(stderr, "fuzz_api: oracle %s failed (%s; CSR %s): %s\n", oracle, g_ctx, g_csr, d);
    abort();
}

/* ------------------------------------------------------------------ byte stream */

typedef struct {
    const uint8_t *p;
    size_t n, k;
} stream;

static uint8_t u8(stream *s) { return s->k < s->n ? s->p[s->k++] : 0; }
static uint16_t u16(stream *s)
{
    uint16_t a = u8(s);
    return (uint16_t)(a | (uint16_t)u8(s) << 8);
}
static uint32_t u32(stream *s)
{
    uint32_t a = u16(s);
    return a | (uint32_t)u16(s) << 16;
}

static double special(unsigned k)
{
    static const double tab[32] = {
        0.0, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 0.5,
        1e-300, -1e-300, 1e300, -1e300, 1e200, -1e200, 1e-200, DBL_MAX,
        -DBL_MAX, 1.7e308, DBL_MIN, 4.9406564584124654e-324, -4.9406564584124654e-324, 0.0 /* NaN */,
        0.0 /* +Inf */, 0.0 /* -Inf */, 1e-10, 1e10, 1e-16, 3.0, 1e150, 1e-150, 0.1, -0.0};
    k %= 32;
    if (k == 21) return NAN;
    if (k == 22) return INFINITY;
    if (k == 23) return -INFINITY;
    return tab[k];
}

static double value(stream *s)
{
    uint8_t tag = u8(s);
    switch (tag & 3) {
    case 0: {
        int8_t a = (int8_t)u8(s);
        return (double)a + u8(s) / 256.0;
    }
    case 1: return special(u8(s));
    case 2: {
        double m = 1.0 + u8(s) / 256.0;
        int e = (int8_t)u8(s) * 8 + ((tag >> 2) & 7);
        return ((tag >> 5) & 1 ? -1.0 : 1.0) * ldexp(m, e);
    }
    default: {
        uint64_t b = (uint64_t)u32(s);
        b |= (uint64_t)u32(s) << 32;
        double v;
        memcpy(&v, &b, sizeof v);
        return v;
    }
    }
}

/* ------------------------------------------------------------------ options */

enum { F_INT, F_DOUBLE };
typedef struct {
    const char *name;
    int kind;
    size_t off;
} field;
#define FI(f) {#f, F_INT, offsetof(ildl_options, f)}
#define FD(f) {#f, F_DOUBLE, offsetof(ildl_options, f)}
static const field g_fields[] = {
    FI(backend), FI(ordering), FI(blocking), FI(scaling), FI(pivoting), FI(precision), FI(fill_level),
    FD(fill_factor), FD(drop_tol), FI(max_block_size), FD(block_threshold), FD(block_decay),
    FD(pivot_tol), FD(pivot_perturb), FI(leftover), FD(tol), FI(max_iter), FI(use_initial_guess),
    FI(check_every), FI(num_threads), FI(verbosity), FI(device_id), FI(solve_schedule),
    FI(solve_kernels), FI(l2_persist), FI(escalation), FI(pushback_rounds), FI(apply_mode),
    FI(refactor_scaling), FI(method), FI(fp_sweeps), FI(rung_choice), FD(fp_eps), FD(fp_delta)};
#define NFIELDS ((int)(sizeof g_fields / sizeof *g_fields))

static int int_value(stream *s)
{
    uint8_t sel = u8(s);
    switch (sel % 8) {
    case 0: return (int8_t)u8(s);
    case 1: return u8(s) % 8;
    case 2: return INT_MAX;
    case 3: return INT_MIN;
    case 4: return -1;
    case 5: return (int)u32(s);
    case 6: return INT_MAX - u8(s);
    default: return 1000 * (1 + u8(s));
    }
}

/* ------------------------------------------------------------------ callbacks (A12) */

static int g_progress_calls, g_progress_bad;
static void progress(void *ctx, int iteration, double est)
{
    (void)ctx;
    (void)est;
    if (iteration != g_progress_calls + 1) g_progress_bad = iteration;
    g_progress_calls++;
}

static size_t g_log_bytes;
static void log_sink(void *ctx, const char *line)
{
    (void)ctx;
    if (!line) fail("A12", "log_fn got a NULL line");
    g_log_bytes += strlen(line); /* AddressSanitizer checks the whole string */
}

/* ------------------------------------------------------------------ statuses (A1) */

#define BIT(s) (1u << (s))
static const unsigned DOC_SETUP =
    BIT(ILDL_SUCCESS) | BIT(ILDL_ERR_NULL_ARGUMENT) | BIT(ILDL_ERR_EMPTY) | BIT(ILDL_ERR_INDEX_RANGE) |
    BIT(ILDL_ERR_DUPLICATE) | BIT(ILDL_ERR_NAN_INF) | BIT(ILDL_ERR_NOT_SYMMETRIC) | BIT(ILDL_ERR_SINGULAR) |
    BIT(ILDL_ERR_INVALID_OPTION) | BIT(ILDL_ERR_NOT_SUPPORTED) | BIT(ILDL_ERR_NO_DEVICE) | BIT(ILDL_ERR_DEVICE) |
    BIT(ILDL_ERR_OUT_OF_MEMORY);
static const unsigned DOC_FACTOR = BIT(ILDL_SUCCESS) | BIT(ILDL_ERR_NULL_ARGUMENT) | BIT(ILDL_ERR_NAN_INF) |
                                   BIT(ILDL_ERR_NOT_SYMMETRIC) | BIT(ILDL_ERR_OUT_OF_MEMORY) | BIT(ILDL_ERR_DEVICE) |
                                   BIT(ILDL_ERR_NOT_SUPPORTED);
static const unsigned DOC_SOLVE = BIT(ILDL_SUCCESS) | BIT(ILDL_ERR_NOT_CONVERGED) | BIT(ILDL_ERR_BREAKDOWN) |
                                  BIT(ILDL_ERR_NULL_ARGUMENT) | BIT(ILDL_ERR_CALL_ORDER) | BIT(ILDL_ERR_NAN_INF) |
                                  BIT(ILDL_ERR_OUT_OF_MEMORY) | BIT(ILDL_ERR_DEVICE) | BIT(ILDL_ERR_INVALID_OPTION);
static const unsigned DOC_APPLY = BIT(ILDL_SUCCESS) | BIT(ILDL_ERR_NULL_ARGUMENT) | BIT(ILDL_ERR_CALL_ORDER) |
                                  BIT(ILDL_ERR_NOT_SUPPORTED) | BIT(ILDL_ERR_DEVICE) |
                                  BIT(ILDL_ERR_INVALID_OPTION);

static void check_status(const char *call, int st, unsigned documented, const ildl_handle *h)
{
    if (g_verbose)
        fprintf(stderr, "  %s -> %d %s%s%s\n", call, st, ildl_strerror(st), st ? ": " : "",
                st && ildl_last_error(h) ? ildl_last_error(h) : "");
    if (st < 0 || st > 20) fail("A1", "%s returned %d, not an ILDL_* status", call, st);
    if (st == ILDL_ERR_INTERNAL)
        fail("A1", "%s returned ILDL_ERR_INTERNAL: %s", call, ildl_last_error(h) ? ildl_last_error(h) : "(null)");
    if (!(documented & BIT(st)))
        fail("A1", "%s returned %d (%s), not one of its documented statuses: %s", call, st, ildl_strerror(st),
             ildl_last_error(h) ? ildl_last_error(h) : "(null)");
    const char *e = ildl_last_error(h);
    if (!e) fail("A1", "ildl_last_error is NULL after %s", call);
    if (st != ILDL_SUCCESS && e[0] == '\0') fail("A1", "%s failed with %d but ildl_last_error is empty", call, st);
    const char *se = ildl_strerror(st);
    if (!se || !se[0]) fail("A1", "ildl_strerror(%d) empty", st);
}

/* ------------------------------------------------------------------ the matrix */

typedef struct {
    int32_t n;
    double a[NMAX][NMAX];
    uint8_t has[NMAX][NMAX];
} dense;

static void put(dense *D, int i, int j, double v) { D->a[i][j] = v, D->has[i][j] = 1; }
static void put_sym(dense *D, int i, int j, double v) { put(D, i, j, v), put(D, j, i, v); }

static void build_base(stream *s, dense *D)
{
    int n = D->n, kind = u8(s) % 8;
    if (kind == 0) return;
    double dv = value(s), ov = value(s);
    switch (kind) {
    case 1:
        for (int i = 0; i < n; i++) put(D, i, i, dv);
        break;
    case 2:
    case 3:
        for (int i = 0; i < n; i++) {
            put(D, i, i, dv);
            for (int k = 1; k <= kind - 1 && i + k < n; k++) put_sym(D, i, i + k, ov);
        }
        break;
    case 4:
        for (int i = 0; i < n; i++) put(D, i, i, dv);
        for (int i = 1; i < n; i++) put_sym(D, 0, i, ov);
        break;
    case 5: { /* saddle point: [H B^T; B 0], H diagonal, no diagonal in the second block */
        int m = n / 2 > 0 ? n / 2 : 1;
        for (int i = 0; i < m; i++) put(D, i, i, dv);
        for (int j = m; j < n; j++) put_sym(D, (j - m) % m, j, ov * (1.0 + (double)(j % 3) / 4.0));
        break;
    }
    case 6:
        for (int i = 0; i < n; i++) {
            put(D, i, i, dv);
            for (int j = i + 1; j < n; j++) put_sym(D, i, j, ov * (1.0 + (double)((i + j) % 7) / 8.0));
        }
        break;
    default: {
        uint32_t seed = u8(s) * 2654435761u + 1u, dens = u8(s);
        for (int i = 0; i < n; i++) {
            put(D, i, i, dv);
            for (int j = i + 1; j < n; j++) {
                seed = seed * 1664525u + 1013904223u;
                if ((seed >> 24) < dens) put_sym(D, i, j, ov * (1.0 + (double)((seed >> 8) & 15) / 16.0));
            }
        }
    }
    }
}

static void extra_entries(stream *s, dense *D)
{
    int cnt = u8(s) % 33;
    for (int k = 0; k < cnt; k++) {
        int i = u8(s) % D->n, j = u8(s) % D->n, fl = u8(s);
        if (fl & 8) {
            D->has[i][j] = D->has[j][i] = 0;
            continue;
        }
        double v = value(s), vt = (fl & 1) ? value(s) : v;
        if (fl & 2) {
            if (D->has[i][j]) v += D->a[i][j];
            if (D->has[j][i] && i != j) vt += D->a[j][i];
        }
        put(D, i, j, v);
        if (!(fl & 4) && i != j) put(D, j, i, vt);
    }
}

typedef struct {
    int32_t n, npass; /* order built, order passed to ildl_setup */
    int64_t *rowptr;  /* [n+1] */
    int32_t *col;     /* [cap] */
    double *val;      /* [cap] */
    int64_t nnz, cap;
    int null_arg;     /* 1 rowptr, 2 colind, 3 values passed as NULL */
} csr;

static void to_csr(stream *s, const dense *D, csr *C)
{
    int n = D->n;
    int64_t nnz = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) nnz += D->has[i][j];
    C->n = C->npass = n;
    C->cap = nnz + 8; /* room for inserted duplicates */
    C->rowptr = malloc(sizeof(int64_t) * ((size_t)n + 1));
    C->col = malloc(sizeof(int32_t) * (size_t)C->cap);
    C->val = malloc(sizeof(double) * (size_t)C->cap);
    if (!C->rowptr || !C->col || !C->val) abort();
    int layout = u8(s) % 4;
    uint32_t seed = layout == 2 ? u8(s) * 2246822519u + 7u : 0;
    int64_t q = 0;
    C->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        int64_t start = q;
        for (int j = 0; j < n; j++)
            if (D->has[i][j]) C->col[q] = j, C->val[q] = D->a[i][j], q++;
        int64_t len = q - start;
        if (layout == 1)
            for (int64_t a = 0; a < len / 2; a++) {
                int32_t tc = C->col[start + a];
                double tv = C->val[start + a];
                C->col[start + a] = C->col[q - 1 - a], C->val[start + a] = C->val[q - 1 - a];
                C->col[q - 1 - a] = tc, C->val[q - 1 - a] = tv;
            }
        if (layout == 2)
            for (int64_t a = len - 1; a > 0; a--) {
                seed = seed * 1664525u + 1013904223u;
                int64_t b = (int64_t)((seed >> 8) % (uint32_t)(a + 1));
                int32_t tc = C->col[start + a];
                double tv = C->val[start + a];
                C->col[start + a] = C->col[start + b], C->val[start + a] = C->val[start + b];
                C->col[start + b] = tc, C->val[start + b] = tv;
            }
        C->rowptr[i + 1] = q;
    }
    C->nnz = nnz;
}

/* Insert (col, val) into row r at offset off of the row. */
static void insert_entry(csr *C, int r, int64_t pos, int32_t c, double v)
{
    if (C->nnz >= C->cap) return;
    for (int64_t p = C->nnz; p > pos; p--) C->col[p] = C->col[p - 1], C->val[p] = C->val[p - 1];
    C->col[pos] = c, C->val[pos] = v;
    for (int i = r + 1; i <= C->n; i++) C->rowptr[i]++;
    C->nnz++;
}

static void remove_range(csr *C, int r, int64_t pos, int64_t cnt)
{
    for (int64_t p = pos; p + cnt < C->nnz; p++) C->col[p] = C->col[p + cnt], C->val[p] = C->val[p + cnt];
    for (int i = r + 1; i <= C->n; i++) C->rowptr[i] -= cnt;
    C->nnz -= cnt;
}

/* Corruptions: make the CSR invalid in the ways a caller can (index range, row pointers,
 * duplicates, NaN/Inf, missing entries, empty rows, a wrong n, NULL arrays). Every one keeps
 * the caller's arrays readable for rowptr[npass] entries: the library may read that many. */
static int rowptr_ok(const csr *C)
{
    if (C->rowptr[0] != 0 || C->rowptr[C->n] != C->nnz) return 0;
    for (int i = 0; i < C->n; i++)
        if (C->rowptr[i + 1] < C->rowptr[i]) return 0;
    return 1;
}

static void corrupt(stream *s, csr *C)
{
    int cnt = u8(s) % 5, n = C->n;
    for (int k = 0; k < cnt; k++) {
        int op = u8(s) % 8;
        /* the edits of entries (0, 5, 6) need intact row pointers: after op 2 they do nothing */
        int rows = rowptr_ok(C);
        switch (op) {
        case 0: { /* duplicate an entry of row r right after itself */
            int r = u8(s) % n;
            int64_t len = rows ? C->rowptr[r + 1] - C->rowptr[r] : 0, e = u8(s);
            int same = u8(s) & 1;
            double v = same ? 0.0 : value(s);
            if (rows && len > 0) {
                int64_t p = C->rowptr[r] + e % len;
                insert_entry(C, r, p + 1, C->col[p], same ? C->val[p] : v);
            }
            break;
        }
        case 1: { /* column index out of range */
            uint16_t p = u16(s);
            int w = u8(s);
            int32_t bad[5] = {n, -1, INT32_MAX, INT32_MIN, n + (w >> 3)};
            if (C->nnz > 0) C->col[p % C->nnz] = bad[w % 5];
            break;
        }
        case 2: { /* row pointer */
            int i = u8(s) % (n + 1), w = u8(s) % 6;
            int64_t cur = C->rowptr[i];
            int64_t bad[6] = {cur > -1000 && cur < 1000 ? cur - 1 : -1, cur > -1000 && cur < 1000 ? cur + 1 : 1, -1,
                              INT64_MAX, C->nnz + 1, 0};
            C->rowptr[i] = bad[w];
            break;
        }
        case 3: { /* one value replaced (NaN, Inf, asymmetric, ...) */
            uint16_t p = u16(s);
            double v = value(s);
            if (C->nnz > 0) C->val[p % C->nnz] = v;
            break;
        }
        case 4: { /* a wrong order passed to ildl_setup (never above n: the arrays end there) */
            int w = u8(s) % 4;
            int32_t bad[4] = {0, -1, n - 1, INT32_MIN};
            C->npass = bad[w];
            break;
        }
        case 5: { /* remove one entry */
            uint16_t p = u16(s);
            if (rows && C->nnz > 0) {
                int64_t q = p % C->nnz;
                int r = 0;
                while (C->rowptr[r + 1] <= q) r++;
                remove_range(C, r, q, 1);
            }
            break;
        }
        case 6: { /* empty a row */
            int r = u8(s) % n;
            if (rows) remove_range(C, r, C->rowptr[r], C->rowptr[r + 1] - C->rowptr[r]);
            break;
        }
        default: /* a NULL array */
            C->null_arg = 1 + u8(s) % 3;
            break;
        }
    }
    /* the library may read rowptr[npass] entries of colind and values (their documented
     * size): never more than the arrays hold */
    if (C->npass > 0 && C->rowptr[C->npass] > C->nnz) C->rowptr[C->npass] = C->nnz;
}

/* The harness's own validation of what ildl_setup receives. */
enum { CSR_VALID, CSR_INVALID, CSR_UNSURE };
static int classify(const csr *C, char *why, size_t wl)
{
    int32_t n = C->npass;
    if (C->null_arg) return snprintf(why, wl, "NULL array"), CSR_INVALID;
    if (n <= 0) return snprintf(why, wl, "n = %d", (int)n), CSR_INVALID;
    const int64_t *rp = C->rowptr;
    if (rp[0] != 0) return snprintf(why, wl, "rowptr[0] = %lld", (long long)rp[0]), CSR_INVALID;
    for (int i = 0; i < n; i++)
        if (rp[i + 1] < rp[i]) return snprintf(why, wl, "rowptr decreases at %d", i), CSR_INVALID;
    int sure = 1;
    static uint8_t seen[NMAX][NMAX];
    static long double v[NMAX][NMAX];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < n; i++) {
        if (rp[i + 1] == rp[i]) return snprintf(why, wl, "row %d empty", i), CSR_INVALID;
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
            int32_t j = C->col[p];
            if (j < 0 || j >= n) return snprintf(why, wl, "column %d in row %d", (int)j, i), CSR_INVALID;
            if (!isfinite(C->val[p])) return snprintf(why, wl, "value %g at (%d,%d)", C->val[p], i, (int)j), CSR_INVALID;
        }
    }
    for (int i = 0; i < n; i++)
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
            int32_t j = C->col[p];
            if (seen[i][j]) return snprintf(why, wl, "duplicate (%d,%d)", i, (int)j), CSR_INVALID;
            seen[i][j] = 1;
            v[i][j] = C->val[p];
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            if (seen[i][j] != seen[j][i]) return snprintf(why, wl, "pattern asymmetric at (%d,%d)", i, j), CSR_INVALID;
            if (!seen[i][j]) continue;
            long double a = v[i][j], b = v[j][i], m = fabsl(a) > fabsl(b) ? fabsl(a) : fabsl(b);
            long double d = fabsl(a - b);
            if (d > 1e-8L * m) return snprintf(why, wl, "values asymmetric at (%d,%d)", i, j), CSR_INVALID;
            if (d > 1e-12L * m) sure = 0;
        }
    snprintf(why, wl, "%s", sure ? "valid" : "symmetric only to 1e-8");
    return sure ? CSR_VALID : CSR_UNSURE;
}

/* ------------------------------------------------------------------ residual (A3, A4) */

typedef struct {
    long double rec;   /* recomputed ||b - A x|| / ||b|| */
    long double bound; /* bound on |reported - rec| from rounding in the library's double arithmetic */
    int bzero;         /* b == 0 */
} residual;

static residual recompute(const csr *C, const double *val, const double *b, const double *x)
{
    const long double u = LDBL_EPSILON > 0 ? ldexpl(1.0L, -53) : 0;
    const long double tiny = ldexpl(1.0L, -1074);
    int32_t n = C->npass; /* the system ildl_setup accepted */
    long double rr = 0, bb = 0, ss = 0;
    int64_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        long double ax = 0, sa = 0;
        int64_t len = C->rowptr[i + 1] - C->rowptr[i];
        if (len > m) m = len;
        for (int64_t p = C->rowptr[i]; p < C->rowptr[i + 1]; p++) {
            long double t = (long double)val[p] * (long double)x[C->col[p]];
            ax += t;
            sa += fabsl(t);
        }
        long double r = (long double)b[i] - ax, si = fabsl((long double)b[i]) + sa;
        rr += r * r;
        bb += (long double)b[i] * (long double)b[i];
        ss += si * si;
    }
    residual R;
    R.bzero = bb == 0;
    long double bn = sqrtl(bb), rn = sqrtl(rr), sn = sqrtl(ss);
    R.rec = R.bzero ? (rn == 0 ? 0 : INFINITY) : rn / bn;
    /* the library forms r_i = b_i - sum a_ip x_p in double (<= m+1 roundings per entry,
     * each relative to |b_i| + sum |a_ip x_p|, plus an absolute 2^-1074 per operation where
     * products underflow) and its 2-norm (relative error <= (n + few) u); a safety factor 4 */
    if (R.bzero) {
        R.bound = 0;
    } else {
        long double abs_err = (long double)(m + 2) * u * sn + (long double)(m + 2) * tiny * sqrtl((long double)n);
        R.bound = 4.0L * (abs_err / bn + (long double)(n + 8) * u * R.rec) + 8.0L * u;
    }
    return R;
}

/* ------------------------------------------------------------------ one execution */

static int all_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

static void *dup_mem(const void *p, size_t bytes)
{
    void *q = malloc(bytes ? bytes : 1);
    if (!q) abort();
    if (bytes) memcpy(q, p, bytes);
    return q;
}

typedef struct {
    const csr *C;
    const int64_t *rp0;
    const int32_t *col0;
    const double *val0;
} frozen;

static void check_unchanged(const frozen *F, const char *after)
{
    const csr *C = F->C;
    if (memcmp(C->rowptr, F->rp0, sizeof(int64_t) * ((size_t)C->n + 1)) != 0) fail("A2", "rowptr changed by %s", after);
    if (memcmp(C->col, F->col0, sizeof(int32_t) * (size_t)C->nnz) != 0) fail("A2", "colind changed by %s", after);
    if (memcmp(C->val, F->val0, sizeof(double) * (size_t)C->nnz) != 0) fail("A2", "values changed by %s", after);
}

/* A11: options blockildl.h gives a range for, outside it (setup must refuse them). */
static const char *documented_out_of_range(const ildl_options *o)
{
    if (o->backend < 0 || o->backend > ILDL_BACKEND_CUDA) return "backend";
    if (o->ordering < 0 || o->ordering > ILDL_ORDER_GMC_FILL) return "ordering";
    if (o->blocking < 0 || o->blocking > ILDL_BLOCKING_SN) return "blocking";
    if (o->scaling < 0 || o->scaling > ILDL_SCALING_MATCHING) return "scaling";
    if (o->pivoting < 0 || o->pivoting > ILDL_PIVOT_ROOK) return "pivoting";
    if (o->precision < 0 || o->precision > ILDL_PREC_MIXED) return "precision";
    if (o->leftover < 0 || o->leftover > ILDL_LEFTOVER_ATOMIC) return "leftover";
    if (o->solve_schedule < 0 || o->solve_schedule > ILDL_SCHEDULE_SYNCFREE) return "solve_schedule";
    if (o->solve_kernels < 0 || o->solve_kernels > ILDL_SOLVE_KERNELS_STAGED) return "solve_kernels";
    if (o->l2_persist < 0 || o->l2_persist > ILDL_L2_PERSIST_OFF) return "l2_persist";
    if (o->fill_level < 0) return "fill_level";
    if (o->max_block_size < 1 || o->max_block_size > 32) return "max_block_size";
    if (isnan(o->fill_factor) || (o->fill_factor > 0 && o->fill_factor < 1)) return "fill_factor";
    if (!(o->drop_tol >= 0)) return "drop_tol";
    if (o->check_every < 1) return "check_every";
    if (!(o->tol > 0 && o->tol < 1)) return "tol";
    if (o->max_iter < 0) return "max_iter";
    if (!(o->pivot_tol >= 0) || isinf(o->pivot_tol)) return "pivot_tol";
    if (!(o->pivot_perturb > 0) || isinf(o->pivot_perturb)) return "pivot_perturb";
    if (o->device_id < 0) return "device_id";
    if (o->escalation < ILDL_ESCALATE_NONE || o->escalation > ILDL_ESCALATE_COMPLETE) return "escalation";
    if (o->pushback_rounds < 0 || o->pushback_rounds > ILDL_MAX_PUSHBACK_ROUNDS) return "pushback_rounds";
    if (o->apply_mode != ILDL_APPLY_LDLT && o->apply_mode != ILDL_APPLY_SPD) return "apply_mode";
    if (o->refactor_scaling < ILDL_REFACTOR_SCALING_RECOMPUTE || o->refactor_scaling > ILDL_REFACTOR_SCALING_EQUILIBRATE)
        return "refactor_scaling";
    if (o->rung_choice != ILDL_RUNG_CHOICE_COST && o->rung_choice != ILDL_RUNG_CHOICE_FAILURE) return "rung_choice";
    if (o->method != ILDL_METHOD_ILDL && o->method != ILDL_METHOD_BLOCK_JACOBI && o->method != ILDL_METHOD_FIXED_POINT)
        return "method";
    if (o->method == ILDL_METHOD_FIXED_POINT && o->precision != ILDL_PREC_DOUBLE) return "method";
    if (o->fp_sweeps < 1 || o->fp_sweeps > ILDL_MAX_FP_SWEEPS) return "fp_sweeps";
    if (!(o->fp_eps >= 0) || isinf(o->fp_eps)) return "fp_eps";
    if (!(o->fp_delta > 0 && o->fp_delta <= 1)) return "fp_delta";
    if (o->method == ILDL_METHOD_BLOCK_JACOBI &&
        (o->precision != ILDL_PREC_DOUBLE || o->apply_mode != ILDL_APPLY_LDLT || o->pushback_rounds > 0))
        return "method";
#ifdef ILDL_MAX_THREADS
    if (o->num_threads < 0 || o->num_threads > ILDL_MAX_THREADS) return "num_threads";
#endif
#ifdef ILDL_MAX_FILL_LEVEL
    if (o->fill_level > ILDL_MAX_FILL_LEVEL) return "fill_level";
#endif
    return NULL;
}

/* LeakSanitizer: the OpenMP runtime keeps its thread pool's descriptors until the process
 * ends (not a leak of libblockildl) */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libomp.so\nleak:libgomp.so\n"; }


static void print_case(const ildl_options *o, const csr *C, const double *b, const double *x0, int fmode, int fexp,
                       unsigned fpos, double fv, int flags)
{
    ildl_options d;
    ildl_options_default(&d);
    fprintf(stderr, "case: n %d (passed %d), nnz %lld%s\n  options changed:", (int)C->n, (int)C->npass,
            (long long)C->nnz, C->null_arg ? ", a NULL array" : "");
    for (int k = 0; k < NFIELDS; k++) {
        const field *f = &g_fields[k];
        if (f->kind == F_INT) {
            int a, z;
            memcpy(&a, (const char *)o + f->off, sizeof a);
            memcpy(&z, (const char *)&d + f->off, sizeof z);
            if (a != z) fprintf(stderr, " %s=%d", f->name, a);
        } else {
            double a, z;
            memcpy(&a, (const char *)o + f->off, sizeof a);
            memcpy(&z, (const char *)&d + f->off, sizeof z);
            if (memcmp(&a, &z, sizeof a)) fprintf(stderr, " %s=%.17g", f->name, a);
        }
    }
    fprintf(stderr, "\n  rowptr:");
    for (int i = 0; i <= C->n; i++) fprintf(stderr, " %lld", (long long)C->rowptr[i]);
    fprintf(stderr, "\n  entries (row col value):\n");
    for (int i = 0; i < C->n; i++)
        for (int64_t p = C->rowptr[i]; p < C->rowptr[i + 1] && p >= 0 && p < C->nnz; p++)
            fprintf(stderr, "    %d %d %.17g\n", i, (int)C->col[p], C->val[p]);
    fprintf(stderr, "  b:");
    for (int i = 0; i < C->n; i++) fprintf(stderr, " %.17g", b[i]);
    fprintf(stderr, "\n  x0:");
    for (int i = 0; i < C->n; i++) fprintf(stderr, " %.17g", x0[i]);
    fprintf(stderr, "\n  factor mode %d (2: 2^%d, 3: entry %u = %.17g), flags %d\n", fmode, fexp, fpos, fv, flags);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    g_verbose = getenv("FUZZ_API_VERBOSE") != NULL;
    /* one OpenMP thread unless options.num_threads asks for more: several threads on a
     * sanitized build mostly wait for each other */
    setenv("OMP_NUM_THREADS", "1", 0);
    /* many OpenMP threads on few cores: sleep at barriers instead of spinning */
    setenv("KMP_BLOCKTIME", "0", 0);
    setenv("OMP_WAIT_POLICY", "passive", 0);
    /* NULL arguments, once */
    ildl_info info;
    if (ildl_get_info(NULL, &info) != ILDL_ERR_NULL_ARGUMENT) fail("A1", "ildl_get_info(NULL, info)");
    if (ildl_factor(NULL, NULL) != ILDL_ERR_NULL_ARGUMENT) fail("A1", "ildl_factor(NULL)");
    if (ildl_solve(NULL, NULL, NULL) != ILDL_ERR_NULL_ARGUMENT) fail("A1", "ildl_solve(NULL)");
    if (ildl_apply(NULL, NULL, NULL, 0, NULL) != ILDL_ERR_NULL_ARGUMENT) fail("A1", "ildl_apply(NULL)");
    if (ildl_destroy(NULL) != ILDL_SUCCESS) fail("A1", "ildl_destroy(NULL)");
    if (ildl_options_default(NULL) != ILDL_ERR_NULL_ARGUMENT) fail("A1", "ildl_options_default(NULL)");
    return 0;
}

static void solve_and_check(ildl_handle *h, const ildl_options *o, const csr *C, const double *val,
                            const double *b, const double *x0, int twice)
{
    int n = C->npass;
    size_t vb = sizeof(double) * (size_t)n;
    double *b0 = dup_mem(b, vb), *x = dup_mem(x0, vb);
    g_progress_calls = g_progress_bad = 0;
    g_ctx = "ildl_solve";
    int st = ildl_solve(h, b, x);
    check_status("ildl_solve", st, DOC_SOLVE, h);
    if (memcmp(b, b0, vb) != 0) fail("A2", "b changed by ildl_solve");
    int bfinite = all_finite(b, n), xfinite = !o->use_initial_guess || all_finite(x0, n);
    if (!bfinite && st != ILDL_ERR_NAN_INF) fail("A10", "b has NaN/Inf but ildl_solve returned %d", st);
    if (!xfinite && st != ILDL_ERR_NAN_INF) fail("A10", "the initial guess has NaN/Inf but ildl_solve returned %d", st);
    if (bfinite && xfinite && st == ILDL_ERR_NAN_INF)
        fail("A10", "b%s finite but ildl_solve returned ILDL_ERR_NAN_INF: %s",
             o->use_initial_guess ? " and the initial guess are" : " is", ildl_last_error(h));
    if (g_progress_bad) fail("A12", "progress_fn got iteration %d as call %d", g_progress_bad, g_progress_calls);
    ildl_info info;
    if (ildl_get_info(h, &info) != ILDL_SUCCESS) fail("A1", "ildl_get_info");
    if (st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED || st == ILDL_ERR_BREAKDOWN) {
        if (g_progress_calls > info.iterations)
            fail("A12", "%d progress calls for %d iterations", g_progress_calls, info.iterations);
        double rep = info.true_residual;
        if (!isfinite(rep)) fail("A3", "status %d with true_residual %g", st, rep);
        if (!all_finite(x, n)) fail("A3", "status %d with a non-finite x", st);
        residual R = recompute(C, val, b, x);
        if (R.bzero) {
            if (st != ILDL_SUCCESS || rep != 0 || R.rec != 0)
                fail("A3", "b = 0: status %d, reported %g, ||A x|| %Lg", st, rep, R.rec);
        } else if (fabsl((long double)rep - R.rec) > R.bound) {
            fail("A3", "status %d: reported true_residual %.17g, recomputed %.17Lg (bound %.3Lg), %d iterations", st,
                 rep, R.rec, R.bound, info.iterations);
        }
        if ((st == ILDL_SUCCESS) != (info.converged != 0))
            fail("A4", "status %d with converged = %d", st, info.converged);
        if (st == ILDL_SUCCESS && !(rep <= o->tol)) fail("A4", "converged with reported %.17g > tol %g", rep, o->tol);
        if (st == ILDL_SUCCESS && R.rec > (long double)o->tol + R.bound)
            fail("A4", "converged but recomputed %.17Lg > tol %g", R.rec, o->tol);
        if (st != ILDL_SUCCESS && !(rep > o->tol))
            fail("A4", "status %d but reported %.17g <= tol %g", st, rep, o->tol);
    }
    if (twice && !o->use_initial_guess) { /* A9 */
        double *x2 = dup_mem(x0, vb);
        ildl_info i2;
        g_ctx = "second ildl_solve";
        int st2 = ildl_solve(h, b, x2);
        ildl_get_info(h, &i2);
        if (o->rung_choice == ILDL_RUNG_CHOICE_COST && st == ILDL_SUCCESS && info.rung < 2 && i2.rung > info.rung) {
            /* the rung by cost took a higher rung before the second solve (the first converged
             * on a rung whose step models above twice the complete rung's): that solve is the
             * reference now, and a third must repeat it */
            if (st2 != ILDL_SUCCESS && st2 != ILDL_ERR_NOT_CONVERGED && st2 != ILDL_ERR_BREAKDOWN)
                fail("A9", "the second solve took rung %d by cost and returned %d", i2.rung, st2);
            memcpy(x, x2, vb);
            info = i2;
            st = st2;
            memcpy(x2, x0, vb);
            g_ctx = "third ildl_solve (after a rung taken by cost)";
            st2 = ildl_solve(h, b, x2);
            ildl_get_info(h, &i2);
        }
        if (st2 != st) fail("A9", "second solve returned %d, first %d", st2, st);
        if (st == ILDL_SUCCESS || st == ILDL_ERR_NOT_CONVERGED || st == ILDL_ERR_BREAKDOWN) {
            if (memcmp(x, x2, vb) != 0) fail("A9", "second solve gave other bits of x");
            if (i2.rung != info.rung || i2.iterations != info.rung_iterations[info.rung] ||
                memcmp(&i2.true_residual, &info.true_residual, sizeof(double)))
                fail("A9", "second solve: rung %d, %d iterations, residual %.17g; first: rung %d, %lld "
                     "iterations there, %.17g", i2.rung, i2.iterations, i2.true_residual, info.rung,
                     (long long)info.rung_iterations[info.rung], info.true_residual);
        }
        double *B2 = malloc(2 * vb), *X2 = calloc(2 * (size_t)n, sizeof(double));
        if (!B2 || !X2) abort();
        memcpy(B2, b, vb);
        memcpy(B2 + n, b, vb);
        ildl_column_result cr[2];
        g_ctx = "ildl_solve_multi";
        int sm = ildl_solve_multi(h, 2, B2, n, X2, n, cr);
        check_status("ildl_solve_multi", sm, DOC_SOLVE, h);
        if (sm != st2) fail("A9", "ildl_solve_multi of b twice returned %d, ildl_solve %d", sm, st2);
        if (st2 == ILDL_SUCCESS || st2 == ILDL_ERR_NOT_CONVERGED || st2 == ILDL_ERR_BREAKDOWN)
            for (int c = 0; c < 2; c++)
                if (cr[c].status != st2 || cr[c].iterations != i2.iterations || memcmp(X2 + (size_t)c * n, x2, vb) != 0 ||
                    memcmp(&cr[c].true_residual, &i2.true_residual, sizeof(double)))
                    fail("A9", "ildl_solve_multi's column %d: status %d, %d iterations, residual %.17g, x %s; "
                         "ildl_solve: %d, %d, %.17g", c, cr[c].status, cr[c].iterations, cr[c].true_residual,
                         memcmp(X2 + (size_t)c * n, x2, vb) ? "differs" : "the same", st2, i2.iterations,
                         i2.true_residual);
        free(B2);
        free(X2);
        free(x2);
    }
    /* A5: x aliasing b */
    if (bfinite) {
        double *bx = dup_mem(b, vb);
        int sa = ildl_solve(h, bx, bx);
        if (sa != ILDL_ERR_INVALID_OPTION) fail("A5", "ildl_solve with x aliasing b returned %d", sa);
        free(bx);
    }
    free(b0);
    free(x);
}

static void apply_checks(ildl_handle *h, int n, const double *b)
{
    size_t vb = sizeof(double) * (size_t)n;
    double *r = malloc(vb), *z = malloc(vb), *z2 = malloc(vb);
    if (!r || !z || !z2) abort();
    for (int i = 0; i < n; i++) r[i] = isfinite(b[i]) ? b[i] : 1.0;
    double *r0 = dup_mem(r, vb);
    g_ctx = "ildl_apply";
    int st = ildl_apply(h, r, z, ILDL_MEMORY_HOST, NULL);
    check_status("ildl_apply", st, DOC_APPLY, h);
    if (st != ILDL_SUCCESS) fail("A5", "ildl_apply after a successful factor returned %d: %s", st, ildl_last_error(h));
    if (memcmp(r, r0, vb) != 0) fail("A2", "r changed by ildl_apply");
    st = ildl_apply(h, r, z2, ILDL_MEMORY_HOST, NULL);
    if (st != ILDL_SUCCESS || memcmp(z, z2, vb) != 0) fail("A5", "two applies differ (status %d)", st);
    /* ildl_apply_multi: two columns (r twice), each ildl_apply's bits */
    double *R2 = malloc(2 * vb), *Z2 = malloc(2 * vb);
    if (!R2 || !Z2) abort();
    memcpy(R2, r, vb);
    memcpy(R2 + n, r, vb);
    st = ildl_apply_multi(h, 2, R2, n, Z2, n, ILDL_MEMORY_HOST, NULL);
    check_status("ildl_apply_multi", st, DOC_APPLY, h);
    if (st != ILDL_SUCCESS) fail("A5", "ildl_apply_multi after a successful factor returned %d", st);
    for (int i = 0; i < 2 * n; i++) /* the same bits; a NaN (a float factor overflowed) may differ in sign */
        if (memcmp(&Z2[i], &z[i % n], sizeof(double)) != 0 && !(isnan(Z2[i]) && isnan(z[i % n])))
            fail("A5", "ildl_apply_multi's column %d differs from ildl_apply at row %d: %a, %a", i / n, i % n, Z2[i],
                 z[i % n]);
    free(R2), free(Z2);
    st = ildl_apply(h, z, z, ILDL_MEMORY_HOST, NULL);
    check_status("ildl_apply (alias)", st, DOC_APPLY, h);
    if (st != ILDL_ERR_INVALID_OPTION) fail("A5", "ildl_apply with z aliasing r returned %d", st);
    st = ildl_apply(h, r, z, 7, NULL);
    if (st != ILDL_ERR_INVALID_OPTION) fail("A5", "ildl_apply with where = 7 returned %d", st);
    st = ildl_apply(h, r, z, ILDL_MEMORY_DEVICE, NULL);
    if (st != ILDL_ERR_NOT_SUPPORTED) fail("A5", "ildl_apply of device memory on the CPU backend returned %d", st);
    st = ildl_apply(h, NULL, z, ILDL_MEMORY_HOST, NULL);
    if (st != ILDL_ERR_NULL_ARGUMENT) fail("A5", "ildl_apply with r = NULL returned %d", st);
    if (memcmp(r, r0, vb) != 0) fail("A2", "r changed by ildl_apply");
    free(r), free(z), free(z2), free(r0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stream s = {data, size, 0};
    g_ctx = "decoding";
    g_csr = "";
    static dense D;
    memset(&D, 0, sizeof D);
    D.n = 1 + u8(&s) % NMAX;
    int n = D.n;

    /* options: 0..4 fields changed */
    ildl_options o;
    ildl_options_default(&o);
    int nopt = u8(&s) % 5;
    for (int k = 0; k < nopt; k++) {
        const field *f = &g_fields[u8(&s) % NFIELDS];
        if (f->kind == F_INT) {
            int v = int_value(&s);
            memcpy((char *)&o + f->off, &v, sizeof v);
        } else {
            double v = value(&s);
            memcpy((char *)&o + f->off, &v, sizeof v);
        }
    }
    /* the CPU backend always (an unknown value stays: setup must refuse it) */
    if (o.backend >= ILDL_BACKEND_AUTO && o.backend <= ILDL_BACKEND_CUDA) o.backend = ILDL_BACKEND_CPU;
    if (o.max_iter > MAX_ITER_CAP) o.max_iter = MAX_ITER_CAP;
    /* counts the library accepts run with at most 64 threads (fast executions); larger
     * values than it accepts are passed as they are: setup must refuse them (A11) */
    if (o.num_threads > 64 && o.num_threads <= ILDL_MAX_THREADS) o.num_threads = 64;
    o.log_fn = log_sink;
    o.progress_fn = progress;

    build_base(&s, &D);
    extra_entries(&s, &D);
    csr C;
    memset(&C, 0, sizeof C);
    to_csr(&s, &D, &C);
    corrupt(&s, &C);

    /* right-hand side, initial guess, factor values, flags */
    size_t vb = sizeof(double) * (size_t)n;
    double *b = malloc(vb), *x0 = calloc((size_t)n, sizeof(double));
    if (!b || !x0) abort();
    int bmode = u8(&s) % 6;
    double v = (bmode == 2 || bmode == 3 || bmode == 5) ? 0.0 : value(&s);
    for (int i = 0; i < n; i++) {
        switch (bmode) {
        case 0: b[i] = v; break;
        case 1: b[i] = v * (i + 1); break;
        case 2: b[i] = value(&s); break;
        case 3: {
            double t = 0;
            for (int64_t p = C.rowptr[i]; p < C.rowptr[i + 1] && p < C.nnz && p >= 0; p++) t += C.val[p];
            b[i] = t;
            break;
        }
        case 4: b[i] = (i % 2 ? -v : v) * (i + 1); break;
        default: b[i] = 0.0;
        }
    }
    for (int k = u8(&s) % 4; k > 0; k--) {
        int i = u8(&s) % n;
        b[i] = value(&s);
    }
    int xmode = u8(&s) % 3;
    if (xmode == 1) {
        double xv = value(&s);
        for (int i = 0; i < n; i++) x0[i] = xv;
    } else if (xmode == 2) {
        for (int i = 0; i < n; i++) x0[i] = value(&s);
    }
    int fmode = u8(&s) % 4;
    double *fval = NULL, *fval0 = NULL;
    int fexp = 0;
    uint16_t fpos = 0;
    double fv = 0;
    if (fmode == 2) fexp = (int8_t)u8(&s) % 40;
    if (fmode == 3) fpos = u16(&s), fv = value(&s);
    int flags = u8(&s);

    if (g_verbose) print_case(&o, &C, b, x0, fmode, fexp, fpos, fv, flags);

    /* ---- ildl_setup */
    char why[160];
    int cls = classify(&C, why, sizeof why);
    frozen F = {&C, dup_mem(C.rowptr, sizeof(int64_t) * ((size_t)n + 1)), dup_mem(C.col, sizeof(int32_t) * (size_t)C.nnz),
                dup_mem(C.val, sizeof(double) * (size_t)C.nnz)};
    ildl_handle *h = (ildl_handle *)(uintptr_t)16; /* must be overwritten */
    g_ctx = "ildl_setup";
    g_csr = why;
    int st = ildl_setup(C.npass, C.null_arg == 1 ? NULL : C.rowptr, C.null_arg == 2 ? NULL : C.col,
                        C.null_arg == 3 ? NULL : C.val, &o, &h);
    check_status("ildl_setup", st, DOC_SETUP, NULL);
    check_unchanged(&F, "ildl_setup");
    if (st != ILDL_SUCCESS && h != NULL) fail("A1", "failed ildl_setup left *out non-NULL");
    if (st == ILDL_SUCCESS && !h) fail("A1", "ildl_setup succeeded without a handle");
    if (st == ILDL_SUCCESS && cls == CSR_INVALID) fail("A6", "ildl_setup accepted an invalid CSR (%s)", why);
    if (cls == CSR_VALID && (st == ILDL_ERR_NULL_ARGUMENT || st == ILDL_ERR_EMPTY || st == ILDL_ERR_INDEX_RANGE ||
                             st == ILDL_ERR_DUPLICATE || st == ILDL_ERR_NAN_INF || st == ILDL_ERR_NOT_SYMMETRIC ||
                             st == ILDL_ERR_SINGULAR))
        fail("A6", "ildl_setup refused a valid CSR with %d: %s", st, ildl_last_error(NULL));
    const char *oor = documented_out_of_range(&o);
    if (st == ILDL_SUCCESS && oor) fail("A11", "ildl_setup accepted %s out of its documented range", oor);
    if (st != ILDL_SUCCESS) goto done;
    /* from here on the system is what setup accepted: order npass (<= n), rowptr[npass] entries */
    const int ns = C.npass;
    const int64_t nnzs = C.rowptr[ns];

    ildl_info info;
    if (ildl_get_info(h, &info) != ILDL_SUCCESS) fail("A1", "ildl_get_info");
    if (info.n != ns || info.nnz != nnzs || info.backend != ILDL_BACKEND_CPU)
        fail("A8", "info after setup: n %d nnz %lld backend %d", (int)info.n, (long long)info.nnz, info.backend);

    /* A7: no factor yet (finite vectors: only the call order is wrong) */
    double *ones = malloc(vb);
    if (!ones) abort();
    for (int i = 0; i < n; i++) ones[i] = 1.0;
    {
        double *x = calloc((size_t)n, sizeof(double)), *z = malloc(vb);
        int s1 = ildl_solve(h, ones, x), s2 = ildl_apply(h, ones, z, ILDL_MEMORY_HOST, NULL);
        check_status("ildl_solve before factor", s1, DOC_SOLVE, h);
        check_status("ildl_apply before factor", s2, DOC_APPLY, h);
        if (s1 != ILDL_ERR_CALL_ORDER || s2 != ILDL_ERR_CALL_ORDER)
            fail("A7", "before ildl_factor: solve %d, apply %d", s1, s2);
        free(x), free(z);
    }

    /* ---- ildl_factor */
    const double *cur = C.val; /* the values the handle's A holds */
    int expect = -1; /* A6 for new values: status required, -1 none */
    if (fmode == 1) {
        fval = dup_mem(C.val, sizeof(double) * (size_t)C.nnz);
    } else if (fmode >= 2) {
        fval = dup_mem(C.val, sizeof(double) * (size_t)C.nnz);
        if (fmode == 2)
            for (int64_t p = 0; p < C.nnz; p++) fval[p] = ldexp(fval[p], fexp);
        else
            fval[fpos % nnzs] = fv;
        int finite = all_finite(fval, (int)nnzs);
        if (!finite) expect = ILDL_ERR_NAN_INF;
        else if (fmode == 3) {
            /* the changed entry against its transpose */
            int64_t q = fpos % nnzs;
            int r = 0;
            while (C.rowptr[r + 1] <= q) r++;
            int32_t c = C.col[q];
            for (int64_t p = C.rowptr[c]; p < C.rowptr[c + 1]; p++)
                if (C.col[p] == r) {
                    long double a = fval[q], bb = fval[p], m = fmaxl(fabsl(a), fabsl(bb));
                    if (fabsl(a - bb) > 1e-8L * m) expect = ILDL_ERR_NOT_SYMMETRIC;
                }
        }
    }
    if (fval) fval0 = dup_mem(fval, sizeof(double) * (size_t)C.nnz);
    g_ctx = "ildl_factor";
    st = ildl_factor(h, fval);
    check_status("ildl_factor", st, DOC_FACTOR, h);
    check_unchanged(&F, "ildl_factor");
    if (fval && memcmp(fval, fval0, sizeof(double) * (size_t)C.nnz) != 0) fail("A2", "values changed by ildl_factor");
    if (expect >= 0 && st != expect) fail("A6", "ildl_factor with new values returned %d, expected %d", st, expect);
    if (st == ILDL_SUCCESS && fval) cur = fval;
    if (st != ILDL_SUCCESS) {
        double *x = calloc((size_t)n, sizeof(double));
        int s1 = ildl_solve(h, ones, x);
        if (s1 != ILDL_ERR_CALL_ORDER) fail("A7", "ildl_solve after a failed factor returned %d", s1);
        free(x);
        goto destroy;
    }
    ildl_get_info(h, &info);
    if ((o.method == ILDL_METHOD_FIXED_POINT && info.rung == 0) ? info.fp_residual < 0.0 : info.fp_residual != 0.0)
        fail("A8", "after a factor of method %d (rung %d): fp_residual %g", o.method, (int)info.rung, info.fp_residual);
    if (o.method == ILDL_METHOD_BLOCK_JACOBI && info.rung == 0) {
        /* block-Jacobi: no inertia, no 2x2 pivots; the inverses' entries, n .. 32 n */
        if (info.inertia_pos || info.inertia_neg || info.inertia_zero || info.num_2x2_pivots ||
            info.factor_nnz < ns || info.factor_nnz > 32 * (int64_t)ns)
            fail("A8", "after a block-Jacobi factor: inertia (%d,%d,%d), %d 2x2 pivots, %lld entries, n = %d",
                 (int)info.inertia_pos, (int)info.inertia_neg, (int)info.inertia_zero, (int)info.num_2x2_pivots,
                 (long long)info.factor_nnz, ns);
    } else if (info.inertia_pos + info.inertia_neg + info.inertia_zero != ns || info.inertia_pos < 0 ||
               info.inertia_neg < 0 || info.inertia_zero < 0 || info.num_2x2_pivots < 0 || 2 * info.num_2x2_pivots > ns)
        fail("A8", "after factor: inertia (%d,%d,%d), %d 2x2 pivots, n = %d", (int)info.inertia_pos,
             (int)info.inertia_neg, (int)info.inertia_zero, (int)info.num_2x2_pivots, ns);

    /* ---- ildl_solve, ildl_apply */
    solve_and_check(h, &o, &C, cur, b, x0, flags & 1);
    apply_checks(h, ns, b);
    if (flags & 2) {
        /* refactor with NULL: the most recently accepted values (blockildl.h) */
        g_ctx = "second ildl_factor(h, NULL)";
        st = ildl_factor(h, NULL);
        check_status("ildl_factor (again)", st, DOC_FACTOR, h);
        if (st != ILDL_SUCCESS) fail("A6", "refactoring accepted values returned %d: %s", st, ildl_last_error(h));
        solve_and_check(h, &o, &C, cur, b, x0, 0);
    }
    check_unchanged(&F, "ildl_solve/ildl_apply");

destroy:
    free(ones);
    if (ildl_destroy(h) != ILDL_SUCCESS) fail("A1", "ildl_destroy");
done:
    free(fval);
    free(fval0);
    free((void *)F.rp0), free((void *)F.col0), free((void *)F.val0);
    free(b), free(x0);
    free(C.rowptr), free(C.col), free(C.val);
    return 0;
}
