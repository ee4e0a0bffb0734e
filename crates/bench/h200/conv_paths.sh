#!/bin/bash
# The H200 table of docs/benchmarks.md, "Conv on the visitors' paths": every conv
# stage at `bench conv`'s shapes (the five ResNet layers and the 1×1 bottleneck) on three
# paths, with the same seeded inputs and the same verification, against cuDNN:
#   wgpu-trusted  `bench conv`            the app natively (catalogue kernels without checks)
#   wgpu          `bench conv --checked`  wgpu's runtime checks on, as Firefox runs WGSL
#   dawn          `bench dump-kernels --conv-shapes …` + `dawn/run.mjs`: the same plans
#                 (split-K and im2col + GEMM included) through Dawn, Chrome's WebGPU
#   cuDNN         `cudnn_conv.py` (TF32 off, cudnn.benchmark on, NCHW)
# Each: RUNS whole runs per cell (fresh buffers, warm-up ≥ 500 ms of GPU time, REPS timed
# passes, a run's time = its median pass, every run verified); the table gives the median
# run and the fastest–slowest. Then Tint's SPIR-V for every conv kernel (Dawn's
# dump_shaders, robustness on) with its clamps counted beside naga's (`bench clamps`), and,
# with STEP=1, the training step trusted and checked (`bench mlp`, 5 runs of 10,000 steps).
# About 4 minutes on the H200 (each phase bounded by `timeout`).
#
# Carry (../shared/TOOLCHAIN.md §6–7, the header of crates/bench/h200/matmul_vs_cublas.sh): .gl and
# .devcarry with bench.xz (release build), node.xz, nm/webgpu/{index.js,package.json,
# dist/linux-x64/dawn.node.xz}. Results: $OUT/conv_paths.tgz (every TSV and log) and
# $OUT/table.md (the device tool brings back at most 8 files).
#
# Locally, tiny, wgpu (lavapipe) and Dawn (SwiftShader: VK_ICD_FILENAMES=
# /usr/lib/chromium/vk_swiftshader_icd.json for node only) — no CUDA here, cuDNN is skipped:
#   cargo build -p bench && BENCH=target/debug/bench NODE=node WEBGPU_MODULE=… SHAPES=small \
#     RUNS=3 REPS=2 OUT=/tmp/cp bash crates/bench/h200/conv_paths.sh
set -u
C=${C:-.devcarry}
SHAPES=${SHAPES:-1,2,3,4,5,6}
RUNS=${RUNS:-3}
REPS=${REPS:-20}
OUT=${OUT:-/tmp/conv_paths_out}
W=/tmp/wcp
R=$W/r
mkdir -p "$R" "$W"
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
export PYTHONUNBUFFERED=1

