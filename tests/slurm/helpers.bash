# Shared by the end-to-end bats files: jobs on the real three-node cluster of
# cluster.sh, and what the Slurm path left behind (Comment, SQLite, logs).
# Every wait has a bound; a test fails with what it saw, never hangs.
# shellcheck disable=SC2034  # globals set here are read by the .bats files

FF_ROOT=${FF_CLUSTER_ROOT:-/var/tmp/ffcluster}
CLUSTER=$BATS_TEST_DIRNAME/cluster.sh
RANK_SH=$BATS_TEST_DIRNAME/jobs/rank.sh
DB=$FF_ROOT/agent/firstfault.db
AGENT_URL=http://127.0.0.1:${FF_AGENT_PORT:-7421}
export SLURM_CONF=$FF_ROOT/etc/slurm.conf

# Bounds (seconds).
JOB_START_LIMIT=60
JOB_END_LIMIT=120
DIAGNOSIS_LIMIT=90

# Skips only when not root; anything else missing is a failure.
require_root() {
  [[ $EUID -eq 0 ]] || skip "the Slurm end-to-end tests need root"
}

# Runs before the tests of a file: the cluster is up (idempotent; ctest's
# fixture has already started it), every part is deployed, the agent answers.
cluster_setup_file() {
  [[ $EUID -eq 0 ]] || return 0
  "$CLUSTER" start
  local part
  for part in lib/spank_firstfault.so bin/firstfault-epilog bin/firstfault-collect bin/firstfault \
              bin/firstfault-slurm-job; do
    [[ -f $FF_ROOT/install/$part ]] || {
      echo "not deployed: $FF_ROOT/install/$part (build, then: cluster.sh deploy BUILD_DIR)" >&2
      return 1
    }
  done
  "$CLUSTER" agent-start
}

# Per test: its own job directory, simulated node logs emptied so no earlier
# test's injected lines fall into this job's window.
e2e_setup() {
  require_root
  "$CLUSTER" reset-logs
  WORK=$(mktemp -d /var/tmp/ff-e2e.XXXXXX)
  chmod 0755 "$WORK"
}

e2e_teardown() {
  [[ $EUID -eq 0 ]] || return 0
  # A failed test must not leave its job holding the nodes for the next one.
  [[ -n ${JOB:-} ]] && scancel "$JOB" 2>/dev/null
  if [[ -n ${WORK:-} && -d $WORK ]]; then
    if [[ -n ${BATS_TEST_COMPLETED:-} ]]; then rm -rf "$WORK"; else echo "# job dir kept: $WORK" >&3; fi
  fi
  return 0
}

# submit SCENARIO [sbatch options...]: a 3-node job, one rank per node.
submit() {
  local scenario=$1; shift
  JOB=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" \
    --job-name "ff-e2e-$scenario" "$@" --wrap "srun $RANK_SH $scenario") || return 1
  JOB=${JOB%%;*}
  echo "# job $JOB ($scenario) in $WORK" >&3
}

job_state() { squeue -h -t all -j "$1" -o '%T' 2>/dev/null; }
job_comment() { squeue -h -t all -j "$1" -o '%k' 2>/dev/null; }

wait_until() {  # wait_until LIMIT_S DESCRIPTION CMD...
  local limit=$1 what=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      echo "timed out after ${limit}s waiting for: $what" >&2
      return 1
    fi
    sleep 0.5
  done
}

ranks_ready() { (($(compgen -G "$WORK/ready-*" | wc -l) >= 3)); }
job_finished() {
  local s
  s=$(job_state "$1")
  [[ -n $s && $s != PENDING && $s != RUNNING && $s != CONFIGURING && $s != COMPLETING ]]
}

wait_ranks_ready() {
  wait_until "$JOB_START_LIMIT" "job $JOB: all ranks in their collective" ranks_ready || {
    show_job_debug
    return 1
  }
}

wait_job_finished() {
  wait_until "$JOB_END_LIMIT" "job $1 to end" job_finished "$1" || {
    show_job_debug
    return 1
  }
}

# Every node ran its Epilog for the job (slurmd logs it at debug level).
epilogs_done() {
  local n
  for n in n1 n2 n3; do
    grep -q "completed epilog for jobid $1\$" "$FF_ROOT/log/slurmd-$n.log" || return 1
  done
}

wait_epilogs_done() {
  wait_until 60 "the Epilog of job $1 on n1..n3" epilogs_done "$1"
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

# Every node's Epilog of job $1 exited 0 within a second, and none was
# logged as failed (a failing Epilog drains its node).
assert_epilogs_quick() {
  local out n secs rc
  out=$(epilog_timings "$1") || return 1
  echo "$out"
  while read -r n secs rc; do
    [[ $rc == 0 ]] || { echo "$n: the Epilog of job $1 ended with rc $rc" >&2; return 1; }
    awk -v s="$secs" 'BEGIN { exit !(s >= 0 && s < 1.0) }' ||
      { echo "$n: the Epilog of job $1 took ${secs}s" >&2; return 1; }
  done <<<"$out"
  if grep -h "\[job $1\] epilog failed" "$FF_ROOT"/log/slurmd-n*.log >&2; then return 1; fi
}

# Every node takes jobs again, whatever a test left: a drained node would
# starve every later test of its three nodes.
resume_all() {
  local n
  for n in n1 n2 n3; do
    case $(sinfo -h -N -n "$n" -p debug -o '%t' 2>/dev/null) in
      drain* | drng | down*) scontrol update NodeName="$n" State=RESUME 2>/dev/null || true ;;
    esac
  done
}

