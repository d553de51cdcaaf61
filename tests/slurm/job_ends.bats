#!/usr/bin/env bats
# shellcheck disable=SC2154  # verdict, domain, sub_domain, root: set by read_pass
# Every way a job ends on a cluster with accounting (slurmdbd + MariaDB), and
# where its user then looks for the diagnosis: `scontrol show job` (the
# Comment, written while the job still runs, where Slurm allows it) and, long
# after slurmctld forgot the job, `sacct -o Comment` (the accounting record,
# one per attempt), plus the agent's database.

load helpers

setup_file() { cluster_setup_file; }
setup() {
  e2e_setup
  MARK=$(stat -c %s "$FF_ROOT/log/slurmctld.log")
}
teardown() {
  resume_all
  rm -f "$FF_ROOT/prolog.hold"
  # A test that changed the agent's settings leaves them to no other.
  [[ -f $FF_ROOT/agent.extra.yaml ]] && "$CLUSTER" agent-config
  e2e_teardown
}

# The final pass of attempt $2 of job $1, read into verdict, domain, ...
final_pass() {
  wait_final_pass_of "$1" "$2"
  run latest_pass_of "$1" "$2"
  echo "attempt $2: $output"
  [ "$status" -eq 0 ]
  read_pass "$output"
}

@test "script failure: the fast pass's Comment while it runs, the same diagnosis in sacct" {
  submit exception --export=ALL,FF_FAILING_RANK=1
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = FAILED ]
  comment=$(job_comment "$JOB")
  echo "scontrol Comment: $comment"
  [[ $comment == *application* || $comment == *exception* || $comment == *Error* ]]
  [ "$(db "SELECT comment_status FROM diagnoses WHERE job_id = '$JOB' AND trigger = 'fastpass'")" = written ]

  final_pass "$JOB" 0
  [ "$verdict" = attributed ]
  [ "$domain" = application ]
  assert_sacct_comment_is_diagnosis "$JOB" 0
  [ "$(sacct_state "$JOB" 0)" = FAILED ]
}

# Slurm's time limits are whole minutes; moving the job's EndTime to a few
# seconds from now makes slurmctld time it out for real, within seconds.
@test "time limit: scheduler (time limit), in sacct" {
  submit sleep --time=1
  wait_ranks_ready
  scontrol update JobId="$JOB" EndTime=now+2
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = TIMEOUT ]
  grep -q "CANCELLED AT .* DUE TO TIME LIMIT" "$WORK/slurm-$JOB.out"

  final_pass "$JOB" 0
  [ "$verdict" = attributed ]
  [[ $sub_domain == scheduler.time_limit* ]]
  assert_sacct_comment_is_diagnosis "$JOB" 0
  [ "$(sacct_state "$JOB" 0)" = TIMEOUT ]
}

@test "scancel: scheduler (cancelled), in sacct" {
  submit sleep
  wait_ranks_ready
  scancel "$JOB"
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = CANCELLED ]

  final_pass "$JOB" 0
  [ "$verdict" = attributed ]
  [[ $sub_domain == scheduler.cancelled* ]]
  assert_sacct_comment_is_diagnosis "$JOB" 0
  [[ $(sacct_state "$JOB" 0) == CANCELLED* ]]
}

@test "a node set DOWN under the job (NODE_FAIL): the diagnosis names that node" {
  submit sleep --no-requeue
  wait_ranks_ready
  scontrol update NodeName=n2 State=DOWN Reason="e2e test: n2 taken down"
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = NODE_FAIL ]
  # slurmctld's own account, which the agent reads.
  tail -c +"$((MARK + 1))" "$FF_ROOT/log/slurmctld.log" | grep -E "JobId=$JOB .*failed node n2|node n2 state set to DOWN"

  final_pass "$JOB" 0
  [ "$verdict" = attributed ]
  [ "$domain" = scheduler ]
  [[ $sub_domain == scheduler.node_failure* ]]
  [ "$root" = n2 ]
  [ -s "$FF_ROOT/agent/jobs/$JOB/0/incident/cluster/slurmctld.log" ]
  assert_sacct_comment_is_diagnosis "$JOB" 0
  [[ $(sacct_comment "$JOB" 0) == *n2* ]]
  [ "$(sacct_state "$JOB" 0)" = NODE_FAIL ]
}

@test "requeue: attempts 0 and 1 each keep their own diagnosis, in the database and in sacct" {
  # Attempt 0 is requeued while it runs; attempt 1 then fails on its own.
  JOB=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" --job-name ff-e2e-requeue \
    --wrap "if [ \"\$SLURM_RESTART_COUNT\" = 1 ]; then srun $RANK_SH exception; else srun $RANK_SH sleep; fi" \
    --export=ALL,FF_FAILING_RANK=2) || false
  JOB=${JOB%%;*}
  wait_ranks_ready
  rm -f "$WORK"/ready-*
  scontrol requeue "$JOB"
  wait_final_pass_of "$JOB" 0
  # A requeued job waits for its begin time; the test needs it now.
  wait_until 30 "job $JOB pending again" bash -c "[ \"\$(squeue -h -j $JOB -o %T)\" = PENDING ]"
  scontrol update JobId="$JOB" StartTime=now
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = FAILED ]
  final_pass "$JOB" 1
  [ "$verdict" = attributed ]
  [ "$domain" = application ]

  # Attempt 0's diagnosis is still its own.
  run latest_pass_of "$JOB" 0
  echo "attempt 0: $output"
  read_pass "$output"
  [ "$domain" = scheduler ]
  [ "$(db "SELECT COUNT(DISTINCT attempt) FROM diagnoses WHERE job_id = '$JOB'")" = 2 ]

  # sacct: one record per attempt, each with its own attempt's diagnosis.
  sacct -D -X -j "$JOB" -o JobID,State,Start,End,Comment%100
  [ "$(sacct_state "$JOB" 0)" = REQUEUED ]
  assert_sacct_comment_is_diagnosis "$JOB" 0
  assert_sacct_comment_is_diagnosis "$JOB" 1
  [ "$(sacct_comment "$JOB" 0)" != "$(sacct_comment "$JOB" 1)" ]
}

