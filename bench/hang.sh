#!/usr/bin/env bash
# The hang analysis at scale: a job of N ranks (8 per node) where every rank
# but one times out in the same collective and prints PyTorch 2.6's watchdog
# and progress lines, the straggler its dump-signal line. `firstfault
# analyze` beside grep and cat over the same file. A benchmark, not a test:
# it prints figures and exits 0. See bench/README.md.
#
#   bench/hang.sh [BUILD_DIR=build] [--ranks N] [--runs N]
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
build_dir=build ranks=32768 runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift ;;
    --runs) runs=$2; shift ;;
    -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) build_dir=${1#BUILD_DIR=} ;;
  esac
  shift
done
ff=${FIRSTFAULT:-$build_dir/agent/firstfault}
[ -x "$ff" ] || { echo "bench: $ff is not built" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/firstfault-hang-XXXXXX")
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" "$ranks" <<'PY'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
nodes = [f"h{i:05d}" for i in range((n + 7) // 8)]
ranks = [{"rank": r, "node": nodes[r // 8], "local_rank": r % 8,
          "gpus": [f"00000000:{0x18 + 0x10 * (r % 8):02X}:00.0"]} for r in range(n)]
os.makedirs(f"{d}/app")
for node in nodes:
    os.makedirs(f"{d}/nodes/{node}")
    with open(f"{d}/nodes/{node}/kernel.log", "w") as f:
        f.write(f"2026-11-02T10:00:05+00:00 {node} kernel: mlx5_core 0000:c1:00.0: link up\n")
json.dump({"schema": "firstfault.incident/v1", "cluster": "b", "job_id": "9", "attempt": 0,
           "state": "FAILED", "start_time": "2026-11-02T10:00:00Z",
           "end_time": "2026-11-02T11:00:00Z", "nodes": nodes, "ranks": ranks},
          open(f"{d}/job.json", "w"))
straggler = n * 3 // 4 + 5
with open(f"{d}/app/slurm-9.out", "w") as f:
    for r in range(n):
        p = f"[rank{r}]:[E1102 10:51:08.{r % 1000000:06d} 42 ProcessGroupNCCL.cpp:"
        if r == straggler:
            f.write(p + f"1743] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Received a dump signal due to a "
                    "collective timeout from  rank 0 and we will try our best to dump the debug info. "
                    "Last enqueued NCCL work: 4416, last completed NCCL work: 4416.\n")
            continue
        f.write(p + f"616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4417, "
                "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600100 milliseconds "
                "before timing out.\n")
        f.write(p + f"1785] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Exception (either an error or "
                "timeout) detected by watchdog at work: 4417, last enqueued NCCL work: 4417, last "
                "completed NCCL work: 4416.\n")
        f.write(p + "630] [Rank 0] Some NCCL operations have failed or timed out.\n")
PY
out="$dir/app/slurm-9.out"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # label, command...: median wall s and peak RSS MiB over the runs
  local label=$1 t r
  shift
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$dir/time" "$@" >"$dir/out" 2>/dev/null
    cat "$dir/time"
  done >"$dir/times"
  t=$(awk '{print $1}' "$dir/times" | median)
  r=$(awk '{print $2}' "$dir/times" | median)
  printf '%-34s %8s s %8s MiB\n' "$label" "$t" "$((r / 1024))"
}
cat "$out" >/dev/null
echo "hang of $ranks ranks: $(wc -l <"$out") lines, $(($(stat -c %s "$out") / 1048576)) MiB of job output (load $(cut -d' ' -f1 /proc/loadavg))"
measure "firstfault analyze --jobs 1" "$ff" analyze "$dir" --format json --jobs 1
measure "firstfault analyze (every CPU)" "$ff" analyze "$dir" --format json
"$ff" analyze "$dir" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
h = d.get("hang", {})
print("verdict:", d["verdict"], d["sub_domain"], "| hang:", h.get("status"), "|", h.get("summary", "")[:100])
print("diagnosis:", len(json.dumps(d)), "bytes")'
measure "grep -c -F Watchdog (baseline)" grep -c -F "Watchdog caught" "$out"
measure "cat" cat "$out"
