#!/usr/bin/env bash
# Run ON THE DEVICE (carry what bench/device-unpack.sh lists for it): the factorization's two
# schedules side by side on complete factors (every tile dense, tau = 0: where the sync-free
# schedule runs, docs/gpu.md), the same run on the same card. Per matrix, ROUNDS rounds of
# levels then syncfree, each the median factor time of 5 factorizations (ildl --repeat 5);
# prints the times (ms), which schedule ran, and syncfree / levels over the rounds' sums.
#   usage: bash bench/device-factor-schedule.sh [ROUNDS] [MATRIX...]   (names in .devdata/matrices)
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh
export LD_LIBRARY_PATH="$PWD/.carry/lib:${LD_LIBRARY_PATH:-}"
ROUNDS=${1:-2}
shift || true
LIST=${*:-tuma1 tuma2 stokes64 aug3dcqp ncvxqp1 sqd_aug3dcqp_2x2_it5 sqd_mosarqp1_3x3_it5 sqd_liswet1_2x2_it10 bratu3d}
OUTDIR=${OUT:-/tmp/ildl-out}
mkdir -p "$OUTDIR"
: > "$OUTDIR/factor-schedule.jsonl"
for m in $LIST; do
  for r in $(seq "$ROUNDS"); do
    for fs in levels syncfree; do
      timeout 120 build-cuda/tools/ildl solve ".devdata/matrices/$m.mtx.gz" --backend cuda --blocking sn \
        --ordering metis --fill-level 1000000 --fill-factor 0 --threshold 0 --escalation none \
        --factor-schedule $fs --repeat 5 --json --quiet | tail -n 1 >> "$OUTDIR/factor-schedule.jsonl"
    done
  done
done
python3 - "$OUTDIR/factor-schedule.jsonl" <<'PY'
import json, os, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
by = {}
for r in rows:
    m = os.path.basename(r['matrix']).replace('.mtx.gz', '')
    by.setdefault(m, []).append(r)
ratios = []
print(f"{'matrix':28s} {'levels (ms)':>22s} {'syncfree (ms)':>22s} {'ran':>4s} {'ratio':>6s}")
for m, rs in by.items():
    # the runs alternate: levels, then syncfree asked for (the levels ran off the dense path)
    lv = [r['factor_s'] * 1e3 for r in rs[0::2]]
    sf = [r['factor_s'] * 1e3 for r in rs[1::2]]
    ran = 'sf' if all(r['factor_schedule'] == 'syncfree' for r in rs[1::2]) else 'lev'
    ratio = sum(sf) / sum(lv) if lv and sf else float('nan')
    ratios.append(ratio)
    print(f"{m[:28]:28s} {' '.join('%.3f' % x for x in lv):>22s} {' '.join('%.3f' % x for x in sf):>22s} {ran:>4s} {ratio:6.3f}")
if ratios:
    print(f"syncfree / levels: median {statistics.median(ratios):.3f}, {min(ratios):.3f} to {max(ratios):.3f}")
PY
