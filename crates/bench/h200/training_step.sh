#!/bin/bash
# The training step in one command (docs/benchmarks.md "Training step"): the
# 2-16-16-2 network, ReLU, Adam, batch 1,024, through the app's own TrainingSession, at 1 and
# at 64 steps per command buffer, for the default step (2 dispatches: mlp-step-lanes, the
# forward and backward passes with activations in workgroup memory, then mlp-step-reduce, the
# gradient's sum and the optimiser), the previous default "layers" (5 dispatches: the output
# layer, loss and first backward step in mlp-forward-loss, the optimiser inside
# mlp-step-params) and the "separate" one (8 dispatches + a gradient clear: a gradient kernel
# per layer, then optim-adam — what runs while one of those is edited in the editor). RUNS
# whole runs
# (fresh session each) of STEPS steps per combination; prints each run, then a table of medians
# and spreads. Wall clock, so CPU-side encoding and submits count.
#
# On the H200 machine (../shared/TOOLCHAIN.md §6), from the repo root, carrying the release
# bench binary and the Vulkan loader packages:
#   cargo build --release -p bench      # here, first
#   run: bash crates/bench/h200/training_step.sh   carry: target/release/bench, .gl
# Natively (any Vulkan adapter, lavapipe included): STEPS=300 bash crates/bench/h200/training_step.sh
set -u
B=${BENCH:-target/release/bench}
STEPS=${STEPS:-10000}
RUNS=${RUNS:-5}
if [ ! -x "$B" ]; then
  echo "no bench binary at $B: run cargo build --release -p bench first (and carry it)" >&2
  exit 2
fi
# The H200 machine has the NVIDIA driver but no Vulkan loader: unpack the carried packages.
if [ -d .gl ] && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
start=$(date +%s)
timeout 58 "$B" mlp --batch 1024 --steps "$STEPS" --runs "$RUNS" --gpu-only \
  --per-submit 1,64 --path default,layers,separate
rc=$?
echo "(whole command: $(( $(date +%s) - start )) s, exit $rc)"
exit $rc
