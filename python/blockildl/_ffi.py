"""The C library through cffi (ABI mode): its declarations are blockildl.h itself, preprocessed at
build time (CMakeLists.txt, ILDL_PYTHON), so the structures' layouts follow the header and cannot
drift from it.

Where they are: next to this file (an installed package), or where the environment variables
BLOCKILDL_LIBRARY (the shared library) and BLOCKILDL_CDEF (the preprocessed header) say (the
tests, run against a build tree)."""

import os

import cffi

_here = os.path.dirname(os.path.abspath(__file__))


def _find(env, name):
    path = os.environ.get(env)
    if path:
        return path
    path = os.path.join(_here, name)
    if os.path.exists(path):
        return path
    raise ImportError(
        "blockildl: %s not found next to the package (%s) and %s is not set: install the "
        "package with `pip install .` from the repository" % (name, _here, env))


ffi = cffi.FFI()
with open(_find("BLOCKILDL_CDEF", "_blockildl_cdef.h")) as _f:
    ffi.cdef(_f.read())
lib = ffi.dlopen(_find("BLOCKILDL_LIBRARY", "libblockildl.so"))
library_path = _find("BLOCKILDL_LIBRARY", "libblockildl.so")
