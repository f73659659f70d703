/* dense_check.c -- see dense_check.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include "support/dense_check.h"
#include "support/testutil.h"

#define LD ILDL_TILE

/* The result is well formed: perm is a permutation, types pair up, the factored tile holds U
 * strictly above the diagonal and zeros elsewhere, U(k,k+1) = 0 inside a 2x2, D finite. */
void dt_check_structure(int m, const double *f, const ildl_dense_result *res)
{
    int seen[LD] = {0}, n2 = 0;
    for (int r = 0; r < m; r++) {
        assert_true(res->perm[r] >= 0 && res->perm[r] < m);
        assert_int_equal(seen[res->perm[r]], 0);
        seen[res->perm[r]] = 1;
        assert_true(isfinite(res->d_diag[r]) && isfinite(res->d_off[r]));
        if (res->type[r] == 2) {
            assert_true(r + 1 < m);
            assert_int_equal(res->type[r + 1], 0);
            assert_true(f[r * LD + r + 1] == 0);
            n2++;
        } else if (res->type[r] == 0) {
            assert_true(r > 0 && res->type[r - 1] == 2);
            assert_true(res->d_off[r] == 0);
        } else {
            assert_int_equal(res->type[r], 1);
            assert_true(res->d_off[r] == 0);
            assert_true(res->d_diag[r] != 0);
        }
        for (int c = 0; c < m; c++) {
            if (c <= r) assert_true(f[r * LD + c] == 0);
            else assert_true(isfinite(f[r * LD + c]));
        }
    }
    assert_int_equal(n2, res->n2x2);
}

/* M = U^T D U, and G = |U|^T |D| |U| (the scale of rounding errors) if G != NULL. */
void dt_reconstruct(int m, const double *f, const ildl_dense_result *res, double *M,
                        double *G)
{
    double U[LD][LD] = {{0}}, DU[LD][LD] = {{0}}, GU[LD][LD] = {{0}};
    for (int r = 0; r < m; r++) {
        U[r][r] = 1;
        for (int c = r + 1; c < m; c++) U[r][c] = f[r * LD + c];
    }
    for (int r = 0; r < m; r++)
        for (int c = 0; c < m; c++) {
            if (res->type[r] == 1) {
                DU[r][c] = res->d_diag[r] * U[r][c];
                GU[r][c] = fabs(res->d_diag[r]) * fabs(U[r][c]);
            } else if (res->type[r] == 2) {
                double da = res->d_diag[r], db = res->d_off[r], dc = res->d_diag[r + 1];
                DU[r][c] = da * U[r][c] + db * U[r + 1][c];
                DU[r + 1][c] = db * U[r][c] + dc * U[r + 1][c];
                GU[r][c] = fabs(da) * fabs(U[r][c]) + fabs(db) * fabs(U[r + 1][c]);
                GU[r + 1][c] = fabs(db) * fabs(U[r][c]) + fabs(dc) * fabs(U[r + 1][c]);
            }
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double s = 0, g = 0;
            for (int q = 0; q <= i; q++) {
                s += U[q][i] * DU[q][j];
                g += fabs(U[q][i]) * GU[q][j];
            }
            M[i * LD + j] = s;
            if (G) G[i * LD + j] = g;
        }
}

/* ||P A P^T - U^T D U||_F / ||A||_F (absolute error when A = 0). */
double dt_recon_error(int m, const double *a0, const double *f, const ildl_dense_result *res)
{
    static double M[LD * LD];
    double num = 0, den = 0;
    dt_reconstruct(m, f, res, M, NULL);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double e = a0[res->perm[i] * LD + res->perm[j]] - M[i * LD + j];
            num += e * e;
            den += a0[i * LD + j] * a0[i * LD + j];
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

double dt_max_abs_u(int m, const double *f)
{
    double mx = 0;
    for (int r = 0; r < m; r++)
        for (int c = r + 1; c < m; c++) mx = fmax(mx, fabs(f[r * LD + c]));
    return mx;
}

/* Symmetric random matrix with entries in (-1,1); each diagonal is 0 with probability zfrac. */
void dt_gen_general(int m, double zfrac, uint64_t seed, double *a)
{
    uint64_t s = seed;
    memset(a, 0, sizeof(double) * LD * LD);
    for (int i = 0; i < m; i++) {
        for (int j = i + 1; j < m; j++) a[i * LD + j] = a[j * LD + i] = 2 * ildl_test_rand(&s) - 1;
        a[i * LD + i] = ildl_test_rand(&s) < zfrac ? 0 : 2 * ildl_test_rand(&s) - 1;
    }
}

/* KKT matrix [[H, B^T], [B, 0]] (m2 = m/3 constraints), rows shuffled if shuffle. */
void dt_gen_kkt(int m, int shuffle, uint64_t seed, double *a)
{
    uint64_t s = seed;
    int m2 = m / 3, m1 = m - m2, p[LD];
    double t[LD * LD] = {0};
    for (int i = 0; i < m1; i++)
        for (int j = i; j < m1; j++) t[i * LD + j] = t[j * LD + i] = 2 * ildl_test_rand(&s) - 1;
    for (int i = m1; i < m; i++)
        for (int j = 0; j < m1; j++) t[i * LD + j] = t[j * LD + i] = 2 * ildl_test_rand(&s) - 1;
    for (int i = 0; i < m; i++) p[i] = i;
    for (int i = m - 1; shuffle && i > 0; i--) {
        int j = (int)(ildl_test_rand(&s) * (i + 1)), x = p[i];
        p[i] = p[j];
        p[j] = x;
    }
    memset(a, 0, sizeof(double) * LD * LD);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) a[i * LD + j] = t[p[i] * LD + p[j]];
}

double dt_offdiag_residual(int mi, int mj, const double *f, const ildl_dense_result *res,
                           const double *x, const double *b)
{
    static double y[LD * LD];
    memset(y, 0, sizeof y);
    /* y = D x, then compare U^T y with b */
    for (int r = 0; r < mi; r++)
        for (int c = 0; c < mj; c++) {
            if (res->type[r] == 1) {
                y[r * LD + c] = res->d_diag[r] * x[r * LD + c];
            } else if (res->type[r] == 2) {
                double xa = x[r * LD + c], xb = x[(r + 1) * LD + c];
                y[r * LD + c] = res->d_diag[r] * xa + res->d_off[r] * xb;
                y[(r + 1) * LD + c] = res->d_off[r] * xa + res->d_diag[r + 1] * xb;
            }
        }
    double num = 0, den = 0;
    for (int r = 0; r < mi; r++)
        for (int c = 0; c < mj; c++) {
            double v = y[r * LD + c];
            for (int q = 0; q < r; q++) v += f[q * LD + r] * y[q * LD + c];
            num += (v - b[r * LD + c]) * (v - b[r * LD + c]);
            den += b[r * LD + c] * b[r * LD + c];
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}
