#!/usr/bin/env bats
# The opt-in drain policy (agent.yaml `drain:`) on the real cluster: a node
# whose GPU failed two jobs is drained by scontrol with a "firstfault:"
# Reason; a second node the same hour is not (max_per_hour 1); an
# application failure never drains, nor a GPU fault whose only evidence is a
# syslog line any user can forge (`logger -t kernel 'NVRM: Xid 79 ...'`):
# the node's kernel journal, read over the job's window, does not have it,
# so it is set aside as evidence altogether. The agent runs with a database of its
# own here (blames from the other tests' jobs must not count) and goes back
# to the default configuration afterwards.

load helpers

DRAIN_STATE=$FF_ROOT/agent-drain
DB=$DRAIN_STATE/firstfault.db

XID_LINE='NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.'


setup_file() {
  cluster_setup_file || return 1
  [[ $EUID -eq 0 ]] || return 0
  resume_all
  rm -rf "$DRAIN_STATE"
  mkdir -p "$DRAIN_STATE"
  cat >"$DRAIN_STATE/drain.yaml" <<EOF
state_dir: $DRAIN_STATE
database: $DB
drain:
  enabled: true
  min_blames: 2
  max_per_hour: 1
EOF
  "$CLUSTER" agent-config "$DRAIN_STATE/drain.yaml"
}

teardown_file() {
  [[ $EUID -eq 0 ]] || return 0
  resume_all
  "$CLUSTER" agent-config
}

setup() { e2e_setup; }
teardown() {
  e2e_teardown
  [[ $EUID -eq 0 ]] && resume_all
  return 0
}

# xid_job NODE [WHERE]: a 3-node job whose GPU on NODE falls off the bus,
# the Xid in NODE's kernel journal (the kernel's own record, trusted) or,
# WHERE=kern.log, only in its kern.log (a syslog file); waits for its final
# pass and the drain decision about NODE.
xid_job() {
  local node=$1 where=${2:-kernel}
  "$CLUSTER" reset-logs
  rm -f "$WORK"/ready-* "$WORK"/go
  submit hang --export=ALL,FF_FAULTY_NODE="$node" || return 1
  wait_ranks_ready || return 1
  "$CLUSTER" inject "$node" "$where" "$XID_LINE"
  touch "$WORK/go"
  wait_job_finished "$JOB" || return 1
  wait_final_pass "$JOB" || return 1
  wait_until 30 "the drain decision of job $JOB" has_decision "$JOB" "$node"
}

has_decision() { [[ -n $(decision "$1" "$2") ]]; }

# "decision|reason|blames" of the drain action of job $1 about node $2.
decision() {
  db -separator '|' "SELECT decision, reason, blames FROM drain_actions
                     WHERE job_id = '$1' AND node = '$2' ORDER BY id DESC LIMIT 1" 2>/dev/null
}

node_field() { scontrol -o show node "$1" | grep -o " $2=[^ ]*" | cut -d= -f2-; }

@test "an application failure is never drained" {
  submit exception --export=ALL,FF_FAILING_RANK=1
  wait_job_finished "$JOB"
  wait_final_pass "$JOB"
  node=$(node_of_rank 1)
  wait_until 30 "the drain decision of job $JOB" has_decision "$JOB" "$node"
  run decision "$JOB" "$node"
  echo "decision: $output"
  [ "$output" = "declined|domain application is not hardware|0" ]
  assert_no_drain
}

# forged_xid_job NODE: as xid_job with the Xid only in NODE's kern.log (a
# syslog file: `logger -t kernel` writes the same text), while NODE's kernel
# journal, which the collector reads over the whole window, has no such entry.
forged_xid_job() {
  "$CLUSTER" reset-logs
  rm -f "$WORK"/ready-* "$WORK"/go
  submit hang --export=ALL,FF_FAULTY_NODE="$1" || return 1
  wait_ranks_ready || return 1
  "$CLUSTER" inject "$1" kern.log "$XID_LINE"
  touch "$WORK/go"
  wait_job_finished "$JOB" && wait_final_pass "$JOB"
}

@test "a forged Xid 79 (syslog only) on n1 in two jobs: set aside, never blamed or drained" {
  for i in 1 2; do
    forged_xid_job n1
    # The node's kernel journal covers the window and has no Xid: the syslog
    # copy is not evidence, so no root cause is an Xid on n1.
    [ "$(db "SELECT count(*) FROM root_causes rc JOIN diagnoses d ON d.id = rc.diagnosis_id
             WHERE d.job_id = '$JOB' AND rc.node = 'n1' AND rc.event = 'xid'")" = 0 ]
    db "SELECT diagnosis_json FROM diagnoses WHERE job_id = '$JOB' ORDER BY id DESC LIMIT 1" |
      grep -q "not in n1's kernel log"
    [ -z "$(db "SELECT 1 FROM drain_actions WHERE job_id = '$JOB' AND node = 'n1'
                AND decision = 'drained'")" ]
  done
  [[ $(node_field n1 State) != *DRAIN* ]]
  assert_no_drain
}

@test "Xid 79 on n2 in two jobs: n2 drained by scontrol with a firstfault Reason" {
  xid_job n2
  first=$JOB
  run decision "$first" n2
  echo "job $first: $output"
  [ "$output" = "declined|blamed 1 of 2 times in 14 days|1" ]
  [[ $(node_field n2 State) != *DRAIN* ]]

  xid_job n2
  run decision "$JOB" n2
  echo "job $JOB: $output"
  [[ $output == "drained|firstfault: gpu.fallen_off_bus"*" in jobs $first,$JOB|2" ]]

  # Slurm itself says so: drained (or draining), with our Reason.
  scontrol -o show node n2
  [[ $(node_field n2 State) == *DRAIN* ]]
  reason=$(scontrol -o show node n2 | grep -o ' Reason=.*' | cut -d= -f2-)
  echo "reason: $reason"
  [[ $reason == "firstfault: gpu.fallen_off_bus"*"in jobs $first,$JOB"* ]]
  grep -q "drain policy: drained n2" "$FF_ROOT/log/agent.log"
  # Only n2.
  [[ $(node_field n1 State) != *DRAIN* && $(node_field n3 State) != *DRAIN* ]]
}

@test "Xid 79 on n3 in two jobs within the hour: not drained, the limit is recorded" {
  # n2 was resumed by the previous test's teardown; its drain stays on record
  # and uses up this hour's one drain.
  [ "$(db "SELECT count(*) FROM drain_actions WHERE decision = 'drained'")" = 1 ]
  xid_job n3
  [ "$(decision "$JOB" n3)" = "declined|blamed 1 of 2 times in 14 days|1" ]
  xid_job n3
  run decision "$JOB" n3
  echo "job $JOB: $output"
  [ "$output" = "declined|limit: 1 node drained in the last hour|2" ]
  [[ $(node_field n3 State) != *DRAIN* ]]
  assert_no_drain
  # The operator's view of it.
  FIRSTFAULT_DB="$DB" "$FF_ROOT/install/bin/firstfault" drains --since 1h | tee "$WORK/drains.txt"
  grep -q "n2 .*drained" "$WORK/drains.txt"
  grep -q "n3 .*declined .*limit: 1 node drained in the last hour" "$WORK/drains.txt"
}
