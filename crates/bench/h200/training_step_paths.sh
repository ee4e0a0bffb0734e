#!/bin/bash
# Device run: the training step's two paths (two whole-step dispatches vs per-layer kernels)
# over batch sizes, 2-16-16-2, Adam, wall clock (docs/benchmarks.md, "Round three").
# Carried as for conv_matmul_step.sh (.devcarry/bench.xz, .gl).
set -u
C=${C:-.devcarry}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc "$C/bench.xz" > /tmp/bench && chmod +x /tmp/bench
for k in 1 64; do
  for b in 1 16 64 256 1024 4096; do
    for p in fused layers; do
      echo "batch $b, $k per submit, $p: $(/tmp/bench mlp --batch $b --steps 3000 --runs 3 --gpu-only --per-submit $k --path $p 2>&1 | grep -E 'µs|rror')"
    done
  done
done
