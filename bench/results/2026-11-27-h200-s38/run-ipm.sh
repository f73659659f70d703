#!/usr/bin/env bash
# s38 third call: options.refactor_scaling on the GPU (its test), and the interior-point loop with
# each mode against cuDSS (plain and with 2 steps of iterative refinement).
set -u
R=$PWD; O=$OUT/o; mkdir -p $O
T0=$(date +%s)
tar xJf .devdata/bins.tar.xz; tar xJf .devdata/cudss.tar.xz
export LD_LIBRARY_PATH=$R/.carry/lib:$R/cudss/lib:${LD_LIBRARY_PATH:-}
export ILDL_MATRICES_DIR=$R/.devdata/matrices
C=build-cuda/bench/baseline/ildl-cudss
M=.devdata/matrices
timeout 120 build-cuda/tests/api_test_refactor > $O/test_refactor.txt 2>&1; echo "test_refactor exit $?"
build-cuda/bench/gen/ildl-gen kkt-lp .devdata/mps/bab5.mps.gz $M/bab5.mtx --slacks > /dev/null
for s in 6 12; do
for m in sqd_aug2d_2x2_it5.mtx.gz sqd_liswet1_2x2_it10.mtx.gz sqd_stcqp1_2x2_it10.mtx.gz tuma1.mtx.gz bab5.mtx ncvxqp1.mtx.gz cvxqp3.mtx.gz; do
  for mode in recompute keep equilibrate; do
    timeout 60 $C $M/$m --only ildl --repeat 1 --ipm 20 --spread $s --refactor-scaling $mode --json | sed "s/^{/{\"spread\": $s, \"mode\": \"$mode\", /" >> $O/ipm.jsonl 2>> $O/err.txt
  done
  timeout 60 $C $M/$m --only cudss --repeat 1 --ipm 20 --spread $s --cudss-ir 2 --json | sed "s/^{/{\"spread\": $s, /" >> $O/ipm.jsonl 2>> $O/err.txt
  timeout 60 $C $M/$m --only cudss --repeat 1 --ipm 20 --spread $s --json | sed "s/^{/{\"spread\": $s, /" >> $O/ipm.jsonl 2>> $O/err.txt
  echo "$s $m $(( $(date +%s) - T0 )) s"
  [ $(( $(date +%s) - T0 )) -gt 480 ] && break 2
done
done
echo "wall $(( $(date +%s) - T0 )) s"
