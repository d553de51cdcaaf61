#!/usr/bin/env bash
# Benchmark (not a test): firstfault-collect cutting a one-hour window out of
# a 2 GB syslog plus rotated files (plain and gzip), against grep over the
# same files. Prints wall time and peak RSS. Targets: < 1 s and < 64 MiB.
#
#   bench/collector_window.sh [BUILD_DIR] [--bytes N] [--keep]
#
# BUILD_DIR (default: build) must hold collectors/firstfault-collect; it is
# built first. The generator (bench/gen_node_logs.cpp) is compiled with c++.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build
bytes=2147483648
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) build=$1; shift ;;
  esac
done
case "$build" in /*) ;; *) build="$root/$build" ;; esac

if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target firstfault-collect >/dev/null
collect="$build/collectors/firstfault-collect"
[ -x "$collect" ] || { echo "no $collect" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time missing (apt-get install time)" >&2; exit 2; }

work=${FF_BENCH_DIR:-${TMPDIR:-/tmp}/firstfault-collector-bench}
mkdir -p "$work/log" "$work/spool/jobs/1"
gen="$work/gen_node_logs"
c++ -O2 -std=c++20 -o "$gen" "$root/bench/gen_node_logs.cpp"

now=$(date +%s)
gen_start=$(date +%s.%N)
"$gen" "$work/log" "$now" --bytes "$bytes"
gzip -n -f "$work/log/syslog.2" "$work/log/syslog.3"
# Rotated files get the times logrotate would give them.
touch -d "@$((now - 2 * 86400))" "$work/log/syslog.1"
touch -d "@$((now - 3 * 86400))" "$work/log/syslog.2.gz"
touch -d "@$((now - 4 * 86400))" "$work/log/syslog.3.gz"
gen_end=$(date +%s.%N)

# A job that started an hour ago on this node.
start_iso=$(date -u -d "@$((now - 3600))" +%Y-%m-%dT%H:%M:%SZ)
cat > "$work/spool/jobs/1/alloc-0.json" <<JSON
{"job_id": "1", "step": "0", "node": "bench", "node_index": 0, "node_count": 1,
 "restart_count": 0, "start_time": "$start_iso", "nodelist": "bench"}
JSON
cat > "$work/node.yaml" <<YAML
agent_url: http://127.0.0.1:9        # nothing listens: the bundle stays in the outbox
spool: $work/spool
margin_before_s: 0
margin_after_s: 60
retry: {initial_s: 1, max_s: 1, give_up_after_s: 0}
timezone: UTC
sources:
  syslog: [$work/log/syslog*]
  kernel: [$work/log/kern.log*]
YAML

files=("$work/log/syslog" "$work/log/syslog.1")
total=$(du -cb "$work"/log/syslog* | tail -1 | cut -f1)
cat "${files[@]}" > /dev/null  # warm the page cache for both commands

measure() {  # prints "wall_s rss_kib exit"
  local out=$1; shift
  local t0 t1 rc=0
  t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$work/time.out" "$@" > "$out" 2>/dev/null || rc=$?
  t1=$EPOCHREALTIME
  echo "$(echo "$t1 - $t0" | bc -l) $(tail -1 "$work/time.out") $rc"
}

rm -rf "$work/spool/outbox"
read -r c_wall c_rss c_rc < <(measure "$work/collect.out" "$collect" step --job 1 --node bench --config "$work/node.yaml")
hour=$(date -u -d "@$((now - 3600))" "+%b %e %H:")
read -r g_wall g_rss g_rc < <(measure "$work/grep.out" env LC_ALL=C grep -c -F "$hour" "${files[@]}")

bundle=$(ls -d "$work"/spool/outbox/*/files 2>/dev/null | head -1)
kept_lines=$(cat "$bundle"/nodes/bench/syslog* 2>/dev/null | wc -l)
kept_bytes=$(du -cb "$bundle"/nodes/bench/ 2>/dev/null | tail -1 | cut -f1)
read_bytes=$(grep -o '[0-9]* bytes of logs read' "$work/spool/log/collect.log" | tail -1 | cut -d' ' -f1)

printf 'firstfault collector window benchmark (%s, %s CPUs)\n' "$(date -u +%FT%TZ)" "$(nproc)"
printf '  input    %s: %.1f MB (syslog %.1f MB, syslog.1, syslog.2.gz, syslog.3.gz), generated in %.1f s\n' \
  "$work/log" "$(echo "$total / 1000000" | bc -l)" "$(echo "$(stat -c %s "$work/log/syslog") / 1000000" | bc -l)" \
  "$(echo "$gen_end - $gen_start" | bc -l)"
printf '  window   %s .. now+60s (one hour), warm page cache\n' "$start_iso"
printf '  bundle   %s lines, %s bytes kept; %s bytes of logs read by the collector\n' \
  "$kept_lines" "$kept_bytes" "${read_bytes:-?}"
printf '\n  %-58s %8s %14s %6s\n' command "wall s" "peak RSS MiB" exit
printf '  %-58s %8.3f %14.1f %6s\n' "firstfault-collect step (window search)" "$c_wall" "$(echo "$c_rss / 1024" | bc -l)" "$c_rc"
printf '  %-58s %8.3f %14.1f %6s\n' "grep -c -F '<window hour>' syslog syslog.1 (baseline)" "$g_wall" "$(echo "$g_rss / 1024" | bc -l)" "$g_rc"
echo
awk -v w="$c_wall" 'BEGIN { printf "  target  collect wall < 1 s        %s (%.3f s)\n", (w < 1 ? "PASS" : "MISS"), w }'
awk -v r="$c_rss" 'BEGIN { printf "  target  collect peak RSS < 64 MiB %s (%.1f MiB)\n", (r < 65536 ? "PASS" : "MISS"), r / 1024 }'
echo "  (collect exit 2 is expected: no agent listens, the bundle stays in the outbox)"
[ "$keep" = 1 ] || rm -rf "$work"
