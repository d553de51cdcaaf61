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
