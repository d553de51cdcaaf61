#!/usr/bin/env bats
# shellcheck disable=SC2154  # verdict, domain, sub_domain, root: set by read_pass
# The agent is down while a job fails. The Epilog must not care: it exits 0
# within a second on every node and no node is drained. Once the agent is
# back, the bundles the collectors kept arrive and the diagnosis is stored.

load helpers

setup_file() { cluster_setup_file; }
setup() { e2e_setup; }
teardown() {
  # The other tests need the agent, whatever happened here.
  [[ $EUID -eq 0 ]] && "$CLUSTER" agent-start >/dev/null 2>&1
  e2e_teardown
}

# Unix seconds (3 decimals) of a "[YYYY-MM-DDTHH:MM:SS.mmm] ..." log line.
stamp_s() {
  local ts=${1#\[}
  ts=${ts%%]*}
  [[ -n $ts ]] || { echo "no timestamp in: $1" >&2; return 1; }
  echo "$(date -d "${ts%.*}" +%s).${ts##*.}"
}

# Prints "node seconds rc" for the Epilog of job $1 on each node: from the
# moment slurmd starts it (the prolog wait right after the terminate request;
# the same message also precedes every task launch) to "completed epilog".
epilog_timings() {
  local n log start end rc
  for n in n1 n2 n3; do
    log=$FF_ROOT/log/slurmd-$n.log
    start=$(awk -v t="_rpc_terminate_job: uid = [0-9]+ JobId=$1\$" \
                -v w="Finished wait for job $1's prolog to complete" \
                '$0 ~ t { seen = 1 } seen && index($0, w) { print; exit }' "$log")
    end=$(grep -m1 "completed epilog for jobid $1\$" "$log")
    rc=$(grep -m1 "JobId=$1: sent epilog complete msg" "$log" | sed 's/.*rc = //')
    [[ -n $start && -n $end ]] || { echo "$n: no Epilog start/end for job $1 in $log" >&2; return 1; }
    awk -v n="$n" -v a="$(stamp_s "$start")" -v b="$(stamp_s "$end")" -v rc="${rc:-?}" \
      'BEGIN { printf "%s %.3f %s\n", n, b - a, rc }'
  done
}

# The Epilog bundle of job $1 waits in the outbox of every node.
epilog_bundles_kept() {
  local n
  for n in n1 n2 n3; do
    compgen -G "$FF_ROOT/spool/$n/outbox/$n-$1-epilog-*" >/dev/null || return 1
  done
}

outboxes_drained() { ! compgen -G "$FF_ROOT/spool/n*/outbox/n*-$1-*" >/dev/null; }

@test "agent down: every Epilog exits 0 within a second, nothing drains, the diagnosis arrives later" {
  "$CLUSTER" agent-stop
  run curl -s -m 2 -o /dev/null "$AGENT_URL/api/v1/health"
  [ "$status" -ne 0 ]

  submit exception --export=ALL,FF_FAILING_RANK=1
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = FAILED ]
  node=$(node_of_rank 1)
  wait_epilogs_done "$JOB"

  run epilog_timings "$JOB"
  echo "$output"
  [ "$status" -eq 0 ]
  while read -r n secs rc; do
    [ "$rc" = 0 ]
    awk -v s="$secs" 'BEGIN { exit !(s >= 0 && s < 1.0) }'
  done <<<"$output"
  # A failing Epilog is logged as such and drains the node.
  run grep -h "\[job $JOB\] epilog failed" "$FF_ROOT"/log/slurmd-n*.log
  [ "$status" -ne 0 ]
  run sinfo -h -N -p debug -o '%N %t'
  echo "$output"
  [ "$(grep -c ' idle$' <<<"$output")" -eq 3 ]

  # Nothing could reach the agent: the bundles wait in the outboxes, and the
  # agent stays away long enough for the collectors to retry and fail again.
  wait_until 30 "the Epilog bundles of job $JOB in every outbox" epilog_bundles_kept "$JOB"
  sleep 3
  epilog_bundles_kept "$JOB"
  [ -z "$(db "SELECT 1 FROM diagnoses WHERE job_id = '$JOB'" 2>/dev/null)" ]

  "$CLUSTER" agent-start
  wait_final_pass "$JOB"
  wait_until 30 "the outboxes to drain of job $JOB" outboxes_drained "$JOB"
  run latest_pass "$JOB"
  echo "latest pass: $output"
  read_pass "$output"
  [ "$verdict" = attributed ]
  [ "$domain" = application ]
  [ "$root" = "$node" ]
}
