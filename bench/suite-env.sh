# suite-env.sh -- sourced by the suite studies (bench/methods.sh, bench/fixed-point.sh) after
# BACKEND is set: OUTDIR ($OUT or /tmp/ildl-out), the carried libraries on LD_LIBRARY_PATH, and
# per backend the build (BUILD) and the matrices (M): cuda ON THE DEVICE (build-cuda,
# .devdata/matrices from bench/prepare-device.sh), cpu here (build-cm-cpu, ../shared/matrices);
# BUILD and ILDL_MATRICES_DIR override them.
OUTDIR=${OUT:-/tmp/ildl-out}
mkdir -p "$OUTDIR"
export LD_LIBRARY_PATH="$PWD/.carry/lib:${LD_LIBRARY_PATH:-}"
if [ "$BACKEND" = cuda ]; then
  BUILD=${BUILD:-build-cuda}
  M=${ILDL_MATRICES_DIR:-$PWD/.devdata/matrices}
else
  BUILD=${BUILD:-build-cm-cpu}
  M=${ILDL_MATRICES_DIR:-$PWD/../shared/matrices}
fi
