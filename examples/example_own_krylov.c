/* example_own_krylov.c -- libblockildl inside the caller's own solver loop, as an interior-point
 * code uses it: the KKT pattern is analysed once (ildl_setup), every outer iteration brings new
 * values on the same pattern (ildl_factor(h, values): no new analysis, no new allocation), and
 * the caller runs its own Krylov method with ildl_apply as the preconditioner (here a
 * right-preconditioned restarted GMRES, written out below; ildl_solve would run SQMR instead).
 *
 * K = [[H + D, B^T], [B, -delta I]]: H the 5-point Laplacian on a G x G grid, D a positive
 * diagonal that changes by orders of magnitude between outer iterations (as the barrier
 * terms of an interior-point method do), B = [I I] pairing neighbouring unknowns.
 * Exit status 0 when every outer iteration reaches ||b - K x|| <= 1e-8 ||b||. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blockildl.h"

enum { G = 24, NH = G * G, NB = NH / 2, N = NH + NB, RESTART = 30, MAXIT = 300 };

/* CSR of K with sorted rows; values for the barrier scale mu (pattern independent of mu). */
static void build_kkt(double mu, int64_t *rp, int32_t *ci, double *v)
{
    int64_t k = 0;
    for (int32_t i = 0; i < N; i++) {
        rp[i] = k;
        if (i < NH) {
            int32_t x = i % G, y = i / G;
            double d = mu * (1.0 + (i % 7)); /* D_ii: spread over a decade, scaled by mu */
            if (y > 0) { ci[k] = i - G; v[k++] = -1.0; }
            if (x > 0) { ci[k] = i - 1; v[k++] = -1.0; }
            ci[k] = i; v[k++] = 4.0 + d;
            if (x < G - 1) { ci[k] = i + 1; v[k++] = -1.0; }
            if (y < G - 1) { ci[k] = i + G; v[k++] = -1.0; }
            ci[k] = NH + i / 2; v[k++] = 1.0; /* B^T: column of constraint i/2 */
        } else {
            int32_t c = i - NH;
            ci[k] = 2 * c; v[k++] = 1.0;
            ci[k] = 2 * c + 1; v[k++] = 1.0;
            ci[k] = i; v[k++] = -1e-8; /* -delta I: regularised constraints */
        }
    }
    rp[N] = k;
}

static void matvec(const int64_t *rp, const int32_t *ci, const double *v, const double *x, double *y)
{
    for (int32_t i = 0; i < N; i++) {
        double s = 0.0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) s += v[k] * x[ci[k]];
        y[i] = s;
    }
}

static double dot(const double *a, const double *b)
{
    double s = 0.0;
    for (int32_t i = 0; i < N; i++) s += a[i] * b[i];
    return s;
}

/* Right-preconditioned GMRES(RESTART) for K x = b from x = 0; returns the iterations used or -1
 * on a library error. The stopping test is the true residual of x, recomputed at each restart. */
