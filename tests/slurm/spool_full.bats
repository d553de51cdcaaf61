#!/usr/bin/env bats
# n2's node spool is a small tmpfs that is full, or nearly: the plugin, the
# Epilog and the collector there cannot write what they want to. A failing
# job must still end as its script says, every Epilog exits 0 within a
# second, no node drains; the collector logs what it lost, and the lost
# evidence shows in the diagnosis' coverage, never as a healthy source.

load helpers

SPOOL=$FF_ROOT/spool/n2

setup_file() { cluster_setup_file; }
setup() {
  e2e_setup
  # Over n2's spool for this test only; its own content is back on unmount.
  mount -t tmpfs -o size=1m,mode=0755 ff-e2e-fullspool "$SPOOL"
  # A node that has run collectors before has their log: the first lines of
  # a collector that finds the spool full still fit in the log's last page.
  "$FF_ROOT/install/bin/firstfault-collect" flush --once --node n2 --config "$FF_ROOT/node.yaml"
  [ -s "$SPOOL/log/collect.log" ]
  mark_logs
}
teardown() {
  [[ $EUID -eq 0 ]] && unmount_all "$SPOOL"
  e2e_teardown
}

# fill_spool KIB: fills n2's spool, then frees KIB KiB again.
fill_spool() {
  dd if=/dev/zero of="$SPOOL/filler" bs=4k status=none 2>/dev/null || true
  ((${1:-0} == 0)) || truncate -s "-${1}K" "$SPOOL/filler"
  df -k "$SPOOL" | tail -1
  [ "$(df --output=avail -k "$SPOOL" | tail -1)" -le "${1:-0}" ]
}

# What the collectors on n2 logged about job $1.
collector_log() { grep -- "-$1-" "$SPOOL/log/collect.log" || true; }

# "status|detail" of node n2's SOURCE in the latest pass of job $1.
n2_coverage() {
  db -separator '|' "SELECT c.status, c.detail FROM coverage c JOIN diagnoses d ON d.id = c.diagnosis_id
                     WHERE d.job_id = '$1' AND c.node = 'n2' AND c.source = '$2'
                     ORDER BY d.id DESC LIMIT 1"
}

@test "full spool: the job ends as written, Epilogs exit 0 at once, the loss is logged and shows in coverage" {
  fill_spool 0

  run_job 3
  assert_job_ran_normally "$JOB" 3 25

  # The plugin on n2 could not record the job, and says so in slurmd's log.
  logged=$(logs_since_mark | grep 'firstfault: ' || true)
  echo "$logged"
  grep -q "^n2: .*firstfault: error: spool $SPOOL not writable, records are skipped: .*No space left on device" <<<"$logged"
  # The collector on n2 built nothing and logged why.
  log=$(collector_log "$JOB")
  echo "$log"
  grep -q "error .*cannot write $SPOOL/outbox/.tmp-n2-$JOB-epilog-.*/job.json" <<<"$log"
  [ -z "$(find "$SPOOL/outbox" -mindepth 1 -maxdepth 1 -name "*-$JOB-*" 2>/dev/null)" ]

  # The agent gives up waiting for n2 (deadline pass); n2's sources are
  # reported missing, not ok.
  wait_final_pass "$JOB"
  [ -z "$(db "SELECT 1 FROM bundles WHERE job_id = '$JOB' AND node = 'n2'")" ]
  for source in kernel slurmd; do
    coverage=$(n2_coverage "$JOB" "$source")
    echo "n2 $source: $coverage"
    [ "${coverage%%|*}" = missing ]
  done
}

@test "nearly full spool: the bundle goes without the window that did not fit, and coverage says so" {
  # More kern.log lines (a syslog file) in n2's window than the spool has
  # room for.
  stamp="$(date '+%b %e %H:%M:%S') n2 kernel: [$(printf '%12.6f' "$(cut -d' ' -f1 /proc/uptime)")]"
  awk -v s="$stamp" 'BEGIN { for (i = 0; i < 20000; i++)
      printf "%s mlx5_core 0000:5e:00.0: filler line %06d of a chatty driver, nothing wrong here\n", s, i }' \
    >>"$FF_ROOT/nodes/n2/kern.log"
  fill_spool 384
  [ "$(stat -c %s "$FF_ROOT/nodes/n2/kern.log")" -gt $((4 * 384 * 1024)) ]

  run_job 3
  assert_job_ran_normally "$JOB" 3 25

  # The collector logged the window it could not keep...
  log=$(collector_log "$JOB")
  echo "$log"
  grep -q "warning .*kern.log: window not kept, cannot write .*: No space left on device" <<<"$log"
  # ... and still delivered the Epilog bundle: every node's arrived, so the
  # final pass ran, and it reports n2's syslog (kern.log) lost, not healthy.
  wait_final_pass "$JOB"
  [ -n "$(db "SELECT 1 FROM diagnoses WHERE job_id = '$JOB' AND trigger = 'final'")" ]
  [ -n "$(db "SELECT 1 FROM bundles WHERE job_id = '$JOB' AND node = 'n2' AND pass = 'epilog'")" ]
  coverage=$(n2_coverage "$JOB" syslog)
  echo "n2 syslog: $coverage"
  [[ ${coverage%%|*} == error || ${coverage%%|*} == partial || ${coverage%%|*} == truncated ]]
  [[ $coverage == *"No space left on device"* ]]
}