@test "a job array task: its own diagnosis, Comment and accounting record" {
  ARRAY=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" --job-name ff-e2e-array \
    --array=1-2 --wrap "if [ \"\$SLURM_ARRAY_TASK_ID\" = 2 ]; then srun $RANK_SH exception; else srun $RANK_SH ok; fi" \
    --export=ALL,FF_FAILING_RANK=0) || false
  ARRAY=${ARRAY%%;*}
  wait_until "$JOB_END_LIMIT" "array $ARRAY to end" bash -c "[ -z \"\$(squeue -h -j $ARRAY)\" ]"
  sacct -X -j "$ARRAY" -o JobID,JobIDRaw,State
  # The failed task's own job id: what the Epilog and the agent know it by.
  JOB=$(sacct -n -P -X -j "${ARRAY}_2" -o JobIDRaw | head -n1)
  [ -n "$JOB" ]
  [ "$(sacct -n -P -X -j "${ARRAY}_2" -o State | head -n1)" = FAILED ]
  final_pass "$JOB" 0
  [ "$verdict" = attributed ]
  [ "$domain" = application ]
  comment=$(squeue -h -t all -j "${ARRAY}_2" -o '%k')
  echo "scontrol Comment of ${ARRAY}_2: $comment"
  [[ -n $comment && $comment != "(null)" ]]
  assert_sacct_comment_is_diagnosis "$JOB" 0 "${ARRAY}_2"
  # The task that succeeded needs no Comment.
  [ -z "$(sacct -n -P -X -j "${ARRAY}_1" -o Comment%200 | head -n1)" ]
}

@test "a heterogeneous job: each component is diagnosed by its own id" {
  cat >"$WORK/het.sh" <<EOF
#!/bin/bash
#SBATCH -N1 --ntasks-per-node=1
#SBATCH hetjob
#SBATCH -N2 --ntasks-per-node=1
srun --het-group=0 true
srun --het-group=1 $RANK_SH exception
EOF
  JOB=$(sbatch --parsable --chdir "$WORK" --job-name ff-e2e-het --export=ALL,FF_FAILING_RANK=0 \
    "$WORK/het.sh") || false
  JOB=${JOB%%;*}
  wait_until "$JOB_END_LIMIT" "het job $JOB to end" bash -c "[ -z \"\$(squeue -h -j $JOB)\" ]"
  sacct -X -j "$JOB" -o JobID,JobIDRaw,State,NodeList
  [[ $(sacct -n -P -X -j "$JOB" -o State | head -n1) == FAILED ]]
  final_pass "$JOB" 0
  [ "$verdict" = attributed ]
  [ "$domain" = application ]
  assert_sacct_comment_is_diagnosis "$JOB" 0
}

@test "a job cancelled before its batch step started: scheduler (cancelled)" {
  # A Prolog that waits holds the job in CONFIGURING with its nodes
  # allocated, as a slow node health check does; it is cancelled there.
  touch "$FF_ROOT/prolog.hold"
  JOB=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" --job-name ff-e2e-prolog \
    --wrap "srun $RANK_SH ok") || false
  JOB=${JOB%%;*}
  wait_until 30 "job $JOB in its prolog" test -e "$FF_ROOT/prolog.waiting.$JOB"
  scancel "$JOB"
  rm -f "$FF_ROOT/prolog.hold"
  wait_job_finished "$JOB"
  [[ $(job_state "$JOB") == CANCELLED* ]]
  [ ! -e "$WORK/slurm-$JOB.out" ] || ! grep -q . "$WORK/slurm-$JOB.out"

  final_pass "$JOB" 0
  [ "$verdict" = attributed ]
  [[ $sub_domain == scheduler.cancelled* ]]
  assert_sacct_comment_is_diagnosis "$JOB" 0
}

@test "comment_field: AdminComment: the diagnosis where the job's user cannot overwrite it" {
  printf 'comment_field: AdminComment\n' >"$WORK/agent-admin.yaml"
  "$CLUSTER" agent-config "$WORK/agent-admin.yaml"
  submit sleep
  wait_ranks_ready
  scancel "$JOB"
  wait_job_finished "$JOB"
  final_pass "$JOB" 0
  "$CLUSTER" agent-config
  [[ $sub_domain == scheduler.cancelled* ]]
  admin_comment_set() { [[ -n $(sacct -n -P -X -j "$JOB" -o AdminComment%200) ]]; }
  wait_until 30 "the AdminComment of job $JOB" admin_comment_set
  admin=$(sacct -n -P -X -j "$JOB" -o AdminComment%200)
  echo "AdminComment: $admin"
  summary=$(latest_pass_of "$JOB" 0 | cut -d'|' -f6)
  [ "$(comparable <<<"$admin")" = "$(comparable <<<"$summary")" ]
  [ -z "$(sacct_comment "$JOB" 0)" ]
}