if ls .gl/*.deb > /dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
if [ -n "${BENCH:-}" ]; then B=$BENCH
elif [ -f "$C/bench.xz" ]; then xz -dc "$C/bench.xz" > $W/bench && chmod +x $W/bench && B=$W/bench
else B=$C/bench; fi
NODE=${NODE:-}
if [ -z "$NODE" ] && [ -f "$C/node.xz" ] && [ -f "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" ]; then
  xz -dc "$C/node.xz" > $W/node && chmod +x $W/node
  mkdir -p $W/webgpu/dist/linux-x64
  cp "$C"/nm/webgpu/index.js "$C"/nm/webgpu/package.json $W/webgpu/
  xz -dc "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" > $W/webgpu/dist/linux-x64/dawn.node
  export WEBGPU_MODULE=$W/webgpu/index.js
  NODE=$W/node
fi
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$R/gpu.txt"
CUDA=
python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null && CUDA=1
CONV_SHAPES=$SHAPES
[ "$SHAPES" = small ] && CONV_SHAPES=   # small: Dawn only here (issue25.sh also runs `bench conv --shapes small`)

phases() {
  if [ -n "$CUDA" ] && [ -n "$CONV_SHAPES" ]; then
    stamp "cuDNN"
    timeout 120 python3 crates/bench/cudnn_conv.py --runs "$RUNS" --reps "$REPS" --out "$R/cudnn.tsv" > "$R/cudnn.log" 2>&1 \
      || { echo "cuDNN failed:"; tail -5 "$R/cudnn.log"; }
  else
    stamp "cuDNN skipped (no CUDA device with torch, or small shapes)"
  fi
  CUDNN=; [ -s "$R/cudnn.tsv" ] && CUDNN="--cudnn $R/cudnn.tsv"
  if [ -n "$CONV_SHAPES" ]; then
    stamp "wgpu trusted"
    timeout 200 $B conv --shapes "$CONV_SHAPES" --runs "$RUNS" --reps "$REPS" $CUDNN --out "$R/trusted.tsv" > "$R/trusted.log" 2>&1 \
      || { echo "wgpu trusted failed:"; tail -5 "$R/trusted.log"; }
    stamp "wgpu checked"
    timeout 200 $B conv --checked --shapes "$CONV_SHAPES" --runs "$RUNS" --reps "$REPS" $CUDNN --out "$R/checked.tsv" > "$R/checked.log" 2>&1 \
      || { echo "wgpu checked failed:"; tail -5 "$R/checked.log"; }
  fi
  if [ -n "$NODE" ]; then
    stamp "Dawn: dumping the conv plans"
    timeout 120 $B dump-kernels --dir $W/d --conv-shapes "$SHAPES" --conv-runs "$RUNS" > "$R/dump.log" 2>&1 \
      || { echo "dump failed:"; tail -5 "$R/dump.log"; }
    stamp "Dawn"
    timeout 240 $NODE crates/bench/dawn/run.mjs --dir $W/d --reps "$REPS" --runs "$RUNS" \
      --flag disable-dawn-features=timestamp_quantization --conv-out "$R/dawn.tsv" > "$R/dawn.log" 2>&1 \
      || { echo "Dawn failed:"; tail -5 "$R/dawn.log"; }
    stamp "Tint's SPIR-V per conv kernel"
    for k in $(python3 -c "import json,sys; print(' '.join(k['id'] for k in json.load(open('$W/d/manifest.json'))['kernels']))"); do
      timeout 30 $NODE crates/bench/dawn/run.mjs --dir $W/d --compile "$k" \
        --flag enable-dawn-features=dump_shaders,disable_symbol_renaming,use_user_defined_labels_in_backend \
        --flag verbose=1 > "$W/tint_$k.txt" 2>&1 || echo "Tint dump of $k failed"
    done
    python3 crates/bench/h200/conv_table.py --tint $W/tint_*.txt > "$R/tint.md" 2>&1
  else
    stamp "Dawn skipped: no node.xz and dawn.node.xz in $C"
  fi
  $B clamps > "$R/naga_clamps.md" 2>&1
  if [ "${STEP:-}" = 1 ]; then
    for c in "" --checked; do
      stamp "training step ${c:-trusted}"
      timeout 60 $B mlp --batch 1024 --steps 10000 --runs 5 --gpu-only --per-submit 1,64 --path default $c \
        > "$R/step${c:+_checked}.txt" 2>&1 || echo "step ${c:-trusted} failed"
    done
  fi
}
export -f phases stamp
export B C R W NODE SHAPES CONV_SHAPES RUNS REPS CUDA
timeout 540 bash -c phases
stamp summary
python3 crates/bench/h200/conv_table.py --dir "$R" > "$R/table.md" 2>&1
cat "$R/table.md" "$R/tint.md" "$R/naga_clamps.md" 2> /dev/null
grep -hE "NO|failed|rror" "$R"/*.log 2> /dev/null | head -20
for f in "$R"/step*.txt; do [ -f "$f" ] && { echo "--- $f"; grep -E "^\|" "$f" | tail -4; }; done
mkdir -p "$OUT"; cp "$R/table.md" "$OUT/"
tar czf "$OUT/conv_paths.tgz" -C "$W" r
stamp done
