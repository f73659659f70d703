#!/usr/bin/env bash
# Run ON THE DEVICE (after bench/prepare-device.sh here; carry what bench/device-unpack.sh says):
# the GPU tests (CPU/GPU agreement), optionally compute-sanitizer on them, and CPU-vs-GPU
# ildl runs; prints a short table last. Logs go to $OUT (or /tmp/ildl-out) step by step.
#   usage: bash bench/device-check.sh [quick|full] [sanitize|racecheck|sanitize-all]
#   (sanitize: memcheck; racecheck: racecheck only; sanitize-all: both, which no longer fits one
#    600 s device call. The tests run on a 150-row generated matrix with 32-row blocks:
#    ILDL_TEST_SMALL=1 runs only the factor/solve agreement test. The kernel and setup alternatives
#    that the defaults do not take on these matrices are selected through the test programs:
#    ILDL_TEST_TUNING="field=value,..." sets the fields of src/cuda/tuning.h before any handle is
#    made, e.g. sf_nostage=1,sf_split=2; the program prints "tuning: ..." when it applied it)
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device-unpack.sh # the carried build, if packed (bench/prepare-device.sh)
MODE=${1:-quick}
SAN=${2:-}
OUTDIR=${OUT:-/tmp/ildl-out}
mkdir -p "$OUTDIR"
export LD_LIBRARY_PATH="$PWD/.carry/lib:${LD_LIBRARY_PATH:-}"
export ILDL_MATRICES_DIR="$PWD/.devdata/matrices"
B=build-cuda
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
if [ "$MODE" != full ]; then
  # quick: the agreement test on a handful of shared matrices only
  mkdir -p /tmp/ildl-small
  for m in tuma2 stokes64 aug3dcqp sqd_aug2d_2x2_it5 cutest_kkt_VESUVIA_0000 sqd_qpcboei1_3x3_it10 maxwell_homogeneous4; do
    ln -sf "$PWD/.devdata/matrices/$m.mtx.gz" /tmp/ildl-small/; done
  export ILDL_MATRICES_DIR=/tmp/ildl-small
fi
echo "== GPU tests"
timeout 480 $B/tests/cuda_test_cuda_factor > "$OUTDIR/gpu-tests.log" 2>&1; echo "cuda tests exit $?"
grep -E "generated|SQMR|refactor round|device apply|MISMATCH|PASSED|FAILED" "$OUTDIR/gpu-tests.log" | head -n 24
# shared matrices: how many factor/solve comparisons were bitwise equal, per configuration
awk 'NF >= 6 && $1 ~ /mtx/ {n[$2]++; if ($3 == "0.00e+00" && $4 == 0 && $5 == 1 && $6 == "0.00e+00") ok[$2]++}
     END {for (c in n) printf "bitwise %-8s %d of %d\n", c, ok[c] + 0, n[c]}' "$OUTDIR/gpu-tests.log" | sort
# tiles the factorizations left empty, which the solves skip (k_skip_empty): the comparisons above cover them
awk 'NF >= 7 && $1 ~ /mtx/ {n++; if ($7 > 0) m++; s += $7}
     END {printf "empty tiles skipped by the solves: %d, in %d of %d comparisons\n", s, m + 0, n}' "$OUTDIR/gpu-tests.log"
# every sync-free solve row split into one-tile work items (by default rows of more than 128
# tiles are, and forward down to 64 while at most one row per SM is longer): the agreement test
# on the quick set again
mkdir -p /tmp/ildl-split
for m in tuma2 stokes64 aug3dcqp sqd_aug2d_2x2_it5 cutest_kkt_VESUVIA_0000 bloweya maxwell_homogeneous4; do
  ln -sf "$PWD/.devdata/matrices/$m.mtx.gz" /tmp/ildl-split/; done
