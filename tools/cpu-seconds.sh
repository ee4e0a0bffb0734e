#!/usr/bin/env bash
# Runs a command and prints the CPU seconds it and every process it started used, beside its
# wall time: on a shared machine wall times swing with the neighbours' load, CPU seconds much
# less, so two versions of a test file or build step can be compared while others work.
#
#   E2E_SITE=target/e2e-site tools/cpu-seconds.sh cargo xtask e2e --no-build cnn.test.mjs
#
# Counts through a cgroup-v1 `cpuacct` group (root only; most Linux machines here have it at
# /sys/fs/cgroup/cpuacct), so processes that outlive their parent (a browser's helpers) are
# counted too. Exits with the command's status.
set -uo pipefail
base=/sys/fs/cgroup/cpuacct
if [ ! -w "$base" ]; then
  echo "cpu-seconds: $base is not writable (needs root and cgroup v1's cpuacct)" >&2
  exit 2
fi
group=$base/cpu-seconds-$$
mkdir "$group" || exit 2
start=$(date +%s.%N)
bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$group" "$@"
status=$?
end=$(date +%s.%N)
ns=$(cat "$group/cpuacct.usage")
awk -v w="$(echo "$end - $start" | bc)" -v c="$ns" -v s="$status" \
  'BEGIN { printf "cpu-seconds: %.1f s CPU, %.1f s wall, exit %d\n", c / 1e9, w, s }'
# Left behind only if something of the command still runs; it is empty otherwise.
rmdir "$group" 2>/dev/null
exit $status
