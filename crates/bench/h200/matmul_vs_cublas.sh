#!/bin/bash
# The H200 table of docs/benchmarks.md, "Matmul at 4096³: trusted catalogue kernels and
# the double-buffered stage": matmul only, at 4096³, against cuBLAS. Three whole runs each of
#   cuBLAS SGEMM (TF32 off), wgpu with the catalogue compiled trusted (the app's native
#   default), wgpu with runtime checks (`--checked`, as a browser compiles), and Dawn (the
#   browser's WebGPU, through node's `webgpu` package),
# for `matmul-vec4` (control), `matmul-tuned`, `matmul-double-buffer` and every tile variant of
# the last two (`--tune`). Prints the summary table, the tuner's choice per kernel and the best
# matmul per path with its % of cuBLAS. About 5 minutes on the H200 (limit 8: each phase is
# bounded by `timeout`).
#
# On the H200 (no network, no Vulkan loader, no node): run from the repository root with, in
# $C (default .devcarry), bench (x86-64 release build) as bench.xz (or bench), node.xz and
# nm/webgpu/{index.js,package.json,dist/linux-x64/dawn.node.xz}, and the Vulkan loader
# packages in .gl (../shared/TOOLCHAIN.md §6–7); the Dawn runner and the cuBLAS script are
# taken from the tree (crates/bench/dawn/run.mjs, crates/bench/cublas_sgemm.py). To make $C:
#   cargo build --release -p bench && mkdir -p .devcarry/nm/webgpu/dist/linux-x64
#   xz -T2 -6 -c target/release/bench > .devcarry/bench.xz
#   xz -T2 -6 -c /usr/bin/node > .devcarry/node.xz
#   (cd /tmp/wg && npm install webgpu@0.6.2); cp /tmp/wg/node_modules/webgpu/{index.js,package.json} .devcarry/nm/webgpu/
#   xz -T2 -6 -c /tmp/wg/node_modules/webgpu/dist/linux-x64/dawn.node > .devcarry/nm/webgpu/dist/linux-x64/dawn.node.xz
# Results under $OUT/r and in $OUT/matmul90.tgz.
#
# Locally on lavapipe, tiny, wgpu only (Dawn refuses lavapipe; no CUDA here):
#   cargo build -p bench && BENCH=target/debug/bench SIZES=128 RUNS=1 \
#     OUT=/tmp/m90 bash crates/bench/h200/matmul_vs_cublas.sh
# (SIZES, RUNS, REPS override 4096, 3, 5; a part whose tools are missing is skipped, said so.)
set -u
C=${C:-.devcarry}
SIZES=${SIZES:-4096}
RUNS=${RUNS:-3}
REPS=${REPS:-5}
OUT=${OUT:-/tmp/matmul90_out}
R=$OUT/r
W=/tmp/w90
mkdir -p "$R" "$W"
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
KERNELS=matmul-vec4,matmul-tuned,matmul-double-buffer

