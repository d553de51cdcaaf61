#!/usr/bin/env bats
# The plugin on nodes set up wrong: a spool that is missing and cannot be
# created, a read-only spool, malformed plugstack arguments, an agent address
# that does not resolve. In each case a succeeding and a failing job run and
# end exactly as their scripts say (state, exit code, run time), every Epilog
# exits 0 at once, no node drains, and the problem is in slurmd's log as a
# "firstfault:" line, never in the job's own output.
#
# plugstack.conf is read by slurmstepd at every step and node.yaml by every
# Epilog and collector, so a test rewrites them in place; mounts go over the
# cluster's spool directories. Teardown restores all of it.

load helpers

setup_file() { cluster_setup_file; }
setup() {
  e2e_setup
  cp -p "$FF_ROOT/plugstack.conf" "$WORK/plugstack.conf.orig"
  cp -p "$FF_ROOT/node.yaml" "$WORK/node.yaml.orig"
  mark_logs
}
teardown() {
  if [[ $EUID -eq 0 && -n ${WORK:-} ]]; then
    unmount_all "$FF_ROOT/spool/n2" "$FF_ROOT/spool"
    restore "$WORK/plugstack.conf.orig" "$FF_ROOT/plugstack.conf"
    restore "$WORK/node.yaml.orig" "$FF_ROOT/node.yaml"
  fi
  e2e_teardown
}

# restore SAVED TARGET: put the original back by rename, as cluster.sh writes it.
restore() {
  [[ -f $1 ]] || return 0
  cp -p "$1" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
}

# rewrite FILE SED_EXPR: edits a live config file atomically.
rewrite() {
  sed "$2" "$1" >"$1.tmp.$$"
  mv -f "$1.tmp.$$" "$1"
}

# The jobs of a test: one whose tasks succeed, one whose tasks exit 3. The
# failing one runs the fast pass (15 s at most) when the plugin is loaded.
run_both_jobs() {
  run_job 0
  OK_JOB=$JOB
  assert_job_ran_normally "$OK_JOB" 0 10
  run_job 3
  FAILED_JOB=$JOB
  assert_job_ran_normally "$FAILED_JOB" 3 25
  # The job's output is what its tasks printed; the plugin's problems are
  # the administrator's business and stay out of it.
  cat "$WORK/slurm-$OK_JOB.out" "$WORK/slurm-$FAILED_JOB.out"
  ! grep -i firstfault "$WORK/slurm-$OK_JOB.out" "$WORK/slurm-$FAILED_JOB.out" || false
  [ "$(grep -c '^task on n' "$WORK/slurm-$FAILED_JOB.out")" -eq 3 ]
}

# The plugin's lines ("firstfault: ...") logged since the test began.
plugin_lines() { logs_since_mark | grep 'firstfault: ' || true; }

@test "spool missing and impossible to create: jobs run as written, the plugin logs it" {
  # An empty read-only file system over the spools' parent: no node's spool
  # exists, and none can be made.
  mount -t tmpfs -o ro,size=64k,mode=0755 ff-e2e-nospool "$FF_ROOT/spool"
  ! mkdir "$FF_ROOT/spool/n1" || false

  run_both_jobs

  logged=$(plugin_lines)
  echo "$logged"
  for n in n1 n2 n3; do
    grep -q "^$n: .*firstfault: error: spool $FF_ROOT/spool/$n not writable, records are skipped: cannot create $FF_ROOT/spool/$n: Read-only file system" <<<"$logged"
  done
  # The failing job's batch step could not hand over its fast pass.
  grep -q "firstfault: error: job $FAILED_JOB batch script ended 3:0: fast pass exited" <<<"$logged"
}

@test "read-only spool on n2: jobs run as written, the plugin on n2 logs it" {
  mount -t tmpfs -o ro,size=64k,mode=0755 ff-e2e-rospool "$FF_ROOT/spool/n2"
  [ -d "$FF_ROOT/spool/n2" ]
  ! touch "$FF_ROOT/spool/n2/probe" || false

  run_both_jobs

  logged=$(plugin_lines)
  echo "$logged"
  grep -q "^n2: .*firstfault: error: spool $FF_ROOT/spool/n2 not writable, records are skipped: cannot create $FF_ROOT/spool/n2/jobs: Read-only file system" <<<"$logged"
  # The other nodes' spools are fine and say nothing.
  ! grep -q "^n[13]: .*not writable" <<<"$logged" || false
  # n2 recorded nothing, the others did.
  [ ! -e "$FF_ROOT/spool/n2/jobs/$FAILED_JOB" ]
  [ -f "$FF_ROOT/spool/n1/jobs/$FAILED_JOB/alloc-0.json" ]
  [ -f "$FF_ROOT/spool/n3/jobs/$FAILED_JOB/alloc-0.json" ]
}

@test "malformed plugstack arguments: logged and ignored, the defaults hold" {
  rewrite "$FF_ROOT/plugstack.conf" \
    "s|^optional .*spank_firstfault.so.*|& fastpass_timeout=soon bogus=1 nokey log=loud|"
  grep 'fastpass_timeout=soon bogus=1 nokey log=loud' "$FF_ROOT/plugstack.conf"

  run_both_jobs

  logged=$(plugin_lines)
  echo "$logged"
  for problem in \
    "fastpass_timeout=soon: not a number of seconds in \[0, 300\], ignored" \
    "bogus=1: unknown argument, ignored" \
    "nokey: not key=value, ignored" \
    "log=loud: log is off, errors or info; ignored"; do
    grep -q "firstfault: error: plugstack argument $problem" <<<"$logged"
  done
  # The defaults still hold: the failing job got its fast pass (15 s bound)
  # and both jobs their final pass.
  wait_final_pass "$OK_JOB"
  wait_final_pass "$FAILED_JOB"
  [ -n "$(db "SELECT 1 FROM diagnoses WHERE job_id = '$FAILED_JOB' AND trigger = 'fastpass'")" ]
}

@test "agent address unresolvable: jobs run as written, the failed hand-over is logged, nothing is lost" {
  host=ff-agent.unresolvable.invalid
  ! getent hosts "$host" || false
  rewrite "$FF_ROOT/node.yaml" "s|^agent_url: .*|agent_url: http://$host:7421|"
  grep "^agent_url: http://$host:7421" "$FF_ROOT/node.yaml"

  run_both_jobs

  logged=$(plugin_lines)
  echo "$logged"
  grep -q "firstfault: error: job $FAILED_JOB batch script ended 3:0: fast pass exited 2" <<<"$logged"
  # The collectors say why on their node, and keep the bundles.
  for n in n1 n2 n3; do
    wait_until 10 "$n: the collector logs the unresolvable agent" \
      grep -q "bundle $n-$FAILED_JOB-epilog-.*not delivered: .*resolve" "$FF_ROOT/spool/$n/log/collect.log"
    compgen -G "$FF_ROOT/spool/$n/outbox/$n-$FAILED_JOB-epilog-*" >/dev/null
  done

  # With the address fixed, a flush delivers them and the job is diagnosed.
  restore "$WORK/node.yaml.orig" "$FF_ROOT/node.yaml"
  for n in n1 n2 n3; do
    "$FF_ROOT/install/bin/firstfault-collect" flush --once --node "$n" --config "$FF_ROOT/node.yaml" || true
  done
  JOB=$FAILED_JOB
  wait_final_pass "$FAILED_JOB"
  [ -n "$(db "SELECT 1 FROM diagnoses WHERE job_id = '$FAILED_JOB' AND trigger = 'final'")" ]
}
