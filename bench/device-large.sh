#!/usr/bin/env bash
# Run ON THE DEVICE (after bench/prepare-device.sh here; carry what bench/device-unpack.sh says):
# generated problems (bench/gen, docs/generators.md) through `ildl solve`, CPU backend (all
# host cores) and CUDA backend, plus the D2D bandwidth for the bandwidth-floor column.
# Appends one JSON object per solve to $OUT/large.jsonl (with "suite":"large" and the spec).
#   usage: bash bench/device-large.sh SPECS REPEAT_GPU REPEAT_CPU MAXIT [extra ildl options]
#   SPECS: a file of lines "NAME GENERATOR ARGS... [-- SOLVER OPTIONS]" (ildl-gen's arguments
#          without OUT; kkt-lp names a file of .devdata/mps/), e.g.
#          control70 control 70
#          bab5 kkt-lp bab5.mps.gz --slacks -- --threshold 1e-8
#   bench/suite-large.txt is the benchmark's list. BASELINE=1 also runs ildl-baseline (medians of
#   BASELINE_REPEAT runs, default 5; BASELINE_TIMEOUT seconds at most) into $OUT/baseline.jsonl.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh # the carried build, if packed (bench/prepare-device.sh)
SPECS=$1; RG=${2:-5}; RC=${3:-1}; MAXIT=${4:-1000}; shift 4 || true
EXTRA_OPTS=("$@")
OUTDIR=${OUT:-/tmp/ildl-out}
GEN=/tmp/ildl-gen-data
mkdir -p "$OUTDIR" "$GEN"
export LD_LIBRARY_PATH="$PWD/.carry/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64"
B=build-cuda
[ -s "$OUTDIR/bandwidth.json" ] || $B/bench/baseline/ildl-bandwidth > "$OUTDIR/bandwidth.json"
[ -s "$OUTDIR/handoff.json" ] || $B/bench/baseline/ildl-handoff > "$OUTDIR/handoff.json"
while read -r name gen args; do
  case "$name" in ''|'#'*) continue ;; esac
  f="$GEN/$name.mtx"
  solver_opts=""
  case "$args" in *" -- "*) solver_opts=${args#* -- }; args=${args%% -- *} ;; esac
  set -- $args # ildl-gen GENERATOR N-or-MPS OUT [options]
  src=$1; [ "$gen" = kkt-lp ] && src=".devdata/mps/$1"
  [ -f "$f" ] || $B/bench/gen/ildl-gen "$gen" "$src" "$f" "${@:2}" > /dev/null
  for be in cuda cpu; do
    rep=$RG; [ $be = cpu ] && rep=$RC
    [ "$rep" = 0 ] && continue
    timeout 500 $B/tools/ildl solve "$f" --backend $be --repeat "$rep" --threads "$(nproc)" \
      --maxit "$MAXIT" --json --quiet $solver_opts "${EXTRA_OPTS[@]}" | tail -n 1 \
      | sed "s|^{|{\"suite\":\"large\",\"name\":\"$name\",\"spec\":\"$gen $args\",\"solver_opts\":\"$solver_opts\",|" >> "$OUTDIR/large.jsonl"
    echo "$name $be: $(tail -n 1 "$OUTDIR/large.jsonl" | cut -c1-400)"
  done
  if [ "${BASELINE:-0}" = 1 ] && [ -x $B/bench/baseline/ildl-baseline ]; then
    timeout "${BASELINE_TIMEOUT:-300}" $B/bench/baseline/ildl-baseline "$f" --json --repeat "${BASELINE_REPEAT:-5}" --maxit "$MAXIT" \
      | sed "s|^{|{\"name\":\"$name\",|" >> "$OUTDIR/baseline.jsonl" 2>> "$OUTDIR/baseline.err"
  fi
done < "$SPECS"