# The H200 machine: unpack the Vulkan loader and the carried tools.
if ls .gl/*.deb > /dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
if [ -n "${BENCH:-}" ]; then B=$BENCH
elif [ -f "$C/bench.xz" ]; then xz -dc "$C/bench.xz" > $W/bench && chmod +x $W/bench && B=$W/bench
else B=$C/bench; fi
NODE=
if [ -f "$C/node.xz" ] && [ -f "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" ]; then
  xz -dc "$C/node.xz" > $W/node && chmod +x $W/node
  mkdir -p $W/webgpu/dist/linux-x64
  cp "$C"/nm/webgpu/index.js "$C"/nm/webgpu/package.json $W/webgpu/
  xz -dc "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" > $W/webgpu/dist/linux-x64/dawn.node
  export WEBGPU_MODULE=$W/webgpu/index.js
  NODE=$W/node
fi
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader

# PHASE=tint (about 30 s): Tint's SPIR-V for matmul-tuned and matmul-double-buffer at 256³ as
# Dawn compiles them with robustness on (dump_shaders), and how many clamps (UMin) each has.
if [ "${PHASE:-}" = tint ]; then
  [ -n "$NODE" ] || { echo "PHASE=tint needs node and dawn.node in $C"; exit 1; }
  $B dump-kernels --dir $W/t --sizes 256 --kernels matmul-tuned,matmul-double-buffer > /dev/null 2>&1
  for k in matmul-tuned matmul-double-buffer; do
    $NODE crates/bench/dawn/run.mjs --dir $W/t --reps 1 --warm-ms 0 --only $k \
      --flag enable-dawn-features=dump_shaders,disable_symbol_renaming,use_user_defined_labels_in_backend \
      --flag verbose=1 > "$R/tint_$k.txt" 2>&1
    echo "$k: $(grep -c 'UMin' "$R/tint_$k.txt") UMin, $(grep -c 'OpLoopMerge' "$R/tint_$k.txt") loops, verified: $(grep -c '| yes |' "$R/tint_$k.txt")"
  done
  tar czf "$OUT/matmul90_tint.tgz" -C "$OUT" r
  exit 0
fi

phases() {
  if command -v nvidia-smi > /dev/null && python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
    for i in $(seq "$RUNS"); do
      stamp "cuBLAS $i"
      timeout 60 python3 crates/bench/cublas_sgemm.py --sizes "$SIZES" --reps "$REPS" --out "$R/cublas$i.tsv" > /dev/null 2>&1 \
        || echo "cuBLAS run $i failed"
    done
  else
    stamp "cuBLAS skipped: no CUDA device with torch here"
  fi
  for i in $(seq "$RUNS"); do
    stamp "wgpu, catalogue trusted, $i"
    timeout 120 $B matmul --sizes "$SIZES" --reps "$REPS" --tune --kernels $KERNELS --out "$R/wgpu_trusted$i.tsv" 2>/dev/null \
      | grep -E "^\| matmul|adapter|rror" | grep -vE "\| yes \|$" ; true
  done
  for i in $(seq "$RUNS"); do
    stamp "wgpu, runtime checks on, $i"
    timeout 120 $B matmul --sizes "$SIZES" --reps "$REPS" --tune --checked --kernels $KERNELS --out "$R/wgpu_checked$i.tsv" 2>/dev/null \
      | grep -E "^\| matmul|rror" | grep -vE "\| yes \|$" ; true
  done
  if [ -n "$NODE" ]; then
    stamp "Dawn: dumping kernels"
    timeout 60 $B dump-kernels --dir $W/d --sizes "$SIZES" --copy-mib 1 \
      --kernels $KERNELS,matmul-tuned@,matmul-double-buffer@ > /dev/null 2>&1 || echo "dump failed"
    for i in $(seq "$RUNS"); do
      stamp "Dawn $i"
      timeout 90 $NODE crates/bench/dawn/run.mjs --dir $W/d --reps "$REPS" --only $KERNELS,matmul-tuned@,matmul-double-buffer@ \
        --flag disable-dawn-features=timestamp_quantization --out "$R/dawn$i.tsv" > "$R/dawn$i.log" 2>&1 \
        || { echo "Dawn run $i failed:"; tail -5 "$R/dawn$i.log"; }
    done
  else
    stamp "Dawn skipped: no node.xz and dawn.node.xz in $C"
  fi
}
export -f phases stamp
export B C R W NODE SIZES RUNS REPS KERNELS
# Rows that did not verify are printed above (the greps show only failures and errors).
timeout 420 bash -c phases
stamp summary
$B summarise "$R"/*.tsv > "$R/summary.md" 2>&1
grep -E "^\|" "$R/summary.md" | grep -vE "measure-copy"
grep -E "^(tuner|best)" "$R/summary.md"
tar czf "$OUT/matmul90.tgz" -C "$OUT" r
stamp done
