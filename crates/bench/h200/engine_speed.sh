#!/bin/bash
# The training engine's "no speed lost" check (issue 44) and the GPT's Dawn figures (issue 39)
# in ONE device call (≤ 9 minutes; each phase bounded by `timeout`, cut to what is left of
# BUDGET). BEFORE is a bench binary built from the tree before a model's move onto the engine:
# bench-cnn-before.xz for the CNN (with that tree's dawn/cnn.mjs as cnn-before.mjs),
# bench-before.xz for the MLP; AFTER is this tree's (bench.xz, dawn/*.mjs). Every figure is the median of RUNS whole runs with the spread, every
# run verified against the CPU twin first (a failed verification times nothing).
#   1. CNN step, batch 64 and 256, wgpu trusted: `bench cnn --no-cpu`, BEFORE then AFTER
#   2. CNN step through Dawn: each binary's own dump replayed by its own runner (BEFORE: the
#      copied plan, one step a submission; AFTER: the engine's description, steps staged
#      per submission as the session does)
#   3. MLP step, batch 1,024, 1 and 64 steps a submission: `bench mlp` trusted and
#      `dawn/mlp.mjs`, BEFORE then AFTER
#   4. GPT (the page's GPU defaults on the names): `dawn/gpt.mjs`, 1 and 16 steps a
#      submission, then the time to a validation loss ≤ 90 % of the bigram's (60 s)
#   5. the GPT against its TensorFlow.js peer (issue 39's ≥ 3× goal) at the peer's shape (2
#      layers, 4 heads, width 64, context 32, 32 windows, Adam 1e-2): the engine through Dawn
#      (`dawn/gpt.mjs`, steps only), then `tfjs/gpt_tfjs.mjs` (gpt_tfjs.sh's bundle, verified
#      against the f64 reference before it is timed)
#   6. GPT decode with the KV cache: `bench gpt-decode`, batches 1…64 (tokens/s)
#   7. GPT step trusted: the `gpt_engine` test binary's `default_config_step_time`
#   8. the same GPT step on one CPU core (issue 39's ≥ 20× goal): `bench gpt-cpu`, the tuned
#      CPU trainer and the twin at the page's defaults on the names
# Carry .gl (../shared/TOOLCHAIN.md §6) and $C (default .devcarry/e1), made here by
#   bash crates/bench/h200/engine_speed.sh pack   (BEFORE=PATH/TO/bench-before, optional)
# Results: $OUT/engine.log and $OUT/engine.tgz (every TSV).
set -u
H=crates/bench/h200
. $H/lib.sh
C=${C:-.devcarry/e1}
if [ "${1:-}" = pack ]; then
  h200_pack "$C" || exit 1
  C="$C" bash $H/gpt_tfjs.sh pack || exit 1
  for f in cnn mlp engine gpt; do cp crates/bench/dawn/$f.mjs "$C/"; done
  [ -f target/gpt-names.txt ] || cargo xtask gpt-data --out target || exit 1
  xz -T2 -6 -c target/gpt-names.txt > "$C/gpt-names.txt.xz"
  t=$(cargo test --release -p gpu-runtime --test gpt_engine --no-run --message-format=json 2> /dev/null \
    | grep -o '"executable":"[^"]*gpt_engine[^"]*"' | tail -1 | cut -d'"' -f4)
  [ -n "$t" ] && xz -T2 -6 -c "$t" > "$C/gpt_engine.xz"
  for f in bench-before bench-cnn-before; do [ -f "$C/$f.xz" ] || echo "no $C/$f.xz: its BEFORE rows will be skipped"; done
  du -sh "$C" .gl
  exit 0
