set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONUNBUFFERED=1
xz -dc .devcarry/bench-base.xz > /tmp/bench0 && xz -dc .devcarry/bench.xz > /tmp/bench1 && chmod +x /tmp/bench0 /tmp/bench1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 40 /tmp/bench0 attention --seqs 1024,4096 --runs 3 2>&1 | grep -E "^\| fused|adapter"
timeout 40 /tmp/bench1 attention --seqs 1024,4096 --runs 3 2>&1 | grep -E "^\| fused"
timeout 30 python3 crates/bench/torch_sdpa.py --seqs 1024,4096 --runs 3 2>&1 | grep -E "efficient"
timeout 30 /tmp/bench1 matmul --sizes 4096 --reps 5 --kernels matmul-tensor-core,matmul-tuned 2>&1 | grep -E "^\| matmul-t"
