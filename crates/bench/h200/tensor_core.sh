#!/bin/bash
# Issue 25 §3, "Tensor Cores from WGSL", in ONE device call (≤ 9 minutes; each phase bounded
# by `timeout`):
#   A. the wgpu Tensor Core stage (`matmul-tensor-core`: f16 inputs, f32 sums, VK_KHR_cooperative_
#      matrix 16×16×16 tiles): what the adapter offers (16×16×16 f16 -> f32 or the reason it is
#      skipped), then RUNS whole runs of `bench matmul` at 4096³ (warm-up ≥ 500 ms of GPU
#      time, REPS timed passes, a run's figure = its median pass, every run verified against
#      the f64 reference of the f16-rounded inputs) with `matmul-tuned` (the best f32 stage)
#      beside it for the error and speed comparison, and `matmul-tensor-core-direct` (the same
#      warp tiles loaded straight from storage, no shared memory: what staging costs or saves); then one sweep 1024…8192 and odd sizes;
#      and the checked path (`--checked`, as a browser would compile it) at 4096³;
#   B. cuBLAS HGEMM through torch at 4096³, RUNS whole runs: f16 in/out (torch's defaults),
#      f16 in/out with reduced-precision reduction off, and f16 in with f32 accumulation and
#      f32 out (`torch.mm(…, out_dtype=torch.float32)` where this torch has it), verified
#      (crates/bench/cublas_hgemm.py);
#   C. the Dawn subgroup-matrix crash: crates/bench/dawn/subgroup_matrix_repro.mjs, every
#      variant in its own node process (sizes 1024/2048/4096, f16 and i8 configs, 1 vs 50
#      dispatches, readback or not, buffers destroyed or not, one problem or two, one Dawn
#      instance or two, and a plain f32 control), each variant's exit code or signal, how far
#      it got and whether its result was exact.
# Then `bench summarise` over A and B (median of the runs and their spread, % of cuBLAS).
#
# Carry (../shared/TOOLCHAIN.md §6–7; as crates/bench/h200/matmul_vs_cublas.sh, whose header
# says how to make it): .gl (Vulkan loader packages) and .devcarry with bench.xz (release
# build of THIS tree: `cargo build --release -p bench`), node.xz and
# nm/webgpu/{index.js,package.json,dist/linux-x64/dawn.node.xz} (npm `webgpu` 0.6.2). The
# scripts come from the tree. Results: $OUT/tensor_core.tgz (every TSV, log and JSONL) and
# $OUT/summary.md (the device tool brings back at most 8 files).
#
# Locally (no CUDA; wgpu on lavapipe 26 through tools/lavapipe-coopmat's sysroot, whose
# 8×8×8 tiles make the 16×16 stage report "skipped" with its reason — the script still runs
# end to end): cargo build -p bench && BENCH=target/debug/bench SIZES=256 SWEEP=128,256 \
#   RUNS=1 REPS=2 OUT=/tmp/tc bash crates/bench/h200/tensor_core.sh
# (REPRO_ARGS passes flags to the repro, e.g. "--only f16-1024-d1"; Dawn 0.6.2 runs on that
# lavapipe too when node is started under the sysroot's loader: NODE=a wrapper script that
# does so, REPRO_NODE=/usr/bin/node and REPRO_LOADER="<sysroot>/ld-linux-x86-64.so.2
# --library-path <sysroot lib dir>" for the children.)
set -u
C=${C:-.devcarry}
SIZES=${SIZES:-4096}
SWEEP=${SWEEP:-1024,2048,4096,8192,1000,4095}
RUNS=${RUNS:-3}
REPS=${REPS:-5}
OUT=${OUT:-/tmp/tensor_core_out}
W=/tmp/wtc
R=$W/r
mkdir -p "$R" "$W" "$OUT"
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
export PYTHONUNBUFFERED=1

