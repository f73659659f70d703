#!/usr/bin/env bash
# Run ON THE DEVICE: Nsight Compute on the two sync-free sweeps of one preconditioner
# application per generated problem (the first forward and backward kernel launched), with
# every section (`--set full`), clocks left alone. Writes per problem NAME.ncu-rep, NAME-raw.csv
# (every metric) and NAME-details.txt to $OUT (or /tmp/ildl-ncu).
#   usage: bash bench/device-ncu.sh [BINARY]   (default build-cuda/tools/ildl)
# Environment: PROBLEMS (ildl-gen specs separated by ';', default stokes64 and control70),
# KERNELS (ncu's kernel filter, default regex:syncfree_ns), GEN (ildl-gen binary). perf-notes §70
# used it (and ncu's --page source --print-source sass for the per-instruction stall samples).
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh # the carried build, if packed (bench/prepare-device.sh)
export LD_LIBRARY_PATH="$PWD/.carry/lib:${LD_LIBRARY_PATH:-}"
BIN=${1:-build-cuda/tools/ildl}
OUTDIR=${OUT:-/tmp/ildl-ncu}
PROBLEMS=${PROBLEMS:-"stokes 64 --pin;control 70"}
KERNELS=${KERNELS:-regex:syncfree_ns}
GEN=${GEN:-build-cuda/bench/gen/ildl-gen}
mkdir -p "$OUTDIR" /tmp/ildl-ab
IFS=';' read -r -a specs <<< "$PROBLEMS"
for s in "${specs[@]}"; do
  name=$(echo "$s" | tr -cd 'a-z0-9')
  f=/tmp/ildl-ab/$name.mtx
  read -r -a w <<< "$s"
  [ -f "$f" ] || "$GEN" "${w[0]}" "${w[1]}" "$f" "${w[@]:2}" > /dev/null || { echo "ildl-gen $s failed" >&2; exit 1; }
  ncu --clock-control none --set full -k "$KERNELS" -c 2 -f -o "$OUTDIR/$name" \
      "$BIN" solve "$f" --backend cuda --maxit 2 > "$OUTDIR/$name-run.log" 2>&1
  echo "ncu $name exit $? (ildl's: 1 when its two SQMR iterations do not converge)"
  ncu --import "$OUTDIR/$name.ncu-rep" --page raw --csv > "$OUTDIR/$name-raw.csv" 2>&1
  ncu --import "$OUTDIR/$name.ncu-rep" --page details > "$OUTDIR/$name-details.txt" 2>&1
  grep -E 'syncfree|Duration|Issue Slots Busy|Eligible Warps|DRAM Throughput|L1/TEX Hit|Mem Pipes Busy|Executed Ipc A' \
    "$OUTDIR/$name-details.txt" | cut -c1-140
done
