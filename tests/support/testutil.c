#include <math.h>
#include "testutil.h"
#include "cuda/tuning.h"
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *ildl_test_matrices_dir(void)
{
    const char *env = getenv("ILDL_MATRICES_DIR");
    return (env && *env) ? env : ILDL_SHARED_MATRICES;
}

const char *ildl_test_shared_matrix(const char *name)
{
    static char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", ildl_test_matrices_dir(), name);
    if (stat(path, &st) != 0) {
        printf("SKIP: shared matrix %s not found (../shared is not beside this clone)\n", path);
        return NULL;
    }
    return path;
}

const char *ildl_test_data_file(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", ILDL_DATA_DIR, name);
    return path;
}

double ildl_test_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct { int32_t i, j; double v; } trip;

static int trip_cmp(const void *a, const void *b)
{
    const trip *x = a, *y = b;
    if (x->i != y->i) return x->i < y->i ? -1 : 1;
    if (x->j != y->j) return x->j < y->j ? -1 : 1;
    return 0;
}

void ildl_test_csr_from_triplets(int32_t n, int64_t nt, const int32_t *ti, const int32_t *tj,
                                 const double *tv, ildl_csr *A)
{
    trip *t = malloc(sizeof(trip) * (size_t)(2 * nt + 1));
    assert(t);
    int64_t m = 0;
    for (int64_t k = 0; k < nt; k++) {
        t[m++] = (trip){ti[k], tj[k], tv[k]};
        if (ti[k] != tj[k]) t[m++] = (trip){tj[k], ti[k], tv[k]};
    }
    qsort(t, (size_t)m, sizeof(trip), trip_cmp);
    /* sum duplicates */
    int64_t u = 0;
    for (int64_t k = 0; k < m; k++) {
        if (u > 0 && t[u - 1].i == t[k].i && t[u - 1].j == t[k].j) t[u - 1].v += t[k].v;
        else t[u++] = t[k];
    }
    int st = ildl_csr_alloc(n, u, A);
    assert(st == 0);
    (void)st;
    for (int64_t k = 0; k < u; k++) {
        A->rowptr[t[k].i + 1]++;
        A->col[k] = t[k].j;
        A->val[k] = t[k].v;
    }
    for (int32_t i = 0; i < n; i++) A->rowptr[i + 1] += A->rowptr[i];
    free(t);
}

void ildl_test_random_sym(int32_t n, int deg, double dscale, double zero_diag, uint64_t seed,
                          ildl_csr *A)
{
    uint64_t s = seed;
    int64_t cap = (int64_t)n * (deg + 1);
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap);
    int32_t *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap);
    assert(ti && tj && tv);
    int64_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        double d = (ildl_test_rand(&s) < zero_diag) ? 0.0 : dscale * (2.0 * ildl_test_rand(&s) - 1.0);
        ti[m] = i; tj[m] = i; tv[m] = d; m++;
        for (int k = 0; k < deg / 2 + 1 && n > 1; k++) {
            int32_t j = (int32_t)(ildl_test_rand(&s) * n);
            if (j >= n) j = n - 1;
            if (j == i) continue;
            ti[m] = i; tj[m] = j; tv[m] = 2.0 * ildl_test_rand(&s) - 1.0; m++;
            if (m >= cap) break;
        }
        if (m >= cap) break;
    }
    ildl_test_csr_from_triplets(n, m, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

/* The Laplacian of an m^dim grid (dim 2 or 3: 5 or 7 points), diagonal 2 dim - shift. */
static void grid_laplacian(int dim, int32_t m, double shift, ildl_csr *A)
{
    int32_t n = dim == 3 ? m * m * m : m * m, nz = dim == 3 ? m : 1;
    int64_t cap = (dim + 1) * (int64_t)n;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap);
    int32_t *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap);
    assert(ti && tj && tv);
    int64_t k = 0;
    for (int32_t z = 0; z < nz; z++)
        for (int32_t y = 0; y < m; y++)
            for (int32_t x = 0; x < m; x++) {
                int32_t i = (z * m + y) * m + x;
                ti[k] = i; tj[k] = i; tv[k] = 2.0 * dim - shift; k++;
                if (x + 1 < m) { ti[k] = i; tj[k] = i + 1; tv[k] = -1.0; k++; }
                if (y + 1 < m) { ti[k] = i; tj[k] = i + m; tv[k] = -1.0; k++; }
                if (z + 1 < nz) { ti[k] = i; tj[k] = i + m * m; tv[k] = -1.0; k++; }
            }
    ildl_test_csr_from_triplets(n, k, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

void ildl_test_laplace2d(int32_t m, double shift, ildl_csr *A) { grid_laplacian(2, m, shift, A); }

void ildl_test_laplace3d(int32_t m, double shift, ildl_csr *A) { grid_laplacian(3, m, shift, A); }

void ildl_test_kkt_zero_first(int32_t m, int32_t k, uint64_t seed, ildl_csr *A)
{
    assert(m >= 1 && m <= k);
    int32_t n = m + k;
    int64_t cap = 3 * (int64_t)m + 2 * (int64_t)k;
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)cap), *tj = malloc(sizeof(int32_t) * (size_t)cap);
    double *tv = malloc(sizeof(double) * (size_t)cap);
    assert(ti && tj && tv);
    uint64_t s = seed;
    int64_t t = 0;
    for (int32_t i = 0; i < m; i++) { /* row i of B: b(i,i) in [1,2), one more entry */
        ti[t] = i; tj[t] = m + i; tv[t] = 1.0 + ildl_test_rand(&s); t++;
        int32_t j = (int32_t)(ildl_test_rand(&s) * k);
        if (j != i) { ti[t] = i; tj[t] = m + j; tv[t] = ildl_test_rand(&s) - 0.5; t++; }
    }
    for (int32_t i = 0; i < k; i++) { /* H: tridiag(-1, 4, -1) */
        ti[t] = m + i; tj[t] = m + i; tv[t] = 4.0; t++;
        if (i + 1 < k) { ti[t] = m + i + 1; tj[t] = m + i; tv[t] = -1.0; t++; }
    }
    ildl_test_csr_from_triplets(n, t, ti, tj, tv, A);
    free(ti); free(tj); free(tv);
}

