"""Preconditioner: the block-iLDL^T preconditioner of a sparse symmetric matrix as a SciPy
LinearOperator, with the library's own SQMR solve (blockildl.h is the reference for every call
and option)."""

import threading

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from ._ffi import ffi, lib

# ildl_options fields that are enums in the header: keyword values may be their names
# ("metis", "ILDL_ORDER_METIS") or their numbers
_ENUMS = {
    "backend": ("ildl_backend", "ILDL_BACKEND_"),
    "ordering": ("ildl_ordering", "ILDL_ORDER_"),
    "blocking": ("ildl_blocking_strategy", "ILDL_BLOCKING_"),
    "scaling": ("ildl_scaling", "ILDL_SCALING_"),
    "pivoting": ("ildl_pivoting", "ILDL_PIVOT_"),
    "precision": ("ildl_precision", "ILDL_PREC_"),
    "leftover": ("ildl_leftover", "ILDL_LEFTOVER_"),
    "solve_schedule": ("ildl_schedule", "ILDL_SCHEDULE_"),
    "factor_schedule": ("ildl_schedule", "ILDL_SCHEDULE_"),
    "solve_kernels": ("ildl_solve_kernels", "ILDL_SOLVE_KERNELS_"),
    "l2_persist": ("ildl_l2_persist", "ILDL_L2_PERSIST_"),
    "escalation": ("ildl_escalation", "ILDL_ESCALATE_"),
    "apply_mode": ("ildl_apply_mode", "ILDL_APPLY_"),
    "refactor_scaling": ("ildl_refactor_scaling", "ILDL_REFACTOR_SCALING_"),
    "method": ("ildl_method", "ILDL_METHOD_"),
    "rung_choice": ("ildl_rung_choice", "ILDL_RUNG_CHOICE_"),
}
# fields that are not keywords: callbacks, reserved room, and the initial guess (solve's x0)
_NOT_OPTIONS = {"log_fn", "log_ctx", "progress_fn", "progress_ctx", "use_initial_guess"}
OPTION_NAMES = tuple(f for f, _ in ffi.typeof("ildl_options").fields
                     if f not in _NOT_OPTIONS and not f.startswith("reserved"))

_STATUS_NAMES = dict(ffi.typeof("ildl_status").elements)  # value -> "ILDL_ERR_..."
_LIVE = [0]  # handles alive (the tests check that none leaks)
_LIVE_LOCK = threading.Lock()


class BlockILDLError(Exception):
    """A call of the library failed: .status (its ILDL_* code), .name ("ILDL_ERR_...") and
    .message (ildl_last_error's details)."""

    def __init__(self, status, message):
        self.status = int(status)
        self.name = _STATUS_NAMES.get(self.status, "ILDL_%d" % self.status)
        self.message = message
        super().__init__("%s: %s" % (self.name, message))


def _error(status, h=None):
    msg = ffi.string(lib.ildl_last_error(h if h is not None else ffi.NULL)).decode("utf-8", "replace")
    if not msg:
        msg = ffi.string(lib.ildl_strerror(status)).decode()
    return BlockILDLError(status, msg)


def _enum_value(field, value):
    tname, prefix = _ENUMS[field]
    names = ffi.typeof(tname).relements
    if isinstance(value, str):
        key = value.upper().replace("-", "_")
        if not key.startswith(prefix):
            key = prefix + key
        if key not in names:
            raise ValueError("%s: unknown value %r (one of %s)" % (
                field, value, ", ".join(sorted(k[len(prefix):].lower() for k in names))))
        return names[key]
    return int(value)


def _enum_name(field, value):
    tname, prefix = _ENUMS[field]
    return ffi.typeof(tname).elements.get(value, str(value))[len(prefix):].lower()


