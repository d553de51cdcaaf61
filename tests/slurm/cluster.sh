#!/usr/bin/env bash
# A real three-node Slurm cluster on this one host, for the end-to-end tests
# of the Slurm path (docs/slurm-path.md). Debian's slurmd is built with
# --enable-multiple-slurmd, so n1..n3 are three slurmd processes on 127.0.0.1
# with their own ports, spools and logs (Slurm programmer guide,
# "Multiple slurmd support").
#
#   cluster.sh start | stop [--all] | status
#                                     start: MariaDB and slurmdbd (accounting) too,
#                                     then slurmctld and n1..n3
#   cluster.sh munge                  start munged only
#   cluster.sh deploy BUILD_DIR       install built parts under <root>/install
#   cluster.sh deploy --installed     use the installed firstfault-node/-agent packages
#   cluster.sh agent-start | agent-stop
#   cluster.sh agent-config [FILE]    FILE's settings over agent.yaml (none: the defaults)
#   cluster.sh inject NODE KIND LINE  append LINE, stamped now, to a node's log
#                                     (kernel: an entry of the node's kernel journal)
#   cluster.sh reset-logs             empty every simulated node log
#   cluster.sh user                   create the unprivileged job user (ffuser), print its name
#   cluster.sh syslog-start | syslog-stop
#                                     a real rsyslogd: each node's /dev/log is a socket,
#                                     <root>/nodes/<n>/dev-log, written to that node's syslog
#
# Accounting is as sites run it: slurmctld sends every job to slurmdbd, which
# keeps it in MariaDB (a server of its own under <root>/mariadb, on
# 127.0.0.1:FF_MARIADB_PORT, never the host's), so sacct shows finished jobs
# and sacctmgr can write their Comment.
#
# Everything lives under FF_CLUSTER_ROOT (default /var/tmp/ffcluster). Must run
# as root: slurmd runs jobs as their user and the Epilog as root.
set -euo pipefail

ROOT=${FF_CLUSTER_ROOT:-/var/tmp/ffcluster}
NODES=(n1 n2 n3)
CTLD_PORT=${FF_SLURMCTLD_PORT:-6817}
DBD_PORT=${FF_SLURMDBD_PORT:-6819}
MARIADB_PORT=${FF_MARIADB_PORT:-3307}
DB_NAME=ffcluster_acct_db
DB_USER=ffslurm
SLURMD_PORT_BASE=${FF_SLURMD_PORT_BASE:-17001}
AGENT_PORT=${FF_AGENT_PORT:-7421}
AGENT_URL=http://127.0.0.1:${AGENT_PORT}
CONF=$ROOT/etc/slurm.conf
SYSTEM_CONF=/etc/slurm/slurm.conf
MARKER="# written by firstfault tests/slurm/cluster.sh"
export SLURM_CONF=$CONF

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- small process helpers -------------------------------------------------

# A killed daemon whose parent is gone stays a zombie until init reaps it: it
# answers kill -0 but is dead (agent_killed.bats SIGKILLs the agent).
pid_running() {
  kill -0 "$1" 2>/dev/null || return 1
  [[ $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) != Z ]]
}

pid_alive() {  # pid file -> 0 when its process runs
  local f=$1 pid
  [[ -s $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] && pid_running "$pid"
}

# Waits at most $1 seconds for the command to succeed.
wait_for() {
  local limit=$1; shift
  local deadline=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# Sends TERM, waits at most $2 s, then KILL: a hung daemon must not hang tests.
kill_pidfile() {
  local f=$1 limit=${2:-10} pid
  pid_alive "$f" || { rm -f "$f"; return 0; }
  pid=$(<"$f")
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_for "$limit" eval "! pid_running $pid"; then
    log "pid $pid ($f) ignored TERM for ${limit}s, killing"
    kill -KILL "$pid" 2>/dev/null || true
    wait_for 5 eval "! pid_running $pid" || true
  fi
  rm -f "$f"
}

# Daemons started from a test harness must not keep its extra descriptors
# open: bats waits for its fd 3 to close before it ends a test, and ctest for
# the output pipe. Call in the subshell that then execs the daemon.
close_extra_fds() {
  local fd
  for fd in "/proc/$BASHPID/fd"/*; do
    fd=${fd##*/}
    if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  return 0
}

# --- munge -----------------------------------------------------------------

munge_works() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
  munge_works && return 0
  if [[ ! -s /etc/munge/munge.key ]]; then
    log "creating /etc/munge/munge.key"
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile=/etc/munge/munge.key
    else
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    fi
    chown munge: /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
  fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge: /run/munge /var/log/munge /var/lib/munge
  # A stale socket or pid file from a killed munged makes the new one refuse.
  if ! pid_alive /run/munge/munged.pid; then
    rm -f /run/munge/munged.pid /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
  fi
  (close_extra_fds; exec runuser -u munge -- /usr/sbin/munged)
  wait_for 10 munge_works || die "munged does not answer (see /var/log/munge/munged.log)"
  log "munged running"
}

