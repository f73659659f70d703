#!/usr/bin/env bash
# The installed package as a user finds it: install the build into a scratch prefix, then build
# examples/example_solve.c against it through pkg-config, once with the shared library
# (blockildl.pc) and once statically (blockildl-static.pc: libblockildl.a and what it needs), and
# through find_package, and run each: each must solve (exit 0). The exported CMake files must name
# no library of this machine by its path (AMD, METIS and libm come as imported targets or names).
# Where libblockildl_petsc was built, a PETSc program against it too (docs/petsc.md).
#   usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
prefix=$build/install-check
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" > /dev/null
libdir=$(dirname "$(find "$prefix" -name blockildl.pc | head -n 1)")/..
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc=${CC:-cc}
$cc -std=c11 "$src/examples/example_solve.c" $(pkg-config --cflags --libs blockildl) -Wl,-rpath,"$libdir" \
  -o "$prefix/example_shared"
"$prefix/example_shared" > "$prefix/shared.out"
$cc -std=c11 "$src/examples/example_solve.c" $(pkg-config --cflags --libs blockildl-static) -o "$prefix/example_static"
"$prefix/example_static" > "$prefix/static.out"
if ldd "$prefix/example_static" | grep -q blockildl; then
  echo "the static example still loads libblockildl.so" >&2
  exit 1
fi
if grep -Eq '/lib(amd|camd|suitesparseconfig|metis|m)\.(so|a)' "$libdir"/cmake/blockildl/*.cmake; then
  echo "the exported CMake files name a library by its path on this machine:" >&2
  grep -En '/lib(amd|camd|suitesparseconfig|metis|m)\.(so|a)' "$libdir"/cmake/blockildl/*.cmake >&2
  exit 1
fi
# and through CMake: find_package(blockildl), the shared and the static target
mkdir -p "$prefix/consumer"
cat > "$prefix/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(blockildl REQUIRED)
add_executable(ex_shared $src/examples/example_solve.c)
target_link_libraries(ex_shared PRIVATE blockildl::blockildl)
add_executable(ex_static $src/examples/example_solve.c)
target_link_libraries(ex_static PRIVATE blockildl::blockildl_static)
CM
cmake -S "$prefix/consumer" -B "$prefix/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" > "$prefix/consumer.log" 2>&1 ||
  { cat "$prefix/consumer.log" >&2; exit 1; }
cmake --build "$prefix/consumer/build" >> "$prefix/consumer.log" 2>&1 || { cat "$prefix/consumer.log" >&2; exit 1; }
"$prefix/consumer/build/ex_shared" > "$prefix/cmake-shared.out"
"$prefix/consumer/build/ex_static" > "$prefix/cmake-static.out"
# the installed programs: ildl-gen (where it was built) makes a problem, ildl solves it
if [ -x "$build/bench/gen/ildl-gen" ]; then
  [ -x "$prefix/bin/ildl-gen" ] || { echo "ildl-gen was built but not installed" >&2; exit 1; }
  "$prefix/bin/ildl-gen" control 8 "$prefix/control8.mtx" > /dev/null
  "$prefix/bin/ildl" solve "$prefix/control8.mtx" --backend cpu --threads 1 > "$prefix/gen-solve.out"
fi
# the PETSc preconditioner (where it was built): a PETSc program built against the installed
# libblockildl_petsc, -pc_type blockildl on one rank and -sub_pc_type blockildl on two
if [ -e "$libdir/libblockildl_petsc.so" ] && ! command -v mpicc > /dev/null; then
  echo "install check: SKIP the PETSc program (libblockildl_petsc built, but no mpicc)"
elif [ -e "$libdir/libblockildl_petsc.so" ]; then
  [ -e "$prefix/include/blockildl_petsc.h" ] || { echo "blockildl_petsc.h not installed" >&2; exit 1; }
  mpicc -std=c11 "$src/examples/petsc/kkt_petsc.c" -I"$prefix/include" $(pkg-config --cflags PETSc) \
    -L"$libdir" -lblockildl_petsc -lblockildl $(pkg-config --libs PETSc) -lm -Wl,-rpath,"$libdir" -o "$prefix/kkt_petsc"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
  "$prefix/kkt_petsc" -m 20 -pc_type blockildl -pc_blockildl_backend cpu > "$prefix/petsc-seq.out"
  mpiexec -n 2 --oversubscribe "$prefix/kkt_petsc" -m 20 -pc_type bjacobi -sub_pc_type blockildl \
    -sub_pc_blockildl_backend cpu > "$prefix/petsc-bjacobi.out"
  echo "install check: a PETSc program against the installed libblockildl_petsc converges on 1 and 2 ranks"
fi
echo "install check: shared and static links through blockildl.pc and find_package solve"
