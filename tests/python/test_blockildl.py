"""tests/python: the Python package (python/blockildl) over the C library: SciPy's gmres and
minres with the preconditioner, the library's own solve for 1-D and 2-D right-hand sides, every
input layout giving the same bits, refactorization, bad input raising BlockILDLError with the
library's status, and no handle outliving its object. Run by ctest (tests/python/run.sh) against
the build tree, or by pytest after `pip install .`."""

import gc
import gzip
import os

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse.linalg import gmres, minres

import blockildl
from blockildl import BlockILDLError, Preconditioner

OPTS = dict(backend="cpu", num_threads=2)


def kkt(m=150, k=60, seed=3):
    """A saddle-point matrix [[H, B^T], [B, 0]] with H SPD (n = m + k), and its full CSR."""
    rng = np.random.default_rng(seed)
    H = sp.random(m, m, density=0.05, random_state=rng)
    H = H + H.T + sp.diags(np.full(m, 4.0))
    B = sp.random(k, m, density=0.08, random_state=rng) + sp.eye(k, m)
    return sp.bmat([[H, B.T], [B, None]], format="csr")


def true_res(A, x, b):
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def gmres_tol(A, b, M, tol, **kw):
    try:
        return gmres(A, b, M=M, rtol=tol, **kw)
    except TypeError:  # SciPy < 1.12
        return gmres(A, b, M=M, tol=tol, **kw)


def minres_tol(A, b, M, tol, **kw):
    try:
        return minres(A, b, M=M, rtol=tol, **kw)
    except TypeError:
        return minres(A, b, M=M, tol=tol, **kw)


def shared(name):
    d = os.environ.get("BLOCKILDL_SHARED_MATRICES")
    if not d:
        d = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "matrices")
    path = os.path.join(d, name + ".mtx.gz")
    if not os.path.exists(path):
        pytest.skip("SKIP: %s not found (the shared matrices are beside the repository in CI only)" % path)
    with gzip.open(path, "rt") as f:
        return sp.csr_matrix(scipy.io.mmread(f))


def test_version():
    assert blockildl.library_version() == blockildl.__version__


def test_solve_and_gmres():
    A = kkt()
    n = A.shape[0]
    b = A @ np.linspace(1, 2, n)
    P = Preconditioner(A, **OPTS)
    x, info = P.solve(b)
    assert info.converged and info.status == 0
    assert info.true_residual <= 1e-6
    assert true_res(A, x, b) <= 1e-6
    assert abs(true_res(A, x, b) - info.true_residual) <= 1e-3 * info.true_residual + 1e-15
    assert info.backend == "cpu" and info.n == n and info.inertia_pos + info.inertia_neg + info.inertia_zero == n
    assert P.info.iterations == info.iterations
    xg, code = gmres_tol(A, b, P, 1e-10)
    assert code == 0 and true_res(A, xg, b) <= 1e-6


def test_layouts_same_bits():
    """full CSR, CSC, lower COO with int64 indices, upper triangle, duplicates split: one factor."""
    A = kkt()
    n = A.shape[0]
    r = np.cos(np.arange(n))
    z0 = Preconditioner(A, **OPTS) @ r
    L = sp.tril(A, format="coo")
    L64 = sp.coo_matrix((L.data, (L.row.astype(np.int64), L.col.astype(np.int64))), shape=A.shape)
    # the lower triangle with every entry split in two halves: duplicates are summed
    Ld = sp.coo_matrix((np.concatenate([L.data * 0.5, L.data * 0.5]),
                        (np.concatenate([L.row, L.row]), np.concatenate([L.col, L.col]))), shape=A.shape)
    for M in (A.tocsc(), L, L64, sp.triu(A, format="csr"), Ld):
        z = Preconditioner(M, **OPTS) @ r
        if M is Ld:  # a half plus a half is the value, but the scaling may round otherwise
            assert np.allclose(z, z0, rtol=1e-10, atol=0)
        else:
            assert np.array_equal(z, z0)


def test_multiple_rhs():
    A = kkt()
    n = A.shape[0]
    rng = np.random.default_rng(1)
    B = A @ rng.standard_normal((n, 3))
    P = Preconditioner(A, **OPTS)
    X, info = P.solve(B)
    assert info.converged and len(info.columns) == 3
    for j in range(3):
        x1, i1 = P.solve(B[:, j])
        assert np.array_equal(X[:, j], x1)  # each column what the 1-D solve gives, bit for bit
        assert info.columns[j].iterations == i1.iterations
        assert true_res(A, X[:, j], B[:, j]) <= 1e-6
    # as a LinearOperator on a 2-D block: each column the bits of one application
    Z = P @ B
    assert np.array_equal(Z[:, 1], P @ B[:, 1])
    # an initial guess that solves: no iteration
    x, i0 = P.solve(B[:, 0], x0=X[:, 0])
    assert i0.converged and i0.iterations == 0 and np.array_equal(x, X[:, 0])


