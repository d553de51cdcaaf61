#!/usr/bin/env bats
# shellcheck disable=SC2154  # verdict, domain, sub_domain, root: set by read_pass
# A job that completes: no Comment is written, and the agent records that
# nothing failed.

load helpers

setup_file() { cluster_setup_file; }
setup() { e2e_setup; }
teardown() { e2e_teardown; }

@test "a completed job gets no Comment and a no_failure row" {
  submit ok
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = COMPLETED ]

  wait_final_pass "$JOB"
  run latest_pass "$JOB"
  echo "latest pass: $output"
  [ "$status" -eq 0 ]
  read_pass "$output"
  [ "$verdict" = no_failure ]
  # No pass of this job may call it a failure.
  [ "$(db "SELECT count(*) FROM diagnoses WHERE job_id = '$JOB' AND verdict <> 'no_failure'")" -eq 0 ]

  comment=$(job_comment "$JOB")
  echo "comment: '$comment'"
  [[ -z $comment || $comment == "(null)" ]]
}
