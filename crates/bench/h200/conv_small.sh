#!/bin/bash
# Follow-up to conv_paths.sh (docs/benchmarks.md, "Conv on the visitors' paths"): why the
# implicit GEMM with split-K measured ~1.8x faster through Dawn than through wgpu at the two
# smallest shapes (1x64x56x56->64 and 1x256x14x14->256, 196 and 256 workgroups) but not at
# 8x128x28x28->128 (784 workgroups, the control). Three interleaved rounds of wgpu trusted,
# Dawn and wgpu checked, each 5 whole runs of 50 timed passes, with the wall clock per pass
# beside the timestamps (TSV column wall_ms: first submission to result over every pass,
# warm-up included) and nvidia-smi's SM clock every 100 ms. About 2 minutes.
# Carry and results as conv_paths.sh ($OUT/conv_small.tgz, $OUT/small.md).
# Rerun after the plan reused its bind groups (results/2026-12-02-conv-small-reuse/): the new
# release build carried xz'd beside .devcarry and unpacked first, then BENCH=/tmp/wcs/bench_rt.
set -u
C=${C:-.devcarry}
OUT=${OUT:-/tmp/conv_small_out}
W=/tmp/wcs
R=$W/r
mkdir -p "$R" "$OUT"
stamp() { echo "== $(date -u +%H:%M:%S.%N | cut -c1-12) $*"; }
if ls .gl/*.deb > /dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
fi
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
if [ -n "${BENCH:-}" ]; then B=$BENCH
else xz -dc "$C/bench.xz" > $W/bench && chmod +x $W/bench && B=$W/bench; fi
NODE=${NODE:-}
if [ -z "$NODE" ]; then
  xz -dc "$C/node.xz" > $W/node && chmod +x $W/node
  mkdir -p $W/webgpu/dist/linux-x64
  cp "$C"/nm/webgpu/index.js "$C"/nm/webgpu/package.json $W/webgpu/
  xz -dc "$C/nm/webgpu/dist/linux-x64/dawn.node.xz" > $W/webgpu/dist/linux-x64/dawn.node
  export WEBGPU_MODULE=$W/webgpu/index.js
  NODE=$W/node
fi
SHAPES=${SHAPES:-1,3,4}
ARGS="--shapes $SHAPES --stages conv-implicit-gemm --runs 5 --reps 50"
nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu,power.draw --format=csv,noheader -lms 100 > "$R/smi.csv" 2>&1 &
SMI=$!
$B dump-kernels --dir $W/d --conv-shapes "$SHAPES" --conv-stages conv-implicit-gemm --conv-runs 5 > /dev/null
for i in 1 2 3; do
  stamp "trusted $i"; timeout 60 $B conv $ARGS --out "$R/trusted$i.tsv" > "$R/trusted$i.log" 2>&1 || echo "trusted $i failed"
  stamp "dawn $i"; timeout 60 $NODE crates/bench/dawn/run.mjs --dir $W/d --reps 50 --runs 5 \
    --flag disable-dawn-features=timestamp_quantization --conv-out "$R/dawn$i.tsv" > "$R/dawn$i.log" 2>&1 || echo "dawn $i failed"
  stamp "checked $i"; timeout 60 $B conv --checked $ARGS --out "$R/checked$i.tsv" > "$R/checked$i.log" 2>&1 || echo "checked $i failed"
done
stamp done
kill $SMI
python3 - "$R" > "$OUT/small.md" <<'PY'
import csv, glob, os, statistics, sys
r = sys.argv[1]
print("| file | shape | stage | timestamps: ms per pass, each run | wall ms per pass, each run | verified |")
print("| --- | --- | --- | --- | --- | --- |")
for f in sorted(glob.glob(os.path.join(r, "*.tsv"))):
    for row in csv.DictReader(open(f), delimiter="\t"):
        print(f"| {os.path.basename(f)} | {row['shape']} | {row['stage']} | {row['run_ms']} | {row['wall_ms']} | {row['verified']} |")
PY
cat "$OUT/small.md"
awk -F', ' '{print $2}' "$R/smi.csv" | sort | uniq -c | sort -rn | head -5
tar czf "$OUT/conv_small.tgz" -C "$W" r
