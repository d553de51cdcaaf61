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
  node=$(node_of_rank 1)
  wait_epilogs_done "$JOB"
  # The job ends as its script meant (rank 1's exception: srun and the
  # script exit 1), not held up by the fast pass that cannot reach the
  # agent; every Epilog exits 0 within a second; no node drains.
  assert_job_ran_normally "$JOB" 1 20

  # Nothing could reach the agent: the bundles wait in the outboxes, and the
  # agent stays away long enough for the collectors to retry and fail again.
  wait_until 30 "the Epilog bundles of job $JOB in every outbox" epilog_bundles_kept "$JOB"
  sleep 3
  epilog_bundles_kept "$JOB"
  [ -z "$(db "SELECT 1 FROM diagnoses WHERE job_id = '$JOB'" 2>/dev/null)" ]

  "$CLUSTER" agent-start
  wait_final_pass "$JOB"
  wait_until 30 "the outboxes to drain of job $JOB" outboxes_drained "$JOB"
  # Every node's Epilog bundle arrived: the pass is the final one, not the
  # deadline pass the agent runs when a node's bundle stays away.
  [ "$(db "SELECT group_concat(DISTINCT node) FROM (SELECT node FROM bundles
           WHERE job_id = '$JOB' AND pass = 'epilog' ORDER BY node)")" = n1,n2,n3 ]
  [ -n "$(db "SELECT 1 FROM diagnoses WHERE job_id = '$JOB' AND trigger = 'final'")" ]
  run latest_pass "$JOB"
  echo "latest pass: $output"
  read_pass "$output"
  [ "$verdict" = attributed ]
  [ "$domain" = application ]
  [ "$root" = "$node" ]
}
