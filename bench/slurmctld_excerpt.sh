#!/usr/bin/env bash
# Benchmark (not a test): the agent's slurmctld excerpt on a 1 GiB synthetic
# slurmctld.log against `grep -c` for the job on the same file.
#
#   bench/slurmctld_excerpt.sh [BUILD_DIR] [--bytes N] [--keep]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build
bytes=1073741824
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) build=$1; shift ;;
  esac
done
case "$build" in /*) ;; *) build="$root/$build" ;; esac
cmake --build "$build" --target ff_bench_slurmctld_excerpt >/dev/null
bin="$build/bench/ff_bench_slurmctld_excerpt"
work=${FF_BENCH_DIR:-${TMPDIR:-/tmp}/firstfault-slurmctld-bench}
mkdir -p "$work"
log="$work/slurmctld.log"
[ -f "$log" ] || "$bin" "$log" --bytes "$bytes" >/dev/null  # generate once
cat "$log" >/dev/null  # warm the page cache for both
echo "log: $(stat -c %s "$log") bytes"
"$bin" "$log"
start=$(date +%s.%N)
n=$(LC_ALL=C grep -c -E 'JobId=4242([^0-9]|$)' "$log" || true)
end=$(date +%s.%N)
echo "grep -c: $(echo "$end - $start" | bc) s, $n lines"
[ "$keep" = 1 ] || rm -f "$log"