fi
OUT=${OUT:-/tmp/engine_out}
W=${WORK:-/tmp/wengine}
R=$W/r
T0=$(date +%s)
BUDGET=${BUDGET:-540}
RUNS=${RUNS:-3}
mkdir -p "$R" "$OUT"
h200_tools "$C" "$W"
unpack() { [ -f "$C/$1.xz" ] && xz -dc "$C/$1.xz" > "$W/$1" && chmod +x "$W/$1" && echo "$W/$1"; }
BB=$(unpack bench-before)
BC=$(unpack bench-cnn-before)
xz -dc "$C/gpt-names.txt.xz" > "$W/gpt-names.txt"
{
  stamp "machine"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  grep -m1 'model name' /proc/cpuinfo; nproc; "$NODE" --version
  for side in before after; do
    if [ $side = before ]; then X=$BC; J=$C/cnn-before.mjs; else X=$B; J=$C/cnn.mjs; fi
    [ -n "$X" ] || { echo "no $side binary"; continue; }
    stamp "CNN $side: wgpu trusted (bench cnn --no-cpu)"
    timeout "$(left 60)" "$X" cnn --digits "$DIGITS" --batches 64,256 --runs "$RUNS" --min-ms 1500 --no-cpu \
      --tta-secs 0 --out "$R/cnn_wgpu_$side.tsv" 2>&1 | grep -v '^ *[0-9.]* s  step' || echo "failed: $?"
    stamp "CNN $side: Dawn"
    timeout 60 "$X" dump-kernels --dir "$W/d_$side" --cnn "$DIGITS" --cnn-batches 64,256 --cnn-epochs 50 2>&1
    timeout "$(left 70)" "${NODEVK[@]}" "$NODE" "$J" --dir "$W/d_$side/cnn" --batches 64,256 --runs "$RUNS" \
      --min-ms 1500 --tta-secs 0 --out "$R/cnn_dawn_$side.tsv" 2>&1 || echo "failed: $?"
  done
  for side in before after; do
    if [ $side = before ]; then X=$BB; else X=$B; fi
    [ -n "$X" ] || continue
    stamp "MLP $side: wgpu trusted, batch 1024 (bench mlp)"
    timeout "$(left 40)" "$X" mlp --batch 1024 --steps 10000 --runs "$RUNS" --gpu-only --per-submit 1,64 \
      --out "$R/mlp_wgpu_$side.tsv" 2>&1 || echo "failed: $?"
    stamp "MLP $side: Dawn"
    timeout 30 "$X" dump-kernels --dir "$W/m_$side" --mlp 1024 2>&1
    timeout "$(left 50)" "${NODEVK[@]}" "$NODE" "$C/mlp.mjs" --dir "$W/m_$side/mlp" --batches 1024 --per-submit 1,64 \
      --steps 10000 --runs "$RUNS" --out "$R/mlp_dawn_$side.tsv" 2>&1 || echo "failed: $?"
  done
  stamp "GPT: Dawn (dawn/gpt.mjs)"
  timeout 60 "$B" dump-kernels --dir "$W/g" --gpt "$W/gpt-names.txt" --gpt-order-steps 100000 2>&1
  timeout "$(left 130)" "${NODEVK[@]}" "$NODE" "$C/gpt.mjs" --dir "$W/g/gpt" --per-submit 1,16 --runs "$RUNS" \
    --min-ms 1500 --tta-secs 60 --tta-per-submit 16 --eval-every 250 --out "$R/gpt_dawn.tsv" 2>&1 || echo "failed: $?"
  stamp "GPT at the tfjs peer's shape: Dawn (dawn/gpt.mjs, steps only)"
  timeout 60 "$B" dump-kernels --dir "$W/gp" --gpt "$W/gpt-names.txt" --gpt-shape 2,4,64,32 --gpt-batch 32 \
    --gpt-lr 0.01 --gpt-order-steps 20000 2>&1
  timeout "$(left 60)" "${NODEVK[@]}" "$NODE" "$C/gpt.mjs" --dir "$W/gp/gpt" --per-submit 1,16 --runs "$RUNS" \
    --min-ms 1500 --tta-secs 0 --out "$R/gpt_dawn_peer_shape.tsv" 2>&1 || echo "failed: $?"
  if [ -f "$C/gpt_tfjs.bundle.mjs" ]; then
    stamp "GPT: TensorFlow.js webgpu peer (tfjs/gpt_tfjs.mjs)"
    timeout 60 "$B" dump-kernels --dir "$W/tp" --gpt-peer default 2>&1
    timeout "$(left 90)" "${NODEVK[@]}" "$NODE" "$C/gpt_tfjs.bundle.mjs" --dir "$W/tp/gpt-peer" --runs "$RUNS" \
      --min-ms 1500 --warmup 20 --out "$R/tfjs_gpt.tsv" 2>&1 || echo "failed: $?"
  fi
  stamp "GPT decode (bench gpt-decode)"
  timeout "$(left 60)" "$B" gpt-decode --runs "$RUNS" 2>&1 || echo "failed: $?"
  if [ -f "$C/gpt_engine.xz" ]; then
    stamp "GPT step, wgpu trusted (gpt_engine default_config_step_time)"
    xz -dc "$C/gpt_engine.xz" > "$W/gpt_engine" && chmod +x "$W/gpt_engine"
    timeout "$(left 40)" "$W/gpt_engine" default_config_step_time --ignored --nocapture 2>&1 | grep -E 'default config|test result' || echo "failed: $?"
  fi
  stamp "GPT step on one CPU core: tuned and twin (bench gpt-cpu)"
  timeout "$(left 30)" "$B" gpt-cpu --asset "$W/gpt-names.txt" --runs "$RUNS" --out "$R/gpt_cpu.tsv" 2>&1 || echo "failed: $?"
  stamp "done"
} 2>&1 | tee "$R/engine.log"
cp "$R/engine.log" "$OUT/engine.log"
tar -czf "$OUT/engine.tgz" -C "$R" .
