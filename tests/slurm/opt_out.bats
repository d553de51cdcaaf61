#!/usr/bin/env bats
# A user opts a failing job out with `sbatch --firstfault=off`: the plugin
# records nothing on any node, the Epilog hands nothing off, no bundle reaches
# the agent and no Comment is written. The job itself runs as usual.

load helpers

setup_file() { cluster_setup_file; }
setup() { e2e_setup; }
teardown() { e2e_teardown; }

@test "--firstfault=off: nothing is recorded, collected or written" {
  JOB=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" --firstfault=off \
    --job-name ff-e2e-opt-out --wrap "srun sh -c 'exit 3'")
  JOB=${JOB%%;*}
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = FAILED ]
  wait_epilogs_done "$JOB"
  # A collector started anyway would deliver within seconds; give it time to.
  sleep 5

  run find "$FF_ROOT/spool" -path "*/jobs/$JOB" -o -name "$JOB.json" -o -name "*-$JOB-*"
  echo "spool entries: $output"
  [ -z "$output" ]
  [ "$(db "SELECT count(*) FROM bundles WHERE job_id = '$JOB'")" -eq 0 ]
  [ "$(db "SELECT count(*) FROM diagnoses WHERE job_id = '$JOB'")" -eq 0 ]
  comment=$(job_comment "$JOB")
  [[ -z $comment || $comment == "(null)" ]]
}
