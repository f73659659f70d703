#!/usr/bin/env bash
# Run HERE (Debian with petsc-dev and openmpi-bin, after bench/prepare-device.sh): pack PETSc,
# Open MPI and every shared library they need that a bare device image lacks into
# .devdata/petsc.tar.xz, for bench/device-petsc.sh (the PETSc scaling study of docs/petsc.md).
# The tree mirrors /usr under petsc/ so that Open MPI relocates with OPAL_PREFIX=$PWD/petsc/usr;
# glibc and the CUDA libraries are left to the device's own.
set -euo pipefail
cd "$(dirname "$0")/.."
EXE=build-cuda/examples/kkt_petsc
[ -x "$EXE" ] || { echo "no $EXE: run bench/prepare-device.sh first (with petsc-dev installed)" >&2; exit 1; }
ML=/usr/lib/x86_64-linux-gnu
ROOT=$(mktemp -d)
P=$ROOT/petsc
mkdir -p "$P/usr/bin" "$P/lib" "$P/usr/share"
cp -a /usr/bin/orterun /usr/bin/orted "$P/usr/bin/"
mkdir -p "$P$ML"
cp -a "$ML/openmpi" "$ML/pmix2" "$P$ML/"
cp -a /usr/share/openmpi "$P/usr/share/"
[ -d /usr/share/pmix ] && cp -a /usr/share/pmix "$P/usr/share/"
# headers, static and Java/Fortran parts are not needed to run
rm -rf "$P$ML/openmpi/include" "$P$ML/pmix2/include"
find "$P" \( -name '*.a' -o -name '*.la' -o -name 'libmpi_java*' -o -name 'mpi.jar' \) -delete
# the shared libraries of the example, the launcher and every plugin, but not glibc's or CUDA's
{
  ldd "$EXE" /usr/bin/orterun /usr/bin/orted "$ML"/openmpi/lib/openmpi3/*.so "$ML"/pmix2/lib/pmix/*.so 2>/dev/null |
    awk '$2 == "=>" && $3 ~ /^\// {print $3}'
} | sort -u | while read -r lib; do
  base=$(basename "$lib")
  case "$base" in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*|libresolv.so.*) continue ;;
    libcuda*|libcublas*|libcusparse*|libnvJitLink*|libcudart*) continue ;;
    libblockildl*|libamd*|libmetis*|libsuitesparseconfig*) continue ;; # carried by .carry and the build
  esac
  cp -L "$lib" "$P/lib/$base"
done
strip --strip-unneeded "$P"/lib/*.so* 2>/dev/null || true
mkdir -p .devdata
tar -C "$ROOT" -cJf .devdata/petsc.tar.xz petsc
rm -rf "$ROOT"
echo "packed .devdata/petsc.tar.xz $(du -h .devdata/petsc.tar.xz | cut -f1)"
