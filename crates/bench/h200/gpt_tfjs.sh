#!/bin/bash
# Issue 39's peer for the GPT training step, in ONE device call (about a minute on an H100/H200;
# each phase bounded by `left`): TensorFlow.js's WebGPU backend through Dawn (Chrome's WebGPU,
# npm `webgpu`) training the engine's GPT at its default configuration (2 layers, 4 heads,
# width 64, context 32, vocabulary 28, 32 windows a step, Adam lr 1e-2):
#   1. `bench dump-kernels --gpt-peer $SHAPE`: the shape, the seeded initial parameters, one
#      seeded batch and the f64 reference losses after 0…3 Adam steps with their bounds
#      (crates/bench/src/gpt_peer.rs);
#   2. `tfjs/gpt_tfjs.mjs` (bundled): verifies its 4 losses against that bound (exits 1,
#      untimed, otherwise), then RUNS whole runs of ≥ MIN_MS ms of steps, ms/step median;
#   3. if the carry holds gpt_engine.xz (pack with ENGINE=1): the engine's own step on the
#      same machine through wgpu (`gpt_engine default_config_step_time`, as
#      tc_attention_gpt.sh runs it), for the ratio on the same card.
# Results: $OUT/gpt_tfjs.log (everything printed) and $OUT/gpt_tfjs.tgz (logs, the TSV).
#
# Carry .gl (../shared/TOOLCHAIN.md §6) and .devcarry/gptpeer, made here from THIS tree by
#   bash crates/bench/h200/gpt_tfjs.sh pack            (ENGINE=1 adds the gpt_engine test binary)
# (bench in release from ${CARGO_TARGET_DIR:-target}; node; Dawn's binding and the tfjs bundle
# from $NM, default crates/bench/tfjs/node_modules: `npm ci` in crates/bench/tfjs first).
# On the device: OUT=$OUT bash crates/bench/h200/gpt_tfjs.sh
# Locally (SwiftShader for Dawn: Dawn refuses lavapipe), tiny, from the packed carry:
#   LOCAL=1 OUT=/tmp/gptpeer_out bash crates/bench/h200/gpt_tfjs.sh
# (LOCAL sets SHAPE to a tiny model, RUNS=1, MIN_MS=300 and NODE_VK_ICD to Chromium's
# SwiftShader; BENCH=, NODE=, WEBGPU_MODULE=, TFJS_JS= use local files instead of the carry.)
# SABOTAGE=gelu|mask|ln-eps runs the peer with that mistake: verification must refuse it.
set -u
H=crates/bench/h200
. $H/lib.sh
C=${C:-.devcarry/gptpeer}
if [ "${1:-}" = pack ]; then
  NM=${NM:-crates/bench/tfjs/node_modules}
  wg=$NM/webgpu
  tgt=${CARGO_TARGET_DIR:-target}
  mkdir -p "$C/webgpu/dist/linux-x64"
  [ -f "$wg/dist/linux-x64/dawn.node" ] || (cd crates/bench/tfjs && npm ci) || exit 1
  nice -n 19 cargo build --release -j 1 -p bench || exit 1
  xz -T2 -6 -c "$tgt/release/bench" > "$C/bench.xz"
  xz -T2 -6 -c "$(command -v node)" > "$C/node.xz"
  cp "$wg/index.js" "$wg/package.json" "$C/webgpu/" || exit 1
  xz -T2 -6 -c "$wg/dist/linux-x64/dawn.node" > "$C/webgpu/dist/linux-x64/dawn.node.xz" || exit 1
  bundle=$(cd "$C" && pwd)/gpt_tfjs.bundle.mjs
  (cd crates/bench/tfjs && npx esbuild gpt_tfjs.mjs --bundle --platform=node --format=esm \
    --banner:js="import { createRequire as __peerRequire } from 'node:module'; const require = __peerRequire(import.meta.url);" \
    --outfile="$bundle" --log-level=warning) || exit 1
  if [ "${ENGINE:-0}" = 1 ]; then
    t=$(nice -n 19 cargo test --release -j 1 -p gpu-runtime --test gpt_engine --no-run --message-format=json 2> /dev/null \
      | grep -o '"executable":"[^"]*gpt_engine[^"]*"' | tail -1 | cut -d'"' -f4)
    [ -n "$t" ] || { echo "no gpt_engine test binary"; exit 1; }
    xz -T2 -6 -c "$t" > "$C/gpt_engine.xz"
  fi
  du -sh "$C" .gl 2> /dev/null
  exit 0
fi
OUT=${OUT:-/tmp/gptpeer_out}
W=${WORK:-/tmp/wgptpeer}
R=$W/r
T0=$(date +%s)
BUDGET=${BUDGET:-400}
SHAPE=${SHAPE:-default}
RUNS=${RUNS:-3}
MIN_MS=${MIN_MS:-1500}
WARMUP=${WARMUP:-20}
if [ "${LOCAL:-}" = 1 ]; then
  SHAPE=${SHAPE_LOCAL:-vocab=11,context=8,width=16,heads=2,layers=2,batch=4}
  RUNS=${RUNS_LOCAL:-1}
  MIN_MS=${MIN_MS_LOCAL:-300}
  WARMUP=3
  SLOW=${SLOW:-4}
  NODE_VK_ICD=${NODE_VK_ICD:-/usr/lib/chromium/vk_swiftshader_icd.json}
  BUDGET=${BUDGET_LOCAL:-900}
fi
mkdir -p "$R" "$OUT"
h200_tools "$C" "$W"
TFJS_JS=${TFJS_JS:-$C/gpt_tfjs.bundle.mjs}
SAB=(); [ -n "${SABOTAGE:-}" ] && SAB=(--sabotage "$SABOTAGE")
{
  stamp "machine"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  grep -m1 'model name' /proc/cpuinfo; nproc
  [ -n "$NODE" ] && "$NODE" --version
  stamp "1: dump the GPT peer ($SHAPE)"
  rm -rf "$W/d"
  timeout "$(left 120)" "$B" dump-kernels --dir "$W/d" --gpt-peer "$SHAPE" 2>&1
  if [ -n "$NODE" ] && [ -f "$W/d/gpt-peer/gpt.json" ]; then
    stamp "2: TensorFlow.js webgpu (tfjs/gpt_tfjs.mjs), verify, then $RUNS runs of ≥ $MIN_MS ms"
    timeout "$(left 240)" "${NODEVK[@]}" "$NODE" "$TFJS_JS" --dir "$W/d/gpt-peer" --runs "$RUNS" \
      --min-ms "$MIN_MS" --warmup "$WARMUP" --out "$R/tfjs_gpt.tsv" "${SAB[@]}" 2>&1
    echo "tfjs exit status $?"
  else
    echo "no node/Dawn carried or no dump: tfjs skipped"
  fi
  if [ -f "$C/gpt_engine.xz" ]; then
    stamp "3: the engine's step through wgpu (gpt_engine default_config_step_time)"
    xz -dc "$C/gpt_engine.xz" > "$W/gpt_engine" && chmod +x "$W/gpt_engine"
    timeout "$(left 120)" "$W/gpt_engine" default_config_step_time --ignored --nocapture 2>&1 \
      | grep -E "default config|test result|panicked"
  fi
  stamp "done"
} 2>&1 | grep -v "XDG_RUNTIME_DIR" | tee "$R/gpt_tfjs.log"
cp "$R/gpt_tfjs.log" "$OUT/gpt_tfjs.log"
tar -czf "$OUT/gpt_tfjs.tgz" -C "$R" .
