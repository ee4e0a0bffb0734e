#!/bin/bash
# Issue 24's numbers on the H200 in one device call (docs/benchmarks.md, "CNN training"): the
# CNN page's default network (cnn::Spec::default(): conv 5×5 ×6, pool, conv 5×5 ×16, pool,
# dense 10, Adam lr 0.001, batch 64) on the real digits (9,000 train / 1,000 test):
#   wgpu       `bench cnn`: the app's CnnSession natively (Vulkan), verified in lockstep against
#              the CPU twin's bound first, steps/s at batch 64 and 256 (RUNS whole runs), the
#              tuned CPU trainer on one core at the same batches, and time to 90 %/97 % test
#              accuracy with the accuracy at TTA seconds
#   dawn       `bench dump-kernels --cnn` + `dawn/cnn.mjs`: the same step plan through Dawn
#              (Chrome's WebGPU, npm `webgpu`), verified the same way, same measurements
#   tfjs       `tfjs/cnn_tfjs.mjs` (bundled): TensorFlow.js's WebGPU backend training the same
#              network on the same adapter through Dawn, same treatment, and a training check
# About 5 minutes (each phase bounded by `timeout`). PROFILE=REPS: only the profile (below).
# CHECKED=1 adds `bench cnn --checked` (wgpu's runtime checks, as Firefox; step rows
# wgpu-checked-step in wgpu_checked.tsv), CPU=0 leaves out the tuned CPU (`--no-cpu`), TFJS=0
# leaves out TensorFlow.js (crates/bench/h200/issue25.sh runs it so).
#
# Carry (../shared/TOOLCHAIN.md §6–7): .gl (the Vulkan loader and glvnd debs) and $C
# (default .devcarry/cnn) holding bench.xz (release build), node.xz, cnn-digits.bin.xz
# (`cargo xtask mnist`), webgpu/{index.js,package.json,dist/linux-x64/dawn.node.xz},
# cnn.mjs, cnn_tfjs.bundle.mjs and this script. Results: $OUT/cnn.log (everything printed)
# and $OUT/cnn.tgz (every TSV and log).
#
# Locally (lavapipe for wgpu, SwiftShader for Dawn and tfjs), tiny:
#   BENCH=target/release/bench NODE=node DIGITS=target/cnn-digits.bin \
#     WEBGPU_MODULE=$PWD/crates/bench/tfjs/node_modules/webgpu/index.js \
#     NODE_VK_ICD=/usr/lib/chromium/vk_swiftshader_icd.json DAWN_JS=crates/bench/dawn/cnn.mjs \
#     TFJS_JS=/tmp/cnn_tfjs.bundle.mjs BATCHES=4 RUNS=1 MIN_MS=100 CPU_MIN_MS=100 TTA=0 CHECK=3 \
#     OUT=/tmp/cnnout \
#     bash crates/bench/h200/cnn.sh
set -u
C=${C:-.devcarry/cnn}
RUNS=${RUNS:-3}
BATCHES=${BATCHES:-64,256}
MIN_MS=${MIN_MS:-1500}
CPU_MIN_MS=${CPU_MIN_MS:-3000}
TTA=${TTA:-60}
EVERY=${EVERY:-50}
CHECK=${CHECK:-500}
OUT=${OUT:-/tmp/cnn_out}
CHECKED=${CHECKED:-0}
CPU=${CPU:-1}
TFJS=${TFJS:-1}
W=${W:-/tmp/wcnn}
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
if [ -n "${DIGITS:-}" ]; then D=$DIGITS; else xz -dc "$C/cnn-digits.bin.xz" > $W/digits.bin && D=$W/digits.bin; fi
NODE=${NODE:-}
if [ -z "$NODE" ]; then
  xz -dc "$C/node.xz" > $W/node && chmod +x $W/node
  mkdir -p $W/webgpu/dist/linux-x64
  cp "$C"/webgpu/index.js "$C"/webgpu/package.json $W/webgpu/
  xz -dc "$C/webgpu/dist/linux-x64/dawn.node.xz" > $W/webgpu/dist/linux-x64/dawn.node
  export WEBGPU_MODULE=$W/webgpu/index.js
  NODE=$W/node
