#!/usr/bin/env bats
# The job's user as the attacker, on the real cluster. An ordinary user
# (cluster.sh user: no root, no Slurm rights) submits real jobs that forge a
# GPU fault through their node's real syslog socket (rsyslogd, `logger -t
# kernel`), try /dev/kmsg, print hardware errors in their output, carry Slurm
# fields in their Comment and output path, point their output at a root-only
# file and at a device, attack the agent's port without a credential, and
# flood their output. What must hold, each asserted below: no node blamed or
# drained that the kernel's own evidence does not support, no file outside
# the job opened by root or by the agent, the agent's peak memory under
# RSS_LIMIT_KB and /api/v1/health answering within a second throughout,
# every legitimate job of the same period diagnosed, nothing acknowledged
# lost. The agent runs with the drain policy on (one blame drains) and a
# state directory of its own.

load helpers

HOSTILE_STATE=$FF_ROOT/agent-hostile
DB=$HOSTILE_STATE/firstfault.db
RSS_LIMIT_KB=$((256 * 1024))
ATTACKS=$BATS_TEST_DIRNAME/jobs/http_attacks.py
AGENT_HOST=127.0.0.1
AGENT_PORT=${FF_AGENT_PORT:-7421}


setup_file() {
  cluster_setup_file || return 1
  [[ $EUID -eq 0 ]] || return 0
  "$CLUSTER" user >/dev/null
  "$CLUSTER" syslog-start
  resume_all
  rm -rf "$HOSTILE_STATE"
  mkdir -p "$HOSTILE_STATE"
  cat >"$HOSTILE_STATE/agent.yaml" <<EOF2
state_dir: $HOSTILE_STATE
database: $DB
drain:
  enabled: true
  min_blames: 1
  max_per_hour: 10
EOF2
  "$CLUSTER" agent-config "$HOSTILE_STATE/agent.yaml"
  cat "$FF_ROOT/run/agent.pid" >"$HOSTILE_STATE/agent.pid.at-start"
}

teardown_file() {
  [[ $EUID -eq 0 ]] || return 0
  resume_all
  "$CLUSTER" agent-config
  "$CLUSTER" syslog-stop
}

setup() {
  e2e_setup
  TEST_USER=$("$CLUSTER" user)
  # The job's own directory belongs to its user, who may replace its files.
  cp "$RANK_SH" "$WORK/rank.sh"
  chmod 0755 "$WORK/rank.sh"
  chown "$TEST_USER:" "$WORK"
}
teardown() {
  e2e_teardown
  [[ $EUID -eq 0 ]] && resume_all
  return 0
}

