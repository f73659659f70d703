#!/usr/bin/env bash
# Run HERE (not on the device): build the CUDA configuration and stage what a device run
# needs in git-ignored folders that the device tool carries:
#   build-cuda/   the build, with bench/baseline (ildl-baseline, ildl-bandwidth, ildl-handoff) and
#                 bench/gen (ildl-gen); for sm_90 + compute_90 PTX only (the device machines are
#                 H100/H200): CUDAARCHS="80-real;90-real;90-virtual" builds the library's default
#   .carry/lib/   shared libraries the device machine lacks (SuiteSparse AMD, METIS, cmocka)
#   .devdata/matrices/  the shared test matrices (../shared is not sent to the device)
#   .devdata/cudss.tar.xz  cuDSS for the device (only after bench/get-cudss.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# ildl-cudss too where bench/get-cudss.sh has unpacked cuDSS into .cudss/ (its device copy goes
# to .devdata/cudss.tar.xz: unpack it there and add cudss/lib to LD_LIBRARY_PATH)
CUDSS_ARGS=()
if [ -f .cudss/lib/libcudss.so.1 ]; then
  CUDSS_ARGS=(-DILDL_CUDSS_ROOT="$PWD/.cudss")
fi
cmake -S . -B build-cuda -DILDL_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDAARCHS:-90}" \
  -DILDL_BUILD_BENCH=ON -DILDL_BUILD_BASELINES=ON "${CUDSS_ARGS[@]}" >/dev/null
cmake --build build-cuda -j2 >/dev/null
mkdir -p .carry/lib .devdata/matrices
for lib in libamd.so.2 libsuitesparseconfig.so.5 libmetis.so.5 libcmocka.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$lib" .carry/lib/
done
nvcc --version | tail -n 2 | head -n 1 | sed 's/^/nvcc /' > .carry/build-info.txt
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '+changes')" >> .carry/build-info.txt
if [ -f .cudss/device.tar.xz ]; then cp -u .cudss/device.tar.xz .devdata/cudss.tar.xz; fi
if [ -d ../shared/matrices ]; then
  cp -u ../shared/matrices/*.mtx.gz .devdata/matrices/
  mkdir -p .devdata/mps && cp -u ../shared/matrices/mps/*.mps.gz .devdata/mps/
fi
echo "staged: build-cuda $(du -sh build-cuda | cut -f1), .carry $(du -sh .carry | cut -f1), .devdata $(du -sh .devdata | cut -f1)"
