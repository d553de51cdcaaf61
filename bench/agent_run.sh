#!/usr/bin/env bash
# Agent benchmark: every node's Epilog bundle of one synthetic job uploaded concurrently to a real
# `firstfault agent`; reports the upload throughput, the time from the last upload reply to the
# stored diagnosis, the agent's peak RSS, beside a baseline: `firstfault analyze` on the merged
# incident the agent built. A benchmark, not a test: it prints figures and exits 0 when the
# diagnosis was stored (1 when it was not).
#
#   bench/agent_run.sh [BUILD_DIR=build] [--nodes 512] [--lines 1000000] [--concurrency 64]
#                      [--incident DIR] [--jobs N] [--keep]
#
#   --incident DIR  upload this incident (an ff_bench_gen output) instead of generating one
#   --jobs N        `jobs:` in the agent's configuration (engine threads per pass; default: the
#                   agent's own default)
#   --keep          leave the work directory (agent state, log, merged incident) in place
#
# Needs munged running (tests/slurm/cluster.sh start starts it) and the build's
# agent/firstfault, bench/ff_bench_gen and bench/ff_bench_agent_upload.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=build nodes=512 lines=1000000 concurrency=64 incident='' jobs='' keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift ;;
    --lines) lines=$2; shift ;;
    --concurrency) concurrency=$2; shift ;;
    --incident) incident=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "agent_run: unknown option $1" >&2; exit 2 ;;
    *) build=${1#BUILD_DIR=} ;;
  esac
  shift
done
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
ff="$build/agent/firstfault"
for v in nodes lines concurrency; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "agent_run: --$v must be a positive integer" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/firstfault-agent-bench.XXXXXX")
agent_pid=
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  if [ -n "$agent_pid" ]; then kill "$agent_pid" 2>/dev/null || true; wait "$agent_pid" 2>/dev/null || true; fi
  if [ "$keep" -eq 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

if [ -z "$incident" ]; then
  need_mb=$((lines * 110 * 2 / 1000000 + 1100))  # the incident, the agent's copy, the free-space floor
  avail_mb=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
  [ "$avail_mb" -ge "$need_mb" ] ||
    { echo "agent_run: about $need_mb MB needed under $work, $avail_mb MB free" >&2; exit 1; }
  echo "generating $nodes nodes, $lines lines ..." >&2
  "$build/bench/ff_bench_gen" "$work/incident" --nodes "$nodes" --lines "$lines" 2>"$work/gen.log"
  incident=$work/incident
else
  incident=$(cd "$incident" && pwd)
  [ -f "$incident/job.json" ] || { echo "agent_run: $incident has no job.json" >&2; exit 2; }
  nodes=$(find "$incident/nodes" -mindepth 1 -maxdepth 1 -type d | wc -l)
fi
in_bytes=$(du -sb --apparent-size "$incident" | cut -f1)

# The agent's limits, as a site would set them for jobs this large:
# - http_max_connections_per_peer (default 32): here every upload comes from 127.0.0.1, where a
#   real job's come from one address per node; raised to twice --concurrency: a connection the
#   uploader opens again while the agent still counts the one it closed must not be refused.
#   http_max_connections (512) stays.
# - max_job_bytes (default 4 GiB per job attempt): raised to the next power of two above the
#   incident (plus a tenth for the job.json fragments) only when that does not fit the default
#   (4,096 nodes with ~1.1 MB each).
per_peer=$((2 * concurrency > 32 ? 2 * concurrency : 32))
max_job_bytes=
if [ $((in_bytes + in_bytes / 10)) -gt $((4 << 30)) ]; then
  max_job_bytes=$((4 << 30))
  while [ "$max_job_bytes" -lt $((in_bytes + in_bytes / 10)) ]; do
    max_job_bytes=$((max_job_bytes * 2))
  done
fi
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
http_max_connections_per_peer: $per_peer
YAML
[ -n "$max_job_bytes" ] && echo "max_job_bytes: $max_job_bytes" >>"$work/agent.yaml"
[ -n "$jobs" ] && echo "jobs: $jobs" >>"$work/agent.yaml"
# The allocator as the packaged systemd unit sets it (packaging/common/firstfault-agent.service).
MALLOC_ARENA_MAX=2 "$ff" agent --config "$work/agent.yaml" >"$work/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/api/v1/health" >/dev/null && break
  sleep 0.1
done

cpu_s() {  # utime + stime of the agent so far, in seconds
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.1f", ($12 + $13) / hz }' \
    "/proc/$agent_pid/stat"
}
echo "uploading $nodes bundles, $concurrency at a time ..." >&2
upload_rc=0
/usr/bin/time -f "uploader_peak_rss_kib=%M" -o "$work/uploader.time" \
  "$build/bench/ff_bench_agent_upload" --agent "http://127.0.0.1:$port" \
  --incident "$incident" --job-id 990001 --concurrency "$concurrency" \
  >"$work/upload.out" 2>"$work/upload.err" || upload_rc=$?
agent_rss=$(awk '/VmHWM/ { print $2 }' "/proc/$agent_pid/status")
agent_cpu=$(cpu_s)
get() { sed -n "s/^$1=//p" "$work/upload.out"; }
pass_line=$(grep -E "pass [0-9]+ \((final|deadline)\)" "$work/agent.log" | tail -1 || true)
merge_ms=$(sed -n 's/.*merge \([0-9]*\) ms.*/\1/p' <<<"$pass_line")
engine_ms=$(sed -n 's/.*engine \([0-9]*\) ms.*/\1/p' <<<"$pass_line")
trigger=$(sed -n 's/.*pass [0-9]* (\([a-z]*\)).*/\1/p' <<<"$pass_line")

merged="$work/state/jobs/990001/0/incident"
base_jobs=${jobs:-$(nproc)}
base_s=-
if [ -d "$merged" ]; then
  t0=$EPOCHREALTIME
  "$ff" analyze "$merged" --format json --jobs "$base_jobs" >"$work/merged.json" 2>/dev/null || true
  base_s=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
fi
named=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); print(",".join(r.get("node","") for r in d.get("root_causes") or []) or "-")' \
  "$work/merged.json" 2>/dev/null || echo "?")
gen_log=$work/gen.log
[ -f "$gen_log" ] || gen_log=$incident.gen.log  # bench/run.sh --keep leaves it there
planted=$(awk '/root node/ { print $3; exit }' "$gen_log" 2>/dev/null || true)

up_s=$(get upload_s)
bytes=$(get bytes)
echo
echo "firstfault agent benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  incident     %s (%s nodes, %s MB)\n' "$incident" "$nodes" \
  "$(awk -v b="$in_bytes" 'BEGIN { printf "%.1f", b / 1e6 }')"
printf '  agent        %s; jobs: %s; http_max_connections_per_peer: %s%s\n' "$ff" \
  "${jobs:-default}" "$per_peer" "${max_job_bytes:+; max_job_bytes: $max_job_bytes}"
printf '  uploads      %s bundles, %s MB, %s at a time, %s rejected, %s sent again, %s s: %s bundles/s, %s MB/s\n' \
  "$(get bundles)" "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')" "$concurrency" \
  "$(get rejected)" "$(get retried)" "$up_s" \
  "$(awk -v n="$(get bundles)" -v s="$up_s" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')" \
  "$(awk -v b="$bytes" -v s="$up_s" 'BEGIN { printf "%.1f", (s > 0 ? b / 1e6 / s : 0) }')"
printf '  diagnosis    stored %s s after the last upload reply (%s pass: merge %s ms, engine %s ms); verdict %s\n' \
  "$(get diagnosis_after_last_upload_s)" "${trigger:-?}" "${merge_ms:-?}" "${engine_ms:-?}" \
  "$(get verdict)"
printf '  agent        peak RSS %s MiB, %s CPU-s from start to the stored diagnosis\n' \
  "$(awk -v k="$agent_rss" 'BEGIN { printf "%.1f", k / 1024 }')" "$agent_cpu"
printf '  uploader     peak RSS %s MiB\n' \
  "$(awk -F= '/uploader_peak_rss_kib/ { printf "%.1f", $2 / 1024 }' "$work/uploader.time")"
printf '  baseline     firstfault analyze MERGED --jobs %s: %s s; root node named %s%s\n' \
  "$base_jobs" "$base_s" "$named" "${planted:+ (planted: $planted)}"
if [ "$upload_rc" -gt 128 ] || grep -q "signal" "$work/uploader.time"; then
  echo "  uploader     ended by a signal: $(head -n 1 "$work/uploader.time")"
fi
if [ -s "$work/upload.err" ]; then
  echo "  uploader stderr (first lines):"
  head -n 5 "$work/upload.err" | sed 's/^/    /'
fi
exit "$upload_rc"