# tuned_ok LOG: warn when a run given ILDL_TEST_TUNING did not report it applied (a test build
# that predates the variable would have run the defaults only)
tuned_ok() {
  grep -q "^tuning: " "$1" || echo "WARNING: $1: ILDL_TEST_TUNING was not applied (the defaults ran)"
}
# agreement NAME LABEL [VAR=VALUE...]: the agreement test on the quick set with the variables
# set; prints its exit status and how many factor/solve comparisons were bitwise equal
agreement() {
  local name=$1 label=$2; shift 2
  env "$@" ILDL_MATRICES_DIR=/tmp/ildl-split timeout 480 $B/tests/cuda_test_cuda_factor > "$OUTDIR/gpu-tests-$name.log" 2>&1
  echo "cuda tests, $label, exit $?"
  tuned_ok "$OUTDIR/gpu-tests-$name.log"
  awk -v name="$name" 'NF >= 6 && $1 ~ /mtx/ {n++; if ($3 == "0.00e+00" && $4 == 0 && $5 == 1 && $6 == "0.00e+00") ok++}
       END {printf "%s: bitwise %d of %d\n", name, ok + 0, n}' "$OUTDIR/gpu-tests-$name.log"
}
agreement split "every solve row split (sf_split=1)" ILDL_TEST_TUNING=sf_split=1
# the quick set ordered by GMC_FILL (ILDL_TEST_ORDERING=6): wide levels, many rows in flight;
# the forward sweep reading V_ii from global memory (sf_vglobal=1: the wide-level kernel,
# which by default only levels of 256+ block rows get)
agreement gmc-fill "GMC_FILL ordering, V_ii from global" ILDL_TEST_TUNING=sf_vglobal=1 ILDL_TEST_ORDERING=6
# the sync-free kernels without staging tiles (sf_nostage=1: the kernels that by default only
# levels of 256+ block rows get), with the split-row path too
agreement nostage "no staging tiles" ILDL_TEST_TUNING=sf_nostage=1
grep -E "^SQMR|^refactor round 1" "$OUTDIR/gpu-tests-nostage.log"
agreement nostage-split "no staging tiles, V_ii from global, GMC_FILL, every row split" \
  ILDL_TEST_TUNING=sf_nostage=1,sf_vglobal=1,sf_split=1 ILDL_TEST_ORDERING=6
# A's values left pageable (pin_host=0: SQMR copies them at the first solve after each
# factorization instead of during it): the agreement test, its refactorization test included
agreement pageable "pageable copies of A's values" ILDL_TEST_TUNING=pin_host=0
grep -E "^refactor round" "$OUTDIR/gpu-tests-pageable.log"
# the sweeps' tickets in level order (sf_chain_order=0; the default is the chain order of
# src/analyse/tickets.c): any topological order must give the same bits
agreement level-order "tickets in level order" ILDL_TEST_TUNING=sf_chain_order=0
# the factorization's per-tile work of narrow chunks (plan.cu, chunk_narrow): in every chunk,
# every tile with an update computed apart (factor_split=1), and in none: no split pulls, a warp
# per off-diagonal solve (factor_split=0; the default rule: narrow chunks only)
agreement factor-split-all "every tile's updates computed apart" ILDL_TEST_TUNING=factor_split=1
agreement factor-split-none "no tile's updates computed apart, a warp per solve" ILDL_TEST_TUNING=factor_split=0
# the sync-free factorization (factor_syncfree.cu; the test refactors every complete factor with it,
# by default its last levels of at most 4 block rows): every level in its launch, and with a ring
# of 16 products, every tile's updates computed apart (its slots reused)
agreement factor-sf-all "sync-free factorization of every level" ILDL_TEST_TUNING=factor_sf_rows=-1
agreement factor-sf-ring "sync-free factorization, every level, a ring of 16 products" \
  ILDL_TEST_TUNING=factor_sf_rows=-1,factor_sf_ring=16,factor_split=1
