#!/usr/bin/env bash
# Run HERE (not on the device): build the CUDA configuration and stage what a device run
# needs in git-ignored folders that the device tool carries:
#   build-cuda/   the build, with bench/baseline (ildl-baseline, ildl-bandwidth, ildl-handoff) and
#                 bench/gen (ildl-gen); for sm_90 + compute_90 PTX only (the device machines are
#                 H100/H200): CUDAARCHS="80-real;90-real;90-virtual" builds the library's default.
#                 Too large to carry (over 1 GB): its programs, stripped, go to
#   .devdata/bin.tar.xz        tools/ildl, ildl-gen
#   .devdata/baselines.tar.xz  bench/baseline's programs (ildl-cudss where built)
#   .devdata/tests.tar.xz      the test programs the device scripts run
#                 which the device scripts unpack (bench/device-unpack.sh says what to carry)
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
# pack NAME FILE...: build-cuda's FILEs (those that exist), stripped, into .devdata/NAME.tar.xz
pack() {
  local name=$1 st f
  shift
  st=$(mktemp -d)
  for f in "$@"; do
    [ -f "build-cuda/$f" ] || continue
    mkdir -p "$st/build-cuda/$(dirname "$f")"
    strip -o "$st/build-cuda/$f" "build-cuda/$f" 2>/dev/null || cp "build-cuda/$f" "$st/build-cuda/$f"
  done
  (cd "$st" && tar -cf - build-cuda | xz -T2 -6) > ".devdata/$name.tar.xz"
  rm -rf "$st"
}
pack bin tools/ildl bench/gen/ildl-gen
pack baselines bench/baseline/ildl-baseline bench/baseline/ildl-bandwidth bench/baseline/ildl-handoff \
  bench/baseline/ildl-gje bench/baseline/ildl-dense bench/baseline/ildl-cudss
pack tests tests/cuda_test_cuda_factor tests/cuda_test_cuda_rhs tests/cuda_test_cuda_oom \
  tests/cuda_test_cuda_threads tests/cuda_test_cuda_devices tests/cuda_test_cuda_gje tests/cuda_test_cuda_dense \
  tests/api_test_api tests/api_test_methods tests/api_test_refactor
echo "staged: build-cuda $(du -sh build-cuda | cut -f1), .carry $(du -sh .carry | cut -f1), .devdata $(du -sh .devdata | cut -f1)"
for f in bin baselines tests cudss; do [ -f .devdata/$f.tar.xz ] && echo ".devdata/$f.tar.xz $(du -h .devdata/$f.tar.xz | cut -f1)"; done
echo ".devdata/matrices $(du -sh .devdata/matrices | cut -f1): what to carry for which script: bench/device-unpack.sh"