def test_spd_minres():
    A = kkt()
    n = A.shape[0]
    b = A @ np.ones(n)
    S = Preconditioner(A, spd=True, **OPTS)
    rng = np.random.default_rng(2)
    for _ in range(5):
        r = rng.standard_normal(n)
        assert r @ (S @ r) > 0  # positive definite
    x, code = minres_tol(A, b, S, 1e-10, maxiter=2000)
    assert code == 0 and true_res(A, x, b) <= 1e-6
    assert S.options["apply_mode"] == "spd"


def test_refactor():
    A = kkt()
    n = A.shape[0]
    b = A @ np.ones(n)
    L = sp.tril(A, format="coo")
    P = Preconditioner(L, **OPTS)
    for step in range(4):
        scale = 1.0 + 0.5 * step
        # new values in the construction's entry order
        P.refactor(L.data * scale)
        x, info = P.solve(b * scale)
        assert info.converged and true_res(A * scale, x, b * scale) <= 1e-6
    # a sub-pattern: an entry dropped (as an explicit zero would be) refactors on one handle
    L2 = L.tocsr()
    L2.data[5] = 0.0
    L2.eliminate_zeros()
    P.refactor(L2)
    A2 = L2 + sp.tril(L2, -1).T
    x, info = P.solve(A2 @ np.ones(n))
    assert info.converged
    # an entry outside the setup's pattern is refused, and the handle keeps working
    E = L.tocsr().tolil()
    E[n - 1, 0] = 1.0
    with pytest.raises(BlockILDLError) as e:
        P.refactor(E.tocoo())
    assert e.value.name == "ILDL_ERR_PATTERN"
    with pytest.raises(BlockILDLError) as e:
        P.refactor(L.data[:-1])
    assert e.value.name == "ILDL_ERR_SIZE_MISMATCH"


def test_refactor_scaling_keep():
    # refactor_scaling="keep": the setup's scaling kept, so 4 A gives exactly a quarter of the
    # preconditioner's output (a power of two scales the factor exactly); "sideways" is refused
    A = kkt()
    r = np.linspace(1.0, 2.0, A.shape[0])
    P = Preconditioner(A, refactor_scaling="keep", **OPTS)
    z0 = P.matvec(r)
    P.refactor(4.0 * A)
    assert np.array_equal(4.0 * P.matvec(r), z0)
    del P
    with pytest.raises((BlockILDLError, ValueError)):
        Preconditioner(A, refactor_scaling="sideways", **OPTS)


def test_method_block_jacobi():
    # method="block_jacobi": SQMR with the inverted diagonal blocks reaches the true residual,
    # and as SciPy's M in GMRES too; "sideways" and single precision with it are refused
    A = kkt()
    n = A.shape[0]
    b = A @ np.linspace(1, 2, n)
    P = Preconditioner(A, method="block_jacobi", **OPTS)
    assert P.options["method"] == "block_jacobi"
    x, info = P.solve(b)
    assert info.converged and true_res(A, x, b) <= 1e-6
    assert info.inertia_pos + info.inertia_neg + info.inertia_zero == 0
    xg, code = gmres_tol(A, b, P, 1e-10)
    assert code == 0 and true_res(A, xg, b) <= 1e-6
    del P
    with pytest.raises((BlockILDLError, ValueError)):
        Preconditioner(A, method="sideways", **OPTS)
    with pytest.raises(BlockILDLError):
        Preconditioner(A, method="block_jacobi", precision="single", **OPTS)


def test_method_fixed_point():
    # method="fixed_point" with its sweeps: converges, reports the residual on the pattern; with
    # as many sweeps as levels and no extra perturbation that residual is at rounding level
    A = kkt()
    n = A.shape[0]
    b = A @ np.linspace(1, 2, n)
    P = Preconditioner(A, method="fixed_point", fp_sweeps=3, **OPTS)
    assert P.options["method"] == "fixed_point" and P.options["fp_sweeps"] == 3
    x, info = P.solve(b)
    assert info.converged and true_res(A, x, b) <= 1e-6
    assert info.fp_residual > 0
    levels = P.info.num_levels
    del P
    P = Preconditioner(A, method="fixed_point", fp_sweeps=levels, fp_eps=0.0, pivoting="none",
                       drop_tol=0.0, fill_factor=0.0, **OPTS)
    assert P.info.fp_residual <= 1e-13
    del P
    with pytest.raises(BlockILDLError):
        Preconditioner(A, method="fixed_point", fp_sweeps=0, **OPTS)