grep -E "^complete factors" "$OUTDIR/gpu-tests.log" "$OUTDIR/gpu-tests-factor-sf-all.log" "$OUTDIR/gpu-tests-factor-sf-ring.log"
timeout 120 $B/tests/cuda_test_cuda_rhs > "$OUTDIR/rhs.log" 2>&1; echo "extreme right-hand sides, ladder, push-back test exit $?"
grep -E "^laplace|^diagonal|^GPU 2-norms|^device apply|^ladder|^push-back|^ildl_apply_multi" "$OUTDIR/rhs.log"
timeout 120 $B/tests/api_test_api > "$OUTDIR/api.log" 2>&1; echo "api tests exit $?"
# the rung by cost decides with the backend's model: its tests on the GPU's
timeout 120 $B/tests/api_test_refactor > "$OUTDIR/refactor.log" 2>&1; echo "refactorization and rung-by-cost tests exit $?"
grep -E "^rung choice|^SQD chain|^complete rung" "$OUTDIR/refactor.log"
timeout 120 $B/tests/cuda_test_cuda_oom > "$OUTDIR/oom.log" 2>&1; echo "device memory exhaustion test exit $?"
timeout 120 $B/tests/cuda_test_cuda_threads > "$OUTDIR/threads.log" 2>&1; echo "concurrent handles test exit $?"
grep -E "^job " "$OUTDIR/threads.log"
timeout 120 $B/tests/cuda_test_cuda_devices > "$OUTDIR/devices.log" 2>&1; echo "device_id test exit $?"
grep -E "^device|^SKIP" "$OUTDIR/devices.log"
timeout 120 $B/tests/cuda_test_cuda_gje > "$OUTDIR/gje.log" 2>&1; echo "block-Jacobi (Gauss-Jordan) test exit $?"
grep -E "^GPU block-Jacobi|^SKIP" "$OUTDIR/gje.log"
timeout 120 $B/tests/cuda_test_cuda_dense > "$OUTDIR/dense.log" 2>&1; echo "dense tile factorization (none/BK/rook, double/float) test exit $?"
grep -E "^pivoting|^SKIP" "$OUTDIR/dense.log"
timeout 120 $B/tests/api_test_methods > "$OUTDIR/methods.log" 2>&1; echo "methods (block-Jacobi, fixed-point through the API) test exit $?"
grep -E "^GPU block-Jacobi|^GPU fixed-point|^ladder|^SKIP" "$OUTDIR/methods.log"
if [ -n "$SAN" ]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  case "$SAN" in sanitize) TOOLS=memcheck ;; racecheck) TOOLS=racecheck ;; *) TOOLS="memcheck racecheck" ;; esac
  for tool in $TOOLS; do
    ILDL_TEST_SMALL=1 timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_factor \
      > "$OUTDIR/sanitizer-$tool.log" 2>&1
    echo "compute-sanitizer $tool exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool.log" | tail -n 1)"
    # the split-row path of the sync-free solves (every row split into 2-tile items), with the
    # forward kernel that reads V_ii from global memory
    ILDL_TEST_TUNING=sf_vglobal=1,sf_split=2 ILDL_TEST_SMALL=1 timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_factor \
      > "$OUTDIR/sanitizer-$tool-split.log" 2>&1
    echo "compute-sanitizer $tool, rows split, V_ii from global, exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-split.log" | tail -n 1)"
    tuned_ok "$OUTDIR/sanitizer-$tool-split.log"
    # the factorization's split pulls for every tile with an update
    ILDL_TEST_TUNING=factor_split=1 ILDL_TEST_SMALL=1 timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_factor \
      > "$OUTDIR/sanitizer-$tool-factor-split.log" 2>&1
    echo "compute-sanitizer $tool, factor pulls split, exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-factor-split.log" | tail -n 1)"
    tuned_ok "$OUTDIR/sanitizer-$tool-factor-split.log"
    # the sync-free factorization (the test's complete factors) with a ring of 4 products, reused
    ILDL_TEST_TUNING=factor_split=1,factor_sf_ring=4 ILDL_TEST_SMALL=1 timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_factor \
      > "$OUTDIR/sanitizer-$tool-factor-sf.log" 2>&1
    echo "compute-sanitizer $tool, sync-free factorization, ring of 4, exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-factor-sf.log" | tail -n 1)"
    tuned_ok "$OUTDIR/sanitizer-$tool-factor-sf.log"
    # the kernels without staging tiles, plain and with rows split
    ILDL_TEST_TUNING=sf_nostage=1 ILDL_TEST_SMALL=1 timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_factor \
      > "$OUTDIR/sanitizer-$tool-nostage.log" 2>&1
    echo "compute-sanitizer $tool, no staging tiles, exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-nostage.log" | tail -n 1)"
    tuned_ok "$OUTDIR/sanitizer-$tool-nostage.log"
    ILDL_TEST_TUNING=sf_nostage=1,sf_split=2 ILDL_TEST_SMALL=1 timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_factor \
      > "$OUTDIR/sanitizer-$tool-nostage-split.log" 2>&1
    echo "compute-sanitizer $tool, no staging tiles, rows split, exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-nostage-split.log" | tail -n 1)"
    tuned_ok "$OUTDIR/sanitizer-$tool-nostage-split.log"
  done
  # block-Jacobi's Gauss-Jordan inversion and apply (shared-memory staging, warp shuffles)
  for tool in $TOOLS; do
    timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_gje > "$OUTDIR/sanitizer-$tool-gje.log" 2>&1
    echo "compute-sanitizer $tool, block-Jacobi, exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-gje.log" | tail -n 1)"
  done
  # the dense tile factorization alone (a team of warps on named barriers: racecheck, perf-notes §89)
  for tool in $TOOLS; do
    timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_dense > "$OUTDIR/sanitizer-$tool-dense.log" 2>&1
    echo "compute-sanitizer $tool, dense tiles, exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-dense.log" | tail -n 1)"
  done
  # the 2-norms' scaled paths (host-driven and the step kernel's one-block fallback) and the
  # solves of right-hand sides scaled far out
  for tool in $TOOLS; do
    timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tests/cuda_test_cuda_rhs > "$OUTDIR/sanitizer-$tool-rhs.log" 2>&1
    echo "compute-sanitizer $tool, extreme right-hand sides, exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-rhs.log" | tail -n 1)"
  done
  # SQMR's kernels (the tests above skip SQMR under the sanitizer): a whole solve, under
  # memcheck on tuma2; under racecheck on a generated 648-row control problem (7 iterations):
  # racecheck slows the sweeps' polls so much that a 5184-row problem did not finish in 60 s.
  # ildl takes the default kernels (staged on this problem's narrow levels); the kernels
  # without staging tiles ran under both tools in the sf_nostage runs of the test program above
  $B/bench/gen/ildl-gen control 6 /tmp/ildl-san-control6.mtx.gz > /dev/null
  for tool in $TOOLS; do
    if [ $tool = memcheck ]; then
      timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/tools/ildl solve "$PWD/.devdata/matrices/tuma2.mtx.gz" \
        --backend cuda --quiet > "$OUTDIR/sanitizer-$tool-sqmr.log" 2>&1
      echo "compute-sanitizer $tool, ildl solve tuma2 (SQMR), exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-sqmr.log" | tail -n 1)"
    else
      for sched in syncfree levels; do
        timeout 120 "$CS" --tool $tool --error-exitcode 9 $B/tools/ildl solve \
          /tmp/ildl-san-control6.mtx.gz --backend cuda --schedule $sched --quiet > "$OUTDIR/sanitizer-$tool-sqmr-$sched.log" 2>&1
        echo "compute-sanitizer $tool, ildl solve control6 (SQMR, $sched), exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/sanitizer-$tool-sqmr-$sched.log" | tail -n 1)"
      done
    fi
  done