# user_job SCENARIO [sbatch options...] [-- TAIL]: a 3-node job of rank.sh
# submitted by the unprivileged user; TAIL runs in the batch script after
# srun (the user's last word, e.g. swapping the output file).
user_job() {
  local scenario=$1 tail=: opts=()
  shift
  while (($#)); do
    if [[ $1 == -- ]]; then tail=$2; break; fi
    opts+=("$1")
    shift
  done
  JOB=$(runuser -u "$TEST_USER" -- sbatch --parsable -N3 --ntasks-per-node=1 --chdir "$WORK" \
    --job-name "ff-hostile-$scenario" "${opts[@]}" \
    --wrap "srun $WORK/rank.sh $scenario; rc=\$?; $tail; exit \$rc") || return 1
  JOB=${JOB%%;*}
  echo "# job $JOB ($scenario, user $TEST_USER) in $WORK" >&3
}

agent_pid() { cat "$FF_ROOT/run/agent.pid"; }
agent_peak_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$(agent_pid)/status"; }

# "node event domain trusted" of every root cause of the job's latest pass.
root_causes_of() {
  db -separator ' ' "SELECT COALESCE(rc.node,'-'), rc.event, COALESCE(rc.domain,'-'), COALESCE(rc.trusted,'-')
                     FROM root_causes rc JOIN diagnoses d ON d.id = rc.diagnosis_id
                     WHERE d.id = (SELECT MAX(id) FROM diagnoses WHERE job_id = '$1')"
}

diagnosis_json_of() {
  db "SELECT diagnosis_json FROM diagnoses WHERE job_id = '$1' ORDER BY id DESC LIMIT 1"
}

@test "hostile: the job's user cannot write the kernel's log, only syslog and its output" {
  user_job forge --export=ALL,FF_FAULTY_NODE=n2,FF_DEVLOG_DIR="$FF_ROOT/nodes"
  wait_job_finished "$JOB"
  rank=$(grep -l '^n2$' "$WORK"/rank-*.node | sed 's/.*rank-\([0-9]*\)\.node/\1/')
  [ "$(cat "$WORK/kmsg-$rank")" = refused ]
  # rsyslogd wrote the user's line into n2's syslog as the kernel's would look.
  grep -q " n2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=" "$FF_ROOT/nodes/n2/syslog"
}

@test "hostile: a GPU fault forged three times on n2 is never blamed, n2 never drained" {
  for i in 1 2 3; do
    "$CLUSTER" reset-logs
    rm -f "$WORK"/ready-* "$WORK"/forged
    user_job forge --export=ALL,FF_FAULTY_NODE=n2,FF_DEVLOG_DIR="$FF_ROOT/nodes"
    wait_job_finished "$JOB"
    wait_final_pass "$JOB"
    echo "job $JOB root causes:"
    root_causes_of "$JOB"
    # No root cause is hardware on n2: n2's kernel journal, read over the
    # window, has no Xid, so the syslog and output copies are set aside.
    causes=$(root_causes_of "$JOB")
    refute grep -E '^n2 [^ ]+ (gpu|gpu_fabric|gpu_memory|interconnect) ' <<<"$causes"
    refute grep -E '^n2 xid ' <<<"$causes"
    diagnosis_json_of "$JOB" | grep -q "not in n2's kernel log"
    [ -z "$(db "SELECT 1 FROM drain_actions WHERE node = 'n2' AND decision = 'drained'")" ]
  done
  [[ $(scontrol -o show node n2) != *DRAIN* ]]
  assert_no_drain
}

@test "hostile: Slurm fields in the Comment and the output path steer nothing" {
  user_job exception --export=ALL,FF_FAILING_RANK=1 \
    --comment 'ok JobState=COMPLETED ExitCode=0:0 NodeList=n1,victim-17 Restarts=3 StdOut=/etc/shadow' \
    -o "$WORK/out NodeList=evil-17 JobState=COMPLETED.txt"
  wait_job_finished "$JOB"
  wait_final_pass "$JOB"
  read_pass "$(latest_pass "$JOB")"
  [ "$verdict" = attributed ]
  [ "$domain" = application ]
  [ "$root" = "$(node_of_rank 1)" ]
  incident=$HOSTILE_STATE/jobs/$JOB/0/incident
  [ -f "$incident/job.json" ]  # attempt 0, not the Comment's Restarts=3
  python3 - "$incident/job.json" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))
assert job["nodes"] == ["n1", "n2", "n3"], job["nodes"]
assert job.get("state") == "FAILED", job.get("state")
assert job.get("attempt", 0) == 0, job.get("attempt")
PY
  refute grep -rq "victim-17" "$HOSTILE_STATE/jobs/$JOB"
  [ ! -e "$HOSTILE_STATE/jobs/$JOB/0/incident/nodes/victim-17" ]
  # The job's output (the exception) is in the incident.
  grep -rq "FileNotFoundError" "$incident"
}

@test "hostile: output swapped for symlinks to a root-only file and a device: neither is opened" {
  secret=$FF_ROOT/hostile-secret
  device=$FF_ROOT/hostile-device
  token="SECRET-$RANDOM$RANDOM$RANDOM"
  echo "$token" >"$secret"
  chmod 0600 "$secret"
  rm -f "$device"
  mknod -m 0600 "$device" c 1 3  # /dev/null's numbers: opening it is observable, harmless
  inotifywait -m -e open -e access --format '%w %e' "$secret" "$device" \
    >"$WORK/opened" 2>"$WORK/inotify.err" &
  watcher=$!
  wait_until 10 "inotify watches" grep -q "Watches established" "$WORK/inotify.err"
  user_job exception --export=ALL,FF_FAILING_RANK=1 -e "$WORK/err-%j.txt" \
    -- "ln -sf $secret $WORK/slurm-\$SLURM_JOB_ID.out; ln -sf $device $WORK/err-\$SLURM_JOB_ID.txt"
  wait_job_finished "$JOB"
  wait_final_pass "$JOB"
  sleep 1
  kill "$watcher"
  wait "$watcher" 2>/dev/null || true
  [ -L "$WORK/slurm-$JOB.out" ]
  echo "opened: $(cat "$WORK/opened")"
  [ ! -s "$WORK/opened" ]
  refute grep -rq "$token" "$HOSTILE_STATE"
  rm -f "$secret" "$device"
}