double *ildl_test_dense(const ildl_csr *A)
{
    double *D = calloc((size_t)A->n * (size_t)A->n, sizeof(double));
    assert(D);
    for (int32_t i = 0; i < A->n; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            D[(size_t)i * A->n + A->col[p]] += A->val[p];
    return D;
}

int ildl_test_apply_tuning(void)
{
    static const struct {
        const char *name;
        size_t off;
    } fields[] = {
        {"sf_nostage", offsetof(ildl_cuda_tuning, sf_nostage)},
        {"sf_vglobal", offsetof(ildl_cuda_tuning, sf_vglobal)},
        {"sf_split", offsetof(ildl_cuda_tuning, sf_split)},
        {"sf_chain_order", offsetof(ildl_cuda_tuning, sf_chain_order)},
        {"pin_host", offsetof(ildl_cuda_tuning, pin_host)},
        {"factor_split", offsetof(ildl_cuda_tuning, factor_split)},
        {"factor_sf_ring", offsetof(ildl_cuda_tuning, factor_sf_ring)},
        {"factor_sf_rows", offsetof(ildl_cuda_tuning, factor_sf_rows)},
    };
    const char *spec = getenv("ILDL_TEST_TUNING");
    ildl_cuda_tuning t = ILDL_CUDA_TUNING_DEFAULT;
    if (!spec || !*spec) {
        ildl_cuda_tuning_set(NULL);
        return 0;
    }
    for (const char *p = spec; *p;) {
        size_t len = strcspn(p, "=,");
        char *end = NULL;
        size_t k = 0;
        while (k < sizeof fields / sizeof fields[0] &&
               !(strlen(fields[k].name) == len && strncmp(fields[k].name, p, len) == 0))
            k++;
        if (k == sizeof fields / sizeof fields[0] || p[len] != '=') {
            fprintf(stderr, "ILDL_TEST_TUNING: unknown field or missing value at \"%s\"\n", p);
            return -1;
        }
        long v = strtol(p + len + 1, &end, 10);
        if (end == p + len + 1 || (*end && *end != ',')) {
            fprintf(stderr, "ILDL_TEST_TUNING: bad value at \"%s\"\n", p);
            return -1;
        }
        *(int *)((char *)&t + fields[k].off) = (int)v;
        p = *end ? end + 1 : end;
    }
    ildl_cuda_tuning_set(&t);
    printf("tuning: %s\n", spec);
    return 0;
}

double ildl_test_residual_ld(const ildl_csr *A, const double *x, const double *b)
{
    long double rr = 0.0L, bb = 0.0L;
    for (int32_t i = 0; i < A->n; i++) {
        long double s = b[i];
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s -= (long double)A->val[p] * x[A->col[p]];
        rr += s * s;
        bb += (long double)b[i] * b[i];
    }
    return (double)sqrtl(rr / bb);
}

int ildl_test_refused(const ildl_csr *A, const ildl_options *o, const char *needle)
{
    ildl_handle *h = NULL;
    int st = ildl_setup(A->n, A->rowptr, A->col, A->val, o, &h);
    const char *msg = ildl_last_error(NULL);
    if (st == ILDL_ERR_INVALID_OPTION && !h && strstr(msg, needle)) return 1;
    printf("expected a refusal naming '%s': status %d, handle %p, message '%s'\n", needle, st, (void *)h, msg);
    ildl_destroy(h);
    return 0;
}

void ildl_test_complete_options(ildl_options *o, int blocking, int ordering)
{
    ildl_options_default(o);
    o->blocking = blocking;
    o->ordering = ordering;
    o->fill_level = ILDL_MAX_FILL_LEVEL;
    o->fill_factor = 0.0;
    o->drop_tol = 0.0;
}