fi
echo "== ildl cpu vs cuda"
mkdir -p /tmp/ildl-small
for m in tuma2 stokes64 aug3dcqp sqd_aug2d_2x2_it5 cutest_kkt_VESUVIA_0000 sqd_qpcboei1_3x3_it10 maxwell_homogeneous4; do
  ln -sf "$PWD/.devdata/matrices/$m.mtx.gz" /tmp/ildl-small/; done
LIST=$(ls /tmp/ildl-small/*.mtx.gz)
: > "$OUTDIR/ildl.jsonl"
for m in $LIST; do
  for be in "cpu" "cuda --schedule levels" "cuda --schedule syncfree" "cpu --precision single" "cuda --precision single"; do
    timeout 120 $B/tools/ildl solve "$m" --backend $be --json --quiet --threads 16 | tail -n 1 >> "$OUTDIR/ildl.jsonl"
  done
done
python3 - "$OUTDIR/ildl.jsonl" <<'PY'
import json, sys, os
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
print(f"{'matrix':34s} {'be':4s} {'prec':6s} {'sched':8s} {'lev':>5s} {'setup':>7s} {'factor':>8s} {'solve':>8s} {'it':>5s} {'res':>9s}")
for r in rows:
    tr = r['true_residual'] if r['true_residual'] is not None else float('nan')
    print(f"{os.path.basename(r['matrix'])[:34]:34s} {r['backend']:4s} {r.get('precision',''):6s} {r.get('schedule','') if r['backend']=='cuda' else '':8s} {r['levels']:5d} {r['setup_s']:7.3f} {r['factor_s']:8.4f} {r['solve_s']:8.4f} {r['iterations']:5d} {tr:9.2e}")
PY