def make_options(**kw):
    """An ildl_options (cffi) with the defaults, then the keywords (names as in blockildl.h)."""
    o = ffi.new("ildl_options *")
    lib.ildl_options_default(o)
    for k, v in kw.items():
        if k not in OPTION_NAMES:
            raise TypeError("unknown option %r (options: %s)" % (k, ", ".join(OPTION_NAMES)))
        setattr(o, k, _enum_value(k, v) if k in _ENUMS else v)
    return o


class Info:
    """ildl_info as attributes (blockildl.h says what each means); backend and ordering_used as
    names; for a solve of several right-hand sides, .columns lists each column's outcome."""

    def __init__(self, c_info, columns=None):
        for f, _ in ffi.typeof("ildl_info").fields:
            if f.startswith("reserved"):
                continue
            v = getattr(c_info, f)
            if f == "device_name":
                v = ffi.string(v).decode("utf-8", "replace")
            elif isinstance(v, ffi.CData):
                v = list(v)
            setattr(self, f, v)
        self.backend = _enum_name("backend", self.backend)
        self.ordering_used = _enum_name("ordering", self.ordering_used)
        self.converged = bool(self.converged)
        self.columns = columns

    def __repr__(self):
        keys = ("backend", "n", "nnz", "factor_nnz", "iterations", "converged", "true_residual", "rung")
        return "Info(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in keys)


class ColumnResult:
    """One column of a solve with several right-hand sides (ildl_column_result)."""

    def __init__(self, c):
        self.status = int(c.status)
        self.status_name = _STATUS_NAMES.get(self.status, str(self.status))
        self.iterations = int(c.iterations)
        self.true_residual = float(c.true_residual)
        self.estimated_residual = float(c.estimated_residual)
        self.rung = int(c.rung)
        self.converged = self.status == 0

    def __repr__(self):
        return "ColumnResult(%s, iterations=%d, true_residual=%.3e, rung=%d)" % (
            self.status_name, self.iterations, self.true_residual, self.rung)


def _index_array(a):
    """a as a contiguous int32 or int64 array, and its ildl_index_type."""
    a = np.asarray(a)
    if a.dtype == np.int32:
        return np.ascontiguousarray(a), lib.ILDL_INDEX_32
    return np.ascontiguousarray(a, dtype=np.int64), lib.ILDL_INDEX_64


def _view(view, row, col):
    if view == "auto":
        if row.size == 0 or np.all(row >= col):
            return lib.ILDL_VIEW_LOWER
        if np.all(row <= col):
            return lib.ILDL_VIEW_UPPER
        return lib.ILDL_VIEW_FULL
    names = {"full": lib.ILDL_VIEW_FULL, "lower": lib.ILDL_VIEW_LOWER, "upper": lib.ILDL_VIEW_UPPER}
    if view not in names:
        raise ValueError("view must be 'auto', 'full', 'lower' or 'upper', not %r" % (view,))
    return names[view]


class _Descriptor:
    """An ildl_matrix (COO, base 0, duplicates summed) over arrays this object keeps alive."""

    def __init__(self, A, view):
        if not sp.issparse(A):
            A = np.asarray(A)
            if A.ndim != 2:
                raise ValueError("A must be a scipy.sparse matrix or array, or a 2-D array")
            A = sp.coo_matrix(A)
        if A.shape[0] != A.shape[1]:
            raise BlockILDLError(lib.ILDL_ERR_NOT_SQUARE, "A is %d x %d, not square" % A.shape)
        C = A.tocoo()
        if np.iscomplexobj(C.data):
            raise TypeError("A must be real (complex matrices are not supported)")
        self.row, it = _index_array(C.row)
        self.col, it2 = _index_array(C.col)
        if it != it2:  # one width for both
            self.row = self.row.astype(np.int64)
            self.col = self.col.astype(np.int64)
            it = lib.ILDL_INDEX_64
        self.values = np.ascontiguousarray(C.data, dtype=np.float64)
        self.n = A.shape[0]
        m = ffi.new("ildl_matrix *")
        lib.ildl_matrix_init(m)
        m.n = self.n
        m.nnz = self.values.size
        m.format = lib.ILDL_FORMAT_COO
        m.base = 0
        m.view = _view(view, self.row, self.col)
        m.duplicates = lib.ILDL_DUPLICATES_SUM
        m.offset_type = it
        m.index_type = it
        m.rows = ffi.cast("const void *", self.row.ctypes.data)
        m.cols = ffi.cast("const void *", self.col.ctypes.data)
        m.values = _ptr(self.values, True)
        self.m = m


