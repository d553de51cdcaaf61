#!/usr/bin/env bats
# The agent is killed with SIGKILL while 100 bundles are being uploaded, then
# restarted. Every bundle whose upload the agent acknowledged (the collector
# logs "bundle ID: delivered" only after a 200/201) is in the bundles table and
# on disk under the state directory; a second flush of the collectors sends
# the others; in the end each of the 100 bundles is stored exactly once and no
# job attempt has two passes of the same kind.
#
# The bundles are real: `firstfault-collect epilog` for 100 job ids (above
# Slurm's largest, so never a real job's) on n1..n3, one node per job, built
# while no agent answers, into spools of this test's own.

load helpers

BUNDLES=100

setup_file() { cluster_setup_file; }
setup() {
  e2e_setup
  # 100 free job ids: 9NNNNN00 .. 9NNNNN99.
  while :; do
    BASE=$((9$(printf '%05d' $((RANDOM % 100000)))00))
    [[ -z $(db "SELECT 1 FROM bundles WHERE CAST(job_id AS INTEGER) BETWEEN $BASE AND $((BASE + 99)) LIMIT 1") ]] && break
  done
  echo "# job ids $BASE..$((BASE + 99)) in $WORK" >&3
  node_config "$WORK/down.yaml" http://127.0.0.1:9   # nothing listens there
  node_config "$WORK/node.yaml" "$AGENT_URL"
}
teardown() {
  # The other tests need the agent, whatever happened here.
  [[ $EUID -eq 0 ]] && "$CLUSTER" agent-start >/dev/null 2>&1
  # shellcheck disable=SC2086  # a list of pids
  [[ -n ${FLUSHES:-} ]] && kill $FLUSHES 2>/dev/null
  e2e_teardown
}

# node_config FILE AGENT_URL: the cluster's node config with this test's spools.
node_config() {
  cat >"$1" <<EOF
agent_url: $2
spool: $WORK/spool/%n
margin_before_s: 20
margin_after_s: 10
retry: {initial_s: 1, max_s: 2, give_up_after_s: 0}
sources:
  syslog: [$WORK/logs/%n/kern.log]
  slurmd: [$FF_ROOT/log/slurmd-%n.log]
EOF
}

