#!/usr/bin/env bash
# Fuzz each harness of tests/fuzz for SECONDS, starting from the committed corpus (copied into
# BUILD/fuzz-run/<harness>/corpus, so nothing is written into the source tree). New inputs stay
# there; a crash or an oracle failure leaves its input in BUILD/fuzz-run/<harness>/ and makes
# the script exit 1. A committed input that fails by itself (a finding not fixed yet) is left
# out of the start corpus, so that the run still fuzzes, and also makes the script exit 1.
# `make fuzz` runs it after the corpus regression tests (ctest -L fuzz).
#   usage: tests/fuzz/run_fuzz.sh [BUILD [SECONDS [HARNESS...]]]   (defaults: build-fuzz 60 mmio api matrix)
#   FUZZ_FLAGS: more libFuzzer flags, e.g. FUZZ_FLAGS="-fork=1 -ignore_crashes=1" for a campaign
set -uo pipefail
build=${1:-build-fuzz}
secs=${2:-60}
shift $(( $# > 2 ? 2 : $# ))
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(mmio api matrix)
src=$(cd "$(dirname "$0")" && pwd)
status=0
for h in "${harnesses[@]}"; do
  bin="$build/tests/fuzz/fuzz_$h"
  work="$build/fuzz-run/$h"
  if [ ! -x "$bin" ]; then echo "fuzz: $bin not built (make fuzz)" >&2; exit 2; fi
  rm -rf "$work"
  mkdir -p "$work/corpus"
  for f in "$src/corpus/$h/"*; do
    if "$bin" -malloc_limit_mb=256 -rss_limit_mb=2048 -timeout=60 "$f" >/dev/null 2>&1; then
      cp "$f" "$work/corpus/"
    else
      status=1
      echo "fuzz: $h: corpus input ${f#"$src/"} fails (ctest -L fuzz shows why); left out" >&2
    fi
  done
  dict=()
  [ -f "$src/$h.dict" ] && dict=("-dict=$src/$h.dict")
  echo "fuzz: $h for $secs s (log: $work/log)"
  # allocations above 256 MiB fail (inputs of a few KiB need none); an input slower than 20 s
  # is a finding too
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$secs" -malloc_limit_mb=256 -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$work/" "${dict[@]}" ${FUZZ_FLAGS:-} "$work/corpus" >"$work/log" 2>&1
  rc=$?
  grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)' "$work/log" | sed "s/^/fuzz: $h /"
  if [ $rc -ne 0 ]; then
    status=1
    echo "fuzz: $h FAILED (exit $rc); the end of its log:" >&2
    grep -vE '^#[0-9]+ ' "$work/log" | tail -60 >&2
    ls "$work"/crash-* "$work"/oom-* "$work"/timeout-* "$work"/leak-* 2>/dev/null | sed 's/^/fuzz: reproducer /' >&2
  else
    echo "fuzz: $h passed"
  fi
done
exit $status
