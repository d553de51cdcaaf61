#!/usr/bin/env bats
# shellcheck disable=SC2154  # verdict, domain, sub_domain, root: set by read_pass
# Rank 1 raises a Python exception; the other ranks then wait in their
# allreduce until the NCCL watchdog gives up. The cause is the application on
# rank 1's node, not the timeouts on the others.

load helpers

setup_file() { cluster_setup_file; }
setup() { e2e_setup; }
teardown() { e2e_teardown; }

@test "a Python exception on rank 1: application, on rank 1's node" {
  submit exception --export=ALL,FF_FAILING_RANK=1
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = FAILED ]

  # The traceback really came from the interpreter on rank 1.
  grep -q '^\[rank1\]: FileNotFoundError: ' "$WORK/slurm-$JOB.out"
  grep -q 'Watchdog caught collective operation timeout' "$WORK/slurm-$JOB.out"
  node=$(node_of_rank 1)
  echo "rank 1 ran on $node"
  [[ $node =~ ^n[1-3]$ ]]

  comment=$(job_comment "$JOB")
  echo "comment: $comment"
  grep -qi 'application' <<<"$comment"
  [[ $comment == *"$node"* ]]

  wait_final_pass "$JOB"
  run latest_pass "$JOB"
  echo "latest pass: $output"
  [ "$status" -eq 0 ]
  read_pass "$output"
  [ "$verdict" = attributed ]
  [ "$domain" = application ]
  [ "$root" = "$node" ]
}
