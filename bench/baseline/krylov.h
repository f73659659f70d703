/* krylov.h -- restarted GMRES(m) (right preconditioned, modified Gram-Schmidt, Givens
 * rotations) and preconditioned BiCGStab (van der Vorst 1992), written once against a small
 * "Ops" interface so the same code runs on the GPU (cusparse_baseline.cu) and on the host.
 *
 * Ops must provide (vectors are length-n arrays in the Ops' memory space; errors throw):
 *   void   matvec(const double *x, double *y);     y = A x
 *   void   precond(const double *x, double *y);    y = M^{-1} x  (x, y distinct)
 *   double dot(const double *x, const double *y);
 *   double nrm2(const double *x);
 *   void   axpy(double a, const double *x, double *y);   y += a x
 *   void   scal(double a, double *x);
 *   void   copy(const double *x, double *y);
 *   void   zero(double *x);
 * Both solvers start from x = 0, so the relative residual is ||b - A x|| / ||b||. */
#ifndef ILDL_BASELINE_KRYLOV_H
#define ILDL_BASELINE_KRYLOV_H
#include <algorithm>
#include <cmath>
#include <vector>

namespace krylov {

enum Outcome { CONVERGED = 0, NOT_CONVERGED = 1, BREAKDOWN = 2 };

struct Result {
    Outcome outcome = NOT_CONVERGED;
    int iterations = 0;      /* GMRES: inner (Arnoldi) steps; BiCGStab: iterations (2 A-products each) */
    long matvecs = 0;        /* products with A, including explicit residuals */
    long precs = 0;          /* preconditioner applications */
    double resid = NAN;      /* last relative residual the method itself computed */
    const char *detail = ""; /* why it stopped when not CONVERGED */
};

/* Vectors GMRES(m) needs in its workspace. */
inline int gmres_nvec(int m) { return m + 3; }
/* Vectors BiCGStab needs in its workspace. */
inline int bicgstab_nvec() { return 8; }

static inline bool finite(double v) { return std::isfinite(v); }

/* w = A x - b; returns ||A x - b|| / bnorm (the true relative residual of x). */
template <class Ops>
double true_residual(Ops &op, const double *b, const double *x, double *w, double bnorm, Result *res)
{
    op.matvec(x, w);
    op.axpy(-1.0, b, w);
    if (res) res->matvecs++;
    return op.nrm2(w) / bnorm;
}

/* Restarted GMRES(m), right preconditioned: solves A M^{-1} u = b, x = M^{-1} u. Each cycle
 * ends with an explicit residual b - A x, and convergence is only declared from that explicit
 * residual, so an Arnoldi estimate that drifts from the truth just triggers another cycle.
 * x (out) starts at 0; work holds gmres_nvec(m) vectors. */
template <class Ops>
Result gmres(Ops &op, const double *b, double *x, double *const *work, int m, double tol, int maxit)
{
    Result res;
    double *const *V = work;          /* V[0..m]: Arnoldi basis; V[0] also holds the residual */
    double *z = work[m + 1];          /* M^{-1} v */
    double *u = work[m + 2];          /* V y at the end of a cycle */
    std::vector<double> H((size_t)(m + 1) * m), g(m + 1), cs(m), sn(m), y(m);
    auto h = [&](int i, int j) -> double & { return H[(size_t)j * (m + 1) + i]; };

    op.zero(x);
    double bnorm = op.nrm2(b);
    if (!finite(bnorm)) { res.outcome = BREAKDOWN; res.detail = "right-hand side is not finite"; return res; }
    if (bnorm == 0.0) { res.outcome = CONVERGED; res.resid = 0.0; return res; }
    op.copy(b, V[0]);                 /* r0 = b since x0 = 0 */
    double beta = bnorm;
    for (;;) {
        res.resid = beta / bnorm;
        if (!finite(beta)) { res.outcome = BREAKDOWN; res.detail = "non-finite residual"; return res; }
        if (res.resid <= tol) { res.outcome = CONVERGED; return res; }
        if (res.iterations >= maxit) { res.outcome = NOT_CONVERGED; res.detail = "maximum iterations"; return res; }
        op.scal(1.0 / beta, V[0]);
        std::fill(g.begin(), g.end(), 0.0);
        g[0] = beta;
        int k = 0;                    /* columns of the Hessenberg matrix built in this cycle */
        bool bad = false;
        for (int j = 0; j < m && res.iterations < maxit; j++) {
            op.precond(V[j], z);
            op.matvec(z, V[j + 1]);
            res.precs++; res.matvecs++; res.iterations++;
            for (int i = 0; i <= j; i++) {     /* modified Gram-Schmidt */
                h(i, j) = op.dot(V[j + 1], V[i]);
                op.axpy(-h(i, j), V[i], V[j + 1]);
            }
            double hn = op.nrm2(V[j + 1]);
            h(j + 1, j) = hn;
            for (int i = 0; i <= j + 1; i++)
                if (!finite(h(i, j))) bad = true;
            if (bad) { res.detail = "non-finite value in Arnoldi (matrix or preconditioner produced NaN/Inf)"; break; }
            for (int i = 0; i < j; i++) {      /* earlier rotations on the new column */
                double t = cs[i] * h(i, j) + sn[i] * h(i + 1, j);
                h(i + 1, j) = -sn[i] * h(i, j) + cs[i] * h(i + 1, j);
                h(i, j) = t;
            }
            double d = std::hypot(h(j, j), h(j + 1, j));
            if (d == 0.0) {                    /* A M^{-1} v_j lies in span(V[0..j-1]) with zero new pivot */
                bad = true;
                res.detail = "GMRES breakdown: singular Hessenberg matrix (A M^-1 singular on the Krylov space)";
                break;
            }
            cs[j] = h(j, j) / d;
            sn[j] = h(j + 1, j) / d;
            h(j, j) = d;
            h(j + 1, j) = 0.0;
            g[j + 1] = -sn[j] * g[j];
            g[j] = cs[j] * g[j];
            k = j + 1;
            if (hn == 0.0) break;              /* happy breakdown: the Krylov space is invariant */
            op.scal(1.0 / hn, V[j + 1]);
            if (std::fabs(g[j + 1]) / bnorm <= tol) break;
        }
        if (k > 0) {                           /* x += M^{-1} V[0..k-1] y, H y = g */
            for (int i = k - 1; i >= 0; i--) {
                double s = g[i];
                for (int l = i + 1; l < k; l++) s -= h(i, l) * y[l];
                y[i] = s / h(i, i);
            }
            op.zero(u);
            for (int i = 0; i < k; i++) op.axpy(y[i], V[i], u);
            op.precond(u, z);
            op.axpy(1.0, z, x);
            res.precs++;
        }
        /* explicit residual r = b - A x into V[0] */
        op.matvec(x, z);
        op.copy(b, V[0]);
        op.axpy(-1.0, z, V[0]);
        res.matvecs++;
        beta = op.nrm2(V[0]);
        if (bad) {
            res.resid = beta / bnorm;
            if (finite(beta) && res.resid <= tol) { res.outcome = CONVERGED; res.detail = ""; }
            else res.outcome = BREAKDOWN;
            return res;
        }
    }
}

/* BiCGStab (van der Vorst 1992) with right preconditioning: p^ = M^{-1} p, s^ = M^{-1} s,
 * x += alpha p^ + omega s^. When the recursively updated residual meets tol the explicit
 * residual is computed; if that misses tol the method restarts from x with r = b - A x (and
 * a new shadow vector), while iterations remain. x (out) starts at 0. */
template <class Ops>
Result bicgstab(Ops &op, const double *b, double *x, double *const *work, double tol, int maxit)
{
    Result res;
    double *r = work[0], *rh = work[1], *p = work[2], *v = work[3];
    double *s = work[4], *t = work[5], *ph = work[6], *sh = work[7];

    op.zero(x);
    double bnorm = op.nrm2(b);
    if (!finite(bnorm)) { res.outcome = BREAKDOWN; res.detail = "right-hand side is not finite"; return res; }
    if (bnorm == 0.0) { res.outcome = CONVERGED; res.resid = 0.0; return res; }
    op.copy(b, r);
    res.resid = 1.0;
    for (;;) {                                 /* one pass per (re)start */
        op.copy(r, rh);
        double rho_old = 1.0, alpha = 1.0, omega = 1.0;
        bool first = true, claimed = false;
        while (res.iterations < maxit) {
            double rho = op.dot(rh, r);
            if (!finite(rho)) { res.outcome = BREAKDOWN; res.detail = "non-finite value (rho)"; return res; }
            if (rho == 0.0) { res.outcome = BREAKDOWN; res.detail = "BiCGStab breakdown: rho = (r^, r) = 0"; return res; }
            if (first) {
                op.copy(r, p);
                first = false;
            } else {
                double beta = (rho / rho_old) * (alpha / omega);
                op.axpy(-omega, v, p);         /* p = r + beta (p - omega v) */
                op.scal(beta, p);
                op.axpy(1.0, r, p);
            }
            op.precond(p, ph);
            op.matvec(ph, v);
            res.precs++; res.matvecs++; res.iterations++;
            double sigma = op.dot(rh, v);
            if (!finite(sigma)) { res.outcome = BREAKDOWN; res.detail = "non-finite value (r^ . v)"; return res; }
            if (sigma == 0.0) { res.outcome = BREAKDOWN; res.detail = "BiCGStab breakdown: (r^, A M^-1 p) = 0"; return res; }
            alpha = rho / sigma;
            op.copy(r, s);
            op.axpy(-alpha, v, s);
            double snorm = op.nrm2(s);
            if (!finite(snorm)) { res.outcome = BREAKDOWN; res.detail = "non-finite value (||s||)"; return res; }
            if (snorm / bnorm <= tol) {        /* half step suffices */
                op.axpy(alpha, ph, x);
                res.resid = snorm / bnorm;
                claimed = true;
                break;
            }
            op.precond(s, sh);
            op.matvec(sh, t);
            res.precs++; res.matvecs++;
            double tt = op.dot(t, t);
            if (!finite(tt)) { res.outcome = BREAKDOWN; res.detail = "non-finite value (t . t)"; return res; }
            if (tt == 0.0) { res.outcome = BREAKDOWN; res.detail = "BiCGStab breakdown: A M^-1 s = 0 with s != 0"; return res; }
            omega = op.dot(t, s) / tt;
            op.axpy(alpha, ph, x);
            op.axpy(omega, sh, x);
            op.copy(s, r);
            op.axpy(-omega, t, r);
            double rnorm = op.nrm2(r);
            res.resid = rnorm / bnorm;
            if (!finite(rnorm) || !finite(omega)) { res.outcome = BREAKDOWN; res.detail = "non-finite value (r or omega)"; return res; }
            if (res.resid <= tol) { claimed = true; break; }
            if (omega == 0.0) { res.outcome = BREAKDOWN; res.detail = "BiCGStab breakdown: omega = 0"; return res; }
            rho_old = rho;
        }
        if (!claimed) { res.outcome = NOT_CONVERGED; res.detail = "maximum iterations"; return res; }
        /* the recursive residual claims convergence: check it against b - A x */
        op.matvec(x, t);
        op.copy(b, r);
        op.axpy(-1.0, t, r);
        res.matvecs++;
        double rnorm = op.nrm2(r);
        res.resid = rnorm / bnorm;
        if (!finite(rnorm)) { res.outcome = BREAKDOWN; res.detail = "non-finite true residual"; return res; }
        if (res.resid <= tol) { res.outcome = CONVERGED; return res; }
        if (res.iterations >= maxit) { res.outcome = NOT_CONVERGED; res.detail = "maximum iterations (recursive residual drifted from the true one)"; return res; }
    }
}

} /* namespace krylov */
#endif
