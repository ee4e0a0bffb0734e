#!/bin/bash
# Issue 25 §1–2 on one H200 in one device call (docs/benchmarks.md, "Issue 25 §1–2 in one
# run"): every figure trusted (wgpu, the app natively), checked (wgpu's runtime checks, as
# Firefox) and through Dawn (Chrome's WebGPU, npm `webgpu`), with the same inputs and
# verification, against cuBLAS and cuDNN where they have one; every figure the median of RUNS
# (3) whole runs with the fastest and slowest; every run verified. In this order (the most
# wanted first, so a run cut short by the budget still has them):
#   1. stem     the 7×7 stem (bench conv's shape 5) with the implicit GEMM's blocks 64×64,
#               32×64, and 64×64 and 32×64 with four rows per invocation, and 1, 2, 3 split-K
#               slices forced (`bench conv --ig-tiles --ig-splits`, `bench dump-kernels
#               --conv-ig-tiles --conv-ig-splits`: 12 cells), cuDNN at every shape
#   2. matmul   4096³: `matmul-tuned` (its default 64×128×8, the trusted tuner's 128×128×8,
#               128×128×16) and four shapes of the candidate `matmul-deep-k` (64×64×32,
#               128×128×16, 64×128×16, 128×64×16); cuBLAS (TF32 off)
#   3. conv     every stage at the six shapes (`bench conv`, `dump-kernels --conv-shapes`)
#   4. mlp      the MLP training step, batch 1,024 and 64, 1 and 64 steps per submit (mlp.sh)
#   5. cnn      the CNN training step, batch 64 and 256 (cnn.sh; no CPU, no tfjs, no
#               time-to-accuracy: those are in the issue 24 tables)
#   6. clamps   Tint's SPIR-V (Dawn's dump_shaders, robustness on) and naga's (`bench clamps`)
#               for the new kernels and `matmul-tuned`: clamps, loop counters
# Then issue25_tables.py writes every table ($OUT/tables.md). The whole run is bounded by
# BUDGET seconds (540: 9 minutes; each phase by `timeout`, cut to what is left).
#
# Estimated 8–8.5 minutes on the H200, from the logged runs in results/ (docs/benchmarks.md
# has the sum): cuDNN ~0.4 min, the stem's 12 cells × 3 paths × ~1.7 s ~1.1 min, matmul 7
# kernels × 3 paths × 3 runs × ~2 s + cuBLAS ~2.5 min, every conv stage ~3 min, the MLP step
# ~0.3, the CNN step ~0.9, clamps ~0.3.
#
# On the H200 (no network, no Vulkan loader, no node): from the repository root, with .gl
# (../shared/TOOLCHAIN.md §6) and the carry folder $C (default .devcarry/i25, made here by
# `bash crates/bench/h200/issue25.sh pack`; lib.sh says what is in it):
#   bash crates/bench/h200/issue25.sh            # results in $OUT (tables.md, issue25.log, issue25.tgz)
# Locally, tiny (LOCAL=1: lavapipe for wgpu, SwiftShader for Dawn, no CUDA: cuBLAS and cuDNN
# skipped), everything else as on the H200:
#   cargo build -p bench && LOCAL=1 BENCH=target/debug/bench NODE=node \
#     WEBGPU_MODULE=/path/to/node_modules/webgpu/index.js DIGITS=target/cnn-digits.bin \
#     OUT=/tmp/i25 bash crates/bench/h200/issue25.sh
set -u
H=crates/bench/h200
. $H/lib.sh
if [ "${1:-}" = pack ]; then
  h200_pack "${C:-.devcarry/i25}"
  exit $?
fi
C=${C:-.devcarry/i25}
OUT=${OUT:-/tmp/issue25_out}
W=${WORK:-/tmp/wi25}
R=$W/r
T0=$(date +%s)
BUDGET=${BUDGET:-540}
RUNS=${RUNS:-3}
if [ "${LOCAL:-}" = 1 ]; then
  SIZES=${SIZES:-96}
  SHAPES=${SHAPES:-small}
  STEM=${STEM:-small}
  REPS=${REPS:-2}
  MREPS=${MREPS:-2}
  WARM=${WARM:-0}
  MLP_STEPS=${MLP_STEPS:-16}
  MLP_BATCHES=${MLP_BATCHES:-64}
  SLOW=${SLOW:-4}
  CNN_BATCHES=${CNN_BATCHES:-4}
  CNN_MS=${CNN_MS:-50}
  NODE_VK_ICD=${NODE_VK_ICD:-/usr/lib/chromium/vk_swiftshader_icd.json}
  BUDGET=${BUDGET_LOCAL:-1800}
