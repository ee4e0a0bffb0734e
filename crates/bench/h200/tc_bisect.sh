#!/bin/bash
# Second step of the Tensor Core diagnosis (after tc_probe.sh found the direct kernel and every
# single-tile probe right on an H100 while the stage is wrong): one-change copies of the stage,
# tc_probes/b*.wgsl, at 256³ and 4096³ beside the stage and the direct control, then the direct
# control at 2048³ and 8192³. The probe b5 (no workgroup variable beside the tiles) became the
# stage itself (af23c72), so the stage's own row is b5's now; the other probes keep the old u32
# variable. Carry .gl and .devcarry/bench.xz. Locally: T8=_8x8 TC=matmul-tensor-core@8x8x8
# BENCH=… SIZES=256 bash this.
set -u
C=${C:-.devcarry}; P=crates/bench/h200/tc_probes; T8=${T8:-}; TC=${TC:-matmul-tensor-core}
if [ -n "$T8" ]; then  # lavapipe's 8×8×8 copies, made from the 16×16×16 files
  mkdir -p /tmp/tc_probes8
  for f in $P/*.wgsl; do
    sed 's/const T: u32 = 16u;/const T: u32 = 8u;/; s/coop_mat16x16/coop_mat8x8/g' "$f" > "/tmp/tc_probes8/$(basename "$f" .wgsl)_8x8.wgsl"
  done
  P=/tmp/tc_probes8
fi
TCD=${TC/matmul-tensor-core/matmul-tensor-core-direct}; SIZES=${SIZES:-256,4096}
if ls .gl/*.deb > /dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; [ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
if [ -n "${BENCH:-}" ]; then B=$BENCH; else xz -dc "$C/bench.xz" > /tmp/bench && chmod +x /tmp/bench && B=/tmp/bench; fi
args=()
for b in b1_scalarin b2_nopad b3_unroll b4_all b6_sgfirst; do args+=(--wgsl "$TC=$P/$b$T8.wgsl"); done
timeout 300 $B matmul --sizes "$SIZES" --reps 5 --keep-going --kernels "$TC" "${args[@]}" 2>&1 | grep -E "^\| matmul|Verdict|adapter|rror"
[ -z "$T8" ] && timeout 200 $B matmul --sizes 2048,8192 --reps 5 --keep-going --kernels "$TCD,matmul-tuned" 2>&1 | grep -E "^\| matmul|Verdict|rror"