def _ptr(a, const=False):
    """A double pointer to the numpy array a's data (a must stay alive while it is used)."""
    return ffi.cast("const double *" if const else "double *", a.ctypes.data)


def _destroy(h):
    lib.ildl_destroy(h)
    with _LIVE_LOCK:
        _LIVE[0] -= 1


def live_handles():
    """The number of library handles alive (each Preconditioner holds one until collected)."""
    return _LIVE[0]


class Preconditioner(LinearOperator):
    """The block-iLDL^T preconditioner of A, applying z = M^{-1} r.

    A: any scipy.sparse matrix or array (csr, csc, coo, ...) or a dense 2-D array, symmetric;
    either triangle or both (view='auto' looks: only entries with row >= col is the lower
    triangle, row <= col the upper; 'full', 'lower', 'upper' say it), int32 or int64 indices,
    duplicates summed. spd=True applies M = L|D|L^T instead (symmetric positive definite: for
    MINRES). Other keywords are the fields of ildl_options in blockildl.h, enums by name
    (ordering='metis', backend='cpu', precision='single', ...).

    As a LinearOperator it is M^{-1} (scipy's gmres(A, b, M=P), minres(A, b, M=P)); .solve(b)
    runs the library's SQMR on A x = b to options' tol; .refactor() takes new values; .info
    reports the last call. Errors raise BlockILDLError with the library's status and message.
    """

    def __init__(self, A, spd=False, view="auto", **options):
        if spd:
            options["apply_mode"] = "spd"
        self._opts = make_options(**options)
        # solve() always passes a start: x0, or zeros (the same iterates as no initial guess)
        self._opts.use_initial_guess = 1
        d = _Descriptor(A, view)
        self._view = view
        hp = ffi.new("ildl_handle **")
        st = lib.ildl_setup_matrix(d.m, self._opts, hp)
        if st:
            raise _error(st)
        with _LIVE_LOCK:
            _LIVE[0] += 1
        self._h = ffi.gc(hp[0], _destroy)
        self._nnz_given = d.values.size
        st = lib.ildl_factor(self._h, ffi.NULL)
        if st:
            raise _error(st, self._h)
        super().__init__(dtype=np.float64, shape=(d.n, d.n))

    # ---------------------------------------------------------------- LinearOperator
    def _matvec(self, r):
        r = np.ascontiguousarray(np.asarray(r, dtype=np.float64).reshape(-1))
        self._check_len(r.size, "r")
        z = np.empty(self.shape[0])
        st = lib.ildl_apply(self._h, _ptr(r, True),
                            _ptr(z), lib.ILDL_MEMORY_HOST, ffi.NULL)
        if st:
            raise _error(st, self._h)
        return z

    def _matmat(self, R):
        R = np.asfortranarray(np.asarray(R, dtype=np.float64))
        self._check_len(R.shape[0], "R")
        k = R.shape[1]
        Z = np.empty((self.shape[0], k), order="F")
        if k == 0:
            return Z
        n = self.shape[0]
        st = lib.ildl_apply_multi(self._h, k, _ptr(R, True), n,
                                  _ptr(Z), n, lib.ILDL_MEMORY_HOST, ffi.NULL)
        if st:
            raise _error(st, self._h)
        return Z

    def _adjoint(self):
        return self  # M^{-1} is symmetric

    # ---------------------------------------------------------------- the library's calls
    def _check_len(self, m, what):
        if m != self.shape[0]:
            raise BlockILDLError(lib.ILDL_ERR_SIZE_MISMATCH, "%s has %d rows, A has n = %d" % (what, m, self.shape[0]))

    def solve(self, b, x0=None):
        """x solving A x = b by SQMR with this preconditioner (options' tol, max_iter, the
        ladder): b 1-D (ildl_solve) or 2-D, one system per column (ildl_solve_multi). Returns
        (x, info); info.converged says whether the true residual ||b - A x|| / ||b|| met tol
        (info.columns per column for a 2-D b). Not converging is reported, not raised."""
        b = np.asarray(b, dtype=np.float64)
        if b.ndim not in (1, 2):
            raise ValueError("b must be 1-D or 2-D")
        self._check_len(b.shape[0], "b")
        n = self.shape[0]
        if b.ndim == 1:
            b = np.ascontiguousarray(b)
            x = np.zeros(n) if x0 is None else np.array(x0, dtype=np.float64).reshape(-1)
            if x.size != n:
                raise BlockILDLError(lib.ILDL_ERR_SIZE_MISMATCH, "x0 has %d entries, A has n = %d" % (x.size, n))
        else:
            b = np.asfortranarray(b)
            x = np.zeros(b.shape, order="F") if x0 is None else np.array(x0, dtype=np.float64, order="F")
            if x.shape != b.shape:
                raise BlockILDLError(lib.ILDL_ERR_SIZE_MISMATCH, "x0 is %s, b is %s" % (x.shape, b.shape))
        return self._solve(b, x)

    def _solve(self, b, x):
        n = self.shape[0]
        bp = _ptr(b, True)
        xp = _ptr(x)
        columns = None
        if b.ndim == 1:
            st = lib.ildl_solve(self._h, bp, xp)
        else:
            k = b.shape[1]
            cr = ffi.new("ildl_column_result[]", max(k, 1))
            st = lib.ildl_solve_multi(self._h, k, bp, n, xp, n, cr)
            columns = [ColumnResult(cr[j]) for j in range(k)]
        if st and st not in (lib.ILDL_ERR_NOT_CONVERGED, lib.ILDL_ERR_BREAKDOWN):
            raise _error(st, self._h)
        info = self._get_info(columns)
        info.status = int(st)
        info.status_name = _STATUS_NAMES.get(int(st), str(st))
        info.message = "" if not st else ffi.string(lib.ildl_last_error(self._h)).decode("utf-8", "replace")
        return x, info

    def refactor(self, A):
        """Factor new values: a matrix (any layout, on the setup's pattern or a subset of it:
        entries it does not give are zero: ildl_factor_matrix), or a 1-D array of values in the
        order of the entries given at construction (A.tocoo()'s order: ildl_factor)."""
        if sp.issparse(A) or (isinstance(A, np.ndarray) and A.ndim == 2):
            d = _Descriptor(A, self._view)
            st = lib.ildl_factor_matrix(self._h, d.m)
        else:
            v = np.ascontiguousarray(np.asarray(A, dtype=np.float64).reshape(-1))
            if v.size != self._nnz_given:
                raise BlockILDLError(lib.ILDL_ERR_SIZE_MISMATCH, "%d values given, the matrix at construction had %d "
                                     "entries" % (v.size, self._nnz_given))
            st = lib.ildl_factor(self._h, _ptr(v, True))
        if st:
            raise _error(st, self._h)
        return self

    def _get_info(self, columns=None):
        c = ffi.new("ildl_info *")
        lib.ildl_get_info(self._h, c)
        return Info(c, columns)

    @property
    def info(self):
        """ildl_info of the last setup, factorization or solve."""
        return self._get_info()

    @property
    def options(self):
        """The options as given (names as keywords)."""
        out = {}
        for f in OPTION_NAMES:
            v = getattr(self._opts, f)
            out[f] = _enum_name(f, v) if f in _ENUMS else v
        return out
