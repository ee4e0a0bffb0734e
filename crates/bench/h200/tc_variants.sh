#!/bin/bash
# The Tensor Core stage against its candidates, in ONE device call (≤ 5 minutes; every phase
# bounded by `timeout` and by the call's remaining time, LIMIT seconds in all):
#   A. `bench matmul` with the stage (`matmul-tensor-core`) and the candidates
#      `matmul-tensor-core-prefetch` (next K block prefetched into registers),
#      `matmul-tensor-core-bk64` (K blocks of 64: half the barriers),
#      `matmul-tensor-core-8warp` (256 invocations, eight warps of 2×4 tiles) and
#      `matmul-tensor-core-pipe8` (eight warps with the prefetch), wgpu trusted, at
#      2048³, 4096³ and 8192³, REPS timed passes, `--keep-going` (a candidate that fails or is
#      wrong does not stop the others); RUNS whole runs. Every run is verified against the f64
#      reference of the f16-rounded inputs. One run of the five at the three sizes took about
#      100 s on the H200 (the stage alone 19 s, most of it the 8192³ verification), so a run
#      that would not fit the time left is made at 2048 and 4096 only, and one that cannot fit
#      even those is skipped (each says so).
#   B. cuBLAS HGEMM through torch at the same sizes, one run (f32 accumulation among its
#      rows): the ≥ 50 % goal's denominator in the same call, where torch sees CUDA.
# Then `bench summarise` over A and B (median of the runs, spread, % of cuBLAS) into
# $OUT/summary.md, with the first run's errors and bounds; every log and TSV in $OUT/tcv.tgz.
#
# Carry .gl (../shared/TOOLCHAIN.md §6) and .devcarry/tcv, made here from THIS tree by
#   bash crates/bench/h200/tc_variants.sh pack
# (bench.xz: a release build of `bench`). Locally, on lavapipe 26 through
# tools/lavapipe-coopmat's sysroot (VK_DRIVER_FILES=its lvp_icd.json, BENCH="<sysroot lib>/
# ld-linux-x86-64.so.2 --library-path <sysroot lib> <debug bench>"), which offers only 8×8×8
# tiles: KERNELS=the `@8x8x8` ids SIZES=256 SMALL=128 RUNS=2 REPS=2 OUT=/tmp/tcv runs end to
# end in 40 s (the 16×16 kernels, if named, report "skipped" with the reason).
set -u
C=${C:-.devcarry/tcv}
if [ "${1:-}" = pack ]; then
  mkdir -p "$C"
  cargo build --release -p bench || exit 1
  xz -T2 -6 -c "${CARGO_TARGET_DIR:-target}/release/bench" > "$C/bench.xz"
  du -sh "$C" .gl
  exit 0
fi
START=$SECONDS
LIMIT=${LIMIT:-285}
SIZES=${SIZES:-2048,4096,8192}
SMALL=${SMALL:-2048,4096}
RUNS=${RUNS:-3}
REPS=${REPS:-5}
KERNELS=${KERNELS:-matmul-tensor-core,matmul-tensor-core-prefetch,matmul-tensor-core-bk64,matmul-tensor-core-8warp,matmul-tensor-core-pipe8}
OUT=${OUT:-/tmp/tcv_out}
W=/tmp/wtcv
R=$W/r
mkdir -p "$R" "$OUT"
stamp() { echo "== $(date -u +%H:%M:%S) (+$((SECONDS - START)) s) $*"; }
left() { echo $((LIMIT - (SECONDS - START))); }
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
# The table rows of our kernels, the adapter, and any failure.
row() { grep -E "^\| matmul-tensor-core|adapter:|skipped|failed|error|wrong" "$1"; }

matmul_run() {
  local i=$1 sizes=$SIZES l
  l=$(left)
  # About 100 s for the full sizes, 40 s for the small ones (estimated from the stage's
  # 19 s and 6 s on the H200), plus 10 s kept for the summary.
  if [ "$l" -lt 45 ]; then stamp "A$i skipped: $l s left"; return; fi
  [ "$l" -lt 125 ] && sizes=$SMALL
  stamp "A$i: $KERNELS at $sizes ($l s left)"
  timeout $((l - 10)) $B matmul --sizes "$sizes" --reps "$REPS" --keep-going --kernels "$KERNELS" \
    --out "$R/wgpu$i.tsv" > "$R/wgpu$i.log" 2>&1 || echo "run $i ended with $?"
  row "$R/wgpu$i.log"
}

matmul_run 1
if [ -n "$CUDA" ] && [ "$(left)" -gt 60 ]; then
  stamp "B: cuBLAS HGEMM at $SIZES"
  timeout 40 python3 crates/bench/cublas_hgemm.py --sizes "$SIZES" --reps "$REPS" --out "$R/cublas1.tsv" \
    > "$R/cublas1.log" 2>&1 || { echo "cuBLAS run failed:"; tail -3 "$R/cublas1.log"; }
  grep -E "^\||device:" "$R/cublas1.log" | head -12
fi
for i in $(seq 2 "$RUNS"); do matmul_run "$i"; done

stamp "summary"
{
  echo "## Tensor Core stage and candidates ($(cat "$R/gpu.txt" 2> /dev/null))"
  echo "kernels: $KERNELS; reps $REPS"
  files=$(ls "$R"/wgpu[0-9]*.tsv "$R"/cublas[0-9]*.tsv 2> /dev/null)
  [ -n "$files" ] && $B summarise $files
  for f in "$R"/wgpu[0-9]*.log; do
    [ -f "$f" ] || continue
    echo; echo "### $(basename "$f") (errors and bounds)"; row "$f"
  done
} > "$OUT/summary.md"
tar -C "$W" -czf "$OUT/tcv.tgz" r
stamp done
