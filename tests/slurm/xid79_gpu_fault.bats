#!/usr/bin/env bats
# shellcheck disable=SC2154  # verdict, domain, sub_domain, root: set by read_pass
# A GPU falls off the bus on n2 while a 3-node job runs; the ranks on n1 and n3
# then hit the NCCL watchdog timeout and every rank exits non-zero. The job's
# Comment and the agent's database must name n2 and the GPU fault, not the
# nodes whose logs show the last error.

load helpers

setup_file() { cluster_setup_file; }
setup() { e2e_setup; }
teardown() { e2e_teardown; }

XID_LINE='NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.'

@test "Xid 79 on n2: the Comment and the database blame n2's GPU" {
  submit hang --export=ALL,FF_FAULTY_NODE=n2
  wait_ranks_ready

  # The GPU breaks while every rank waits in its allreduce; only then do the
  # ranks learn that the collective will never complete.
  "$CLUSTER" inject n2 kernel "$XID_LINE"
  touch "$WORK/go"

  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = FAILED ]

  # The fast pass wrote the Comment while the batch step was still running.
  comment=$(job_comment "$JOB")
  echo "comment: $comment"
  [[ $comment == *n2* ]]
  grep -Eiq 'xid ?79|fallen.off.bus' <<<"$comment"
  # The cause part of the summary names n2 only.
  [[ ! ${comment%%;*} =~ (^|[^a-z0-9])n[13]([^0-9]|$) ]]

  wait_final_pass "$JOB"
  run latest_pass "$JOB"
  echo "latest pass: $output"
  [ "$status" -eq 0 ]
  read_pass "$output"
  [ "$verdict" = attributed ]
  [ "$domain" = gpu ]
  [[ $sub_domain == gpu.fallen_off_bus* ]]
  [ "$root" = n2 ]

  # The fast pass wrote the Comment; a later pass never retries scontrol on
  # a finished job (slurmctld refuses it): it writes the accounting record.
  [ "$(db "SELECT comment_status FROM diagnoses WHERE job_id = '$JOB' AND trigger = 'fastpass'")" = written ]
  wait_until 30 "the final pass's Comment status" final_comment_status_set "$JOB" 0
  run db "SELECT comment_status FROM diagnoses WHERE job_id = '$JOB' AND trigger IN ('final','deadline')"
  echo "final comment status: $output"
  [ "$output" = "written: slurmdbd" ]
  assert_sacct_comment_is_diagnosis "$JOB" 0

  # `firstfault show` prints the stored diagnosis byte for byte as
  # `firstfault analyze` prints it for the merged incident the agent kept.
  ff="$FF_ROOT/install/bin/firstfault"
  FIRSTFAULT_DB="$DB" "$ff" show "$JOB" --format json >"$WORK/show.json"
  "$ff" analyze "$FF_ROOT/agent/jobs/$JOB/0/incident" --format json >"$WORK/analyze.json"
  cmp "$WORK/show.json" "$WORK/analyze.json"
}
