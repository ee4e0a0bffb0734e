#!/bin/bash
# Why is the Tensor Core stage wrong on NVIDIA's 16×16×16 tiles (all zeros in C on an H100,
# 2026-12-07) while exact on lavapipe's 8×8×8? One device call (≤ 8 minutes), then the GPT's
# attention anchor in the same call:
#   P. the probes in tc_probes/ at 256³, each in place of `matmul-tensor-core-direct` (one
#      16×16 tile of C; a correct probe fails verification first at element 16, a broken one at
#      0): p1 loads from storage, Acc() start, store to storage; p2 a zero-loaded accumulator;
#      p3 a store through workgroup memory; p4 loads through padded workgroup tiles; p5 no loop;
#   S. the stage, the direct control and two one-change copies of the stage (c1: accumulators
#      zero-loaded; c2: stores through workgroup memory) at 256³ and 4096³, matmul-tuned beside;
#   T. cuBLAS HGEMM at 4096³ (one run) for the % of cuBLAS;
#   U. `bench attention` (naive and fused, 3 runs) and torch SDPA at 1024/2048/4096, BH 32, d 64;
#   M. `bench mlp` at batch 1,024, 1 and 64 steps per submit, 3 runs (before the engine moves).
# Carry .gl and .devcarry/bench.xz (release build of this tree): see tensor_core.sh.
# Locally on lavapipe 26 (8×8×8): T8=_8x8 TC=matmul-tensor-core@8x8x8 BENCH=… bash this.
set -u
C=${C:-.devcarry}
OUT=${OUT:-/tmp/tc_probe_out}
P=crates/bench/h200/tc_probes
T8=${T8:-}
# T8=_8x8: the probes' 8×8×8 copies (lavapipe's tile), made here from the 16×16×16 files.
if [ -n "$T8" ]; then
  mkdir -p /tmp/tc_probes8
  for f in $P/*.wgsl; do
    sed 's/const T: u32 = 16u;/const T: u32 = 8u;/; s/coop_mat16x16/coop_mat8x8/g' "$f" > "/tmp/tc_probes8/$(basename "$f" .wgsl)_8x8.wgsl"
  done
  P=/tmp/tc_probes8
fi
TC=${TC:-matmul-tensor-core}
TCD=${TC/matmul-tensor-core/matmul-tensor-core-direct}
mkdir -p "$OUT"
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
export PYTHONUNBUFFERED=1
if ls .gl/*.deb > /dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
if [ -n "${BENCH:-}" ]; then B=$BENCH
else xz -dc "$C/bench.xz" > /tmp/bench && chmod +x /tmp/bench && B=/tmp/bench; fi
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
show() { grep -E "^\| matmul|Verdict|adapter|failed|error" "$1"; }

stamp "P: probes at 256"
args=()
for p in p1_min p2_acczero p3_wgstore p4_wgload p5_noloop; do args+=(--wgsl "$TCD=$P/$p$T8.wgsl"); done
timeout 90 $B matmul --sizes 256 --reps 1 --warm-ms 0 --keep-going --kernels "$TCD" "${args[@]}" > "$OUT/probes.log" 2>&1
show "$OUT/probes.log"

stamp "S: stage, direct, c1, c2 at 256 and 4096"
timeout 200 $B matmul --sizes 256,4096 --reps 5 --keep-going --kernels "$TC,$TCD,matmul-tuned" \
  --wgsl "$TC=$P/c1_zeroload$T8.wgsl" --wgsl "$TC=$P/c2_wgstore$T8.wgsl" > "$OUT/stage.log" 2>&1
show "$OUT/stage.log"

if python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
  stamp "T: cuBLAS HGEMM 4096"
  timeout 60 python3 crates/bench/cublas_hgemm.py --sizes 4096 --reps 5 > "$OUT/cublas.log" 2>&1
  grep -E "^\||device" "$OUT/cublas.log"
fi

stamp "U: attention, ours then torch SDPA"
timeout 150 $B attention --seqs 1024,2048,4096 --runs 3 > "$OUT/attention.log" 2>&1
grep -vE "^[0-9.]+\s" "$OUT/attention.log" | tail -20
if python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
  timeout 90 python3 crates/bench/torch_sdpa.py --seqs 1024,2048,4096 --runs 3 > "$OUT/sdpa.log" 2>&1
  cat "$OUT/sdpa.log"
fi

stamp "M: MLP step, batch 1024"
timeout 90 $B mlp --batch 1024 --per-submit 1,64 --runs 3 > "$OUT/mlp.log" 2>&1
grep -E "^\||error" "$OUT/mlp.log" | tail -12
stamp done
