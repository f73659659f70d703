"""Solve a sparse symmetric indefinite system from a Matrix Market file with blockildl and SciPy:
the lower triangle as COO, gmres with the preconditioner, minres with its SPD variant, and the
library's own SQMR on two right-hand sides, each checked on the true residual.

    python examples/python/solve_scipy.py A.mtx.gz [more.mtx.gz ...]

Exit status 0 when every solve met 1e-6 on ||b - A x|| / ||b||."""
import gzip
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp
from scipy.sparse.linalg import gmres, minres

import blockildl


def read(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return sp.csr_matrix(scipy.io.mmread(f))


def solver_tol(fn, A, b, M, tol, **kw):
    try:
        return fn(A, b, M=M, rtol=tol, **kw)
    except TypeError:  # SciPy < 1.12 calls it tol
        return fn(A, b, M=M, tol=tol, **kw)


def main(paths):
    ok = True
    for path in paths:
        A = read(path)
        n = A.shape[0]
        b = A @ np.ones(n)
        L = sp.tril(A, format="coo")  # one triangle is enough
        res = lambda x, rhs=b: np.linalg.norm(rhs - A @ x) / np.linalg.norm(rhs)
        P = blockildl.Preconditioner(L)
        x, code = solver_tol(gmres, A, b, P, 1e-8, restart=100, maxiter=20)
        r_gmres = res(x)
        # minres needs a positive definite preconditioner: spd=True; SciPy's minres stops on its
        # own estimates, so ask it for more than the true residual needs
        S = blockildl.Preconditioner(L, spd=True)
        x, code = solver_tol(minres, A, b, S, 1e-12, maxiter=5000)
        r_minres = res(x)
        B = np.column_stack([b, A @ np.cos(np.arange(n))])
        X, info = P.solve(B)
        r_solve = max(res(X[:, j], B[:, j]) for j in range(2))
        print("%s: n = %d, backend %s; true residuals: gmres %.2e, minres (spd) %.2e, P.solve 2 columns %.2e "
              "(%s iterations)" % (path, n, info.backend, r_gmres, r_minres, r_solve,
                                   "+".join(str(c.iterations) for c in info.columns)))
        ok &= max(r_gmres, r_minres, r_solve) <= 1e-6
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
