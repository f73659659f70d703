#!/usr/bin/env bash
# Run ON THE DEVICE (carry .devdata/bin.tar.xz, .devdata/matrices, .carry): the factorization's
# kernels launch by launch, from Nsight Compute's durations (clocks left alone), one line per chunk:
# P products, L pulls (beside D), D diagonal, S/s off-diagonal solve (a block / a warp per tile;
# S also stores in a narrow chunk on the dense path, which then has no C), X drop, B scan,
# C store; each KIND<grid>/<microseconds>. perf-notes §87 and §89 used it.
#   usage: bash bench/device-factor-timeline.sh MATRIX [ildl solve options]
#   (default options: the complete factor, SN + METIS, complete fill, tau = 0, no ladder)
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh # the carried build, if packed (bench/prepare-device.sh)
export LD_LIBRARY_PATH="$PWD/.carry/lib:${LD_LIBRARY_PATH:-}"
BIN=${BIN:-build-cuda/tools/ildl}
M=${1:?usage: device-factor-timeline.sh MATRIX [options]}
shift
OPT=("$@")
[ ${#OPT[@]} -gt 0 ] || OPT=(--blocking sn --ordering metis --fill-level 1000000 --fill-factor 0 --threshold 0 --escalation none)
CSV=$(mktemp)
ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size --csv \
    "$BIN" solve "$M" --backend cuda "${OPT[@]}" > "$CSV" 2>/dev/null
python3 - "$CSV" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    sys.exit("no kernels profiled (is ncu working here?)")
h = rows[0]
ki, vi, mi, ii = h.index("Kernel Name"), h.index("Metric Value"), h.index("Metric Name"), h.index("ID")
kinds = {"k_pull_products": "P", "k_phase_a_pull": "L", "k_phase_a_diag": "D", "k_phase_a_solve_block": "S",
         "k_phase_a_solve": "s", "k_phase_a_drop": "X", "k_phase_b": "B", "k_phase_c": "C"}
launches, order = {}, []
for r in rows[1:]:
    name = r[ki].split("<")[0].split("(")[0].replace("void ", "")
    if r[ii] not in launches:
        launches[r[ii]] = {"k": name}
        order.append(r[ii])
    launches[r[ii]][r[mi]] = r[vi].replace(",", "")
line = []
for key in order:
    e = launches[key]
    kind = kinds.get(e["k"])
    if not kind:
        continue
    # a chunk starts with P, L or D (products, pulls, diagonal): once the current line holds a D,
    # the next of these begins the next chunk (a narrow dense chunk has no C: its solve kernel
    # stores, perf-notes §89)
    if kind in "PLD" and any(x[0] == "D" for x in line):
        print(" ".join(line))
        line = []
    line.append("%s%s/%.0f" % (kind, e["launch__grid_size"], float(e["gpu__time_duration.sum"]) / 1000))
if line:
    print(" ".join(line))
PY
rm -f "$CSV"