node_of() { echo "n$(($1 % 3 + 1))"; }
collect() { "$FF_ROOT/install/bin/firstfault-collect" "$@"; }
delivered_ids() { sed -n 's/.* bundle \([^ ]*\): delivered .*/\1/p' "$WORK"/spool/n*/log/collect.log 2>/dev/null | sort; }
outbox_ids() { find "$WORK"/spool/n*/outbox -mindepth 1 -maxdepth 1 ! -name '.*' -printf '%f\n' 2>/dev/null | sort; }
stored() {  # stored BUNDLE_ID: its row count and its directory's job.json
  local rows path
  rows=$(db "SELECT count(*) FROM bundles WHERE bundle_id = '$1'")
  path=$(db "SELECT path FROM bundles WHERE bundle_id = '$1'")
  [[ $rows == 1 && -n $path ]] || { echo "$1: $rows row(s)" >&2; return 1; }
  [[ $path == /* ]] || path=$FF_ROOT/agent/$path
  [[ -s $path/job.json ]] || { echo "$1: no $path/job.json" >&2; return 1; }
}
closed_jobs() {
  db "SELECT count(DISTINCT job_id) FROM diagnoses WHERE trigger IN ('final', 'deadline')
      AND CAST(job_id AS INTEGER) BETWEEN $BASE AND $((BASE + 99))"
}
# The agent has run every pass it had queued: no new pass in its log for 5 s
# (a duplicate pass would come after the first, so wait for the last).
passes_logged() { grep -c '\] job [0-9_]*/[0-9]* pass [0-9]* (' "$FF_ROOT/log/agent.log" || true; }
wait_agent_settled() {
  local last=-1 now quiet=0 deadline=$((SECONDS + 150))
  while ((quiet < 5)); do
    ((SECONDS < deadline)) || { echo "the agent still runs passes after 150 s" >&2; return 1; }
    now=$(passes_logged)
    if ((now == last)); then quiet=$((quiet + 1)); else quiet=0; last=$now; fi
    sleep 1
  done
}
agent_dead() { [[ ! -e /proc/$1 || $(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1) == Z ]]; }
all_closed() { [[ $(closed_jobs) -eq $BUNDLES ]]; }

@test "agent SIGKILLed during 100 uploads: acknowledged bundles kept, the rest resent, each stored once" {
  # Every node has a kern.log (a syslog file) of 2 MB, so that 100 uploads
  # take a while.
  local n i
  for n in n1 n2 n3; do
    mkdir -p "$WORK/logs/$n"
    stamp="$(date '+%b %e %H:%M:%S') $n kernel: [$(printf '%12.6f' "$(cut -d' ' -f1 /proc/uptime)")]"
    awk -v s="$stamp" 'BEGIN { for (i = 0; i < 25000; i++)
        printf "%s mlx5_core 0000:5e:00.0: routine line %05d, nothing wrong here\n", s, i }' \
      >"$WORK/logs/$n/kern.log"
  done

  # 100 Epilog bundles wait in the outboxes (no agent answers at down.yaml's
  # address; the collector exits 2, bundle kept).
  builders=
  for n in n1 n2 n3; do
    (
      for ((i = 0; i < BUNDLES; i++)); do
        [[ $(node_of $i) == "$n" ]] || continue
        rc=0
        collect epilog --job $((BASE + i)) --node "$n" --nodelist "$n" --exit-code 1:0 \
          --attempt 0 --config "$WORK/down.yaml" || rc=$?
        ((rc == 2)) || { echo "collect epilog: exit $rc, not 2 (kept)" >&2; exit 1; }
      done
    ) &
    builders+=" $!"
  done
  for pid in $builders; do wait "$pid"; done
  outbox_ids >"$WORK/built"
  [ "$(wc -l <"$WORK/built")" -eq "$BUNDLES" ]
  [ -z "$(delivered_ids)" ]

  # The collectors upload all of them, each node's one after the other; the
  # agent dies by SIGKILL once some but not all are acknowledged.
  FLUSHES=
  for n in n1 n2 n3; do
    collect flush --once --node "$n" --config "$WORK/node.yaml" >/dev/null 2>&1 &
    FLUSHES+=" $!"
  done
  deadline=$((SECONDS + 60))
  until (($(delivered_ids | wc -l) >= BUNDLES / 10)); do
    ((SECONDS < deadline)) || { echo "no upload acknowledged in 60 s" >&2; false; }
    sleep 0.02
  done
  agent_pid=$(<"$FF_ROOT/run/agent.pid")
  kill -KILL "$agent_pid"
  # shellcheck disable=SC2086  # a list of pids
  wait $FLUSHES || true
  FLUSHES=
  wait_until 10 "the agent (pid $agent_pid) to die" agent_dead "$agent_pid"
  delivered_ids >"$WORK/acked"
  acked=$(wc -l <"$WORK/acked")
  echo "acknowledged before the kill: $acked of $BUNDLES"
  ((acked > 0 && acked < BUNDLES))
  # What was acknowledged left the outboxes; the rest is still there.
  [ -z "$(comm -12 "$WORK/acked" <(outbox_ids))" ]
  [ "$(comm -12 "$WORK/built" <(outbox_ids) | wc -l)" -eq $((BUNDLES - acked)) ]

  "$CLUSTER" agent-start
  # Every acknowledged bundle survived the kill: one row, its files on disk.
  while read -r id; do stored "$id"; done <"$WORK/acked"

  # The collectors send the rest.
  for n in n1 n2 n3; do
    collect flush --node "$n" --config "$WORK/node.yaml"
  done
  [ -z "$(outbox_ids)" ]

  # All 100 are stored, each exactly once, each where its row says.
  [ "$(db "SELECT count(*) || ' ' || count(DISTINCT bundle_id) FROM bundles
           WHERE CAST(job_id AS INTEGER) BETWEEN $BASE AND $((BASE + 99))")" = "$BUNDLES $BUNDLES" ]
  diff "$WORK/built" <(db "SELECT bundle_id FROM bundles
                           WHERE CAST(job_id AS INTEGER) BETWEEN $BASE AND $((BASE + 99))" | sort)
  while read -r id; do stored "$id"; done <"$WORK/built"
  for ((i = 0; i < BUNDLES; i++)); do
    [ "$(find "$FF_ROOT/agent/jobs/$((BASE + i))/0/bundles" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ]
  done

  # Every job gets its closing pass, the ones interrupted by the kill too,
  # and no job attempt has two passes of the same kind.
  wait_until 120 "a final pass for each of the $BUNDLES jobs" all_closed || {
    echo "jobs with a closing pass: $(closed_jobs)" >&2
    false
  }
  wait_agent_settled
  dups=$(db "SELECT job_id, attempt, trigger, count(*) FROM diagnoses
             WHERE CAST(job_id AS INTEGER) BETWEEN $BASE AND $((BASE + 99))
             GROUP BY job_id, attempt, trigger HAVING count(*) > 1")
  echo "duplicate passes: ${dups:-none}"
  [ -z "$dups" ]
}
