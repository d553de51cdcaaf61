#!/usr/bin/env bash
# Agent benchmark: 512 nodes' Epilog bundles of one synthetic job uploaded concurrently to a real
# `firstfault agent`; reports the time from the last upload reply to the stored diagnosis, beside
# a baseline: `firstfault analyze` on the merged incident the agent built. A benchmark, not a test.
#
#   bench/agent_run.sh [BUILD_DIR=build] [--nodes 512] [--lines 1000000] [--concurrency 64]
#
# Needs munged running (tests/slurm/cluster.sh start starts it) and the build's
# agent/firstfault, bench/ff_bench_gen and bench/ff_bench_agent_upload.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=build nodes=512 lines=1000000 concurrency=64
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift ;;
    --lines) lines=$2; shift ;;
    --concurrency) concurrency=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) build=${1#BUILD_DIR=} ;;
  esac
  shift
done
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
ff="$build/agent/firstfault"
work=$(mktemp -d "${TMPDIR:-/tmp}/firstfault-agent-bench.XXXXXX")
agent_pid=
cleanup() { [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

echo "generating $nodes nodes, $lines lines ..."
"$build/bench/ff_bench_gen" "$work/incident" --nodes "$nodes" --lines "$lines" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/agent.yaml" <<YAML
listen: 127.0.0.1:$port
state_dir: $work/state
database: $work/state/firstfault.db
fastpass_wait_s: 8
final_pass_deadline_s: 600
sacctmgr: "off"
# No Slurm job stands behind the synthetic one: scontrol fails at once instead
# of waiting out its bound on a controller that may not run.
scontrol: /bin/false
YAML
"$ff" agent --config "$work/agent.yaml" >"$work/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/api/v1/health" >/dev/null && break
  sleep 0.1
done

/usr/bin/time -f "agent_upload_peak_rss_kib=%M" \
  "$build/bench/ff_bench_agent_upload" --agent "http://127.0.0.1:$port" \
  --incident "$work/incident" --job-id 990001 --concurrency "$concurrency" | tee "$work/upload.out"
agent_rss=$(awk '/VmHWM/ {print $2}' "/proc/$agent_pid/status")
echo "agent_peak_rss_kib=$agent_rss"
grep -E "pass [0-9]+ \(" "$work/agent.log" | tail -1

merged="$work/state/jobs/990001/0/incident"
start=$(date +%s.%N)
"$ff" analyze "$merged" --format json >/dev/null || true
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "baseline_analyze_merged_s=%.3f\n", b - a }'
