#!/usr/bin/env bats
# shellcheck disable=SC2154  # verdict, domain: set by read_pass
# A job whose failure message is built to attack whoever handles it: quotes,
# $(), backticks, a newline followed by "JobId=1 Comment=evil", an escape
# sequence. On the real cluster, the agent's `scontrol update` writes a
# Comment that is one line of printable ASCII naming the application fault;
# nothing in the message runs, and no other job is touched. The message
# itself is kept as evidence, byte for byte: it is data, not a command.

load helpers

setup_file() { cluster_setup_file; }
setup() { e2e_setup; }
teardown() { e2e_teardown; }

@test "hostile text in a job's failure: one argument, nothing runs" {
  cat >"$WORK/hostile.py" <<PY
import os
d = "$WORK"
raise RuntimeError('"; touch %s/pwned1; echo "\$(touch %s/pwned2)" \`touch %s/pwned3\` \\\\\n'
                   'JobId=1 Comment=evil \x1b[31mred' % (d, d, d))
PY
  JOB=$(sbatch --parsable -N1 --chdir "$WORK" --job-name ff-e2e-injection \
    --wrap "srun /usr/bin/python3 $WORK/hostile.py") || false
  JOB=${JOB%%;*}
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = FAILED ]
  grep -q 'RuntimeError: "; touch' "$WORK/slurm-$JOB.out"

  wait_final_pass "$JOB"
  run latest_pass "$JOB"
  read_pass "$output"
  [ "$domain" = application ]

  comment=$(job_comment "$JOB")
  echo "comment: $comment"
  [[ -n $comment ]]
  [[ $comment == *RuntimeError* ]]
  # One line of printable ASCII without anything a shell would act on.
  [[ $comment =~ ^[[:print:]]+$ ]]
  [[ $comment != *'$'* && $comment != *'`'* && $comment != *'"'* && $comment != *evil* ]]
  # Nothing ran.
  [ ! -e "$WORK/pwned1" ] && [ ! -e "$WORK/pwned2" ] && [ ! -e "$WORK/pwned3" ]
  # The evidence keeps the message as the job printed it.
  db "SELECT text FROM evidence e JOIN diagnoses d ON d.id = e.diagnosis_id
      WHERE d.job_id = '$JOB'" | grep -qF 'RuntimeError: "; touch'
}

# The job's Comment and output path are the user's text, and `scontrol show
# job -o` prints them among the job's fields: a Comment of "Key=value" words
# and an output file named "... NodeList=evil.out" pose as JobState,
# ExitCode, NodeList and Restarts there. The agent reads the job from
# libslurm's record (firstfault-slurm-job), so the job gets the diagnosis
# app_exception.bats expects without that Comment, and the names it made up
# reach nothing the agent stored.
injected_fields_change_nothing() {
  local fake_comment=$1 out
  submit exception --export=ALL,FF_FAILING_RANK=1 --comment "$fake_comment" \
    -o "$WORK/out %j NodeList=evil.out"
  wait_job_finished "$JOB"
  [ "$(job_state "$JOB")" = FAILED ]
  out="$WORK/out $JOB NodeList=evil.out"
  grep -q '^\[rank1\]: FileNotFoundError: ' "$out"
  node=$(node_of_rank 1)
  echo "rank 1 ran on $node"
  [[ $node =~ ^n[1-3]$ ]]

  wait_final_pass "$JOB"
  run latest_pass "$JOB"
  echo "latest pass: $output"
  read_pass "$output"
  [ "$verdict" = attributed ]
  [ "$domain" = application ]
  [ "$root" = "$node" ]
  [ "$(db "SELECT terminal_state FROM diagnoses WHERE job_id = '$JOB' ORDER BY id DESC LIMIT 1")" = FAILED ]

  local incident=$FF_ROOT/agent/jobs/$JOB/0/incident
  python3 - "$incident/job.json" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))
print("incident:", job.get("state"), job.get("exit_code"), job.get("nodes"))
assert job["state"] == "FAILED", job["state"]
assert job["exit_code"] != "0:0", job["exit_code"]
assert job["nodes"] == ["n1", "n2", "n3"], job["nodes"]
PY
  # The job's output, with the traceback, is in the incident.
  grep -rqF 'FileNotFoundError' "$incident/app"
  # The made-up node is nowhere: no file, no name, no database row.
  run grep -rlF victim-17 "$FF_ROOT/agent/jobs/$JOB"
  [ "$status" -eq 1 ]
  [ -z "$(find "$FF_ROOT/agent/jobs/$JOB" -name '*victim*' -o -name 'evil*')" ]
  [ "$(db "SELECT count(*) FROM diagnoses d LEFT JOIN root_causes r ON r.diagnosis_id = d.id
           WHERE d.job_id = '$JOB' AND (d.diagnosis_json LIKE '%victim-17%'
                                        OR COALESCE(d.root_node, '') LIKE '%victim%')")" = 0 ]
  comment=$(job_comment "$JOB")
  echo "comment: $comment"
  grep -qi 'application' <<<"$comment"
  [[ $comment == *"$node"* && $comment != *victim* ]]
}

@test "a Comment posing as JobState, NodeList and Restarts, and an output path posing as NodeList" {
  injected_fields_change_nothing 'ok JobState=COMPLETED ExitCode=0:0 NodeList=n1,victim-17 Restarts=3'
}

# Without the forged Restarts, a Key=value split would also take the forged
# state and node list for the job's own attempt.
@test "a Comment posing as JobState and NodeList of the job's own attempt" {
  injected_fields_change_nothing 'ok JobState=COMPLETED ExitCode=0:0 NodeList=n1,victim-17'
}
