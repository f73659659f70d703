#!/usr/bin/env bash
# check_decades.sh ILDL_GEN [FILE.mps[.gz]] -- `ildl-gen kkt-lp --decades K` (ctest
# bench/ildl_gen_decades). On an LP (the shared netlib_25fv47 when given, else a synthetic one
# of 3000 columns written here): the (1,1) block D = diag(d_j) of the written matrix spans more
# than 10 decades with --decades 12 and at most 6 with --decades 6; the default writes the same
# bytes as --decades 6; --decades 0 gives D = I; bad values (negative, > 300, NaN, Inf, not a
# number, missing) end with one clear message and exit status 2, writing nothing.
set -u
gen=$1
mps=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "ildl-gen decades check: FAILED: $*"; exit 1; }

if [ -z "$mps" ] || [ ! -r "$mps" ]; then
  # free MPS: 2 equality rows, column j in R1 (1) and, for odd j, in R2 (2)
  mps=$tmp/synthetic.mps
  awk 'BEGIN { print "NAME SYNTH"; print "ROWS"; print " N OBJ"; print " E R1"; print " E R2";
               print "COLUMNS";
               for (j = 1; j <= 3000; j++) {
                 printf " X%d OBJ 1 R1 1\n", j
                 if (j % 2) printf " X%d R2 2\n", j
               }
               print "RHS"; print " RHS R1 1 R2 1"; print "ENDATA" }' > "$mps"
fi
echo "LP: $mps"

# n_A (columns of the reduced A) from "LP: ... -> A m x n, ..."
gen_lp() { # OUT LOG [options]
  local out=$1 log=$2
  shift 2
  "$gen" kkt-lp "$mps" "$out" "$@" > "$log" 2>&1 || { cat "$log"; fail "ildl-gen kkt-lp $* exited with $?"; }
}
# the diagonal entries of rows 1..n_A of a Matrix Market file: "count min max log10(max/min)"
dspan() {
  awk -v nA="$2" '
    /^%/ { next }
    !size { size = 1; next }
    $1 == $2 && $1 <= nA { v = $3 + 0; if (v <= 0) bad++; c++;
                           if (c == 1 || v < lo) lo = v; if (c == 1 || v > hi) hi = v }
    END { if (bad || !c) print c, "bad"; else printf "%d %.17g %.17g %.6f\n", c, lo, hi, log(hi / lo) / log(10) }' "$1"
}

gen_lp "$tmp/def.mtx" "$tmp/def.log"
gen_lp "$tmp/d6.mtx" "$tmp/d6.log" --decades 6
gen_lp "$tmp/d12.mtx" "$tmp/d12.log" --decades 12
gen_lp "$tmp/d0.mtx" "$tmp/d0.log" --decades 0
nA=$(sed -n 's/^LP: .* -> A [0-9]* x \([0-9]*\),.*/\1/p' "$tmp/def.log")
[ -n "$nA" ] && [ "$nA" -gt 100 ] || { cat "$tmp/def.log"; fail "no n_A > 100 in the output"; }
grep -q "D over 12 decades" "$tmp/d12.log" || fail "--decades 12 not echoed"
cmp -s "$tmp/def.mtx" "$tmp/d6.mtx" || fail "the default and --decades 6 differ"
cmp -s "$tmp/def.mtx" "$tmp/d12.mtx" && fail "--decades 12 wrote the default's matrix"

read -r c6 lo6 hi6 s6 <<< "$(dspan "$tmp/d6.mtx" "$nA")"
read -r c12 lo12 hi12 s12 <<< "$(dspan "$tmp/d12.mtx" "$nA")"
read -r c0 lo0 hi0 s0 <<< "$(dspan "$tmp/d0.mtx" "$nA")"
echo "n_A = $nA; --decades 6: d in [$lo6, $hi6], $s6 decades; --decades 12: d in [$lo12, $hi12], $s12 decades"
[ "$c6" = "$nA" ] && [ "$c12" = "$nA" ] && [ "$c0" = "$nA" ] || fail "expected $nA positive diagonal entries of D, got $c6 / $c12 / $c0"
awk -v s="$s6" -v lo="$lo6" -v hi="$hi6" 'BEGIN { exit !(s > 5 && s <= 6 && lo > 1e-6 && hi <= 1) }' ||
  fail "--decades 6: D spans $s6 decades, expected (5, 6] within (1e-6, 1]"
awk -v s="$s12" -v lo="$lo12" -v hi="$hi12" 'BEGIN { exit !(s > 10 && s <= 12 && lo > 1e-12 && hi <= 1) }' ||
  fail "--decades 12: D spans $s12 decades, expected (10, 12] within (1e-12, 1]"
[ "$lo0" = 1 ] && [ "$hi0" = 1 ] || fail "--decades 0: D in [$lo0, $hi0], expected I"

# refusals: status 2 (not a crash), one message naming --decades, no file written
for v in -1 -0.5 300.5 1e999 nan inf -inf abc 6x ""; do
  "$gen" kkt-lp "$mps" "$tmp/bad.mtx" --decades "$v" > "$tmp/bad.log" 2>&1
  st=$?
  [ "$st" = 2 ] || { cat "$tmp/bad.log"; fail "--decades '$v': exit status $st, expected 2"; }
  grep -q "^ildl-gen: --decades must be a finite number from 0 to 300, got '$v'" "$tmp/bad.log" ||
    { cat "$tmp/bad.log"; fail "--decades '$v': no clear message"; }
  [ -e "$tmp/bad.mtx" ] && fail "--decades '$v': a file was written"
done
"$gen" kkt-lp "$mps" "$tmp/bad.mtx" --decades > "$tmp/bad.log" 2>&1
st=$?
[ "$st" = 2 ] && grep -q "^ildl-gen: --decades needs a value" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "--decades without a value: status $st"; }
"$gen" helmholtz 4 "$tmp/bad.mtx" --decades 6 > "$tmp/bad.log" 2>&1
st=$?
[ "$st" = 2 ] && grep -q "unknown option '--decades'" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "helmholtz --decades: status $st"; }
grep -q -- "--decades K" <("$gen" --help) || fail "--help does not mention --decades"
echo "ildl-gen decades check: passed"
