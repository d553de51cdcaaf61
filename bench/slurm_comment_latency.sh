#!/usr/bin/env bash
# How soon a job's user sees the diagnosis where Slurm shows it, measured on
# the real test cluster (tests/slurm/cluster.sh, with slurmdbd):
#   fast pass:  from the end of the batch script (its last line writes the
#               time) to a non-empty Comment in `squeue -o %k`.
#   final pass: from the last node's Epilog completing (slurmd's "completed
#               epilog" line) to a non-empty Comment in `sacct -o Comment`,
#               for a job Slurm itself ends (scancel: no fast pass, so the
#               accounting Comment is the final pass's).
# Targets: Comment <= 5 s after the batch script ends, sacct Comment <= 10 s
# after the last Epilog. Baseline in the same run: one `squeue` and one
# `sacct` query alone, the resolution of the polling.
#
#   bench/slurm_comment_latency.sh [RUNS=5]
#
# Needs root, a build deployed to the cluster (cluster.sh deploy build) and
# the agent running (cluster.sh agent-start). A benchmark, not a test: it
# prints figures and exits 0 whether or not a target is met.
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
ROOT=${FF_CLUSTER_ROOT:-/var/tmp/ffcluster}
export SLURM_CONF=$ROOT/etc/slurm.conf
[[ $EUID -eq 0 ]] || { echo "needs root (the test cluster)"; exit 1; }
tests/slurm/cluster.sh start >/dev/null 2>&1 && tests/slurm/cluster.sh agent-start >/dev/null 2>&1 ||
  { echo "the test cluster or its agent does not start (deploy a build first)"; exit 1; }

WORK=$(mktemp -d /var/tmp/ff-bench.XXXXXX)
chmod 0755 "$WORK"
trap 'rm -rf "$WORK"' EXIT
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else printf "%.2f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Polls CMD every 50 ms until it prints something; prints the time it did (or nothing after 60 s).
poll_until_output() {
  local deadline=$((SECONDS + 60)) out
  while ((SECONDS < deadline)); do
    out=$("$@" 2>/dev/null)
    # squeue prints "(null)" for a job without a Comment.
    if [[ -n $out && $out != "(null)" ]]; then now; return 0; fi
    sleep 0.05
  done
  return 1
}
log_time_s() {  # "[2026-12-02T15:49:08.114] ..." -> epoch seconds
  local ts=${1#\[}
  ts=${ts%%]*}
  echo "$(date -d "${ts%.*}" +%s).${ts##*.}"
}

fast=() final=() q_squeue=() q_sacct=()
for ((i = 1; i <= RUNS; i++)); do
  # Fast pass: a 3-node job whose script fails; its last act is to stamp the time.
  job=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" --job-name ff-bench-fast \
    --wrap "srun sh -c 'echo RuntimeError: bench >&2; exit 1'; date +%s.%N > $WORK/end-\$SLURM_JOB_ID; exit 1")
  job=${job%%;*}
  seen=$(poll_until_output squeue -h -t all -j "$job" -o %k)
  ended=$(cat "$WORK/end-$job" 2>/dev/null)
  [[ -n $seen && -n $ended ]] && fast+=("$(awk -v a="$ended" -v b="$seen" 'BEGIN { printf "%.3f", b - a }')")

  # Final pass: a job Slurm ends (scancel), its Comment only in accounting.
  job=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" --job-name ff-bench-final --wrap "srun sleep 300")
  job=${job%%;*}
  until [[ $(squeue -h -j "$job" -o %T) == RUNNING ]]; do sleep 0.1; done
  sleep 1
  scancel "$job"
  seen=$(poll_until_output sacct -n -P -X -j "$job" -o Comment%200)
  last=""
  for n in n1 n2 n3; do
    line=$(grep -m1 "completed epilog for jobid $job\$" "$ROOT/log/slurmd-$n.log")
    [[ -n $line ]] || continue
    t=$(log_time_s "$line")
    [[ -z $last ]] || awk -v a="$t" -v b="$last" 'BEGIN { exit !(a > b) }' && last=$t
  done
  [[ -n $seen && -n $last ]] && final+=("$(awk -v a="$last" -v b="$seen" 'BEGIN { printf "%.3f", b - a }')")

  a=$(now); squeue -h -t all -j "$job" -o %k >/dev/null 2>&1; b=$(now)
  q_squeue+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b - a }')")
  a=$(now); sacct -n -P -X -j "$job" -o Comment%200 >/dev/null 2>&1; b=$(now)
  q_sacct+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b - a }')")
done

printf 'firstfault Comment latency on the test cluster, %s runs, load %s\n' "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-58s %8s %8s %8s  %s\n' measure median min max target
row() {
  local name=$1 target=$2; shift 2
  local med min max met
  if [[ $# -eq 0 ]]; then
    printf '%-58s %8s %8s %8s  %s\n' "$name" - - - "no sample"
    return
  fi
  med=$(printf '%s\n' "$@" | median)
  min=$(printf '%s\n' "$@" | sort -g | head -n1)
  max=$(printf '%s\n' "$@" | sort -g | tail -n1)
  met=""
  [[ $target != - && $med != - ]] && met=$(awk -v m="$max" -v t="$target" 'BEGIN { print (m <= t) ? "met (max <= " t " s)" : "MISSED (max > " t " s)" }')
  printf '%-58s %8s %8s %8s  %s\n' "$name" "$med" "${min:--}" "${max:--}" "$met"
}
row "batch script end -> scontrol Comment (fast pass), s (${#fast[@]})" 5 "${fast[@]}"
row "last Epilog -> sacct Comment (final pass), s (${#final[@]})" 10 "${final[@]}"
row "baseline: one squeue query, s" - "${q_squeue[@]}"
row "baseline: one sacct query, s" - "${q_sacct[@]}"
