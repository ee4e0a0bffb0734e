#!/bin/bash
# The H200 runs behind docs/benchmarks.md, "Round three": conv against cuDNN, matmul against
# cuBLAS, the training step.
# PHASE=probe: toolchain check (wgpu, Dawn), the implicit GEMM's blocks on conv shapes 2 and 3,
# the training step. PHASE=final: matmul ladder at 4096³ through wgpu and Dawn against cuBLAS
# (3 whole runs each), the conv table against cuDNN (3 runs), the training step (3 runs).
# Expects in $C (default .devcarry): bench (x86-64 release build, xz), run.mjs, cublas_sgemm.py,
# cudnn_conv.py, node.xz, nm/webgpu/{index.js,package.json,dist/linux-x64/dawn.node.xz}; the
# Vulkan loader packages in .gl (../shared/TOOLCHAIN.md §6). Results under $OUT/r, tarred.
set -u
C=${C:-.devcarry}
R=/tmp/r
mkdir -p "$R" /tmp/w
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc "$C/node.xz" > /tmp/w/node && chmod +x /tmp/w/node
xz -dc "$C/bench.xz" > /tmp/w/bench && chmod +x /tmp/w/bench
mkdir -p /tmp/w/webgpu/dist/linux-x64
cp "$C"/nm/webgpu/index.js "$C"/nm/webgpu/package.json /tmp/w/webgpu/
xz -dc "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" > /tmp/w/webgpu/dist/linux-x64/dawn.node
export WEBGPU_MODULE=/tmp/w/webgpu/index.js
B=/tmp/w/bench
NODE=/tmp/w/node
DAWNFLAG="--flag disable-dawn-features=timestamp_quantization"
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader

if [ "${PHASE:-final}" = probe ]; then
  stamp "conv blocks, shapes 2 and 3"
  $B conv --shapes 2,3 --stages conv-implicit-gemm --runs 3 --reps 20 --ig-splits 1,2,3,4,6 \
    --ig-tiles conv-implicit-gemm,conv-implicit-gemm-128x64,conv-implicit-gemm-64x128,conv-implicit-gemm-128x128 2>&1 | grep -E "^\||rror"
  stamp "mlp step, 1 and 64 steps per command buffer"
  $B mlp --steps 4000 --runs 3 --gpu-only 2>&1 | grep -E "µs|adapter|rror"
  $B mlp --steps 4000 --runs 3 --gpu-only --per-submit 64 2>&1 | grep -E "µs|rror"
  stamp "Dawn check"
  $B dump-kernels --dir /tmp/d --sizes 1024 --kernels matmul-vec4 --copy-mib 1 > /dev/null
  $NODE "$C/run.mjs" --dir /tmp/d --only matmul-vec4 $DAWNFLAG 2>&1 | tail -3
  stamp done
  exit 0
fi

nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 200 > "$R/smi.csv" 2>&1 &
SMI=$!
final() {
stamp "cuDNN, 3 runs"
python3 "$C/cudnn_conv.py" --runs 3 --reps 20 --out "$R/conv_cudnn.tsv" > "$R/conv_cudnn.md" 2>&1
stamp "conv, every stage, 3 runs"
$B conv --runs 3 --reps 20 --cudnn "$R/conv_cudnn.tsv" --out "$R/conv_wgsl.tsv" > "$R/conv_wgsl.md" 2>&1
stamp "mlp step, 3 runs each"
{ $B mlp --steps 4000 --runs 3 --gpu-only; $B mlp --steps 4000 --runs 3 --gpu-only --per-submit 64; } > "$R/mlp.txt" 2>&1
for i in 1 2 3; do
  stamp "cuBLAS $i"
  python3 "$C/cublas_sgemm.py" --sizes 4096 --reps 5 --out "$R/cublas$i.tsv" > /dev/null 2>&1
done
for i in 1 2 3; do
  stamp "wgpu ladder $i"
  $B matmul --sizes 4096 --reps 5 --tune --out "$R/wgpu$i.tsv" > /dev/null 2>&1
done
$B dump-kernels --dir /tmp/d --sizes 4096 --copy-mib 1 --kernels matmul-naive,matmul-coalesced,matmul-tiled,matmul-blocktile-1d,matmul-blocktile-2d,matmul-vec4,matmul-subgroup,matmul-f16,matmul-tuned,matmul-tuned@ > /dev/null 2>&1
for i in 1 2 3; do
  stamp "Dawn ladder $i"
  $NODE "$C/run.mjs" --dir /tmp/d $DAWNFLAG --out "$R/dawn$i.tsv" > "$R/dawn$i.log" 2>&1
done
stamp "conv blocks and slices at shapes 2 and 3"
$B conv --shapes 2,3 --stages conv-implicit-gemm --runs 3 --reps 20 --ig-splits 1,2,4 \
  --ig-tiles conv-implicit-gemm,conv-implicit-gemm-128x64 > "$R/conv_blocks.md" 2>&1
}
export -f final stamp 2>/dev/null
export B C R NODE DAWNFLAG
timeout 500 bash -c final
kill $SMI
stamp summary
$B summarise "$R"/wgpu[123].tsv "$R"/dawn[123].tsv "$R"/cublas[123].tsv > "$R/summary.md" 2>&1
grep -E "4096" "$R/summary.md" | head -30
grep -E "^\|" "$R/conv_cudnn.md"; grep -E "^\||rror" "$R/conv_wgsl.md"
grep -E "µs" "$R/mlp.txt"
grep -E "^\|" "$R/conv_blocks.md"
tar czf "$OUT/speed2_final.tgz" -C /tmp r
stamp done
