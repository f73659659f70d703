#!/usr/bin/env bash
# Run ON THE DEVICE: an A/B of solve speed between builds (or settings) in one machine start, the
# way perf-notes §51-§58 were measured. For each generated problem: the sweeps' times
# (ILDL_CUDA_PROFILE: forward / D / backward ms) once per variant, then ms per SQMR iteration
# (`--repeat 3` medians) for every variant, in ROUNDS interleaved rounds (host and clock drift
# then shows as spread within a variant, not as a difference between variants).
#   usage: bash bench/device-ab.sh LABEL=BINARY[,VAR=VALUE...] ...
#   e.g.   bash bench/device-ab.sh head=build-cuda/tools/ildl \
#                 omp8=build-cuda/tools/ildl,OMP_NUM_THREADS=8 new=/tmp/new/build-cuda/tools/ildl
#   An item that starts with -- is an ildl option of that variant (--name=value for one with a
#   value), e.g. rb0=build-cuda/tools/ildl,--blocking=rb,--ordering=gmc,--fill-level=0. Each
#   iteration line also gives the levels, the stored factor entries and the time per iteration
#   over the bandwidth floor (render_benchmarks.py's floor_s, ildl-bandwidth's copy rate).
# Environment: PROBLEMS (ildl-gen specs separated by ';', default the three n >= 1M problems
# that converge), ROUNDS (default 2), GEN (ildl-gen binary, default build-cuda's).
# Build the variants here (e.g. cmake -B build-x -DCMAKE_CUDA_FLAGS=-DLANE_PRE_FORWARD=10) and
# carry their tools/ildl as a tarball: the device tool sends only the working tree.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh # the carried build, if packed (bench/prepare-device.sh)
[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
export LD_LIBRARY_PATH="$PWD/.carry/lib:${LD_LIBRARY_PATH:-}"
PROBLEMS=${PROBLEMS:-"control 70;stokes 64 --pin;control 106"}
ROUNDS=${ROUNDS:-2}
GEN=${GEN:-build-cuda/bench/gen/ildl-gen}
DIR=/tmp/ildl-ab
mkdir -p "$DIR"

# one_run LABEL BINARY[,VAR=VALUE|--OPTION[=VALUE]...] MATRIX [ildl options]: prints the ildl
# summary line (JSON)
one_run() {
  local spec=$2 m=$3; shift 3
  local bin=${spec%%,*} items=() vars=() opts=()
  [ "$bin" != "$spec" ] && IFS=',' read -r -a items <<< "${spec#*,}"
  for it in "${items[@]}"; do
    case "$it" in
      --*=*) opts+=("${it%%=*}" "${it#*=}") ;;
      --*) opts+=("$it") ;;
      *) vars+=("$it") ;;
    esac
  done
  env "${vars[@]}" "$bin" solve "$m" --backend cuda "${opts[@]}" "$@" 2>&1
}
BW=$(build-cuda/bench/baseline/ildl-bandwidth 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["d2d_GBps"])' 2>/dev/null || echo 0)
echo "== device-to-device copy bandwidth: $BW GB/s"

IFS=';' read -r -a specs <<< "$PROBLEMS"
mats=()
for s in "${specs[@]}"; do
  name=$(echo "$s" | tr -cd 'a-z0-9')
  f="$DIR/$name.mtx"
  read -r -a w <<< "$s" # ildl-gen GENERATOR N OUT [options]
  [ -f "$f" ] || "$GEN" "${w[0]}" "${w[1]}" "$f" "${w[@]:2}" > /dev/null || { echo "ildl-gen $s failed" >&2; exit 1; }
  mats+=("$f")
done
echo "== sweeps (ILDL_CUDA_PROFILE: blocks, forward / D / backward)"
for m in "${mats[@]}"; do
  for v in "$@"; do
    line=$(ILDL_CUDA_PROFILE=1 one_run "${v%%=*}" "${v#*=}" "$m" --maxit 3 | grep 'ILDL_CUDA_PROFILE solve' | tail -n 1)
    printf '%-12s %-14s %s\n' "${v%%=*}" "$(basename "$m" .mtx)" "${line#*blocks }"
  done
done
echo "== ms per SQMR iteration (--repeat 3 medians), $ROUNDS rounds"
for r in $(seq "$ROUNDS"); do
  for m in "${mats[@]}"; do
    for v in "$@"; do
      # ildl exits non-zero on a solve that did not converge (helmholtz): with pipefail that must
      # not count as a missing result; the JSON line still says converged or not
      { one_run "${v%%=*}" "${v#*=}" "$m" --repeat 3 --json --quiet || true; } | tail -n 1 | python3 -c "
import json, sys
sys.path.insert(0, 'bench')
from render_benchmarks import floor_s
try:
    d = json.loads(sys.stdin.read())
    its = int(d['iterations'])
    per_it = (d.get('iterate_s') or d['solve_s']) / max(its, 1)
    line = '%-12s %-14s round %s: %4d its, %.4f ms per iteration (solve / its %.4f), factor %.3f s, true residual %.3e' % (
        '${v%%=*}', '$(basename "$m" .mtx)', '$r', its, 1e3 * per_it, 1e3 * d['solve_s'] / max(its, 1), d['factor_s'],
        d['true_residual'])
    bw = float('$BW')
    floor = floor_s(d, {'d2d_GBps': bw}) if bw > 0 else 0
    line += ', levels %d, factor entries %d' % (d['levels'], d['factor_nnz'])
    if floor > 0:
        line += ', %.2fx the floor' % (per_it / floor)
except (ValueError, KeyError, TypeError):
    sys.exit(1)
print(line)" || echo "${v%%=*} $(basename "$m" .mtx): no result"
    done
  done
done
