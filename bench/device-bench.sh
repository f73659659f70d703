#!/usr/bin/env bash
# Run ON THE DEVICE (after bench/prepare-device.sh here; carry what bench/device-unpack.sh says):
# every matrix of a suite through `ildl solve` with the CPU backend (all host cores) and the
# CUDA backend, each as the median of REPEAT runs of setup+factor+solve in one process.
# Writes $OUT/bench.jsonl (one JSON object per run), baseline.jsonl, bandwidth.json and
# meta.json; render the report here with (see docs/benchmarks.md for the exact command):
#   python3 bench/render_benchmarks.py DIR [DIR...] --plots docs/bench-plots > docs/benchmarks.md
#   usage: bash bench/device-bench.sh [small|all|LISTFILE] [REPEAT]   (LISTFILE: names of the small suite)
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh # the carried build, if packed (bench/prepare-device.sh)
SUITE=${1:-small}
REPEAT=${2:-5}
OUTDIR=${OUT:-/tmp/ildl-out}
mkdir -p "$OUTDIR"
export LD_LIBRARY_PATH="$PWD/.carry/lib:${LD_LIBRARY_PATH:-}"
B=build-cuda
if [ "$SUITE" = all ]; then LIST=$(ls .devdata/matrices/*.mtx.gz)
elif [ -f "$SUITE" ]; then LIST=$(sed 's|^|.devdata/matrices/|' "$SUITE"); SUITE=small # a subset of the small suite
else LIST=$(sed 's|^|.devdata/matrices/|' bench/suite-small.txt); fi
{
  echo "{"
  echo "\"device\": \"$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)\","
  echo "\"driver\": \"$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)\","
  echo "\"cuda_build\": \"$(cat .carry/build-info.txt 2>/dev/null | head -n 1)\","
  echo "\"commit\": \"$(sed -n 's/^commit //p' .carry/build-info.txt 2>/dev/null | head -n 1)\","
  echo "\"host_cpus\": $(nproc),"
  echo "\"date\": \"$(date -u +%Y-%m-%dT%H:%MZ)\", \"repeat\": $REPEAT, \"suite\": \"$SUITE\""
  echo "}"
} > "$OUTDIR/meta.json"
: > "$OUTDIR/bench.jsonl"
: > "$OUTDIR/baseline.jsonl"
export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64:/usr/local/cuda/lib"
[ -s "$OUTDIR/bandwidth.json" ] || $B/bench/baseline/ildl-bandwidth > "$OUTDIR/bandwidth.json"
for m in $LIST; do
  for be in cpu cuda; do
    hist=""; [ $be = cpu ] && hist=--history # the CPU reports every iteration's estimate
    timeout 300 $B/tools/ildl solve "$m" --backend $be --repeat "$REPEAT" --threads "$(nproc)" --json --quiet $hist \
      | tail -n 1 >> "$OUTDIR/bench.jsonl"
  done
  if [ -x $B/bench/baseline/ildl-baseline ] && [ "${BASELINE:-1}" = 1 ]; then
    timeout 300 $B/bench/baseline/ildl-baseline "$m" --json --repeat "${BASELINE_REPEAT:-3}" \
      >> "$OUTDIR/baseline.jsonl" 2>> "$OUTDIR/baseline.err"
  fi
done
python3 bench/render_benchmarks.py "$OUTDIR" --summary | tail -n 40
