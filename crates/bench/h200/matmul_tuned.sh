# The final matmul-tuned at 4096³ on the H200 machine (docs/benchmarks.md, "Round two"):
# wgpu ×3, runtime checks off ×1, Dawn ×3. Same carried files as matmul_wgpu_dawn_cublas.sh.
set -u
C=.devcarry; R=$OUT/r; mkdir -p $R /tmp/w
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc $C/node.xz > /tmp/w/node && chmod +x /tmp/w/node
mkdir -p /tmp/w/webgpu/dist/linux-x64; cp $C/nm/webgpu/index.js $C/nm/webgpu/package.json /tmp/w/webgpu/
xz -dc $C/nm/webgpu/dist/linux-x64/dawn.node.xz > /tmp/w/webgpu/dist/linux-x64/dawn.node
export WEBGPU_MODULE=/tmp/w/webgpu/index.js
B=$C/bench
for i in 1 2 3; do echo "== wgpu $i $(date -u +%T)"; $B matmul --sizes 4096 --reps 5 --tune --kernels matmul-vec4,matmul-tuned --out $R/wgpu_t$i.tsv 2>/dev/null | grep -c yes; done
echo "== unchecked $(date -u +%T)"; $B matmul --sizes 4096 --reps 5 --tune --unchecked --kernels matmul-tuned --out $R/wgpu_tu1.tsv 2>/dev/null | grep -c yes
$B dump-kernels --dir /tmp/d --sizes 4096 --kernels matmul-vec4,matmul-tuned,matmul-tuned@ --copy-mib 1
for i in 1 2 3; do echo "== dawn $i $(date -u +%T)"; /tmp/w/node $C/run.mjs --dir /tmp/d --only matmul-vec4,matmul-tuned,matmul-tuned@ --flag disable-dawn-features=timestamp_quantization --out $R/dawn_t$i.tsv 2>&1 | grep -c yes; done
$B summarise $R/*.tsv
