#!/usr/bin/env bash
# The fixed-point (Jacobi-sweep) factorization against the level-scheduled block-iLDL^T, both
# through `ildl solve --escalation none` (rung 0), on the shared suite with n >= 10k
# (bench/suite-cudss.txt): per matrix the level-scheduled run, then the fixed-point method with
# SWEEPS sweeps (default "1 2 4 8 16") and perturbation schedules EPS (default "0 0.1": only the
# usual pivot_tol, and the paper's eps = 0.1, delta = 0.95); medians of REPEAT runs (--repeat).
# Prints markdown tables (docs/methods.md) and keeps the JSON lines.
#   bash bench/fixed-point.sh [cuda|cpu] [REPEAT]
# cuda: ON THE DEVICE, after bench/prepare-device.sh here (build-cuda, .devdata/matrices);
# cpu: here, with BUILD (default build-cm-cpu) and ILDL_MATRICES_DIR (default ../shared/matrices).
set -uo pipefail
cd "$(dirname "$0")/.."
BACKEND=${1:-cuda}
REPEAT=${2:-3}
SWEEPS=${SWEEPS:-1 2 4 8 16}
EPS=${EPS:-0 0.1}
. bench/suite-env.sh
J="$OUTDIR/fixed-point-$BACKEND.jsonl"
: > "$J"
run() { timeout 300 "$BUILD/tools/ildl" solve "$1" --backend "$BACKEND" --escalation none --repeat "$REPEAT" \
          --json --quiet "${@:2}" | tail -n 1 >> "$J"; }
for f in $(grep -v '^#' bench/suite-cudss.txt); do
  run "$M/$f" --method ildl
  for e in $EPS; do
    for k in $SWEEPS; do run "$M/$f" --method fixed-point --fp-sweeps "$k" --fp-eps "$e"; done
  done
done
python3 bench/fixed_point_table.py "$J"