fi
SIZES=${SIZES:-4096}
SHAPES=${SHAPES:-1,2,3,4,5,6}
STEM=${STEM:-5}
REPS=${REPS:-20}
MREPS=${MREPS:-5}
WARM=${WARM:-500}
MLP_STEPS=${MLP_STEPS:-10000}
MLP_BATCHES=${MLP_BATCHES:-1024,64}
CNN_BATCHES=${CNN_BATCHES:-64,256}
CNN_MS=${CNN_MS:-1500}
STEM_TILES=${STEM_TILES:-conv-implicit-gemm,conv-implicit-gemm-32x64,conv-implicit-gemm-64x64-r4,conv-implicit-gemm-32x64-r4}
STEM_SPLITS=${STEM_SPLITS:-1,2,3}
MATMUL=${MATMUL:-matmul-tuned,matmul-tuned@128x128x8,matmul-tuned@128x128x16,matmul-deep-k@64x64x32,matmul-deep-k@128x128x16,matmul-deep-k@64x128x16,matmul-deep-k@128x64x16}
TINT=${TINT:-conv-implicit-gemm,conv-implicit-gemm-32x64,conv-implicit-gemm-64x64-r4,conv-implicit-gemm-32x64-r4,matmul-tuned,matmul-tuned@128x128x16,matmul-deep-k@64x64x32,matmul-deep-k@128x128x16}
rm -rf "$R" "$W/d" "$W/dv" "$W/dm" "$W/mlp/r" "$W/cnn/r" "$W"/tint_*.txt
mkdir -p "$R" "$OUT"
export PYTHONUNBUFFERED=1
h200_tools "$C" "$W"
DAWN_FLAG=(--flag disable-dawn-features=timestamp_quantization)

dawn() { timeout "$(left "$1")" "${NODEVK[@]}" "$NODE" "${@:2}"; }

phase_stem() {
  local v=(--stages conv-implicit-gemm --ig-tiles "$STEM_TILES" --ig-splits "$STEM_SPLITS")
  for c in trusted checked; do
    stamp "stem: wgpu $c"
    local flag=; [ $c = checked ] && flag=--checked
    timeout "$(left 90)" "$B" conv $flag --shapes "$STEM" "${v[@]}" --runs "$RUNS" --reps "$REPS" \
      --warm-ms "$WARM" $CUDNN --out "$R/stem_$c.tsv" > "$R/stem_$c.log" 2>&1 || echo "stem $c failed: $?"
  done
  [ -n "$NODE" ] || return
  stamp "stem: Dawn"
  timeout "$(left 60)" "$B" dump-kernels --dir "$W/dv" --conv-shapes "$STEM" --conv-stages conv-implicit-gemm \
    --conv-ig-tiles "$STEM_TILES" --conv-ig-splits "$STEM_SPLITS" --conv-runs "$RUNS" > "$R/stem_dump.log" 2>&1
  dawn 90 crates/bench/dawn/run.mjs --dir "$W/dv" --reps "$REPS" --runs "$RUNS" --warm-ms "$WARM" "${DAWN_FLAG[@]}" \
    --conv-out "$R/stem_dawn.tsv" > "$R/stem_dawn.log" 2>&1 || echo "stem Dawn failed: $?"
}

phase_matmul() {
  if [ -n "$CUDA" ]; then
    for i in $(seq "$RUNS"); do
      stamp "matmul: cuBLAS $i"
      timeout "$(left 45)" python3 crates/bench/cublas_sgemm.py --sizes "$SIZES" --reps "$MREPS" \
        --out "$R/mm_cublas$i.tsv" > "$R/mm_cublas$i.log" 2>&1 || echo "cuBLAS $i failed: $?"
    done
  fi
  for c in trusted checked; do
    local flag=; [ $c = checked ] && flag=--checked
    for i in $(seq "$RUNS"); do
      stamp "matmul: wgpu $c $i"
      timeout "$(left 60)" "$B" matmul $flag --sizes "$SIZES" --reps "$MREPS" --warm-ms "$WARM" --kernels "$MATMUL" \
        --out "$R/mm_$c$i.tsv" > "$R/mm_$c$i.log" 2> /dev/null || echo "wgpu $c $i failed: $?"
    done
  done
  [ -n "$NODE" ] || return
  stamp "matmul: Dawn dump"
  timeout "$(left 60)" "$B" dump-kernels --dir "$W/dm" --sizes "$SIZES" --copy-mib 1 --kernels "$MATMUL" \
    > "$R/mm_dump.log" 2>&1 || echo "matmul dump failed: $?"
  for i in $(seq "$RUNS"); do
    stamp "matmul: Dawn $i"
    dawn 60 crates/bench/dawn/run.mjs --dir "$W/dm" --reps "$MREPS" --warm-ms "$WARM" "${DAWN_FLAG[@]}" \
      --out "$R/mm_dawn$i.tsv" > "$R/mm_dawn$i.log" 2>&1 || echo "Dawn $i failed: $?"
  done
}

