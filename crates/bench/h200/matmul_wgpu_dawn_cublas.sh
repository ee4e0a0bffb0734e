#!/bin/bash
# One device run on the H200 machine: wgpu, Dawn and cuBLAS side by side, three whole runs each,
# plus the 4096³-dip experiment and the Tint shader dump. Results under $OUT (see docs/benchmarks.md).
# Expects in $C (default .devcarry): bench (x86-64 release build), run.mjs, cublas_sgemm.py,
# node.xz and nm/webgpu/{index.js,package.json,dist/linux-x64/dawn.node.xz}; the Vulkan loader
# packages in .gl (../shared/TOOLCHAIN.md §6). PHASE=2 skips the wgpu part (A–D): cuBLAS, Dawn, Tint dump only.
set -u
C=${C:-.devcarry}
R=$OUT/r
mkdir -p "$R" /tmp/w
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc "$C/node.xz" > /tmp/w/node && chmod +x /tmp/w/node
mkdir -p /tmp/w/webgpu/dist/linux-x64
cp "$C"/nm/webgpu/index.js "$C"/nm/webgpu/package.json /tmp/w/webgpu/
xz -dc "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" > /tmp/w/webgpu/dist/linux-x64/dawn.node
export WEBGPU_MODULE=/tmp/w/webgpu/index.js
B=$C/bench
NODE=/tmp/w/node
S=1024,2048,4096
stamp() { echo "== $(date -u +%H:%M:%S.%N) $*"; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > "$R/smi.csv" 2>&1 &
SMI=$!

if [ "${PHASE:-all}" = all ]; then
stamp "A: full ladder, old method (2 fixed warm-up passes)"
$B matmul --sizes 1024,2048,4096,8192 --reps 5 --warm-ms 0 --out "$R/old_ladder.tsv" 2> "$R/old_ladder.trace"
stamp "B: full ladder, warm-up by time (500 ms)"
$B matmul --sizes 1024,2048,4096,8192 --reps 5 --out "$R/new_ladder.tsv" 2> "$R/new_ladder.trace"
for i in 1 2 3; do
  stamp "C$i: wgpu"
  $B matmul --sizes $S --reps 5 --tune --copy-mib 256 --out "$R/wgpu$i.tsv" 2>/dev/null | tail -3
  stamp "D$i: wgpu, runtime checks off"
  $B matmul --sizes 4096 --reps 5 --unchecked --tune --kernels matmul-vec4,matmul-tuned --out "$R/wgpu_unchecked$i.tsv" 2>/dev/null | tail -1
done
fi
for i in 1 2 3; do
  stamp "I$i: cuBLAS"
  python3 "$C/cublas_sgemm.py" --sizes $S --reps 5 --out "$R/cublas$i.tsv" | tail -3
done
stamp "E: dump kernels"
$B dump-kernels --dir /tmp/dump --sizes $S --copy-mib 256
for i in 1 2 3; do
  stamp "F$i: Dawn"
  $NODE "$C/run.mjs" --dir /tmp/dump --flag disable-dawn-features=timestamp_quantization --out "$R/dawn$i.tsv" 2>&1 | tail -4
done
$B dump-kernels --dir /tmp/dump4 --sizes 4096 --kernels matmul-vec4,matmul-tuned,matmul-tuned@ > /dev/null
stamp "G: Dawn with robustness off (disable_robustness), 4096 only"
$NODE "$C/run.mjs" --dir /tmp/dump4 --only matmul-vec4,matmul-tuned,matmul-tuned@ --path dawn-norobust \
  --flag enable-dawn-features=allow_unsafe_apis,disable_robustness --flag disable-dawn-features=timestamp_quantization --out "$R/dawn_norobust.tsv" 2>&1 | tail -3
stamp "H: Tint output for matmul-vec4 and matmul-tuned"
rm -rf /tmp/dump1; $B dump-kernels --dir /tmp/dump1 --sizes 256 --kernels matmul-vec4,matmul-tuned > /dev/null
$NODE "$C/run.mjs" --dir /tmp/dump1 --reps 1 --warm-ms 0 \
  --flag enable-dawn-features=dump_shaders,disable_symbol_renaming,use_user_defined_labels_in_backend \
  --flag verbose=1 > "$R/tint_dump.txt" 2>&1
wc -c "$R/tint_dump.txt"
kill $SMI
stamp "summary"
$B summarise $(ls "$R"/wgpu[123].tsv "$R"/wgpu_unchecked*.tsv "$R"/dawn[123].tsv "$R"/dawn_norobust.tsv "$R"/cublas*.tsv 2>/dev/null) | tee "$R/summary.md"
echo "--- old vs new ladder (one run each) ---"
$B summarise "$R/old_ladder.tsv" | grep -E "\| (4096|8192) \|" | grep -E "vec4|f16|tuned \|" | sed 's/^/old /'
$B summarise "$R/new_ladder.tsv" | grep -E "\| (4096|8192) \|" | grep -E "vec4|f16|tuned \|" | sed 's/^/new /'
# (the caller tars $OUT/r: at most 8 files come back)
