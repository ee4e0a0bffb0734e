#!/bin/bash
# Three measurements owed since the Tensor Core fix (no workgroup variable beside the f16
# tiles) and the fused-attention rewrite (one query row per invocation), in ONE device call
# (≤ 9 minutes; each phase bounded by `timeout`):
#   A. the Tensor Core stage, its direct control (no shared memory) and `matmul-tuned` (f32)
#      at 2048³, 4096³ and 8192³, RUNS whole runs, wgpu trusted; then the stage checked (as a
#      browser would compile it) at 4096³, one run. Every run verified against the f64
#      reference of the f16-rounded inputs.
#   B. cuBLAS HGEMM through torch at the same sizes, RUNS runs (f16 in/out, f32 reduction,
#      f32 out): the ≥ 50 % goal's denominator in the same call.
#   C. causal attention, naive and fused, bh 32, d 64, n 1024/2048/4096 (`bench attention`),
#      then torch SDPA (math and efficient) alike.
#   D. the engine GPT's default-configuration step time (release `gpt_engine` test binary,
#      its ignored `default_config_step_time`: median of 3 × 10 steps after a warm-up).
#   E. the MLP step at batch 1,024, 1 and 64 steps per submit.
#   F. the INT8 lesson's kernel (`bench int8`: dot4I8Packed, exact) against `torch._int_mm`
#      (cuBLAS int8 GEMM) at 1024³, 4096³ and 8192³, 3 runs each.
# Then `bench summarise` over A and B (median of the runs, spread, % of cuBLAS).
#
# Carry .gl (../shared/TOOLCHAIN.md §6) and .devcarry/r5, made here from THIS tree by
#   bash crates/bench/h200/tc_attention_gpt.sh pack
# Results: $OUT/summary.md and $OUT/r5.tgz (every log and TSV).
set -u
C=${C:-.devcarry/r5}
if [ "${1:-}" = pack ]; then
  mkdir -p "$C"
  cargo build --release -p bench || exit 1
  xz -T2 -6 -c target/release/bench > "$C/bench.xz"
  t=$(cargo test --release -p gpu-runtime --test gpt_engine --no-run --message-format=json 2> /dev/null \
    | grep -o '"executable":"[^"]*gpt_engine[^"]*"' | tail -1 | cut -d'"' -f4)
  [ -n "$t" ] || { echo "no gpt_engine test binary"; exit 1; }
  xz -T2 -6 -c "$t" > "$C/gpt_engine.xz"
  du -sh "$C" .gl
  exit 0
fi
SIZES=${SIZES:-2048,4096,8192}
RUNS=${RUNS:-3}
REPS=${REPS:-5}
OUT=${OUT:-/tmp/r5_out}
W=/tmp/wr5
R=$W/r
mkdir -p "$R" "$OUT"
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
export PYTHONUNBUFFERED=1
if ls .gl/*.deb > /dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
if [ -n "${BENCH:-}" ]; then B=$BENCH
else xz -dc "$C/bench.xz" > $W/bench && chmod +x $W/bench && B=$W/bench; fi
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$R/gpu.txt"
CUDA=
python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null && CUDA=1
TC=${TC:-matmul-tensor-core}
TCD=${TC/matmul-tensor-core/matmul-tensor-core-direct}
row() { grep -E "^\| ($TC|$TCD|matmul-tuned) \||adapter:|failed|error" "$1"; }

for i in $(seq 1 "$RUNS"); do
  stamp "A$i: wgpu trusted, $TC, $TCD, matmul-tuned at $SIZES"
  timeout 150 $B matmul --sizes "$SIZES" --reps "$REPS" --keep-going --kernels "$TC,$TCD,matmul-tuned" \
    --out "$R/wgpu$i.tsv" > "$R/wgpu$i.log" 2>&1 || echo "run $i ended with $?"
  row "$R/wgpu$i.log"
done
stamp "A4: $TC checked at 4096"
timeout 60 $B matmul --checked --sizes 4096 --reps "$REPS" --kernels "$TC" > "$R/checked.log" 2>&1 || echo "checked ended with $?"
row "$R/checked.log"

if [ -n "$CUDA" ]; then
  for i in $(seq 1 "$RUNS"); do
    stamp "B$i: cuBLAS HGEMM at $SIZES"
    timeout 90 python3 crates/bench/cublas_hgemm.py --sizes "$SIZES" --reps "$REPS" --out "$R/cublas$i.tsv" \
      > "$R/cublas$i.log" 2>&1 || { echo "cuBLAS run $i failed:"; tail -3 "$R/cublas$i.log"; }
    grep -E "^\||device:" "$R/cublas$i.log" | head -12
  done
fi

stamp "C: attention, ours then torch SDPA"
timeout 150 $B attention --seqs 1024,2048,4096 --runs 3 --out "$R/attention.tsv" > "$R/attention.log" 2>&1 || echo "attention ended with $?"
grep -vE "^[0-9.]+\s" "$R/attention.log" | tail -20
if [ -n "$CUDA" ]; then
  timeout 90 python3 crates/bench/torch_sdpa.py --seqs 1024,2048,4096 --runs 3 > "$R/sdpa.log" 2>&1
  tail -12 "$R/sdpa.log"
fi

if [ -f "$C/gpt_engine.xz" ]; then
  stamp "D: the engine GPT's default-config step"
  xz -dc "$C/gpt_engine.xz" > $W/gpt_engine && chmod +x $W/gpt_engine
  timeout 120 $W/gpt_engine default_config_step_time --ignored --nocapture > "$R/gpt.log" 2>&1 || echo "gpt ended with $?"
  grep -E "default config|test result|panicked" "$R/gpt.log"
fi

stamp "E: MLP step, batch 1024"
timeout 90 $B mlp --batch 1024 --per-submit 1,64 --runs 3 > "$R/mlp.log" 2>&1
grep -E "^\||error" "$R/mlp.log" | tail -12

stamp "F: INT8 against torch._int_mm"
timeout 120 $B int8 --sizes 1024,4096,8192 --runs 3 --out "$R/int8.tsv" > "$R/int8.log" 2>&1 || echo "int8 ended with $?"
grep -E "^\||error|failed" "$R/int8.log"
if [ -n "$CUDA" ]; then
  timeout 60 python3 crates/bench/torch_int_mm.py --sizes 1024,4096,8192 --runs 3 > "$R/int_mm.log" 2>&1
  tail -6 "$R/int_mm.log"
fi

stamp "summary"
{
  echo "## Tensor Core stage, attention, GPT step ($(cat "$R/gpu.txt" 2> /dev/null))"
  files=$(ls "$R"/wgpu[0-9]*.tsv "$R"/cublas[0-9]*.tsv 2> /dev/null)
  [ -n "$files" ] && $B summarise $files
  echo; echo "### run 1 (errors and bounds)"; row "$R/wgpu1.log"
  echo; echo "### checked"; row "$R/checked.log"
  echo; echo "### attention"; grep -vE "^[0-9.]+\s" "$R/attention.log" | tail -20; tail -12 "$R/sdpa.log" 2> /dev/null
  echo; echo "### GPT"; grep -E "default config" "$R/gpt.log" 2> /dev/null
  echo; echo "### MLP"; grep -E "^\|" "$R/mlp.log" | tail -12
  echo; echo "### INT8"; grep -E "^\|" "$R/int8.log" 2> /dev/null; tail -6 "$R/int_mm.log" 2> /dev/null
} > "$OUT/summary.md"
tar -C "$W" -czf "$OUT/r5.tgz" r
stamp done