static int gmres(ildl_handle *h, const int64_t *rp, const int32_t *ci, const double *v, const double *b,
                 double *x, double tol)
{
    static double V[RESTART + 1][N], Z[RESTART][N], Hm[RESTART + 1][RESTART], cs[RESTART], sn[RESTART], g[RESTART + 1];
    double r[N];
    double bnorm = sqrt(dot(b, b));
    int its = 0;
    memset(x, 0, sizeof(double) * N);
    while (its < MAXIT) {
        matvec(rp, ci, v, x, r);
        for (int32_t i = 0; i < N; i++) r[i] = b[i] - r[i];
        double beta = sqrt(dot(r, r));
        if (beta <= tol * bnorm) break;
        for (int32_t i = 0; i < N; i++) V[0][i] = r[i] / beta;
        memset(g, 0, sizeof g);
        g[0] = beta;
        int j = 0;
        for (; j < RESTART && its < MAXIT; j++, its++) {
            if (ildl_apply(h, V[j], Z[j], ILDL_MEMORY_HOST, NULL) != ILDL_SUCCESS) return -1;
            matvec(rp, ci, v, Z[j], V[j + 1]);
            for (int i = 0; i <= j; i++) { /* modified Gram-Schmidt */
                Hm[i][j] = dot(V[j + 1], V[i]);
                for (int32_t t = 0; t < N; t++) V[j + 1][t] -= Hm[i][j] * V[i][t];
            }
            Hm[j + 1][j] = sqrt(dot(V[j + 1], V[j + 1]));
            if (Hm[j + 1][j] > 0)
                for (int32_t t = 0; t < N; t++) V[j + 1][t] /= Hm[j + 1][j];
            for (int i = 0; i < j; i++) { /* previous Givens rotations, then a new one */
                double a = Hm[i][j], c = Hm[i + 1][j];
                Hm[i][j] = cs[i] * a + sn[i] * c;
                Hm[i + 1][j] = -sn[i] * a + cs[i] * c;
            }
            double den = hypot(Hm[j][j], Hm[j + 1][j]);
            cs[j] = Hm[j][j] / den;
            sn[j] = Hm[j + 1][j] / den;
            Hm[j][j] = den;
            Hm[j + 1][j] = 0.0;
            g[j + 1] = -sn[j] * g[j];
            g[j] = cs[j] * g[j];
            if (fabs(g[j + 1]) <= 0.1 * tol * bnorm) { j++, its++; break; } /* confirm below */
        }
        double y[RESTART];
        for (int i = j - 1; i >= 0; i--) { /* y = R^-1 g, then x += Z y */
            double s = g[i];
            for (int k = i + 1; k < j; k++) s -= Hm[i][k] * y[k];
            y[i] = s / Hm[i][i];
        }
        for (int i = 0; i < j; i++)
            for (int32_t t = 0; t < N; t++) x[t] += y[i] * Z[i][t];
    }
    return its;
}

int main(void)
{
    static int64_t rp[N + 1];
    static int32_t ci[8 * N];
    static double val[8 * N], b[N], x[N], Kx[N];
    build_kkt(1.0, rp, ci, val);
    for (int32_t i = 0; i < N; i++) b[i] = (i < NH) ? 1.0 : 0.0;

    ildl_options opt;
    ildl_options_default(&opt);
    opt.backend = ILDL_BACKEND_AUTO; /* ildl_apply takes host vectors with either backend */
    ildl_handle *h = NULL;
    int st = ildl_setup(N, rp, ci, val, &opt, &h); /* analysis once, for the pattern */
    if (st) { fprintf(stderr, "setup: %s (%s)\n", ildl_strerror(st), ildl_last_error(NULL)); return 1; }

    int failures = 0;
    const double mus[] = {1.0, 1e-2, 1e-4, 1e-6};
    for (int outer = 0; outer < 4; outer++) {
        build_kkt(mus[outer], rp, ci, val); /* same pattern, new values */
        st = ildl_factor(h, val);
        if (st) { fprintf(stderr, "factor: %s (%s)\n", ildl_strerror(st), ildl_last_error(h)); break; }
        int its = gmres(h, rp, ci, val, b, x, 1e-8);
        matvec(rp, ci, val, x, Kx);
        double rn = 0.0, bn = sqrt(dot(b, b));
        for (int32_t i = 0; i < N; i++) rn += (b[i] - Kx[i]) * (b[i] - Kx[i]);
        rn = sqrt(rn) / bn;
        int ok = its >= 0 && rn <= 1e-8;
        printf("outer %d (mu %.0e): GMRES %d iterations, true relative residual %.2e%s\n", outer, mus[outer],
               its, rn, ok ? "" : "  NOT CONVERGED");
        failures += !ok;
    }
    ildl_info info;
    ildl_get_info(h, &info);
    printf("backend %s, %d blocks in %d levels\n", info.backend == ILDL_BACKEND_CUDA ? "cuda" : "cpu",
           (int)info.num_blocks, (int)info.num_levels);
    ildl_destroy(h);
    return (st || failures) ? 1 : 0;
}
