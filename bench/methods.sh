#!/usr/bin/env bash
# SQMR with block-Jacobi against the block-iLDL^T, both through `ildl solve --escalation none`
# (rung 0: each method alone), on the shared suite with n >= 10k (bench/suite-cudss.txt), medians
# of REPEAT runs (--repeat); prints a markdown table (docs/methods.md) and keeps the JSON lines.
#   bash bench/methods.sh [cuda|cpu] [REPEAT]
# cuda: ON THE DEVICE, after bench/prepare-device.sh here (build-cuda, .devdata/matrices);
# cpu: here, with BUILD (default build-cm-cpu) and ILDL_MATRICES_DIR (default ../shared/matrices).
set -uo pipefail
cd "$(dirname "$0")/.."
BACKEND=${1:-cuda}
REPEAT=${2:-3}
. bench/suite-env.sh
J="$OUTDIR/methods-$BACKEND.jsonl"
: > "$J"
for f in $(grep -v '^#' bench/suite-cudss.txt); do
  for method in ildl block-jacobi; do
    timeout 300 "$BUILD/tools/ildl" solve "$M/$f" --backend "$BACKEND" --escalation none --method $method \
      --repeat "$REPEAT" --json --quiet | tail -n 1 >> "$J"
  done
done
python3 - "$J" <<'PY'
import json, sys, os, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
by = {}
for r in rows:
    by.setdefault(os.path.basename(r['matrix']).replace('.mtx.gz', ''), {})[r['method']] = r
print("| matrix | n | iLDLT its | factor s | solve s | BJ its | BJ factor s | BJ solve s | BJ / iLDLT (factor + solve) |")
print("|---|---|---|---|---|---|---|---|---|")
ratios = []; conv = {'ildl': 0, 'block-jacobi': 0}
for m, d in by.items():
    i, b = d.get('ildl'), d.get('block-jacobi')
    if not i or not b: continue
    for k, r in (('ildl', i), ('block-jacobi', b)): conv[k] += bool(r['converged'])
    ti, tb = i['factor_s'] + i['solve_s'], b['factor_s'] + b['solve_s']
    it = lambda r: f"{r['iterations']}" + ("" if r['converged'] else " (nc)")
    ratio = ""
    if i['converged'] and b['converged']:
        ratios.append(tb / ti); ratio = f"{tb / ti:.2f}"
    print(f"| {m} | {i['n']} | {it(i)} | {i['factor_s']:.4f} | {i['solve_s']:.4f} | {it(b)} | {b['factor_s']:.4f} | {b['solve_s']:.4f} | {ratio} |")
print(f"\nconverged: iLDLT {conv['ildl']}, block-Jacobi {conv['block-jacobi']} of {len(by)}; "
      f"both {len(ratios)}, block-Jacobi faster on {sum(r < 1 for r in ratios)}, median time ratio "
      f"{statistics.median(ratios) if ratios else float('nan'):.2f}")
PY
