#!/usr/bin/env bash
# Benchmark (not a test): what the SPANK plugin costs a job's successful
# steps. One job of STEPS short srun steps (3 nodes, one task each, step
# STEPS/2 fails) runs on the test cluster of tests/slurm/cluster.sh twice:
# with the plugin line in plugstack.conf and with it removed (baseline).
# Prints the median and p95 wall time of the successful steps, as the job
# script sees them (srun start to srun exit), both ways and the difference.
#
#   bench/plugin_steps.sh [--steps 200] [--runs 1]
#
# Needs root and the cluster up with the plugin deployed:
#   tests/slurm/cluster.sh deploy BUILD_DIR && tests/slurm/cluster.sh start
# --runs N alternates N jobs with and N without the plugin and pools them.
# plugstack.conf is restored at exit, whatever happens.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=200
runs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64 ;;
  esac
done
[[ $steps =~ ^[0-9]+$ && $steps -ge 2 && $runs =~ ^[0-9]+$ && $runs -ge 1 ]] ||
  { echo "--steps must be >= 2, --runs >= 1" >&2; exit 64; }

cluster_root=${FF_CLUSTER_ROOT:-/var/tmp/ffcluster}
export SLURM_CONF=$cluster_root/etc/slurm.conf
plugstack=$cluster_root/plugstack.conf
[ "$(id -u)" = 0 ] || { echo "run as root (the test cluster's jobs)" >&2; exit 2; }
"$root/tests/slurm/cluster.sh" status >/dev/null 2>&1 ||
  { echo "the test cluster is not up: tests/slurm/cluster.sh start" >&2; exit 2; }
grep -q '^optional .*spank_firstfault.so' "$plugstack" ||
  { echo "no plugin line in $plugstack: tests/slurm/cluster.sh deploy BUILD_DIR" >&2; exit 2; }

work=$(mktemp -d /var/tmp/ff-bench-steps.XXXXXX)
chmod 0755 "$work"
cp -p "$plugstack" "$work/plugstack.with"
grep -v '^optional .*spank_firstfault.so' "$plugstack" >"$work/plugstack.without" || true
jobs=()
cleanup() {
  cp -p "$work/plugstack.with" "$plugstack.bench.$$" && mv -f "$plugstack.bench.$$" "$plugstack"
  # Hundreds of rank records per job in the node spools would be matched by
  # the tests' spool searches ("*-<job id>-*" is also a step number here).
  local job
  for job in "${jobs[@]}"; do rm -rf "$cluster_root"/spool/n*/jobs/"$job"; done
  rm -rf "$work"
}
trap cleanup EXIT

# The job: each step timed by the script itself with bash's EPOCHREALTIME.
cat >"$work/job.sh" <<EOF
#!/usr/bin/env bash
fail=\$(( $steps / 2 ))
for ((i = 1; i <= $steps; i++)); do
  cmd=true
  ((i == fail)) && cmd=false
  t0=\$EPOCHREALTIME
  srun --ntasks-per-node=1 \$cmd 2>/dev/null
  rc=\$?
  t1=\$EPOCHREALTIME
  echo "\$i \$rc \$t0 \$t1"
done >"\$1"
exit 0
EOF
chmod 0755 "$work/job.sh"

# run_job MODE N: one job with plugstack.conf as MODE (with|without).
run_job() {
  local mode=$1 n=$2 job state
  cp "$work/plugstack.$mode" "$plugstack.bench.$$" && mv -f "$plugstack.bench.$$" "$plugstack"
  job=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$work" --job-name "ff-bench-steps-$mode" \
    --output "$work/slurm-%j.out" "$work/job.sh" "$work/$mode.steps.$n")
  job=${job%%;*}
  jobs+=("$job")
  while state=$(squeue -h -t all -j "$job" -o %T 2>/dev/null); [[ $state =~ ^(PENDING|CONFIGURING|RUNNING|COMPLETING)$ ]]; do
    sleep 1
  done
  [[ $state == COMPLETED ]] || { echo "job $job ($mode): $state" >&2; cat "$work/slurm-$job.out" >&2; exit 1; }
  echo "  job $job, plugin $mode: done" >&2
}

for ((n = 1; n <= runs; n++)); do
  run_job with "$n"
  run_job without "$n"
done

# stats MODE: "count median p95 mean" of the successful steps' seconds.
stats() {
  cat "$work/$1".steps.* | awk '$2 == 0 { printf "%.6f\n", $4 - $3 }' | sort -g |
    awk '{ v[NR] = $1; s += $1 }
         END { p = int(NR * 0.95 + 0.999999); if (p < 1) p = 1
               m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
               printf "%d %.4f %.4f %.4f\n", NR, m, v[p], s / NR }'
}
failed() { cat "$work/$1".steps.* | awk '$2 != 0' | wc -l; }

read -r w_n w_med w_p95 w_mean < <(stats with)
read -r b_n b_med b_p95 b_mean < <(stats without)

printf 'firstfault plugin step benchmark (%s, %s CPUs)\n' "$(date -u +%FT%TZ)" "$(nproc)"
printf '  job      %d srun steps x %d job(s) per mode, 3 nodes x 1 task, step %d fails (%d/%d failed steps seen)\n' \
  "$steps" "$runs" $((steps / 2)) "$(failed with)" "$(failed without)"
printf '  cluster  %s (Slurm %s), plugin %s\n' "$cluster_root" \
  "$(sinfo -V | cut -d' ' -f2)" "$(sed -n 's/^optional \([^ ]*\).*/\1/p' "$work/plugstack.with")"
printf '  timing   wall time of each successful srun, from the job script (EPOCHREALTIME)\n\n'
printf '  %-34s %9s %10s %10s %10s\n' plugstack.conf "ok steps" "median s" "p95 s" "mean s"
printf '  %-34s %9d %10.4f %10.4f %10.4f\n' "with spank_firstfault.so" "$w_n" "$w_med" "$w_p95" "$w_mean"
printf '  %-34s %9d %10.4f %10.4f %10.4f\n' "without (baseline)" "$b_n" "$b_med" "$b_p95" "$b_mean"
awk -v a="$w_med" -v b="$b_med" -v c="$w_p95" -v d="$b_p95" -v e="$w_mean" -v f="$b_mean" 'BEGIN {
  printf "  %-34s %9s %+10.4f %+10.4f %+10.4f\n", "difference", "", a - b, c - d, e - f
  printf "  %-34s %9s %+9.1f%% %+9.1f%% %+9.1f%%\n", "", "", 100 * (a - b) / b, 100 * (c - d) / d, 100 * (e - f) / f }'
