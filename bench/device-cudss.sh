#!/usr/bin/env bash
# Run ON THE DEVICE (after bench/get-cudss.sh and bench/prepare-device.sh here; carry
# what bench/device-unpack.sh says): libblockildl against NVIDIA cuDSS with ildl-cudss
# (docs/baseline.md, "cuDSS"), into $OUT:
#   compare  the shared matrices with n >= 10k (bench/suite-cudss.txt) and bab5 (kkt-lp): ours
#            default (refactor_scaling KEEP since s44) and --refactor-scaling recompute, cuDSS plain and with 2 refinement steps,
#            --repeat REPEAT (5) -> cmp.jsonl
#   large    control 70 and stokes 64 --pin (n ~ 1.03M): ours default and RECOMPUTE, cuDSS single-
#            threaded and with its 16-thread host layer, --repeat 3 -> large.jsonl
#   ipm      the interior-point loop, 20 steps at 6 and 12 decades on seven systems: ours in each
#            refactor_scaling, cuDSS plain and with 2 refinement steps -> ipm.jsonl
# then here: python3 bench/render_cudss.py DIR [--ipm IPMDIR] > docs/benchmarks-cudss.md
#   usage: bash bench/device-cudss.sh compare|large|ipm [REPEAT]
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh # the carried build, if packed (bench/prepare-device.sh)
WHAT=${1:-compare}
SUITE=${SUITE:-bench/suite-cudss.txt} # compare: the matrices (names under .devdata/matrices)
REPEAT=${2:-5}
O=${OUT:-/tmp/ildl-out}
mkdir -p "$O"
export LD_LIBRARY_PATH="$PWD/.carry/lib:$PWD/cudss/lib:${LD_LIBRARY_PATH:-}"
C=build-cuda/bench/baseline/ildl-cudss
G=build-cuda/bench/gen/ildl-gen
M=.devdata/matrices
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
# ours under another name in the JSON (the option it ran with)
ours() { local lib=$1; shift; timeout 120 $C "$@" --only ildl --json | sed "s/\"lib\": \"ildl\"/\"lib\": \"$lib\"/"; }
[ -f $M/bab5.mtx ] || $G kkt-lp .devdata/mps/bab5.mps.gz $M/bab5.mtx --slacks > /dev/null
case "$WHAT" in
compare)
  for f in $(grep -v "^#" "$SUITE") bab5.mtx; do
    b=""; [ $f = bab5.mtx ] && b="--blocking rb"
    timeout 120 $C $M/$f --repeat "$REPEAT" $b --json >> "$O/cmp.jsonl" 2>> "$O/err.txt"
    ours ildl-recompute $M/$f --repeat "$REPEAT" $b --refactor-scaling recompute >> "$O/cmp.jsonl" 2>> "$O/err.txt"
    timeout 120 $C $M/$f --repeat "$REPEAT" --only cudss --cudss-ir 2 --json >> "$O/cmp.jsonl" 2>> "$O/err.txt"
    echo "$f $(el) s"
  done ;;
large)
  $G control 70 /tmp/c70.mtx > /dev/null
  $G stokes 64 /tmp/s64.mtx --pin > /dev/null
  for f in /tmp/c70.mtx /tmp/s64.mtx; do
    timeout 200 $C $f --repeat 3 --json >> "$O/large.jsonl" 2>> "$O/err.txt"
    ours ildl-recompute $f --repeat 3 --refactor-scaling recompute >> "$O/large.jsonl" 2>> "$O/err.txt"
    timeout 120 $C $f --repeat 3 --only cudss --cudss-mt "$PWD/cudss/lib/libcudss_mtlayer_gomp.so.1" --cudss-threads 16 \
      --json >> "$O/large.jsonl" 2>> "$O/err.txt"
    echo "$f $(el) s"
  done ;;
ipm)
  for s in 6 12; do
    for m in sqd_aug2d_2x2_it5.mtx.gz sqd_liswet1_2x2_it10.mtx.gz sqd_stcqp1_2x2_it10.mtx.gz tuma1.mtx.gz bab5.mtx \
             ncvxqp1.mtx.gz cvxqp3.mtx.gz; do
      for mode in recompute keep equilibrate; do
        timeout 120 $C $M/$m --only ildl --repeat 1 --ipm 20 --spread $s --refactor-scaling $mode --json \
          | sed "s/^{/{\"spread\": $s, \"mode\": \"$mode\", /" >> "$O/ipm.jsonl" 2>> "$O/err.txt"
      done
      for ir in 0 2; do
        timeout 120 $C $M/$m --only cudss --repeat 1 --ipm 20 --spread $s --cudss-ir $ir --json \
          | sed "s/^{/{\"spread\": $s, /" >> "$O/ipm.jsonl" 2>> "$O/err.txt"
      done
      echo "$s $m $(el) s"
    done
  done ;;
*) echo "usage: bash bench/device-cudss.sh compare|large|ipm [REPEAT]" >&2; exit 2 ;;
esac
echo "wall $(el) s"
