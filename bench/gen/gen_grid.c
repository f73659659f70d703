/* gen_grid.c -- structured 3D generators: optimal control KKT, MAC Stokes, shifted Laplacian.
 * Each defines a row function (entries of one row from its grid position) for ildl_gen_build. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"
#include "core/util.h"
#include "gen.h"

#define GEN_PI 3.14159265358979323846

static void info_set(ildl_gen_info *info, const ildl_csr *K, int64_t pos, int64_t neg,
                     int64_t zero, double param)
{
    if (!info) return;
    info->n = K->n;
    info->nnz = K->rowptr[K->n];
    info->inertia[0] = pos;
    info->inertia[1] = neg;
    info->inertia[2] = zero;
    info->inertia_status = ILDL_GEN_INERTIA_EXACT;
    info->param = param;
}

/* Append the 7-point stencil row of node g on an N^3 grid (x fastest): diag*(own) and
 * off*(each existing neighbour), column offset base. Returns the new count. */
static int stencil_row(int32_t N, int32_t g, int32_t base, double diag, double off, int len,
                       int32_t *col, double *val)
{
    int32_t x = g % N, y = (g / N) % N, z = g / N / N;
    int32_t nn = N * N;
    col[len] = base + g;
    val[len++] = diag;
    if (x > 0) col[len] = base + g - 1, val[len++] = off;
    if (x < N - 1) col[len] = base + g + 1, val[len++] = off;
    if (y > 0) col[len] = base + g - N, val[len++] = off;
    if (y < N - 1) col[len] = base + g + N, val[len++] = off;
    if (z > 0) col[len] = base + g - nn, val[len++] = off;
    if (z < N - 1) col[len] = base + g + nn, val[len++] = off;
    return len;
}

/* 1 if k copies of N^3 unknowns (plus extra) fit an int32 order. */
static int fits(int32_t N, int64_t k, int64_t extra)
{
    int64_t n3 = (int64_t)N * N * N;
    return N >= 1 && N <= 2000 && k * n3 + extra <= INT32_MAX;
}

/* ------------------------------------------------------------------ optimal control */

typedef struct { int32_t N, n3; double m, bm, ld, lo; } control_ctx;

/* Row i of [ M 0 L^T ; 0 beta M -M ; L -M 0 ] (L symmetric, so L^T rows are L rows). */
static int control_row(const void *vctx, int32_t i, int32_t *col, double *val)
{
    const control_ctx *c = vctx;
    int32_t b = i / c->n3, g = i % c->n3;
    int len = 0;
    if (b == 0) {
        col[len] = g, val[len++] = c->m;
        len = stencil_row(c->N, g, 2 * c->n3, c->ld, c->lo, len, col, val);
    } else if (b == 1) {
        col[len] = c->n3 + g, val[len++] = c->bm;
        col[len] = 2 * c->n3 + g, val[len++] = -c->m;
    } else {
        len = stencil_row(c->N, g, 0, c->ld, c->lo, len, col, val);
        col[len] = c->n3 + g, val[len++] = -c->m;
    }
    return len;
}

