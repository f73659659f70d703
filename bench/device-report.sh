#!/usr/bin/env bash
# Run ON THE DEVICE (after bench/prepare-device.sh here; carry what bench/device-unpack.sh says): the
# whole benchmark of docs/benchmarks.md in parts that each fit one device call.
#   usage: bash bench/device-report.sh small|large-small|large-1m|large-3m
#   small        the shared-matrix suite (bench/suite-small.txt), CPU and GPU medians of 5, baselines
#                (medians of 5 as well)
#   small-rest   the same for the matrices named in .devdata/small-rest.txt (a resumed run)
#   large-small  bab5 and the ~100k generated problems: medians of 5 (GPU and CPU), baselines
#   large-1m     the ~1M problems: medians of 5 (the CPU runs alone take ~8 minutes)
#   large-3m     the 3.6M problem: medians of 5
#   large-big    large-1m and large-3m in one go
# The report of 2026-11-22 (docs/benchmarks.md) used 3 CPU runs at n >= 1M and 3 / 1 baseline runs
# (small / generated) to fit the session's device time; its `runs` column says so per row.
# Environment: REPEAT_CPU (CPU runs at n >= 1M, default 5), BASELINE=0 (skip the cuSPARSE
# baselines), MAXIT_LARGE (default 1000; stokes64-1m needs 307).
# Results go to $OUT; render here: python3 bench/render_benchmarks.py DIR... --plots docs/bench-plots
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh # the carried build, if packed (bench/prepare-device.sh)
PART=${1:?part}
MAXIT_LARGE=${MAXIT_LARGE:-1000}
sub() { grep -E "$1" bench/suite-large.txt > /tmp/ildl-suite-part.txt; }
case "$PART" in
  small) BASELINE=${BASELINE:-1} BASELINE_REPEAT=5 bash bench/device-bench.sh small 5 ;;
  small-rest) BASELINE_REPEAT=5 bash bench/device-bench.sh .devdata/small-rest.txt 5 ;;
  large-small) sub '^(bab5|[a-z]+[0-9]+-100k) '; BASELINE=${BASELINE:-1} bash bench/device-large.sh /tmp/ildl-suite-part.txt 5 5 "$MAXIT_LARGE" ;;
  large-1m) sub '^[a-z]+[0-9]+-1m '; BASELINE=${BASELINE:-1} bash bench/device-large.sh /tmp/ildl-suite-part.txt 5 "${REPEAT_CPU:-5}" "$MAXIT_LARGE" ;;
  large-3m) sub '^[a-z]+[0-9]+-3m '; BASELINE=${BASELINE:-1} bash bench/device-large.sh /tmp/ildl-suite-part.txt 5 "${REPEAT_CPU:-5}" "$MAXIT_LARGE" ;;
  large-big) sub '^[a-z]+[0-9]+-[13]m '; BASELINE=${BASELINE:-1} bash bench/device-large.sh /tmp/ildl-suite-part.txt 5 "${REPEAT_CPU:-5}" "$MAXIT_LARGE" ;;
  *) echo "unknown part $PART" >&2; exit 2 ;;
esac