if ls .gl/*.deb > /dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
if [ -n "${BENCH:-}" ]; then B=$BENCH
elif [ -f "$C/bench.xz" ]; then xz -dc "$C/bench.xz" > $W/bench && chmod +x $W/bench && B=$W/bench
else B=$C/bench; fi
NODE=${NODE:-}
if [ -z "$NODE" ] && [ -f "$C/node.xz" ] && [ -f "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" ]; then
  xz -dc "$C/node.xz" > $W/node && chmod +x $W/node
  mkdir -p $W/webgpu/dist/linux-x64
  cp "$C"/nm/webgpu/index.js "$C"/nm/webgpu/package.json $W/webgpu/
  xz -dc "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" > $W/webgpu/dist/linux-x64/dawn.node
  export WEBGPU_MODULE=$W/webgpu/index.js
  NODE=$W/node
fi
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$R/gpu.txt"
CUDA=
python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null && CUDA=1
TC=${TC:-matmul-tensor-core}   # locally on lavapipe 26: TC=matmul-tensor-core@8x8x8
# The control without shared memory (every tile loaded from storage), same tiles as $TC.
TC_DIRECT=${TC/matmul-tensor-core/matmul-tensor-core-direct}

stamp "A0: what the adapter offers (a skipped stage prints its reason)"
timeout 60 $B matmul --sizes 256 --reps 1 --warm-ms 0 --kernels $TC > "$R/offer.log" 2>&1
grep -E "adapter:|$TC" "$R/offer.log"
if grep -q "| $TC | 256 |" "$R/offer.log"; then
  for i in $(seq 1 "$RUNS"); do
    stamp "A$i: wgpu trusted, $TC and matmul-tuned at $SIZES"
    timeout 120 $B matmul --sizes "$SIZES" --reps "$REPS" --kernels $TC,$TC_DIRECT,matmul-tuned \
      --out "$R/wgpu$i.tsv" > "$R/wgpu$i.log" 2>&1 || { echo "run $i failed:"; tail -3 "$R/wgpu$i.log"; }
    grep -E "^\| ($TC|$TC_DIRECT|matmul-tuned) \|" "$R/wgpu$i.log"
  done
  stamp "A4: sweep (one run)"
  timeout 150 $B matmul --sizes "$SWEEP" --reps "$REPS" --kernels $TC --out "$R/sweep.tsv" > "$R/sweep.log" 2>&1 \
    || { echo "sweep failed:"; tail -3 "$R/sweep.log"; }
  grep -E "^\| $TC \|" "$R/sweep.log"
  stamp "A5: the checked path (wgpu's runtime checks, as a browser would compile it), one run"
  timeout 60 $B matmul --checked --sizes "$SIZES" --reps "$REPS" --kernels $TC --out "$R/checked.tsv" > "$R/checked.log" 2>&1 \
    || { echo "checked failed:"; tail -3 "$R/checked.log"; }
  grep -E "^\| $TC \|" "$R/checked.log"
else
  stamp "A1-A5 skipped: the stage does not run on this adapter (reason above)"
fi

if [ -n "$CUDA" ]; then
  for i in $(seq 1 "$RUNS"); do
    stamp "B$i: cuBLAS HGEMM (torch) at $SIZES"
    timeout 90 python3 crates/bench/cublas_hgemm.py --sizes "$SIZES" --reps "$REPS" --out "$R/cublas$i.tsv" \
      > "$R/cublas$i.log" 2>&1 || { echo "cuBLAS run $i failed:"; tail -3 "$R/cublas$i.log"; }
    grep -E "^\| (hgemm|f32reduce|f32out) \||device:" "$R/cublas$i.log"
  done
else
  stamp "B skipped: no CUDA device with torch"
fi

if [ -n "$NODE" ]; then
  stamp "C: Dawn subgroup-matrix reproduction (each variant its own process)"
  timeout 300 "$NODE" crates/bench/dawn/subgroup_matrix_repro.mjs --timeout-s 25 --budget-s 285 \
    --out "$R/repro.jsonl" ${REPRO_ARGS:-} 2>&1 | tee "$R/repro.md"
else
  stamp "C skipped: no node with Dawn's binding (carry node.xz and nm/webgpu)"
fi

stamp "summary"
{
  echo "## Tensor Core stage vs cuBLAS HGEMM ($(cat "$R/gpu.txt" 2> /dev/null))"
  echo "(% of cuBLAS: of the first cuBLAS row at each size, cublas-hgemm: f16 in and out)"
  files=$(ls "$R"/wgpu[0-9]*.tsv "$R"/cublas[0-9]*.tsv 2> /dev/null)
  [ -n "$files" ] && $B summarise $files
  echo; echo "### errors (max rel. error, bound, and against the f32 problem), run 1"
  grep -E "^\| ($TC|$TC_DIRECT|matmul-tuned) \|" "$R/wgpu1.log" 2> /dev/null
  echo; echo "### sweep"; grep -E "^\| $TC \|" "$R/sweep.log" 2> /dev/null
  echo; echo "### checked path"; grep -E "^\| $TC \|" "$R/checked.log" 2> /dev/null
  echo; echo "### Dawn subgroup-matrix variants"; cat "$R/repro.md" 2> /dev/null
} > "$OUT/summary.md"
cat "$OUT/summary.md"
tar -C "$W" -czf "$OUT/tensor_core.tgz" r
