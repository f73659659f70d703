#!/usr/bin/env bash
# Run ON THE DEVICE (repository root, after bench/prepare-device.sh and bench/petsc-device-bundle.sh
# here): the PETSc scaling study of docs/petsc.md. examples/petsc/kkt_petsc (3D saddle point,
# -dim 3 -m M: n = 2 M^3) with FGMRES + PCBJACOBI, the sub-PC blockildl (CPU backend, one thread a
# rank; CUDA backend, one GPU a rank) against PETSc's ILU(0) and ICC(0), on 1..R ranks.
#   bash bench/device-petsc.sh [cpu|gpu|all]      (env: M_CPU, M_GPU, RANKS_CPU, RANKS_GPU)
# Prints one line per run and a table last; logs under $OUT (or /tmp) /petsc/.
set -u
cd "$(dirname "$0")/.."
WHAT=${1:-all}
M_CPU=${M_CPU:-60}
M_GPU=${M_GPU:-80}
RANKS_CPU=${RANKS_CPU:-"1 2 4 8 16"}
RANKS_GPU=${RANKS_GPU:-"1 2"}
LOG=${OUT:-/tmp}/petsc
mkdir -p "$LOG"
[ -d build-cuda ] || tar xJf .devdata/bins.tar.xz
[ -d .devdata/petsc ] || tar -C .devdata -xJf .devdata/petsc.tar.xz
P=$PWD/.devdata/petsc
ML=$P/usr/lib/x86_64-linux-gnu
export OPAL_PREFIX=$P/usr PMIX_PREFIX=$ML/pmix2 PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix
export LD_LIBRARY_PATH=$ML/openmpi/lib:$ML/pmix2/lib:$P/lib:$PWD/.carry/lib:$PWD/build-cuda:${LD_LIBRARY_PATH:-}
# Debian's defaults (/etc/openmpi is not carried): shared memory between the ranks of one host
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^ofi OMPI_MCA_osc=^ucx,pt2pt
export OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMP_NUM_THREADS=1
EXE=$PWD/build-cuda/examples/kkt_petsc
TABLE=$LOG/table.txt
: > "$TABLE"

run() { # label ranks m backend args...
  local label=$1 ranks=$2 m=$3; shift 3
  local f="$LOG/$(echo "$label" | tr -c 'a-z0-9\n' _)-n$ranks-m$m.txt"
  timeout ${RUN_TIMEOUT:-150} "$P/usr/bin/orterun" --allow-run-as-root --oversubscribe --bind-to core -n "$ranks" \
    "$EXE" -dim 3 -m "$m" -check_tol 1e-6 -ksp_max_it 1000 "$@" > "$f" 2>&1
  local rc=$? line
  line=$(grep '^kkt_petsc:' "$f" | tail -n 1)
  if [ -z "$line" ]; then line="failed (rc $rc): $(tail -n 3 "$f" | tr '\n' ' ' | cut -c1-200)"; fi
  echo "$label | $ranks | $line" | tee -a "$TABLE"
}

BJ=(-pc_type bjacobi)
if [ "$WHAT" = cpu ] || [ "$WHAT" = all ]; then
  for r in $RANKS_CPU; do
    run "bjacobi+ilu" "$r" "$M_CPU" "${BJ[@]}" -sub_pc_type ilu
    run "bjacobi+icc" "$r" "$M_CPU" "${BJ[@]}" -sub_pc_type icc -sub_pc_factor_shift_type positive_definite
    run "bjacobi+blockildl cpu" "$r" "$M_CPU" "${BJ[@]}" -sub_pc_type blockildl -sub_pc_blockildl_backend cpu
    run "asm+ilu" "$r" "$M_CPU" -pc_type asm -sub_pc_type ilu
    run "asm+blockildl cpu" "$r" "$M_CPU" -pc_type asm -sub_pc_type blockildl -sub_pc_blockildl_backend cpu
  done
fi
if [ "$WHAT" = gpu ] || [ "$WHAT" = all ]; then
  # the GPUs are shared by the ranks of their node (device = node-local rank modulo the GPUs);
  # the host analysis of each rank gets the cores / ranks
  nvidia-smi -L 2>/dev/null | tee -a "$TABLE"
  cores=$(getconf _NPROCESSORS_ONLN)
  for r in $RANKS_GPU; do
    run "bjacobi+blockildl cuda" "$r" "$M_GPU" "${BJ[@]}" -sub_pc_type blockildl -sub_pc_blockildl_backend cuda \
      -sub_pc_blockildl_threads $((cores / r)) -ksp_view -log_view
  done
  run "bjacobi+blockildl cpu" "$cores" "$M_GPU" "${BJ[@]}" -sub_pc_type blockildl -sub_pc_blockildl_backend cpu
  run "bjacobi+ilu" "$cores" "$M_GPU" "${BJ[@]}" -sub_pc_type ilu
fi
echo "== table (PC | ranks | result)"
cat "$TABLE"
