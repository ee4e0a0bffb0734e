#!/bin/bash
# The crossover grid on the H200 machine: GPU (wgpu, Vulkan) vs tuned CPU
# (matrixmultiply, one thread) vs the CPU twin, widths 16…512 × batches 1…4096, median ± spread
# of 3 runs. Expects the x86-64 release binary at target/release/bench and the Vulkan loader
# packages in .gl (../shared/TOOLCHAIN.md §6). Writes $OUT/crossover.md; should take < 90 s.
# Arguments go to `bench crossover` (e.g. `--wide off`: the per-element kernels for every layer).
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nproc; grep -m1 'model name' /proc/cpuinfo
start=$(date +%s)
target/release/bench crossover "$@" | tee "$OUT/crossover.md"
echo "wall: $(( $(date +%s) - start )) s"
