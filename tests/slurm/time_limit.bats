#!/usr/bin/env bats
# shellcheck disable=SC2154  # verdict, domain, sub_domain, root: set by read_pass
# A job killed by its time limit: the scheduler ended it, nothing broke.
# Slurm's time limits are whole minutes; moving the job's EndTime to a few
# seconds from now makes slurmctld time it out for real, within seconds.

load helpers

setup_file() { cluster_setup_file; }
setup() { e2e_setup; }
teardown() { e2e_teardown; }

@test "a job that runs into its time limit: scheduler (time limit)" {
  submit sleep --time=1
  wait_ranks_ready
  scontrol update JobId="$JOB" EndTime=now+2

  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = TIMEOUT ]
  grep -q "CANCELLED AT .* DUE TO TIME LIMIT" "$WORK/slurm-$JOB.out"

  wait_final_pass "$JOB"
  run latest_pass "$JOB"
  echo "latest pass: $output"
  [ "$status" -eq 0 ]
  read_pass "$output"
  [ "$verdict" = attributed ]
  [ "$domain" = scheduler ]
  [[ $sub_domain == scheduler.time_limit* ]]
}
