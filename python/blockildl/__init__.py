"""blockildl: block-incomplete LDL^T preconditioning of sparse symmetric indefinite systems, and
SQMR, on the CPU or an NVIDIA GPU (libblockildl's Python package).

    import blockildl, scipy.sparse as sp
    from scipy.sparse.linalg import gmres, minres
    P = blockildl.Preconditioner(sp.tril(A, format="coo"))      # one triangle is enough
    x, info = P.solve(b)                                        # the library's SQMR
    x, code = gmres(A, b, M=P)                                  # or as SciPy's preconditioner
    x, code = minres(A, b, M=blockildl.Preconditioner(A, spd=True))
"""
from ._core import (OPTION_NAMES, BlockILDLError, ColumnResult, Info, Preconditioner, live_handles,
                    make_options)
from ._ffi import ffi as _ffi
from ._ffi import lib as _lib

__version__ = "0.2.0"


def library_version():
    """The version of the C library the package loaded."""
    return _ffi.string(_lib.ildl_version()).decode()


__all__ = ["Preconditioner", "BlockILDLError", "Info", "ColumnResult", "OPTION_NAMES", "library_version",
           "live_handles", "make_options", "__version__"]
