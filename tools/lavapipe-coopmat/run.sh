#!/usr/bin/env bash
# Runs the Tensor Core kernels' native test on a software Vulkan driver that HAS cooperative
# matrices: Mesa 26's lavapipe (Debian trixie-backports), which offers VK_KHR_cooperative_matrix
# with 8x8x8 f16 -> f16/f32 tiles (subgroups of 8). Debian 12's lavapipe (Mesa 22.3, what
# `cargo xtask test` installs) has none, so there the test reports the stage as skipped.
#
# Mesa 26 needs a newer glibc and libstdc++ than Debian 12 has, so nothing is installed: the
# packages are fetched with `apt-get download` (a private package list, Debian's own archive)
# and unpacked into a private sysroot, and the test binary runs under that sysroot's dynamic
# loader (cargo's target runner), with VK_DRIVER_FILES naming its lavapipe. Your system's
# packages are untouched.
#
#   tools/lavapipe-coopmat/run.sh [extra cargo test args…]
#   SYSROOT=dir (default ~/.cache/gpu-playground/lavapipe-coopmat)
#
# Measured on the 2-core dev machine (2026-12-04): the first run fetches and unpacks in
# 12–25 s (~70 MB of packages, 340 MB unpacked); the test itself takes 0.5 s on an idle
# machine, about a minute at load 18 (four kernels, seven sizes, trusted and checked).
#
# This is the one run where the Tensor Core kernels are checked against the CPU, so it fails
# (exit 1, the reason on stderr) when its adapter cannot be made: the driver cannot be fetched,
# its libraries no longer resolve (a newer Mesa in trixie-backports needing another LLVM), or
# the test finds no 8x8x8 cooperative matrix on the adapter it got. Saying "skipped" there
# once let every Tensor Core kernel go unchecked while the suite stayed green.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=${SYSROOT:-$HOME/.cache/gpu-playground/lavapipe-coopmat}
lib=$root/sysroot/usr/lib/x86_64-linux-gnu
fail() {
  echo "FAILED: cannot make Mesa 26's lavapipe adapter for the Tensor Core kernels: $*" >&2
  exit 1
}
fetch() {
  mkdir -p "$root/lists/partial" "$root/cache/archives/partial" "$root/debs"
  printf '%s\n' 'deb http://deb.debian.org/debian trixie main' \
    'deb http://deb.debian.org/debian trixie-backports main' > "$root/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$root/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$root/lists" -o "Dir::Cache=$root/cache")
  apt-get "${apt_opts[@]}" update -qq || { echo "apt-get update of Debian trixie failed" >&2; return 1; }
  pkgs=(mesa-vulkan-drivers/trixie-backports libvulkan1 libc6 libstdc++6 libgcc-s1 libllvm19
    libdisplay-info2 libdrm2 libdrm-amdgpu1 libelf1t64 libexpat1 libzstd1 zlib1g libxml2 libffi8
    libedit2 libz3-4 libtinfo6 libwayland-client0 libx11-xcb1 libx11-6 libxau6 libxdmcp6 libxcb1
    libxcb-dri3-0 libxcb-present0 libxcb-randr0 libxcb-shm0 libxcb-sync1 libxcb-xfixes0
    libxshmfence1 libpng16-16t64 libicu76 liblzma5 libbsd0 libmd0)
  # /trixie for all but Mesa, so a backported library never replaces the release's.
  spec=()
  for p in "${pkgs[@]}"; do case $p in */*) spec+=("$p") ;; *) spec+=("$p/trixie") ;; esac; done
  # apt's own warning about running as root is dropped; its errors and exit status are kept
  # (grep's status is not: it is 1 when it drops every line).
  (cd "$root/debs" && apt-get "${apt_opts[@]}" download -qq "${spec[@]}" 2>&1) |
    { grep -v '^W: Download is performed unsandboxed' >&2 || true; }
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "apt-get download failed (its errors are above)" >&2; return 1; }
  for f in "$root"/debs/*.deb; do dpkg -x "$f" "$root/sysroot" || return 1; done
}
if [ ! -e "$lib/libvulkan_lvp.so" ]; then
  (fetch) || fail "could not fetch or unpack Mesa 26 and its libraries from Debian's archive"
  [ -e "$lib/libvulkan_lvp.so" ] || fail "no libvulkan_lvp.so after unpacking (packages changed?)"
fi
# The loader resolves every library inside the sysroot, or says which one is missing.
missing=$("$lib/ld-linux-x86-64.so.2" --library-path "$lib" --list "$lib/libvulkan_lvp.so" 2>&1 | grep -E 'not found|cannot open' || true)
if [ -n "$missing" ]; then rm -rf "$root/sysroot"; fail "the sysroot lacks: $missing"; fi
printf '{"ICD":{"api_version":"1.4.0","library_path":"%s"},"file_format_version":"1.0.0"}\n' \
  "$lib/libvulkan_lvp.so" > "$root/lvp_icd.json"
xdg=$(mktemp -d); chmod 700 "$xdg"
# Mesa 26's lavapipe offers 8x8x8 f16 -> f32 tiles: the test fails unless the kernels built
# for them ran (not skipped) on the adapter it got.
XDG_RUNTIME_DIR=$xdg VK_DRIVER_FILES=$root/lvp_icd.json GPU_PLAYGROUND_REQUIRE_TENSOR_CORE_TILE=8 \
  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$lib/ld-linux-x86-64.so.2 --library-path $lib" \
  cargo test --workspace --test kernels_vs_cpu "$@" -- --nocapture the_tensor_core
