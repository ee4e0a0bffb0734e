#!/bin/bash
# Issue 39's goal measured where it is set: causal attention forward (fp32, head width 64,
# 32 problems, n 1024/2048/4096) through Dawn (Chrome's WebGPU, npm `webgpu`'s Node binding)
# against PyTorch SDPA fp32, in ONE device call (≤ 5 minutes; each phase bounded by `left`):
#   1. `bench dump-kernels --attention-seqs`: both paths' plans as the runtime builds them,
#      the seeded q/k/v of `bench attention` and its checked rows with the f64 reference;
#   2. Dawn: crates/bench/dawn/run.mjs over the dump, --runs 3 whole runs (median pass each),
#      every run verified; naive "does not fit" where its scores exceed Dawn's binding limit;
#   3. the same plans through wgpu (`bench attention`, trusted), as a control;
#   4. torch SDPA (math and efficient) alike (`crates/bench/torch_sdpa.py`).
# Then $OUT/summary.md: the three tables and each length's Dawn fused / SDPA efficient.
#
# Carry .gl (../shared/TOOLCHAIN.md §6) and .devcarry/attn, made here from THIS tree by
#   bash crates/bench/h200/attention_dawn.sh pack
# (bench in release from ${CARGO_TARGET_DIR:-target}; node; Dawn's binding from $NM, default
# crates/bench/tfjs/node_modules, holding webgpu/{index.js,package.json} and
# webgpu/dist/linux-x64/dawn.node or dawn.node.xz). lib.sh's h200_tools unpacks it.
# Locally (SwiftShader for Dawn, lavapipe for wgpu, no CUDA), tiny:
#   LOCAL=1 BENCH=$CARGO_TARGET_DIR/release/bench NODE=node WEBGPU_MODULE=…/webgpu/index.js \
#     OUT=/tmp/attn bash crates/bench/h200/attention_dawn.sh
set -u
H=crates/bench/h200
. $H/lib.sh
C=${C:-.devcarry/attn}
if [ "${1:-}" = pack ]; then
  NM=${NM:-crates/bench/tfjs/node_modules}
  wg=$NM/webgpu
  tgt=${CARGO_TARGET_DIR:-target}
  mkdir -p "$C/webgpu/dist/linux-x64"
  nice -n 19 cargo build --release -j 1 -p bench || exit 1
  xz -T2 -6 -c "$tgt/release/bench" > "$C/bench.xz"
  xz -T2 -6 -c "$(command -v node)" > "$C/node.xz"
  cp "$wg/index.js" "$wg/package.json" "$C/webgpu/" || exit 1
  if [ -f "$wg/dist/linux-x64/dawn.node.xz" ]; then
    cp "$wg/dist/linux-x64/dawn.node.xz" "$C/webgpu/dist/linux-x64/"
  else
    xz -T2 -6 -c "$wg/dist/linux-x64/dawn.node" > "$C/webgpu/dist/linux-x64/dawn.node.xz" || exit 1
  fi
  du -sh "$C" .gl
  exit 0
fi
OUT=${OUT:-/tmp/attn_out}
W=${WORK:-/tmp/wattn}
R=$W/r
T0=$(date +%s)
BUDGET=${BUDGET:-285}
SEQS=${SEQS:-1024,2048,4096}
BH=${BH:-32}
D=${D:-64}
RUNS=${RUNS:-3}
REPS=${REPS:-5}
WARM=${WARM:-300}
if [ "${LOCAL:-}" = 1 ]; then
  SEQS=${SEQS_LOCAL:-64,128}
  BH=${BH_LOCAL:-2}
  REPS=2
  WARM=0
  SLOW=${SLOW:-4}
  NODE_VK_ICD=${NODE_VK_ICD:-/usr/lib/chromium/vk_swiftshader_icd.json}
  BUDGET=${BUDGET_LOCAL:-900}
fi
mkdir -p "$R" "$OUT"
export PYTHONUNBUFFERED=1
h200_tools "$C" "$W"
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$R/gpu.txt"

