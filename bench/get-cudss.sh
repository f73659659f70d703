#!/usr/bin/env bash
# Run HERE (not on the device): NVIDIA cuDSS for bench/baseline's ildl-cudss, from the PyPI wheel
# nvidia-cudss-cu13 (headers and libcudss.so.1; cuDSS's licence: the wheel's LICENSE.txt).
#   bench/get-cudss.sh [DEST (.cudss)]
# unpacks include/ and lib/ into DEST (git-ignored) and, for the device machines (at most 64 MiB a
# call), DEST/device.tar.xz: the libraries with only their sm_90 code left
# (../shared/tools/strip_fatbin.py), packed by xz (about 17 MB). Then build with
#   cmake -S . -B build-cuda -DILDL_BUILD_BENCH=ON -DILDL_BUILD_BASELINES=ON -DILDL_CUDSS_ROOT=$PWD/.cudss
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-.cudss}
VERSION=${CUDSS_VERSION:-1.0.0.35}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
if [ ! -f "$DEST/lib/libcudss.so.1" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps "nvidia-cudss-cu13==$VERSION" -d "$tmp"
  (cd "$tmp" && python3 -m zipfile -e nvidia_cudss_cu13-*.whl w)
  mkdir -p "$DEST/include" "$DEST/lib"
  cp "$tmp"/w/nvidia/cu13/include/*.h "$DEST/include/"
  cp "$tmp"/w/nvidia/cu13/lib/libcudss.so.1 "$tmp"/w/nvidia/cu13/lib/libcudss_mtlayer_gomp.so.1 "$DEST/lib/"
  cp "$tmp"/w/nvidia_cudss_cu13-*.dist-info/licenses/LICENSE.txt "$DEST/LICENSE.txt"
fi
STRIP=../shared/tools/strip_fatbin.py
if [ -f "$STRIP" ] && [ ! -f "$DEST/device.tar.xz" ]; then
  st=$(mktemp -d)
  mkdir -p "$st/cudss/lib"
  python3 "$STRIP" "$DEST/lib/libcudss.so.1" "$st/cudss/lib/libcudss.so.1" 90
  cp "$DEST/lib/libcudss_mtlayer_gomp.so.1" "$st/cudss/lib/" # host code only: nothing to strip
  tar -C "$st" -cJf "$DEST/device.tar.xz" cudss
  rm -rf "$st"
fi
ls -la "$DEST" "$DEST/lib"