# refute CMD...: fails when CMD succeeds (a bare `! CMD` never fails a bats test).
refute() {
  if "$@"; then
    echo "unexpectedly true: $*" >&2
    return 1
  fi
}

all_nodes_idle() { [[ $(sinfo -h -N -p debug -o '%t' 2>/dev/null | grep -c '^idle$') -eq 3 ]]; }

# No node drained or went down: all three are idle again (never resumed here).
assert_no_drain() {
  wait_until 15 "n1..n3 idle" all_nodes_idle || {
    sinfo -h -N -p debug -o '%N %t %E' >&2
    return 1
  }
}

# Slurm's "exit:signal" of a job, and its run time in seconds. The first
# match: scontrol prints these fields before the Comment, which is the user's
# text and may hold "ExitCode=..." too.
job_exit_code() { scontrol -o show job "$1" 2>/dev/null | grep -o ' ExitCode=[0-9]*:[0-9]*' | head -n1 | cut -d= -f2; }
job_runtime_s() {
  local t
  t=$(scontrol -o show job "$1" 2>/dev/null | grep -o ' RunTime=[0-9:-]*' | head -n1 | cut -d= -f2)
  awk -F: -v t="$t" 'BEGIN { n = split(t, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }'
}

# run_job EXIT [sbatch options...]: a 3-node job, one task per node, every task
# exiting EXIT (so srun and the batch script do too). Waits for its end and
# for every node's Epilog; JOB is its id.
run_job() {
  local code=$1; shift
  JOB=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" --job-name "ff-e2e-exit$code" \
    "$@" --wrap "srun sh -c 'echo task on \$SLURMD_NODENAME; exit $code'") || return 1
  JOB=${JOB%%;*}
  echo "# job $JOB (every task exits $code) in $WORK" >&3
  wait_job_finished "$JOB" && wait_epilogs_done "$JOB"
}

# The job ended as its script meant it to (COMPLETED for 0, else FAILED with
# that exit code), within $3 seconds of run time, its Epilogs exited 0 at once
# and no node drained.
assert_job_ran_normally() {
  local job=$1 code=$2 limit=${3:-20} state exit runtime
  state=$(job_state "$job")
  exit=$(job_exit_code "$job")
  runtime=$(job_runtime_s "$job")
  echo "job $job: $state, exit $exit, ran ${runtime}s"
  if ((code == 0)); then [[ $state == COMPLETED ]] || return 1; else [[ $state == FAILED ]] || return 1; fi
  [[ $exit == "$code:0" ]] || return 1
  ((runtime <= limit)) || { echo "job $job ran ${runtime}s, more than ${limit}s" >&2; return 1; }
  assert_epilogs_quick "$job" && assert_no_drain
}

# mark_logs remembers where each node's slurmd log ends; logs_since_mark
# prints what was written after that, each line prefixed with its node.
mark_logs() {
  local n
  LOG_MARKS=()
  for n in n1 n2 n3; do LOG_MARKS+=("$(stat -c %s "$FF_ROOT/log/slurmd-$n.log")"); done
}

logs_since_mark() {
  local i=0 n
  for n in n1 n2 n3; do
    tail -c +"$((LOG_MARKS[i] + 1))" "$FF_ROOT/log/slurmd-$n.log" | sed "s/^/$n: /"
    i=$((i + 1))
  done
}

# Unmounts what a test mounted over the cluster's directories; lazily when a
# detached collector still has a file open there.
unmount_all() {
  local m
  for m in "$@"; do
    mountpoint -q "$m" || continue
    umount "$m" 2>/dev/null || umount -l "$m" || echo "cannot unmount $m" >&2
  done
}

# sqlite3 against the agent's database; read-only so a test never writes it.
db() { sqlite3 -readonly -batch -noheader "$DB" "$@"; }

# The latest stored pass of a job: "verdict|domain|sub_domain|root_node|trigger".
latest_pass() {
  db -separator '|' "SELECT verdict, COALESCE(domain,''), COALESCE(sub_domain,''),
                            COALESCE(root_node,''), trigger
                     FROM diagnoses WHERE job_id = '$1' ORDER BY id DESC LIMIT 1" 2>/dev/null
}

# Sets verdict, domain, sub_domain, root, trigger from latest_pass output.
read_pass() {
  IFS='|' read -r verdict domain sub_domain root trigger <<<"$1"
  echo "verdict=$verdict domain=$domain sub_domain=$sub_domain root=$root trigger=$trigger"
}