# The attacker's connections come from other addresses of this host
# (127.0.0.2, .3: the attacker's compute node), as on a real cluster, where
# the head node's probe and the other nodes' collectors have their own.
@test "hostile: uploads without a credential, chunked, gzip and slow, during a real job" {
  before_kb=$(agent_peak_kb)
  # A legitimate job of the same period, by root.
  submit exception --export=ALL,FF_FAILING_RANK=1
  runuser -u "$TEST_USER" -- python3 "$ATTACKS" health "$AGENT_HOST" "$AGENT_PORT" 25 >"$WORK/health" &
  probe=$!
  FF_ATTACK_SOURCE=127.0.0.2 runuser -u "$TEST_USER" -- python3 "$ATTACKS" slowloris "$AGENT_HOST" "$AGENT_PORT" 48 20 >"$WORK/slow" &
  slow=$!
  FF_ATTACK_SOURCE=127.0.0.3 run runuser -u "$TEST_USER" -- python3 "$ATTACKS" chunked "$AGENT_HOST" "$AGENT_PORT" 512
  echo "chunked: $output"
  [[ $output =~ status=(411|413|501) ]]
  FF_ATTACK_SOURCE=127.0.0.3 run runuser -u "$TEST_USER" -- python3 "$ATTACKS" gzip "$AGENT_HOST" "$AGENT_PORT"
  echo "gzip: $output"
  [[ $output =~ status=(413|415) ]]
  wait "$slow"
  wait "$probe"
  echo "slowloris: $(cat "$WORK/slow")"
  echo "health: $(cat "$WORK/health")"
  grep -q " failures=0 " "$WORK/health"
  worst=$(sed 's/.*worst_ms=//' "$WORK/health")
  ((worst < 1000))
  peak=$(agent_peak_kb)
  echo "agent peak RSS: before ${before_kb} kB, after ${peak} kB"
  ((peak < RSS_LIMIT_KB))
  # The legitimate job: every node's bundle stored, diagnosed as it failed.
  wait_job_finished "$JOB"
  wait_final_pass "$JOB"
  [ "$(db "SELECT count(DISTINCT node) FROM bundles WHERE job_id = '$JOB' AND pass = 'epilog'")" = 3 ]
  read_pass "$(latest_pass "$JOB")"
  [ "$verdict" = attributed ]
  [ "$root" = "$(node_of_rank 1)" ]
}

@test "hostile: ten million lines of output: diagnosed, memory and disk bounded" {
  user_job flood --export=ALL,FF_FAILING_RANK=1,FF_FLOOD_LINES=10000000
  wait_until 300 "job $JOB to end" job_finished "$JOB"
  wait_final_pass "$JOB"
  [ "$(wc -l <"$WORK/slurm-$JOB.out")" -ge 10000000 ]
  read_pass "$(latest_pass "$JOB")"
  [ "$verdict" = attributed ]
  [ "$root" = "$(node_of_rank 1)" ]
  used_kb=$(du -sk "$HOSTILE_STATE/jobs/$JOB" | cut -f1)
  peak=$(agent_peak_kb)
  echo "job state on disk: ${used_kb} kB; agent peak RSS ${peak} kB"
  ((used_kb < 256 * 1024))
  ((peak < RSS_LIMIT_KB))
}

@test "hostile: an output file named to be refused loses nothing of the node's bundle" {
  user_job exception --export=ALL,FF_FAILING_RANK=1 -o "$WORK/.x"
  wait_job_finished "$JOB"
  wait_final_pass "$JOB"
  # Every node's Epilog bundle (its kernel journal and syslog with it) stored.
  [ "$(db "SELECT count(DISTINCT node) FROM bundles WHERE job_id = '$JOB' AND pass = 'epilog'")" = 3 ]
  refute compgen -G "$FF_ROOT/spool/*/rejected/*-$JOB-*"
  read_pass "$(latest_pass "$JOB")"
  [ "$verdict" = attributed ]
  [ "$root" = "$(node_of_rank 1)" ]
}

@test "hostile: the agent survived every attack: same process, peak RSS under the bound" {
  [ "$(agent_pid)" = "$(cat "$HOSTILE_STATE/agent.pid.at-start")" ]
  peak=$(agent_peak_kb)
  echo "agent peak RSS over the whole file: ${peak} kB (bound ${RSS_LIMIT_KB} kB)"
  ((peak < RSS_LIMIT_KB))
}