fi
DAWN_JS=${DAWN_JS:-$C/cnn.mjs}
TFJS_JS=${TFJS_JS:-$C/cnn_tfjs.bundle.mjs}
# Node's Vulkan driver (SwiftShader locally: Dawn refuses lavapipe); the H200's otherwise.
NODEVK=(env); [ -n "${NODE_VK_ICD:-}" ] && NODEVK=(env VK_ICD_FILENAMES="$NODE_VK_ICD")

if [ -n "${PROFILE:-}" ]; then
  # PROFILE=REPS: only where Dawn's step time goes (dawn/cnn.mjs --profile) and Dawn's step
  # with its robustness transform off (the bounds clamps; not what a browser runs), ~1 min.
  {
    stamp "dump"; timeout 60 $B dump-kernels --dir $W/d --cnn "$D" --cnn-batches "$BATCHES" 2>&1
    stamp "Dawn profile"
    timeout 150 "${NODEVK[@]}" "$NODE" "$DAWN_JS" --dir $W/d/cnn --batches "$BATCHES" --runs 1 --min-ms "$MIN_MS" \
      --tta-secs 0 --profile "$PROFILE" --out "$R/dawn_profile.tsv" 2>&1 || echo "profile failed: $?"
    stamp "Dawn, robustness off"
    timeout 100 "${NODEVK[@]}" "$NODE" "$DAWN_JS" --dir $W/d/cnn --batches "$BATCHES" --runs "$RUNS" --min-ms "$MIN_MS" \
      --tta-secs 0 --flag enable-dawn-features=disable_robustness --out "$R/dawn_norobust.tsv" 2>&1 || echo "failed: $?"
    stamp "done"
  } 2>&1 | tee "$R/profile.log"
  cp "$R/profile.log" "$OUT/profile.log"
  tar -czf "$OUT/profile.tgz" -C "$R" .
  exit 0
fi
{
  stamp "machine"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  grep -m1 'model name' /proc/cpuinfo; nproc
  "$NODE" --version
  stamp "dump the CNN plan"
  timeout 60 $B dump-kernels --dir $W/d --cnn "$D" --cnn-batches "$BATCHES" 2>&1
  NOCPU=; [ "$CPU" = 0 ] && NOCPU=--no-cpu
  stamp "wgpu$([ -z "$NOCPU" ] && echo " and the tuned CPU") (bench cnn)"
  timeout 240 $B cnn --digits "$D" --batches "$BATCHES" --runs "$RUNS" --min-ms "$MIN_MS" --cpu-min-ms "$CPU_MIN_MS" \
    --tta-secs "$TTA" --eval-every "$EVERY" $NOCPU --out "$R/wgpu.tsv" 2>&1 || echo "bench cnn failed: $?"
  if [ "$CHECKED" = 1 ]; then
    stamp "wgpu checked (bench cnn --checked)"
    timeout 120 $B cnn --checked --no-cpu --digits "$D" --batches "$BATCHES" --runs "$RUNS" --min-ms "$MIN_MS" \
      --tta-secs 0 --out "$R/wgpu_checked.tsv" 2>&1 || echo "bench cnn --checked failed: $?"
  fi
  stamp "Dawn (dawn/cnn.mjs)"
  timeout 150 "${NODEVK[@]}" "$NODE" "$DAWN_JS" --dir $W/d/cnn --batches "$BATCHES" --runs "$RUNS" --min-ms "$MIN_MS" \
    --tta-secs "$TTA" --eval-every "$EVERY" --out "$R/dawn.tsv" 2>&1 || echo "dawn failed: $?"
  if [ "$TFJS" != 0 ]; then
    stamp "TensorFlow.js webgpu (tfjs/cnn_tfjs.mjs)"
    timeout 120 "${NODEVK[@]}" "$NODE" "$TFJS_JS" --dir $W/d/cnn --batches "$BATCHES" --runs "$RUNS" --min-ms "$MIN_MS" \
      --check-steps "$CHECK" --out "$R/tfjs.tsv" 2>&1 || echo "tfjs failed: $?"
  fi
  stamp "done"
} 2>&1 | tee "$R/cnn.log"
cp "$R/cnn.log" "$OUT/cnn.log"
tar -czf "$OUT/cnn.tgz" -C "$R" .
