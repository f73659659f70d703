#!/usr/bin/env bash
# Install the Debian packages libblockildl needs, only when something is missing.
# (CUDA is optional and comes from the NVIDIA toolkit, not from here.)
#   install-deps.sh [test]   test: also what only the tests need beyond the build (PETSc and
#                            MPI for the PETSc preconditioner's tests; `make test` passes it)
set -euo pipefail
need=()
have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/suitesparse/$1" ] || [ -e "/usr/local/include/$1" ]; }
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v make >/dev/null 2>&1 || need+=(make)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config) # the install test links through blockildl.pc
have_header amd.h || need+=(libsuitesparse-dev)
have_header metis.h || need+=(libmetis-dev)
have_header cmocka.h || need+=(libcmocka-dev)
have_header zlib.h || need+=(zlib1g-dev)
# the Python package's tests (tests/python): python3 with venv (pip, numpy and scipy come from PyPI)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v python3 >/dev/null 2>&1 && ! python3 -c "import ensurepip, venv" >/dev/null 2>&1 && need+=(python3-venv)
# make fuzz: clang with libFuzzer's runtime, and OpenMP for clang
command -v clang >/dev/null 2>&1 || need+=(clang)
compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a' >/dev/null || need+=(libclang-rt-dev)
compgen -G '/usr/lib/llvm-*/lib/libomp.so' >/dev/null || need+=(libomp-dev)
# the PETSc preconditioner (libblockildl_petsc) and its MPI tests: PETSc 3.18 with OpenMPI
if [ "${1:-}" = test ]; then
  [ -e /usr/lib/x86_64-linux-gnu/pkgconfig/PETSc.pc ] || compgen -G '/usr/lib/*/pkgconfig/PETSc.pc' >/dev/null \
    || need+=(petsc-dev openmpi-bin)
fi
if [ ${#need[@]} -eq 0 ]; then
  echo "install-deps: all dependencies present"
  exit 0
fi
echo "install-deps: installing ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-deps: need root (or sudo) to install: ${need[*]}" >&2; exit 1; fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