def test_bad_input():
    A = kkt()
    n = A.shape[0]
    with pytest.raises(BlockILDLError) as e:
        Preconditioner(sp.random(5, 6, density=0.5, format="csr"), **OPTS)
    assert e.value.name == "ILDL_ERR_NOT_SQUARE"
    U = A.tolil()
    U[0, n - 1] = 3.0
    U[n - 1, 0] = -3.0
    with pytest.raises(BlockILDLError) as e:
        Preconditioner(U.tocsr(), **OPTS)
    assert e.value.name == "ILDL_ERR_NOT_SYMMETRIC" and "(" in e.value.message
    N = A.copy()
    N.data[3] = np.nan
    with pytest.raises(BlockILDLError) as e:
        Preconditioner(N, **OPTS)
    assert e.value.name == "ILDL_ERR_NAN_INF"
    with pytest.raises(BlockILDLError) as e:
        Preconditioner(sp.csr_matrix((0, 0)), **OPTS)
    assert e.value.name == "ILDL_ERR_EMPTY"
    with pytest.raises(TypeError):
        Preconditioner(A, no_such_option=1)
    with pytest.raises(ValueError):
        Preconditioner(A, ordering="no-such-order")
    with pytest.raises(ValueError):
        Preconditioner(A, factor_schedule="no-such-schedule")
    # the GPU factorization's schedule by name; the CPU backend reports its own (levels)
    S = Preconditioner(A, factor_schedule="syncfree", backend="cpu")
    assert S.info.factor_schedule == 0
    with pytest.raises(BlockILDLError) as e:
        Preconditioner(A, tol=2.0, backend="cpu")
    assert e.value.name == "ILDL_ERR_INVALID_OPTION"
    with pytest.raises(TypeError):
        Preconditioner(A.astype(complex))
    P = Preconditioner(A, **OPTS)
    with pytest.raises(BlockILDLError) as e:
        P.solve(np.ones(n + 1))
    assert e.value.name == "ILDL_ERR_SIZE_MISMATCH"
    b = np.ones(n)
    b[2] = np.inf
    with pytest.raises(BlockILDLError) as e:
        P.solve(b)
    assert e.value.name == "ILDL_ERR_NAN_INF"
    with pytest.raises(ValueError):  # SciPy's LinearOperator checks the shape first
        P @ np.ones(n - 1)
    with pytest.raises(BlockILDLError) as e:
        P._matvec(np.ones(n - 1))
    assert e.value.name == "ILDL_ERR_SIZE_MISMATCH"
    # not converging is reported, not raised
    Q = Preconditioner(A, max_iter=1, escalation="none", **OPTS)
    x, info = Q.solve(A @ np.ones(n))
    assert not info.converged and info.status_name == "ILDL_ERR_NOT_CONVERGED"


def test_no_handle_leak():
    A = kkt(40, 15)
    gc.collect()
    base = blockildl.live_handles()
    r = np.ones(A.shape[0])
    for _ in range(1000):
        P = Preconditioner(A, **OPTS)
        P @ r
    del P
    gc.collect()
    assert blockildl.live_handles() == base
    # failed constructions hold none either
    for _ in range(50):
        with pytest.raises(BlockILDLError):
            Preconditioner(sp.csr_matrix((0, 0)), **OPTS)
    gc.collect()
    assert blockildl.live_handles() == base


@pytest.mark.parametrize("name", ["tuma1", "stokes64"])
def test_shared_matrices(name):
    """The issue's check: the lower triangle as COO, gmres(M=P), minres with spd=True, and
    P.solve on two columns, each to 1e-6 on the true residual."""
    A = shared(name)
    n = A.shape[0]
    b = A @ np.ones(n)
    L = sp.tril(A, format="coo")
    P = Preconditioner(L, **OPTS)
    x, code = gmres_tol(A, b, P, 1e-8, restart=100, maxiter=20)
    assert code == 0 and true_res(A, x, b) <= 1e-6
    S = Preconditioner(L, spd=True, **OPTS)
    # SciPy's minres stops on its own estimates (relative to ||A|| ||x||, in the M-norm): asked
    # for 1e-12 it meets 1e-6 on the true residual (stokes64: 986 iterations; 1e-9 stops at 4e-4)
    x, code = minres_tol(A, b, S, 1e-12, maxiter=3000)
    assert code == 0 and true_res(A, x, b) <= 1e-6
    B = np.column_stack([b, A @ np.cos(np.arange(n))])
    X, info = P.solve(B)
    assert info.converged
    for j in range(2):
        assert true_res(A, X[:, j], B[:, j]) <= 1e-6
