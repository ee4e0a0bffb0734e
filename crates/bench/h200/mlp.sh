#!/bin/bash
# Issue 25 §1's MLP figures on the H200 in one device call (docs/benchmarks.md, "MLP training
# step: wgpu trusted, wgpu checked and Dawn"): the train view's 2-16-16-2 network (ReLU, Adam,
# lr 0.01, `bench mlp`'s 8,192 spiral points) at batch 1,024 and 64, 1 and 64 steps per submit,
# on three paths with the same inputs:
#   trusted  `bench mlp`: the app's TrainingSession natively (wgpu 30, Vulkan), the catalogue's
#            kernels compiled without runtime checks (as the app natively)
#   checked  `bench mlp --checked`: the same with wgpu's runtime checks (as Firefox compiles WGSL)
#   dawn     `bench dump-kernels --mlp` + `dawn/mlp.mjs`: the same step plan through Dawn
#            (Chrome's WebGPU, npm `webgpu`)
# Each (batch, steps per submit) is first verified: 64 steps next to the CPU twin, every
# parameter within the session's bound (four ulps per step); then RUNS whole runs of STEPS
# steps, wall clock, median and spread. ROUNDS times over, in the same call. Last, Dawn with its
# robustness transform off (not what a browser runs: where Dawn's extra time goes; NOROBUST=0
# leaves it out).
#
# Carry (../shared/TOOLCHAIN.md §6–7): .gl, $C (default .devcarry/mlp: bench.xz, mlp.mjs, this
# script) and from $N (default .devcarry/cnn) node.xz and webgpu/{index.js,package.json,
# dist/linux-x64/dawn.node.xz}. Results: $OUT/mlp.log and $OUT/mlp.tgz (every TSV).
#
# Locally (lavapipe for wgpu, SwiftShader for Dawn), tiny:
#   BENCH=target/release/bench NODE=node WEBGPU_MODULE=/path/to/webgpu/index.js \
#     NODE_VK_ICD=/usr/lib/chromium/vk_swiftshader_icd.json DAWN_JS=crates/bench/dawn/mlp.mjs \
#     STEPS=64 RUNS=1 ROUNDS=1 OUT=/tmp/mlpout bash crates/bench/h200/mlp.sh
set -u
C=${C:-.devcarry/mlp}
N=${N:-.devcarry/cnn}
RUNS=${RUNS:-3}
ROUNDS=${ROUNDS:-2}
STEPS=${STEPS:-10000}
BATCHES=${BATCHES:-1024,64}
OUT=${OUT:-/tmp/mlp_out}
NOROBUST=${NOROBUST:-1}
W=${W:-/tmp/wmlp}
R=$W/r
mkdir -p "$R" "$W" "$OUT"
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

if ls .gl/*.deb > /dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
export XDG_RUNTIME_DIR=$W/xdg; mkdir -p -m 700 "$XDG_RUNTIME_DIR"
if [ -n "${BENCH:-}" ]; then B=$BENCH; else xz -dc "$C/bench.xz" > $W/bench && chmod +x $W/bench && B=$W/bench; fi
NODE=${NODE:-}
if [ -z "$NODE" ]; then
  xz -dc "$N/node.xz" > $W/node && chmod +x $W/node
  mkdir -p $W/webgpu/dist/linux-x64
  cp "$N"/webgpu/index.js "$N"/webgpu/package.json $W/webgpu/
  xz -dc "$N/webgpu/dist/linux-x64/dawn.node.xz" > $W/webgpu/dist/linux-x64/dawn.node
  export WEBGPU_MODULE=$W/webgpu/index.js
  NODE=$W/node
fi
DAWN_JS=${DAWN_JS:-$C/mlp.mjs}
NODEVK=(env); [ -n "${NODE_VK_ICD:-}" ] && NODEVK=(env VK_ICD_FILENAMES="$NODE_VK_ICD")

{
  stamp "machine"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  grep -m1 'model name' /proc/cpuinfo; nproc
  "$NODE" --version
  stamp "dump the MLP step"
  timeout 30 $B dump-kernels --dir $W/d --mlp "$BATCHES" 2>&1
  for round in $(seq 1 "$ROUNDS"); do
    for b in ${BATCHES//,/ }; do
      stamp "round $round: wgpu trusted, batch $b (bench mlp)"
      timeout 60 $B mlp --batch "$b" --steps "$STEPS" --runs "$RUNS" --gpu-only --per-submit 1,64 \
        --out "$R/wgpu_trusted_${b}_r$round.tsv" 2>&1 || echo "bench mlp failed: $?"
      stamp "round $round: wgpu checked, batch $b (bench mlp --checked)"
      timeout 60 $B mlp --batch "$b" --steps "$STEPS" --runs "$RUNS" --gpu-only --per-submit 1,64 --checked \
        --out "$R/wgpu_checked_${b}_r$round.tsv" 2>&1 || echo "bench mlp --checked failed: $?"
    done
    stamp "round $round: Dawn (dawn/mlp.mjs)"
    timeout 120 "${NODEVK[@]}" "$NODE" "$DAWN_JS" --dir $W/d/mlp --batches "$BATCHES" --per-submit 1,64 \
      --steps "$STEPS" --runs "$RUNS" --out "$R/dawn_r$round.tsv" 2>&1 || echo "dawn failed: $?"
  done
  if [ "$NOROBUST" != 0 ]; then
    stamp "Dawn, robustness off (not what a browser runs)"
    timeout 120 "${NODEVK[@]}" "$NODE" "$DAWN_JS" --dir $W/d/mlp --batches "$BATCHES" --per-submit 1,64 \
      --steps "$STEPS" --runs "$RUNS" --flag enable-dawn-features=disable_robustness \
      --out "$R/dawn_norobust.tsv" 2>&1 || echo "dawn (robustness off) failed: $?"
  fi
  stamp "done"
} 2>&1 | tee "$R/mlp.log"
cp "$R/mlp.log" "$OUT/mlp.log"
tar -czf "$OUT/mlp.tgz" -C "$R" .
