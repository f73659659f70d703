#!/usr/bin/env bash
# s38 sixth call (e10f42e): the cuDSS comparison again, refactor with new values (2A, A, ...), for docs/benchmarks-cudss.md:
# and bab5 (ours default and KEEP; cuDSS plain and with 2 refinement steps), and the 1M generated
# problems (cuDSS single-threaded and with its 16-thread host layer).
set -u
R=$PWD; O=$OUT/o; mkdir -p $O
T0=$(date +%s)
tar xJf .devdata/bins.tar.xz; tar xJf .devdata/cudss.tar.xz
export LD_LIBRARY_PATH=$R/.carry/lib:$R/cudss/lib:${LD_LIBRARY_PATH:-}
C=build-cuda/bench/baseline/ildl-cudss
M=.devdata/matrices
G=build-cuda/bench/gen/ildl-gen
el() { echo $(( $(date +%s) - T0 )); }
ILDL_MATRICES_DIR=$R/.devdata/matrices timeout 100 build-cuda/tests/api_test_refactor > $O/test_refactor.txt 2>&1; echo "test_refactor exit $?"
$G kkt-lp .devdata/mps/bab5.mps.gz $M/bab5.mtx --slacks > /dev/null
for f in $(cat .devdata/big.txt) bab5.mtx; do
  b=""; [ $f = bab5.mtx ] && b="--blocking rb"
  timeout 90 $C $M/$f --repeat 5 $b --json >> $O/cmp.jsonl 2>> $O/err.txt
  timeout 60 $C $M/$f --repeat 5 $b --only ildl --refactor-scaling keep --json | sed 's/"lib": "ildl"/"lib": "ildl-keep"/' >> $O/cmp.jsonl 2>> $O/err.txt
  timeout 60 $C $M/$f --repeat 5 --only cudss --cudss-ir 2 --json >> $O/cmp.jsonl 2>> $O/err.txt
  echo "$f $(el) s"
done
$G control 70 /tmp/c70.mtx > /dev/null
$G stokes 64 /tmp/s64.mtx --pin > /dev/null
ls -la /tmp/c70.mtx /tmp/s64.mtx
for f in /tmp/c70.mtx /tmp/s64.mtx; do
  [ $(el) -gt 400 ] && break
  timeout 150 $C $f --repeat 3 --json >> $O/large.jsonl 2>> $O/err.txt; echo "$f $(el) s"
  timeout 60 $C $f --repeat 3 --only ildl --refactor-scaling keep --json | sed 's/"lib": "ildl"/"lib": "ildl-keep"/' >> $O/large.jsonl 2>> $O/err.txt
  timeout 100 $C $f --repeat 3 --only cudss --cudss-mt $R/cudss/lib/libcudss_mtlayer_gomp.so.1 --cudss-threads 16 --json >> $O/large.jsonl 2>> $O/err.txt; echo "$f mt $(el) s"
done
echo "wall $(el) s"