stamp "1: dump at n $SEQS, bh $BH, d $D"
rm -rf "$W/dump"
timeout "$(left 60)" $B dump-kernels --dir "$W/dump" --attention-seqs "$SEQS" --attention-bh "$BH" \
  --attention-d "$D" 2>&1 | tee "$R/dump.log"

if [ -n "$NODE" ] && [ -f "$W/dump/manifest.json" ]; then
  stamp "2: Dawn, $RUNS runs"
  timeout "$(left 120)" "${NODEVK[@]}" "$NODE" crates/bench/dawn/run.mjs --dir "$W/dump" --runs "$RUNS" \
    --reps "$REPS" --warm-ms "$WARM" --attention-out "$R/dawn_attention.tsv" > "$R/dawn.log" 2>&1 \
    || echo "Dawn ended with $?"
  grep -vE "XDG_RUNTIME_DIR|^features:" "$R/dawn.log" | tail -16
else
  echo "no node/Dawn carried or no dump: Dawn skipped"
fi
rm -rf "$W/dump"

stamp "3: wgpu trusted"
timeout "$(left 90)" $B attention --seqs "$SEQS" --bh "$BH" --d "$D" --runs "$RUNS" --reps "$REPS" \
  --warm-ms "$WARM" --out "$R/wgpu_attention.tsv" > "$R/wgpu.log" 2>&1 || echo "wgpu ended with $?"
grep -vE "XDG_RUNTIME_DIR" "$R/wgpu.log" | tail -12

if [ -n "$CUDA" ]; then
  stamp "4: torch SDPA"
  timeout "$(left 60)" python3 crates/bench/torch_sdpa.py --seqs "$SEQS" --bh "$BH" --d "$D" --runs "$RUNS" \
    --out "$R/sdpa.tsv" > "$R/sdpa.log" 2>&1 || echo "SDPA ended with $?"
  tail -10 "$R/sdpa.log"
fi

stamp "summary"
{
  echo "## Causal attention forward through Dawn, wgpu and torch SDPA ($(cat "$R/gpu.txt" 2> /dev/null))"
  echo "fp32, bh $BH, d $D, median of $RUNS runs; TFLOP/s counted 4·bh·n²·d / 2"
  echo; echo "### Dawn"; grep -E "^(adapter|timing):|^\||failure|run.mjs:" "$R/dawn.log" 2> /dev/null
  echo; echo "### wgpu (trusted)"; grep -E "^adapter:|^\||error|failed" "$R/wgpu.log" 2> /dev/null
  echo; echo "### torch SDPA"; grep -E "^device:|^\|" "$R/sdpa.log" 2> /dev/null
  if [ -f "$R/sdpa.tsv" ] && [ -f "$R/dawn_attention.tsv" ]; then
    echo; echo "### Goal: fused ≥ 50 % of SDPA efficient (median TFLOP/s)"
    echo "| n | Dawn fused | wgpu fused | SDPA efficient | Dawn / SDPA | wgpu / SDPA |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
    awk -F'\t' '
      FILENAME ~ /dawn_attention/ && $2 == "fused" && $4 != "" { dawn[$3] = $4 }
      FILENAME ~ /wgpu_attention/ && $2 == "fused" && $4 != "" { wgpu[$3] = $4 }
      FILENAME ~ /sdpa/ && $1 == "efficient" && $3 != "" { sdpa[$2] = $3; ns[++k] = $2 }
      END {
        for (i = 1; i <= k; i++) {
          n = ns[i]; s = sdpa[n]
          printf "| %s | %s | %s | %.2f | %s | %s |\n", n, dawn[n] == "" ? "–" : sprintf("%.2f", dawn[n]),
            wgpu[n] == "" ? "–" : sprintf("%.2f", wgpu[n]), s,
            dawn[n] == "" ? "–" : sprintf("%.0f %%", 100 * dawn[n] / s),
            wgpu[n] == "" ? "–" : sprintf("%.0f %%", 100 * wgpu[n] / s)
        }
      }' "$R/dawn_attention.tsv" "$R/wgpu_attention.tsv" "$R/sdpa.tsv"
  fi
} > "$OUT/summary.md"
tar -C "$W" -czf "$OUT/attn.tgz" r
cat "$OUT/summary.md"
stamp done
