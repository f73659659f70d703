#!/usr/bin/env bash
# ctest's Python tests (tests/CMakeLists.txt). Exit 77 (ctest: skipped, with the reason printed)
# where Python's venv or PyPI (numpy, scipy, cffi, pytest, scikit-build-core) is out of reach.
#   run.sh venv BUILD             make BUILD/python-venv with the test dependencies
#   run.sh tree BUILD SRC SHARED  pytest tests/python against BUILD's library (the suite)
#   run.sh pip  BUILD SRC SHARED  `pip install SRC` into a fresh venv (BUILD/python-fresh, the CPU
#                                 backend only, for time), then examples/python/solve_scipy.py on
#                                 tuma1 and stokes64 (data/'s matrix where ../shared is absent)
set -uo pipefail
mode=$1 build=$2 src=${3:-} shared=${4:-}
venv=$build/python-venv
skip() { echo "SKIP: $*"; exit 77; }
case $mode in
venv)
  rm -rf "$venv"
  python3 -m venv "$venv" >/dev/null 2>&1 || skip "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check numpy scipy cffi pytest ||
    skip "pip could not install numpy, scipy, cffi and pytest (no access to PyPI?)"
  ;;
tree)
  [ -x "$venv/bin/python" ] || skip "no $venv (the python/venv test was skipped)"
  export BLOCKILDL_LIBRARY="$build/libblockildl.so" BLOCKILDL_CDEF="$build/python/_blockildl_cdef.h"
  export PYTHONPATH="$src/python" BLOCKILDL_SHARED_MATRICES="$shared"
  exec "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$src/tests/python"
  ;;
pip)
  [ -x "$venv/bin/python" ] || skip "no $venv (the python/venv test was skipped)"
  fresh=$build/python-fresh
  rm -rf "$fresh"
  python3 -m venv "$fresh" >/dev/null 2>&1 || skip "python3 -m venv failed"
  "$fresh/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$fresh/probe" scikit-build-core \
    >/dev/null 2>&1 || skip "PyPI out of reach: pip install . needs scikit-build-core"
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$fresh/bin/python" -m pip install -q \
    --disable-pip-version-check "$src" -C cmake.define.ILDL_CUDA=OFF -C build-dir="$build/python-wheel-build" || exit 1
  cd "$build" # not the source tree: the installed package is the one imported
  "$fresh/bin/python" -c "import blockildl, sys; print('installed', blockildl.__file__, blockildl.library_version())" || exit 1
  mats=()
  for m in tuma1 stokes64; do [ -f "$shared/$m.mtx.gz" ] && mats+=("$shared/$m.mtx.gz"); done
  if [ ${#mats[@]} -eq 0 ]; then
    echo "SKIP (partly): $shared has no tuma1/stokes64: the example runs on data/'s matrix only"
    mats=("$src/data/cutest_kkt_CRESC100_0000.mtx.gz")
  fi
  OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} exec "$fresh/bin/python" "$src/examples/python/solve_scipy.py" "${mats[@]}"
  ;;
*) echo "usage: run.sh venv|tree|pip BUILD [SRC SHARED]" >&2; exit 2 ;;
esac