# The final (or deadline) pass of a job exists: every node's Epilog bundle
# arrived, or the agent stopped waiting.
has_final_pass() {
  [[ -n $(db "SELECT 1 FROM diagnoses WHERE job_id = '$1' AND trigger IN ('final','deadline') LIMIT 1" 2>/dev/null) ]]
}

wait_final_pass() {
  wait_until "$DIAGNOSIS_LIMIT" "the final diagnosis of job $1 in $DB" has_final_pass "$1" || {
    show_job_debug
    return 1
  }
}

node_of_rank() { cat "$WORK/rank-$1.node"; }

show_job_debug() {
  {
    echo "--- job $JOB: $(job_state "$JOB") comment='$(job_comment "$JOB")'"
    echo "--- passes:"
    db "SELECT pass_no, trigger, verdict, domain, sub_domain, root_node, comment_status, summary
        FROM diagnoses WHERE job_id = '$JOB' ORDER BY id" 2>&1 | cut -c1-300
    echo "--- bundles:"; db "SELECT bundle_id FROM bundles WHERE job_id = '$JOB'" 2>&1
    echo "--- output:"; tail -30 "$WORK"/slurm-*.out 2>/dev/null
    echo "--- agent log:"; tail -20 "$FF_ROOT/log/agent.log" 2>/dev/null
    echo "--- node spools:"; find "$FF_ROOT/spool" -path "*$JOB*" 2>/dev/null | head -20
    find "$FF_ROOT/spool" -mindepth 3 -maxdepth 3 -path '*/outbox/*' 2>/dev/null | head
  } >&2
}

# --- accounting (slurmdbd): what `sacct` shows long after slurmctld forgot the job

# The Comment of attempt $2 (default 0) of job $1 in accounting: sacct -D
# lists one record per attempt, oldest first.
sacct_comment() {
  local attempt=${2:-0}
  sacct -n -P -X -D -j "$1" -o Comment%200 2>/dev/null | sed -n "$((attempt + 1))p"
}
sacct_state() {
  local attempt=${2:-0}
  sacct -n -P -X -D -j "$1" -o State 2>/dev/null | sed -n "$((attempt + 1))p"
}

# The latest stored pass of attempt $2 of job $1: "verdict|domain|sub_domain|root_node|trigger|summary".
latest_pass_of() {
  db -separator '|' "SELECT verdict, COALESCE(domain,''), COALESCE(sub_domain,''),
                            COALESCE(root_node,''), trigger, summary
                     FROM diagnoses WHERE job_id = '$1' AND attempt = $2 ORDER BY id DESC LIMIT 1" 2>/dev/null
}

has_final_pass_of() {
  [[ -n $(db "SELECT 1 FROM diagnoses WHERE job_id = '$1' AND attempt = $2
              AND trigger IN ('final','deadline') LIMIT 1" 2>/dev/null) ]]
}

wait_final_pass_of() {
  wait_until "$DIAGNOSIS_LIMIT" "the final diagnosis of job $1 attempt $2" has_final_pass_of "$1" "$2" || {
    show_job_debug
    return 1
  }
}

# The Comment status of the final pass of attempt $2 of job $1.
final_comment_status() {
  db "SELECT comment_status FROM diagnoses WHERE job_id = '$1' AND attempt = $2
      AND trigger IN ('final','deadline') ORDER BY id DESC LIMIT 1"
}

sacct_comment_set() { [[ -n $(sacct_comment "$1" "$2") ]]; }

# Letters and digits only, the first 40: a Comment is the summary made safe
# for Slurm (quotes dropped, other characters replaced), so that is what
# both have in common.
comparable() { tr -cd 'A-Za-z0-9' | cut -c1-40; }

# The accounting Comment of attempt $2 of job $1 is the latest summary the
# agent stored for that attempt.
# $3: the id sacct knows the job by, when not $1 (an array task: "12_3").
sacct_comment_is_diagnosis() {
  local comment summary
  comment=$(sacct_comment "${3:-$1}" "$2")
  summary=$(latest_pass_of "$1" "$2" | cut -d'|' -f6)
  [[ -n $summary && $(comparable <<<"$comment") == "$(comparable <<<"$summary")" ]]
}

# Waits (30 s at most) until the accounting Comment of attempt $2 of job $1
# is the diagnosis the agent stored for that attempt: the fast pass's text
# may be there first (AccountingStoreFlags=job_comment), the final pass's
# replaces it.
assert_sacct_comment_is_diagnosis() {
  local job=$1 attempt=$2 sacct_id=${3:-$1}
  wait_until 30 "the accounting Comment of job $sacct_id attempt $attempt to be its diagnosis" \
    sacct_comment_is_diagnosis "$job" "$attempt" "$sacct_id" || {
    echo "stored summary: $(latest_pass_of "$job" "$attempt" | cut -d'|' -f6)" >&2
    sacct -D -X -j "$sacct_id" -o JobID,State,Start,End,Comment%100 >&2
    return 1
  }
  echo "sacct Comment (attempt $attempt): $(sacct_comment "$sacct_id" "$attempt")"
}

# Waits until the final pass of attempt $2 of job $1 has its Comment status.
final_comment_status_set() { [[ -n $(final_comment_status "$1" "$2") ]]; }