phase_conv() {
  for c in trusted checked; do
    stamp "conv: wgpu $c"
    local flag=; [ $c = checked ] && flag=--checked
    timeout "$(left 120)" "$B" conv $flag --shapes "$SHAPES" --runs "$RUNS" --reps "$REPS" --warm-ms "$WARM" \
      $CUDNN --out "$R/conv_$c.tsv" > "$R/conv_$c.log" 2>&1 || echo "conv $c failed: $?"
  done
  [ -n "$NODE" ] || return
  stamp "conv: Dawn"
  timeout "$(left 60)" "$B" dump-kernels --dir "$W/d" --conv-shapes "$SHAPES" --conv-runs "$RUNS" > "$R/conv_dump.log" 2>&1
  dawn 120 crates/bench/dawn/run.mjs --dir "$W/d" --reps "$REPS" --runs "$RUNS" --warm-ms "$WARM" "${DAWN_FLAG[@]}" \
    --conv-out "$R/conv_dawn.tsv" > "$R/conv_dawn.log" 2>&1 || echo "conv Dawn failed: $?"
}

# mlp.sh and cnn.sh with this run's tools (their own unpacking skipped) and sizes.
phase_training() {
  [ -n "$NODE" ] || { stamp "training: no node, Dawn skipped (mlp.sh and cnn.sh need it)"; return; }
  stamp "mlp (mlp.sh)"
  BENCH=$B NODE=$NODE NODE_VK_ICD=${NODE_VK_ICD:-} DAWN_JS=crates/bench/dawn/mlp.mjs W=$W/mlp OUT=$W/mlp/out \
    RUNS=$RUNS ROUNDS=1 NOROBUST=0 STEPS=$MLP_STEPS BATCHES=$MLP_BATCHES \
    timeout "$(left 60)" bash $H/mlp.sh > "$R/mlp.log" 2>&1 || echo "mlp.sh failed: $?"
  mkdir -p "$R/mlp"; cp "$W"/mlp/r/*.tsv "$R/mlp/" 2> /dev/null
  if [ -z "$DIGITS" ]; then
    stamp "cnn: no digits asset (DIGITS or $C/cnn-digits.bin.xz), skipped"
    return
  fi
  stamp "cnn (cnn.sh)"
  BENCH=$B NODE=$NODE NODE_VK_ICD=${NODE_VK_ICD:-} DAWN_JS=crates/bench/dawn/cnn.mjs DIGITS=$DIGITS \
    W=$W/cnn OUT=$W/cnn/out RUNS=$RUNS BATCHES=$CNN_BATCHES MIN_MS=$CNN_MS TTA=0 CHECKED=1 CPU=0 TFJS=0 \
    timeout "$(left 150)" bash $H/cnn.sh > "$R/cnn.log" 2>&1 || echo "cnn.sh failed: $?"
  mkdir -p "$R/cnn"; cp "$W"/cnn/r/*.tsv "$R/cnn/" 2> /dev/null
}

phase_clamps() {
  stamp "clamps: naga (bench clamps)"
  "$B" clamps --kernels "$TINT" > "$R/naga_clamps.md" 2>&1
  [ -n "$NODE" ] || return
  stamp "clamps: Tint (dump_shaders)"
  local dir
  for k in ${TINT//,/ }; do
    dir=$W/dm
    case $k in conv-*) dir=$W/dv ;; esac
    [ -f "$dir/manifest.json" ] || continue
    dawn 20 crates/bench/dawn/run.mjs --dir "$dir" --compile "$k" \
      --flag enable-dawn-features=dump_shaders,disable_symbol_renaming,use_user_defined_labels_in_backend \
      --flag verbose=1 > "$W/tint_$k.txt" 2>&1 || echo "Tint dump of $k failed"
  done
  python3 $H/conv_table.py --tint "$W"/tint_*.txt > "$R/tint_clamps.md" 2>&1
}

{
  stamp "machine"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
    nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv -lms 200 > "$R/smi.csv" 2>&1 &
    SMI=$!
  fi
  grep -m1 'model name' /proc/cpuinfo; nproc
  [ -n "$NODE" ] && "$NODE" --version
  echo "bench $B; node ${NODE:-none}; digits ${DIGITS:-none}; CUDA ${CUDA:-no}; budget ${BUDGET}s"
  CUDNN=
  if [ -n "$CUDA" ]; then
    stamp "cuDNN"
    timeout "$(left 90)" python3 crates/bench/cudnn_conv.py --runs "$RUNS" --reps "$REPS" --out "$R/cudnn.tsv" \
      > "$R/cudnn.log" 2>&1 || echo "cuDNN failed: $?"
    [ -s "$R/cudnn.tsv" ] && CUDNN="--cudnn $R/cudnn.tsv"
  fi
  phase_stem
  phase_matmul
  phase_conv
  phase_training
  phase_clamps
  [ -n "${SMI:-}" ] && kill "$SMI" 2> /dev/null
  stamp "tables"
  python3 $H/issue25_tables.py --dir "$R" > "$R/tables.md" 2> "$R/tables.err" || cat "$R/tables.err"
  grep -hE "NO |NOT |FAILED|failed|rror" "$R"/*.log 2> /dev/null | head -20
  stamp "done ($(($(date +%s) - T0)) s)"
} 2>&1 | tee "$R/issue25.log"
cp "$R/tables.md" "$R/issue25.log" "$OUT/" 2> /dev/null
tar -czf "$OUT/issue25.tgz" -C "$W" r
cat "$R/tables.md"