int ildl_gen_control(int32_t N, double beta, ildl_csr *K, ildl_gen_info *info, char *msg,
                     size_t msglen)
{
    ildl_msg(msg, msglen, "%s", "");
    if (!K) return ILDL_ERR_NULL_ARGUMENT;
    memset(K, 0, sizeof *K);
    if (!fits(N, 3, 0)) {
        ildl_msg(msg, msglen, "control: N = %d out of range (need 1 <= N and 3 N^3 < 2^31)",
                 (int)N);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (!(beta > 0) || !isfinite(beta)) {
        ildl_msg(msg, msglen, "control: beta = %g must be positive and finite", beta);
        return ILDL_ERR_INVALID_OPTION;
    }
    double h = 1.0 / (N + 1);
    control_ctx c;
    c.N = N;
    c.n3 = N * N * N;
    c.m = h * h * h;       /* lumped mass: the cell volume */
    c.bm = beta * c.m;
    c.ld = 6.0 * h;        /* h^3 * (6/h^2): stiffness consistent with M = h^3 I */
    c.lo = -h;
    int st = ildl_gen_build(3 * c.n3, 8, control_row, &c, K);
    if (st) {
        ildl_msg(msg, msglen, "control: %s", st == ILDL_ERR_OUT_OF_MEMORY ? "out of memory"
                                                                         : "internal error");
        return st;
    }
    info_set(info, K, 2 * (int64_t)c.n3, c.n3, 0, beta);
    return ILDL_SUCCESS;
}

/* ------------------------------------------------------------------ Stokes (MAC) */

/* Face/cell numbering: ux(i,j,k), i in 1..N-1; uy(i,j,k), j in 1..N-1; uz, k in 1..N-1; each
 * with its own component range, x fastest; then p(i,j,k) for the N^3 cells. */
typedef struct {
    int32_t N, nc[3], off[4]; /* off[d] first index of component d, off[3] first pressure */
    double a_off, inv_h, eps, pin;
} stokes_ctx;

/* Index of the d-component face whose lower coordinate along d is q[d] (q[d] in 1..N-1). */
static int32_t face_index(const stokes_ctx *c, int d, const int32_t q[3])
{
    int32_t e[3];
    for (int a = 0; a < 3; a++) e[a] = c->N;
    e[d] = c->N - 1;
    int32_t r[3] = {q[0], q[1], q[2]};
    r[d] -= 1;
    return c->off[d] + r[0] + e[0] * (r[1] + e[1] * r[2]);
}

static int32_t cell_index(const stokes_ctx *c, const int32_t q[3])
{
    return c->off[3] + q[0] + c->N * (q[1] + c->N * q[2]);
}

static int stokes_row(const void *vctx, int32_t i, int32_t *col, double *val)
{
    const stokes_ctx *c = vctx;
    int32_t N = c->N, q[3];
    int len = 0;
    if (i >= c->off[3]) {
        /* pressure cell: B row = -(div)/h over its interior faces, then -eps (and the pin) */
        int32_t r = i - c->off[3];
        q[0] = r % N, q[1] = (r / N) % N, q[2] = r / N / N;
        for (int d = 0; d < 3; d++) {
            int32_t s[3] = {q[0], q[1], q[2]};
            if (q[d] >= 1) col[len] = face_index(c, d, s), val[len++] = c->inv_h;
            s[d] = q[d] + 1;
            if (q[d] + 1 <= N - 1) col[len] = face_index(c, d, s), val[len++] = -c->inv_h;
        }
        double dg = -c->eps - (r == 0 ? c->pin : 0.0);
        if (dg != 0.0) col[len] = i, val[len++] = dg;
        return len;
    }
    int d = (i >= c->off[1]) + (i >= c->off[2]);
    int32_t e[3] = {N, N, N};
    e[d] = N - 1;
    int32_t r = i - c->off[d];
    q[0] = r % e[0], q[1] = (r / e[0]) % e[1], q[2] = r / e[0] / e[1];
    q[d] += 1;
    /* vector Laplacian: normal neighbours on the wall are zero (dropped); a missing
     * tangential neighbour is the ghost -u (wall value 0 halfway), adding 1 to the diagonal */
    double diag = 0.0;
    for (int a = 0; a < 3; a++) {
        int32_t lo = (a == d) ? 1 : 0, hi = N - 1;
        diag += 2.0;
        for (int s = -1; s <= 1; s += 2) {
            int32_t t[3] = {q[0], q[1], q[2]};
            t[a] += s;
            if (t[a] >= lo && t[a] <= hi) col[len] = face_index(c, d, t), val[len++] = c->a_off;
            else if (a != d) diag += 1.0;
        }
    }
    col[len] = i, val[len++] = -diag * c->a_off;
    /* B^T: the face between cells q - e_d and q carries (p_q - p_{q-e_d})/h */
    int32_t t[3] = {q[0], q[1], q[2]};
    col[len] = cell_index(c, t), val[len++] = c->inv_h;
    t[d] -= 1;
    col[len] = cell_index(c, t), val[len++] = -c->inv_h;
    return len;
}

int ildl_gen_stokes(int32_t N, double eps, int pin, ildl_csr *K, ildl_gen_info *info,
                    char *msg, size_t msglen)
{
    ildl_msg(msg, msglen, "%s", "");
    if (!K) return ILDL_ERR_NULL_ARGUMENT;
    memset(K, 0, sizeof *K);
    if (N < 2 || !fits(N, 4, 0)) {
        ildl_msg(msg, msglen, "stokes: N = %d out of range (need 2 <= N and 4 N^3 < 2^31)",
                 (int)N);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (!(eps >= 0) || !isfinite(eps)) {
        ildl_msg(msg, msglen, "stokes: eps = %g must be >= 0 and finite", eps);
        return ILDL_ERR_INVALID_OPTION;
    }
    stokes_ctx c;
    double h = 1.0 / N;
    c.N = N;
    int32_t nf = (N - 1) * N * N;
    c.off[0] = 0;
    c.off[1] = nf;
    c.off[2] = 2 * nf;
    c.off[3] = 3 * nf;
    c.a_off = -1.0 / (h * h);
    c.inv_h = 1.0 / h;
    c.eps = eps;
    c.pin = pin ? 1.0 : 0.0;
    int32_t np = N * N * N;
    int st = ildl_gen_build(c.off[3] + np, 9, stokes_row, &c, K);
    if (st) {
        ildl_msg(msg, msglen, "stokes: %s", st == ILDL_ERR_OUT_OF_MEMORY ? "out of memory"
                                                                       : "internal error");
        return st;
    }
    int singular = !(eps > 0) && !pin;
    info_set(info, K, c.off[3], np - singular, singular, eps);
    return ILDL_SUCCESS;
}

/* ------------------------------------------------------------------ shifted Laplacian */

typedef struct { int32_t N; double diag; } helm_ctx;

static int helm_row(const void *vctx, int32_t i, int32_t *col, double *val)
{
    const helm_ctx *c = vctx;
    return stencil_row(c->N, i, 0, c->diag, -1.0, 0, col, val);
}

/* The N eigenvalues of tridiag(-1, 2, -1), ascending. mu must hold N doubles. */
static void tridiag_eigs(int32_t N, double *mu)
{
    for (int32_t i = 0; i < N; i++) {
        double s = sin((i + 1) * GEN_PI / (2.0 * (N + 1)));
        mu[i] = 4.0 * s * s;
    }
}

/* Number of triples with (mu_i + mu_j) + mu_k < t (that exact rounding, as in the counts). */
static int64_t count_below(int32_t N, const double *mu, double t)
{
    int64_t cnt = 0;
    for (int32_t i = 0; i < N; i++)
        for (int32_t j = 0; j < N; j++) {
            double s = mu[i] + mu[j];
            int32_t lo = 0, hi = N; /* first k with s + mu[k] >= t */
            while (lo < hi) {
                int32_t mid = lo + (hi - lo) / 2;
                if (s + mu[mid] < t) lo = mid + 1;
                else hi = mid;
            }
            cnt += lo;
        }
    return cnt;
}

/* Largest eigenvalue <= t (or -inf) and smallest > t (or +inf). */
static void bracket(int32_t N, const double *mu, double t, double *below, double *above)
{
    *below = -INFINITY;
    *above = INFINITY;
    for (int32_t i = 0; i < N; i++)
        for (int32_t j = 0; j < N; j++) {
            double s = mu[i] + mu[j];
            int32_t lo = 0, hi = N; /* first k with s + mu[k] > t */
            while (lo < hi) {
                int32_t mid = lo + (hi - lo) / 2;
                if (s + mu[mid] <= t) lo = mid + 1;
                else hi = mid;
            }
            if (lo > 0 && s + mu[lo - 1] > *below) *below = s + mu[lo - 1];
            if (lo < N && s + mu[lo] < *above) *above = s + mu[lo];
        }
}

/* eigenvalues closer than HELM_TOL to sigma count as zero; the default shift wants a gap of
 * HELM_GAP around it, far above the rounding of the eigenvalue formula */
#define HELM_TOL 1e-9
#define HELM_GAP 1e-6

void ildl_gen_helmholtz_inertia(int32_t N, double sigma, int64_t inertia[3])
{
    double *mu = malloc(sizeof(double) * (size_t)(N > 0 ? N : 1));
    int64_t n = (int64_t)N * N * N;
    if (!mu || N < 1) {
        inertia[0] = inertia[1] = inertia[2] = -1;
        free(mu);
        return;
    }
    tridiag_eigs(N, mu);
    int64_t neg = count_below(N, mu, sigma - HELM_TOL);
    int64_t nonpos = count_below(N, mu, sigma + HELM_TOL);
    inertia[0] = n - nonpos;
    inertia[1] = neg;
    inertia[2] = nonpos - neg;
    free(mu);
}

double ildl_gen_helmholtz_default_sigma(int32_t N)
{
    if (N < 1) return NAN;
    double *mu = malloc(sizeof(double) * (size_t)N);
    if (!mu) return NAN;
    tridiag_eigs(N, mu);
    double t = 0.5 * 3.0 * mu[N - 1], below, above;
    /* eigenvalues that agree to rounding (permuted triples) form one cluster: step up until
     * the gap is wide enough that its midpoint is clear of both sides */
    for (;;) {
        bracket(N, mu, t, &below, &above);
        if (isinf(above) || above - below > HELM_GAP) break;
        t = above;
    }
    free(mu);
    /* only for tiny N: no eigenvalue on one side of t */
    if (isinf(below)) return above - 1.0;
    if (isinf(above)) return below + 1.0;
    return 0.5 * (below + above);
}

int ildl_gen_helmholtz(int32_t N, double sigma, ildl_csr *K, ildl_gen_info *info, char *msg,
                       size_t msglen)
{
    ildl_msg(msg, msglen, "%s", "");
    if (!K) return ILDL_ERR_NULL_ARGUMENT;
    memset(K, 0, sizeof *K);
    if (!fits(N, 1, 0)) {
        ildl_msg(msg, msglen, "helmholtz: N = %d out of range (need 1 <= N and N^3 < 2^31)",
                 (int)N);
        return ILDL_ERR_INVALID_OPTION;
    }
    if (!isfinite(sigma)) {
        ildl_msg(msg, msglen, "helmholtz: sigma must be finite");
        return ILDL_ERR_INVALID_OPTION;
    }
    helm_ctx c = {N, 6.0 - sigma};
    int st = ildl_gen_build(N * N * N, 7, helm_row, &c, K);
    if (st) {
        ildl_msg(msg, msglen, "helmholtz: %s", st == ILDL_ERR_OUT_OF_MEMORY ? "out of memory"
                                                                          : "internal error");
        return st;
    }
    int64_t in[3];
    ildl_gen_helmholtz_inertia(N, sigma, in);
    info_set(info, K, in[0], in[1], in[2], sigma);
    return ILDL_SUCCESS;
}