# --- configuration ---------------------------------------------------------

# NodeName line fields from `slurmd -C`, with RealMemory capped so that each
# simulated node never claims more than the host has (else it goes INVALID).
node_hardware() {
  local line cpus boards sockets cores threads mem
  line=$(slurmd -C | head -1)
  field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$line"; }
  cpus=$(field CPUs); boards=$(field Boards); sockets=$(field SocketsPerBoard)
  cores=$(field CoresPerSocket); threads=$(field ThreadsPerCore); mem=$(field RealMemory)
  [[ -n $cpus && -n $mem ]] || die "cannot read slurmd -C: $line"
  ((mem > 2000)) && mem=2000
  ((mem = mem * 9 / 10))
  printf 'CPUs=%s Boards=%s SocketsPerBoard=%s CoresPerSocket=%s ThreadsPerCore=%s RealMemory=%s' \
    "$cpus" "${boards:-1}" "${sockets:-1}" "${cores:-$cpus}" "${threads:-1}" "$mem"
}

write_slurm_conf() {
  local last_port=$((SLURMD_PORT_BASE + ${#NODES[@]} - 1))
  mkdir -p "$ROOT/etc"
  cat >"$CONF.tmp" <<EOF
$MARKER (root $ROOT)
ClusterName=ffcluster
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$ROOT/state
SlurmdSpoolDir=$ROOT/slurmd-spool/%n
SlurmctldPidFile=$ROOT/run/slurmctld.pid
SlurmdPidFile=$ROOT/run/slurmd-%n.pid
SlurmctldLogFile=$ROOT/log/slurmctld.log
SlurmdLogFile=$ROOT/log/slurmd-%n.log
# debug: slurmd logs when each Epilog starts and completes (the tests time it).
SlurmdDebug=debug
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
# The job's Comment goes to the database with the job (sacct -o Comment).
AccountingStoreFlags=job_comment
MailProg=/bin/true
PlugStackConfig=$ROOT/plugstack.conf
Epilog=$ROOT/epilog.sh
# At allocation, on every node: a job can be cancelled before its batch step starts.
Prolog=$ROOT/prolog.sh
PrologFlags=Alloc
PrologEpilogTimeout=60
MinJobAge=600
# A timed-out job is killed 2 s after SIGTERM, so the time-limit test is short.
KillWait=2
OverTimeLimit=0
InactiveLimit=0
NodeName=n[1-${#NODES[@]}] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$SLURMD_PORT_BASE-$last_port] $(node_hardware) State=UNKNOWN
PartitionName=debug Nodes=n[1-${#NODES[@]}] Default=YES MaxTime=INFINITE State=UP
# Jobs here may run one minute at most (the time-limit test shortens it further).
PartitionName=short Nodes=n[1-${#NODES[@]}] MaxTime=1 DefaultTime=1 State=UP
EOF
  mv "$CONF.tmp" "$CONF"
  link_system_conf
}

# Processes that do not inherit SLURM_CONF (a shell of the owner, ctest, the
# agent started by hand) read /etc/slurm/slurm.conf: put ours there, unless
# that file belongs to someone else.
link_system_conf() {
  if [[ -e $SYSTEM_CONF ]] && ! grep -qF "$MARKER" "$SYSTEM_CONF"; then
    log "warning: $SYSTEM_CONF is not ours; only processes with SLURM_CONF=$CONF see this cluster"
    return 0
  fi
  mkdir -p "$(dirname "$SYSTEM_CONF")"
  cp "$CONF" "$SYSTEM_CONF.ff.tmp"
  mv "$SYSTEM_CONF.ff.tmp" "$SYSTEM_CONF"
}

# slurmstepd re-reads plugstack.conf at every job launch, so deploy can add
# the plugin to a running cluster. Without the .so the cluster runs plain.
write_plugstack() {
  local so
  so=$(plugin_so)
  {
    echo "$MARKER"
    if [[ -f $so ]]; then
      echo "optional $so spool=$ROOT/spool/%n agent=$AGENT_URL collect=$(node_programs_dir)/firstfault-collect config=$ROOT/node.yaml"
    fi
  } >"$ROOT/plugstack.conf.tmp"
  mv "$ROOT/plugstack.conf.tmp" "$ROOT/plugstack.conf"
}

# The Epilog must exist and exit 0 even before anything is deployed: a failing
# Epilog drains the node.
write_epilog() {
  local epilog
  epilog=$(node_programs_dir)/firstfault-epilog
  cat >"$ROOT/epilog.sh.tmp" <<EOF
#!/bin/sh
$MARKER
if [ -x $epilog ]; then
  exec $epilog --config $ROOT/node.yaml
fi
exit 0
EOF
  chmod 0755 "$ROOT/epilog.sh.tmp"
  mv "$ROOT/epilog.sh.tmp" "$ROOT/epilog.sh"
}

# The Prolog does nothing, unless a test holds jobs in it: while
# <root>/prolog.hold exists it says it waits (prolog.waiting.<job>) and
# waits, at most 30 s, as a slow node health check would.
write_prolog() {
  cat >"$ROOT/prolog.sh.tmp" <<EOF
#!/bin/sh
$MARKER
if [ -e $ROOT/prolog.hold ]; then
  touch $ROOT/prolog.waiting.\$SLURM_JOB_ID
  i=0
  while [ -e $ROOT/prolog.hold ] && [ \$i -lt 150 ]; do sleep 0.2; i=\$((i + 1)); done
fi
exit 0
EOF
  chmod 0755 "$ROOT/prolog.sh.tmp"
  mv "$ROOT/prolog.sh.tmp" "$ROOT/prolog.sh"
}

node_log_files() { echo kern.log syslog fabricmanager.log; }

# A simulated node's kernel ring buffer is a journal directory of
# _TRANSPORT=kernel entries, <root>/nodes/<n>/journal, as journald keeps
# what it reads from /dev/kmsg: the collector's `kernel` source takes the
# kernel's own records only (docs/slurm-path.md section 3), and the agent
# drains a node on nothing else. kern.log is a syslog file (rsyslog writes
# it from /dev/log too), listed under `syslog`.
journal_remote() {
  local p
  for p in /lib/systemd/systemd-journal-remote /usr/lib/systemd/systemd-journal-remote; do
    [[ -x $p ]] && { echo "$p"; return 0; }
  done
  return 1
}

# kernel_record NODE UNIX_USEC MESSAGE: one kernel entry, in a journal file
# of its own (journal readers merge the files of a directory).
kernel_record() {
  local node=$1 usec=$2 message=$3 dir remote boot now_us up_us mono err
  remote=$(journal_remote) ||
    die "systemd-journal-remote is not installed (Debian package systemd-journal-remote): no kernel journal"
  dir=$ROOT/nodes/$node/journal
  mkdir -p "$dir"
  boot=$(tr -d '-' </proc/sys/kernel/random/boot_id)
  now_us=$(date +%s%6N)
  up_us=$(awk '{ printf "%d", $1 * 1000000 }' /proc/uptime)
  mono=$((up_us - (now_us - usec)))
  ((mono > 0)) || mono=1
  printf '__REALTIME_TIMESTAMP=%s\n__MONOTONIC_TIMESTAMP=%s\n_BOOT_ID=%s\n_TRANSPORT=kernel\n_HOSTNAME=%s\nSYSLOG_IDENTIFIER=kernel\nPRIORITY=3\nMESSAGE=%s\n\n' \
    "$usec" "$mono" "$boot" "$node" "${message//$'\n'/ }" |
    "$remote" --output="$dir/kernel-$(date +%s%N).journal" - 2>"$dir/.remote.err" || {
    err=$(<"$dir/.remote.err")
    die "systemd-journal-remote could not write $dir: $err"
  }
}

# An empty kernel journal: one entry an hour ago, so the journal covers every
# job window (a journal that begins inside the window is only partly there)
# without a line in it.
reset_kernel_journal() {
  rm -rf "$ROOT/nodes/$1/journal"
  kernel_record "$1" "$(($(date +%s) - 3600))000000" "firstfault test cluster: $1's kernel journal begins"
}

create_node_logs() {
  local n f
  for n in "${NODES[@]}"; do
    mkdir -p "$ROOT/nodes/$n" "$ROOT/spool/$n"
    for f in $(node_log_files); do : >"$ROOT/nodes/$n/$f"; done
    reset_kernel_journal "$n"
  done
}

# --- slurm daemons ---------------------------------------------------------

ctld_running() { pid_alive "$ROOT/run/slurmctld.pid"; }
slurmd_running() { pid_alive "$ROOT/run/slurmd-$1.pid"; }

# Something accepts connections on 127.0.0.1:PORT (bash's /dev/tcp: no
# dependency on iproute2 or netcat).
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_ctld() {
  ctld_running && return 0
  port_busy "$CTLD_PORT" && die "port $CTLD_PORT is taken by another slurmctld (set FF_SLURMCTLD_PORT)"
  # State is kept across restarts so job ids keep growing: the agent's
  # database is keyed by job id and must never see an id twice.
  if [[ ! -d $ROOT/state ]]; then
    mkdir -p "$ROOT/state"
    rm -rf "$ROOT/agent"
  fi
  (close_extra_fds; exec slurmctld -i)
  wait_for 20 scontrol ping >/dev/null 2>&1 || die "slurmctld does not answer: $(tail -5 "$ROOT/log/slurmctld.log")"
  log "slurmctld running"
}

# --- accounting: MariaDB and slurmdbd --------------------------------------

MARIADB_SOCKET=$ROOT/run/mariadb.sock
mariadb_running() { pid_alive "$ROOT/run/mariadb.pid"; }
dbd_running() { pid_alive "$ROOT/run/slurmdbd.pid"; }
sql() { mariadb --no-defaults --socket="$MARIADB_SOCKET" -u root -N -B "$@"; }

# The password slurmdbd gives MariaDB: made once per cluster root, readable
# by root only (slurmdbd.conf must be 0600 too, or slurmdbd refuses it).
db_password() {
  local f=$ROOT/etc/mariadb.password
  if [[ ! -s $f ]]; then
    (umask 077; head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' >"$f")
  fi
  cat "$f"
}

start_mariadb() {
  mariadb_running && return 0
  command -v mariadbd >/dev/null || die "mariadbd is not installed (Debian package mariadb-server)"
  port_busy "$MARIADB_PORT" && die "port $MARIADB_PORT is taken by another process (set FF_MARIADB_PORT)"
  local data=$ROOT/mariadb fresh=0
  mkdir -p "$ROOT/run" "$ROOT/log"
  if [[ ! -d $data/mysql ]]; then
    fresh=1
    rm -rf "$data"
    mkdir -p "$data"
    chown mysql: "$data"
    mariadb-install-db --no-defaults --user=mysql --datadir="$data" --auth-root-authentication-method=socket \
      --skip-test-db >"$ROOT/log/mariadb-install.log" 2>&1 ||
      die "mariadb-install-db failed: $(tail -5 "$ROOT/log/mariadb-install.log")"
  fi
  chown mysql: "$ROOT/run"/ 2>/dev/null || true
  # Loopback only, small buffers: a test database of a few hundred jobs.
  (close_extra_fds; exec mariadbd --no-defaults --user=mysql --datadir="$data" \
    --socket="$MARIADB_SOCKET" --port="$MARIADB_PORT" --bind-address=127.0.0.1 \
    --pid-file="$ROOT/run/mariadb.pid" --log-error="$ROOT/log/mariadb.log" \
    --skip-name-resolve --innodb-buffer-pool-size=32M --innodb-log-file-size=16M \
    --innodb-lock-wait-timeout=900 --max-connections=50) </dev/null >/dev/null 2>&1 &
  wait_for 60 sql -e 'SELECT 1' >/dev/null 2>&1 ||
    die "MariaDB does not answer: $(tail -5 "$ROOT/log/mariadb.log")"
  if ((fresh)); then
    sql -e "CREATE USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$(db_password)';
            GRANT ALL ON \`$DB_NAME\`.* TO '$DB_USER'@'127.0.0.1';" ||
      die "cannot create the database user"
  fi
  log "MariaDB running on 127.0.0.1:$MARIADB_PORT"
}

write_slurmdbd_conf() {
  local f=$ROOT/etc/slurmdbd.conf
  (umask 077; cat >"$f.tmp" <<EOF
$MARKER
AuthType=auth/munge
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$ROOT/run/slurmdbd.pid
LogFile=$ROOT/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$MARIADB_PORT
StorageUser=$DB_USER
StoragePass=$(db_password)
StorageLoc=$DB_NAME
EOF
  )
  mv "$f.tmp" "$f"
}

dbd_answers() { sacctmgr -n -P list cluster format=cluster >/dev/null 2>&1; }

start_slurmdbd() {
  dbd_running && return 0
  port_busy "$DBD_PORT" && die "port $DBD_PORT is taken by another slurmdbd (set FF_SLURMDBD_PORT)"
  write_slurmdbd_conf
  # slurmdbd reads slurmdbd.conf beside $SLURM_CONF.
  (close_extra_fds; exec slurmdbd)
  wait_for 60 dbd_answers || die "slurmdbd does not answer: $(tail -5 "$ROOT/log/slurmdbd.log")"
  log "slurmdbd running on port $DBD_PORT"
}

# The cluster, an account and the users that run jobs, as a site's
# administrator adds them; each add is skipped when it exists.
add_associations() {
  local user
  sacctmgr -n -P list cluster format=cluster | grep -qx ffcluster ||
    sacctmgr -i add cluster ffcluster >/dev/null || die "sacctmgr add cluster failed"
  sacctmgr -n -P list account format=account | grep -qx ffaccount ||
    sacctmgr -i add account ffaccount Cluster=ffcluster Description=firstfault-tests Organization=firstfault >/dev/null ||
    die "sacctmgr add account failed"
  for user in root "$TEST_USER"; do
    id -u "$user" >/dev/null 2>&1 || continue
    sacctmgr -n -P list user "$user" format=user | grep -qx "$user" ||
      sacctmgr -i add user "$user" Account=ffaccount Cluster=ffcluster >/dev/null ||
      die "sacctmgr add user $user failed"
  done
}

start_slurmd() {
  local n=$1
  slurmd_running "$n" && return 0
  mkdir -p "$ROOT/slurmd-spool/$n"
  (close_extra_fds; exec slurmd -N "$n")
  wait_for 10 slurmd_running "$n" || die "slurmd $n did not start: $(tail -5 "$ROOT/log/slurmd-$n.log")"
}

all_idle() {
  local states
  states=$(sinfo -h -N -p debug -o '%N %t' 2>/dev/null) || return 1
  [[ $(grep -c ' idle$' <<<"$states") -eq ${#NODES[@]} ]]
}

# Nodes drained by an earlier failing Epilog or down after a restart take no
# jobs; the tests need all three.
resume_nodes() {
  local n state
  while read -r n state; do
    case $state in
      drain* | drng | down* | fail*) scontrol update NodeName="$n" State=RESUME 2>/dev/null || true ;;
    esac
  done < <(sinfo -h -N -p debug -o '%N %t' 2>/dev/null || true)
}

wait_nodes_idle() {
  local deadline=$((SECONDS + 60))
  until all_idle; do
    resume_nodes
    ((SECONDS < deadline)) || die "nodes not idle after 60 s: $(sinfo -h -N -o '%N %t %E' 2>&1 | tr '\n' ';')"
    sleep 0.5
  done
}

cmd_start() {
  [[ $EUID -eq 0 ]] || die "must run as root"
  start_munge
  mkdir -p "$ROOT"/{run,log,etc,install/bin,install/lib}
  local fresh=1
  ctld_running && fresh=0
  write_slurm_conf
  write_plugstack
  write_epilog
  write_prolog
  # Node logs start empty with a fresh cluster; a running one keeps them.
  ((fresh)) && create_node_logs
  # A new controller state means new job ids from 1: the database of the
  # old ones goes with it (the agent's, and Slurm's accounting).
  if [[ ! -d $ROOT/state ]]; then
    stop_accounting
    rm -rf "$ROOT/mariadb"
  fi
  start_mariadb
  start_slurmdbd
  cmd_user >/dev/null
  add_associations
  start_ctld
  local n
  for n in "${NODES[@]}"; do start_slurmd "$n"; done
  wait_nodes_idle
  log "cluster up: $(sinfo -h -N -p debug -o '%N %t' | tr '\n' ' ')"
}

cancel_all_jobs() {
  local ids
  ids=$(squeue -h -o %i 2>/dev/null || true)
  [[ -z $ids ]] && return 0
  # shellcheck disable=SC2086
  scancel $ids 2>/dev/null || true
  # shellcheck disable=SC2016  # expanded by the inner bash, at each try
  wait_for 20 bash -c '[[ -z $(squeue -h -o %i 2>/dev/null) ]]' || log "jobs still listed after scancel"
}

cmd_stop() {
  local all=0
  [[ ${1:-} == --all ]] && all=1
  cmd_agent_stop
  if ctld_running; then
    cancel_all_jobs
    scontrol shutdown >/dev/null 2>&1 || true
  fi
  local n
  for n in "${NODES[@]}"; do kill_pidfile "$ROOT/run/slurmd-$n.pid" 15; done
  kill_pidfile "$ROOT/run/slurmctld.pid" 15
  stop_accounting
  cmd_syslog_stop
  if ((all)); then
    kill_pidfile /run/munge/munged.pid 10
  fi
  log "cluster stopped"
}

stop_accounting() {
  kill_pidfile "$ROOT/run/slurmdbd.pid" 15
  kill_pidfile "$ROOT/run/mariadb.pid" 30
}

cmd_status() {
  local n rc=0
  if munge_works; then echo "munge: running"; else echo "munge: stopped"; rc=1; fi
  if mariadb_running; then echo "mariadb: running"; else echo "mariadb: stopped"; rc=1; fi
  if dbd_running; then echo "slurmdbd: running"; else echo "slurmdbd: stopped"; rc=1; fi
  if ctld_running; then echo "slurmctld: running"; else echo "slurmctld: stopped"; rc=1; fi
  for n in "${NODES[@]}"; do
    if slurmd_running "$n"; then echo "slurmd $n: running"; else echo "slurmd $n: stopped"; rc=1; fi
  done
  if agent_running; then echo "agent: running ($AGENT_URL)"; else echo "agent: stopped"; fi
  ctld_running && sinfo -N -p debug -o '%N %t %E' 2>/dev/null | sed 's/^/  /'
  return $rc
}

# --- deploy ----------------------------------------------------------------

# What runs: this build's copies under <root>/install (deploy BUILD_DIR), or
# the files the packages installed (deploy --installed, packaging/README.md),
# recorded in <root>/install/mode.
PACKAGED_PLUGIN=/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_firstfault.so
PACKAGED_PROGRAMS=/usr/libexec/firstfault
PACKAGED_AGENT=/usr/bin/firstfault
PACKAGED_AGENT_UNIT=/lib/systemd/system/firstfault-agent.service
deployed_packages() { [[ $(cat "$ROOT/install/mode" 2>/dev/null) == installed ]]; }
plugin_so() {
  if deployed_packages; then echo "$PACKAGED_PLUGIN"; else echo "$ROOT/install/lib/spank_firstfault.so"; fi
}
node_programs_dir() {
  if deployed_packages; then echo "$PACKAGED_PROGRAMS"; else echo "$ROOT/install/bin"; fi
}

# The agent's command line: the unit's ExecStart with the cluster's config.
agent_command() {
  if deployed_packages; then
    sed -n 's/^ExecStart=//p' "$PACKAGED_AGENT_UNIT" | sed "s|/etc/firstfault/agent.yaml|$ROOT/agent.yaml|"
  else
    echo "$ROOT/install/bin/firstfault agent --config $ROOT/agent.yaml"
  fi
}

# deploy --installed: the packages' files, linked under <root>/install too so
# that what is deployed looks the same to helpers.bash either way.
deploy_installed() {
  local f
  for f in "$PACKAGED_PLUGIN" "$PACKAGED_PROGRAMS/firstfault-epilog" \
           "$PACKAGED_PROGRAMS/firstfault-collect" "$PACKAGED_PROGRAMS/firstfault-slurm-job" \
           "$PACKAGED_AGENT" "$PACKAGED_AGENT_UNIT"; do
    [[ -f $f ]] || die "not installed: $f (dpkg -i dist/firstfault-{node,agent}_*.deb)"
  done
  ln -sfn "$PACKAGED_PLUGIN" "$ROOT/install/lib/spank_firstfault.so"
  ln -sfn "$PACKAGED_PROGRAMS/firstfault-epilog" "$ROOT/install/bin/firstfault-epilog"
  ln -sfn "$PACKAGED_PROGRAMS/firstfault-collect" "$ROOT/install/bin/firstfault-collect"
  ln -sfn "$PACKAGED_PROGRAMS/firstfault-slurm-job" "$ROOT/install/bin/firstfault-slurm-job"
  ln -sfn "$PACKAGED_AGENT" "$ROOT/install/bin/firstfault"
  echo installed >"$ROOT/install/mode"
  log "deployed the installed packages: $PACKAGED_PLUGIN, $PACKAGED_PROGRAMS, agent: $(agent_command)"
}

# cp + rename: a slurmstepd loading the plugin or an Epilog exec'ing the
# binary sees the old or the new file, never half of one.
install_atomic() {
  local src=$1 dst=$2
  [[ -f $src ]] || { log "not built, skipped: $src"; return 0; }
  cp "$src" "$dst.tmp.$$"
  chmod 0755 "$dst.tmp.$$"
  mv -f "$dst.tmp.$$" "$dst"
  log "installed $dst"
}

write_node_yaml() {
  cat >"$ROOT/node.yaml.tmp" <<EOF
$MARKER
agent_url: $AGENT_URL
spool: $ROOT/spool/%n
# The tests run jobs back to back: a short margin keeps one job's injected
# lines out of the next job's window.
margin_before_s: 20
margin_after_s: 10
max_bundle_bytes: 67108864
# Short retries: the agent-down test waits for the outbox to drain.
retry: {initial_s: 1, max_s: 2, give_up_after_s: 600}
collect_on_success: false
# Each node's kernel ring buffer (cluster.sh inject NODE kernel).
journal_directory: $ROOT/nodes/%n/journal
sources:
  kernel: ["journal:kernel"]
  syslog: [$ROOT/nodes/%n/syslog*, $ROOT/nodes/%n/kern.log*]
  fabricmanager: [$ROOT/nodes/%n/fabricmanager.log*]
  slurmd: [$ROOT/log/slurmd-%n.log*]
EOF
  mv "$ROOT/node.yaml.tmp" "$ROOT/node.yaml"
}

write_agent_yaml() {
  cat >"$ROOT/agent.yaml.tmp" <<EOF
$MARKER
listen: 127.0.0.1:$AGENT_PORT
state_dir: $ROOT/agent
database: $ROOT/agent/firstfault.db
allowed_uids: []
fastpass_wait_s: 8
final_pass_deadline_s: 20
max_request_bytes: 268435456
scontrol: $(command -v scontrol || echo /usr/bin/scontrol)
slurm_job_helper: $(node_programs_dir)/firstfault-slurm-job
sacctmgr: auto
EOF
  # agent-config FILE: its top-level keys replace the ones above (the
  # settings are one line each) or add to them.
  local extra=$ROOT/agent.extra.yaml key
  if [[ -f $extra ]]; then
    for key in $(grep -oE '^[A-Za-z_]+:' "$extra"); do
      grep -v "^$key" "$ROOT/agent.yaml.tmp" >"$ROOT/agent.yaml.tmp2" || true
      mv "$ROOT/agent.yaml.tmp2" "$ROOT/agent.yaml.tmp"
    done
    cat "$extra" >>"$ROOT/agent.yaml.tmp"
  fi
  mv "$ROOT/agent.yaml.tmp" "$ROOT/agent.yaml"
}

cmd_deploy() {
  local build=${1:-}
  [[ -n $build && ( -d $build || $build == --installed ) ]] || die "usage: deploy BUILD_DIR | deploy --installed"
  mkdir -p "$ROOT"/{install/bin,install/lib,agent}
  if [[ $build == --installed ]]; then
    deploy_installed
  else
    echo build >"$ROOT/install/mode"
    install_atomic "$build/spank/spank_firstfault.so" "$ROOT/install/lib/spank_firstfault.so"
    install_atomic "$build/epilog/firstfault-epilog" "$ROOT/install/bin/firstfault-epilog"
    install_atomic "$build/collectors/firstfault-collect" "$ROOT/install/bin/firstfault-collect"
    install_atomic "$build/agent/firstfault" "$ROOT/install/bin/firstfault"
    install_atomic "$build/agent/firstfault-slurm-job" "$ROOT/install/bin/firstfault-slurm-job"
  fi
  write_node_yaml
  write_agent_yaml
  write_plugstack
  write_epilog
  local n
  for n in "${NODES[@]}"; do
    mkdir -p "$ROOT/spool/$n" "$ROOT/nodes/$n"
    # A cluster root from before the kernel journals gets them here.
    [[ -d $ROOT/nodes/$n/journal ]] || reset_kernel_journal "$n"
  done
}

# --- agent -----------------------------------------------------------------

agent_running() { pid_alive "$ROOT/run/agent.pid"; }
agent_healthy() { curl -sf -m 2 "$AGENT_URL/api/v1/health" >/dev/null 2>&1; }

cmd_agent_start() {
  local command
  read -r -a command <<<"$(agent_command)"
  [[ -x ${command[0]:-} ]] || die "agent not deployed: ${command[0]:-}"
  [[ -f $ROOT/agent.yaml ]] || die "agent.yaml missing: run deploy first"
  mkdir -p "$ROOT/run" "$ROOT/log" "$ROOT/agent"
  if ! agent_running; then
    port_busy "$AGENT_PORT" && die "port $AGENT_PORT is taken by another process (set FF_AGENT_PORT)"
    # setsid: the agent must not die with the shell (bats, ctest) that started it.
    (close_extra_fds; exec setsid "${command[@]}") \
      </dev/null >>"$ROOT/log/agent.log" 2>&1 &
    echo $! >"$ROOT/run/agent.pid"
  fi
  if ! wait_for 15 agent_healthy; then
    agent_running || die "agent exited: $(tail -20 "$ROOT/log/agent.log")"
    die "agent not healthy after 15 s: $(tail -20 "$ROOT/log/agent.log")"
  fi
  log "agent healthy at $AGENT_URL (pid $(<"$ROOT/run/agent.pid"))"
}

cmd_agent_stop() {
  agent_running || { rm -f "$ROOT/run/agent.pid"; return 0; }
  kill_pidfile "$ROOT/run/agent.pid" 15
  log "agent stopped"
}

# agent-config FILE: the agent runs with FILE's settings over deploy's
# agent.yaml (a test's own database, drain: ...); agent-config alone goes back
# to deploy's. A running agent is restarted with the new file.
cmd_agent_config() {
  local file=${1:-}
  [[ -f $ROOT/agent.yaml ]] || die "agent.yaml missing: run deploy first"
  if [[ -n $file ]]; then
    [[ -f $file ]] || die "no such file: $file"
    cp "$file" "$ROOT/agent.extra.yaml"
  else
    rm -f "$ROOT/agent.extra.yaml"
  fi
  write_agent_yaml
  if agent_running; then
    cmd_agent_stop
    cmd_agent_start
  fi
}

# --- log injection ---------------------------------------------------------

# Appends one line, stamped with the current time in the file's own format,
# so the collector's window and the engine's clock see it as it happens.
#   kernel:        an entry of the node's kernel journal (_TRANSPORT=kernel, now)
#   kern.log:      a syslog file: RFC 3164 + dmesg seconds, "Nov 30 05:01:02 n2 kernel: [12345.678901] LINE"
#                  (what rsyslog writes, and what `logger -t kernel` can forge)
#   syslog:        RFC 3164: "Nov 30 05:01:02 n2 LINE" (LINE starts with its tag, "prog[pid]: ")
#   fabricmanager: "[Nov 30 2026 05:01:02] LINE" (LINE starts with "[ERROR] [tid N] ")
cmd_inject() {
  local node=${1:-} kind=${2:-} line=${3:-} dir file stamp up
  [[ -n $node && -n $kind && -n $line ]] || die "usage: inject NODE KIND LINE"
  dir=$ROOT/nodes/$node
  [[ -d $dir ]] || die "no such node: $node"
  case $kind in
    kernel)
      kernel_record "$node" "$(date +%s%6N)" "$line"
      return 0 ;;
    kern.log)
      up=$(cut -d' ' -f1 /proc/uptime)
      stamp="$(date '+%b %e %H:%M:%S') $node kernel: [$(printf '%12.6f' "$up")]"
      file=kern.log ;;
    syslog)
      stamp="$(date '+%b %e %H:%M:%S') $node"
      file=syslog ;;
    fabricmanager)
      stamp="[$(date '+%b %d %Y %H:%M:%S')]"
      file=fabricmanager.log ;;
    *) die "unknown kind '$kind' (kernel, kern.log, syslog, fabricmanager)" ;;
  esac
  printf '%s %s\n' "$stamp" "$line" >>"$dir/$file"
}

cmd_reset_logs() {
  local n f
  for n in "${NODES[@]}"; do
    [[ -d $ROOT/nodes/$n ]] || continue
    for f in $(node_log_files); do : >"$ROOT/nodes/$n/$f"; done
    reset_kernel_journal "$n"
  done
}

# --- the job's user, and syslog as rsyslog writes it ----------------------

TEST_USER=${FF_TEST_USER:-ffuser}

# An ordinary user, as the jobs of a real cluster's users run: no sudo, no
# group of Slurm's or root's, its own home. The hostile-user tests submit
# their jobs as this user.
cmd_user() {
  [[ $EUID -eq 0 ]] || die "must run as root"
  if ! id -u "$TEST_USER" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash --comment "firstfault test job user" "$TEST_USER" ||
      die "cannot create user $TEST_USER"
  fi
  echo "$TEST_USER"
}

syslog_running() { pid_alive "$ROOT/run/rsyslogd.pid"; }

# One rsyslogd for the three simulated nodes: what a job's `logger` writes to
# its node's /dev/log (here <root>/nodes/<n>/dev-log, mode 0666 like
# /dev/log) lands in that node's syslog in the traditional file format, as on
# a Debian node. Only root-owned daemons write those files; a job reaches
# them through the socket only, as on a real node.
cmd_syslog_start() {
  [[ $EUID -eq 0 ]] || die "must run as root"
  command -v rsyslogd >/dev/null || die "rsyslogd is not installed (Debian package rsyslog)"
  syslog_running && return 0
  local conf=$ROOT/etc/rsyslog.conf n
  mkdir -p "$ROOT/etc" "$ROOT/run" "$ROOT/rsyslog"
  {
    echo 'global(workDirectory="'"$ROOT"'/rsyslog")'
    echo 'module(load="imuxsock" SysSock.Use="off")'
    for n in "${NODES[@]}"; do
      echo 'template(name="'"$n"'" type="string" string="%TIMESTAMP% '"$n"' %syslogtag%%msg:::sp-if-no-1st-sp%%msg:::drop-last-lf%\n")'
      echo 'ruleset(name="'"$n"'") { action(type="omfile" file="'"$ROOT/nodes/$n/syslog"'" template="'"$n"'" fileCreateMode="0640") }'
      echo 'input(type="imuxsock" Socket="'"$ROOT/nodes/$n/dev-log"'" Ruleset="'"$n"'" CreatePath="on")'
    done
  } >"$conf"
  rsyslogd -N1 -f "$conf" >/dev/null 2>"$ROOT/log/rsyslogd.check" ||
    die "rsyslog.conf refused: $(cat "$ROOT/log/rsyslogd.check")"
  (close_extra_fds; exec rsyslogd -f "$conf" -i "$ROOT/run/rsyslogd.pid")     </dev/null >>"$ROOT/log/rsyslogd.log" 2>&1
  for n in "${NODES[@]}"; do
    wait_for 10 test -S "$ROOT/nodes/$n/dev-log" || die "rsyslogd made no socket for $n"
    chmod 0666 "$ROOT/nodes/$n/dev-log"
  done
  log "rsyslogd running: nodes' /dev/log at $ROOT/nodes/<n>/dev-log"
}

cmd_syslog_stop() {
  syslog_running || return 0
  kill_pidfile "$ROOT/run/rsyslogd.pid" 15
  rm -f "$ROOT"/nodes/*/dev-log
}

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 64
}

main() {
  local cmd=${1:-}
  shift || true
  case $cmd in
    start) cmd_start ;;
    stop) cmd_stop "$@" ;;
    status) cmd_status ;;
    munge) [[ $EUID -eq 0 ]] || die "must run as root"; start_munge ;;
    deploy) cmd_deploy "$@" ;;
    agent-start) cmd_agent_start ;;
    agent-stop) cmd_agent_stop ;;
    agent-config) cmd_agent_config "$@" ;;
    inject) cmd_inject "$@" ;;
    reset-logs) cmd_reset_logs ;;
    user) cmd_user ;;
    syslog-start) cmd_syslog_start ;;
    syslog-stop) cmd_syslog_stop ;;
    *) usage ;;
  esac
}

main "$@"
