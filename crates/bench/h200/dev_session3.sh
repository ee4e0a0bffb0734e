set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONUNBUFFERED=1
xz -dc .devcarry/bench-base.xz > /tmp/bench0 && xz -dc .devcarry/bench.xz > /tmp/bench1 && chmod +x /tmp/bench0 /tmp/bench1
echo "== attention: landed kernel (bench0) then the new one (bench1), then SDPA"
timeout 100 /tmp/bench0 attention --seqs 1024,2048,4096 --runs 3 2>&1 | grep -E "^\| fused|adapter"
timeout 100 /tmp/bench1 attention --seqs 1024,2048,4096 --runs 3 2>&1 | grep -E "^\| (fused|naive)"
timeout 90 python3 crates/bench/torch_sdpa.py --seqs 1024,2048,4096 --runs 3 2>&1 | grep -E "efficient|device"
echo "== tensor core (fixed stage), trusted then checked"
RUNS=3 SWEEP=2048,8192 timeout 300 bash crates/bench/h200/tensor_core.sh > $OUT/tc.log 2>&1
cat /tmp/tensor_core_out/summary.md | head -40
