# Shared setup of the H200 scripts, sourced (crates/bench/h200/issue25.sh): the Vulkan loader
# from .gl, the carried tools unpacked into a work folder, and what is present here. After
# `h200_tools CARRY WORK` these are set:
#   B        the bench binary: $BENCH, else CARRY/bench.xz unpacked
#   NODE     node: $NODE, else CARRY/node.xz unpacked; empty when neither (Dawn skipped)
#   WEBGPU_MODULE (exported) Dawn's Node binding: as given, else CARRY/webgpu unpacked
#   DIGITS   the CNN's digits asset: $DIGITS, else CARRY/cnn-digits.bin.xz unpacked; may be empty
#   NODEVK   the command prefix for node: `env`, or `env VK_ICD_FILENAMES=$NODE_VK_ICD` (Dawn
#            refuses lavapipe, so a local run points node at SwiftShader)
#   CUDA     1 when torch sees a CUDA device (cuBLAS, cuDNN), else empty
# and `stamp` prints a timestamped line; `left N` prints the seconds a phase may take: N (times
# $SLOW, 1 unless a local run on software adapters sets more), or fewer so that the whole
# script stays within $BUDGET seconds of $T0 (10 s kept for the tables).
# Carry layout (CARRY, e.g. .devcarry/i25): bench.xz, node.xz, cnn-digits.bin.xz,
# webgpu/{index.js,package.json,dist/linux-x64/dawn.node.xz}; `h200_pack CARRY` makes it here.

stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

left() {
  local want=$(($1 * ${SLOW:-1})) rest=$((BUDGET - ($(date +%s) - T0) - 10))
  [ "$rest" -lt 1 ] && rest=1
  [ "$want" -lt "$rest" ] && rest=$want
  echo "$rest"
}

h200_tools() {
  local c=$1 w=$2
  mkdir -p "$w"
  if ls .gl/*.deb > /dev/null 2>&1 && ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -f "$icd" ] && export VK_DRIVER_FILES=$icd
  export XDG_RUNTIME_DIR=$w/xdg
  mkdir -p -m 700 "$XDG_RUNTIME_DIR"
  if [ -n "${BENCH:-}" ]; then B=$BENCH
  else xz -dc "$c/bench.xz" > "$w/bench" && chmod +x "$w/bench" && B=$w/bench; fi
  NODE=${NODE:-}
  if [ -z "$NODE" ] && [ -f "$c/node.xz" ] && [ -f "$c/webgpu/dist/linux-x64/dawn.node.xz" ]; then
    xz -dc "$c/node.xz" > "$w/node" && chmod +x "$w/node"
    mkdir -p "$w/webgpu/dist/linux-x64"
    cp "$c"/webgpu/index.js "$c"/webgpu/package.json "$w/webgpu/"
    xz -dc "$c/webgpu/dist/linux-x64/dawn.node.xz" > "$w/webgpu/dist/linux-x64/dawn.node"
    export WEBGPU_MODULE=$w/webgpu/index.js
    NODE=$w/node
  fi
  DIGITS=${DIGITS:-}
  if [ -z "$DIGITS" ] && [ -f "$c/cnn-digits.bin.xz" ]; then
    xz -dc "$c/cnn-digits.bin.xz" > "$w/digits.bin" && DIGITS=$w/digits.bin
  fi
  NODEVK=(env)
  [ -n "${NODE_VK_ICD:-}" ] && NODEVK=(env VK_ICD_FILENAMES="$NODE_VK_ICD")
  CUDA=
  if command -v nvidia-smi > /dev/null && python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
    CUDA=1
  fi
}

# Makes the carry folder here (x86-64 Debian like the H200's host): bench in release, node,
# Dawn's Node binding from crates/bench/tfjs (`npm ci` there first) and the digits asset
# (`cargo xtask mnist` writes target/cnn-digits.bin). The Vulkan loader packages go in .gl
# (../shared/TOOLCHAIN.md §6).
h200_pack() {
  local c=$1 wg=crates/bench/tfjs/node_modules/webgpu
  mkdir -p "$c/webgpu/dist/linux-x64"
  nice -n 19 cargo build --release -j 1 -p bench || return 1
  xz -T2 -6 -c target/release/bench > "$c/bench.xz"
  xz -T2 -6 -c "$(command -v node)" > "$c/node.xz"
  [ -f "$wg/dist/linux-x64/dawn.node" ] || (cd crates/bench/tfjs && npm ci) || return 1
  cp "$wg/index.js" "$wg/package.json" "$c/webgpu/"
  xz -T2 -6 -c "$wg/dist/linux-x64/dawn.node" > "$c/webgpu/dist/linux-x64/dawn.node.xz"
  [ -f target/cnn-digits.bin ] || cargo xtask mnist --out target/cnn-digits.bin || return 1
  xz -T2 -6 -c target/cnn-digits.bin > "$c/cnn-digits.bin.xz"
  du -sh "$c" .gl
}
