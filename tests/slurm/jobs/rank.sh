#!/usr/bin/env bash
# One rank of a simulated distributed training job, started by srun on each
# node of the test cluster. It prints what a PyTorch/NCCL rank prints (the
# formats of examples/incidents/), stamped with the real current time, and
# coordinates with the test and the other ranks through files in the job's
# working directory (sbatch --chdir; SLURM_SUBMIT_DIR is where sbatch ran).
#
#   rank.sh SCENARIO
#     hang       all ranks enter an allreduce; once the test touches "go" (after
#                it broke a GPU), every rank not on $FF_FAULTY_NODE hits the
#                NCCL watchdog timeout; all exit 1
#     exception  rank $FF_FAILING_RANK raises a real Python exception; the
#                others then hit the watchdog timeout; all exit 1
#     sleep      all ranks train until killed (the time-limit test)
#     ok         a short healthy run, exit 0
#   As a hostile user would (tests/slurm/hostile_user.bats):
#     forge      the rank on $FF_FAULTY_NODE writes a GPU fault it did not see:
#                an Xid 79 through its node's syslog socket
#                ($FF_DEVLOG_DIR/<node>/dev-log, `logger -t kernel`), an
#                attempt at /dev/kmsg (its outcome in kmsg-<rank>), and a CUDA
#                ECC error with the node's name on its own output; then every
#                other rank times out as after a real fault; all exit 1
#     flood      rank 0 prints $FF_FLOOD_LINES lines, then the exception scenario
set -uo pipefail

SYNC=$PWD
RANK=${SLURM_PROCID:?not started by srun}
NTASKS=${SLURM_NTASKS:?}
NODE=${SLURMD_NODENAME:-$(hostname -s)}
PID=$$
PYTHON=${FF_PYTHON:-/usr/bin/python3}
SYNC_LIMIT_S=90

# glog, as PyTorch's ProcessGroupNCCL writes it (to stderr).
glog() {
  printf '[rank%d]:[E%s %d ProcessGroupNCCL.cpp:%d] %s\n' \
    "$RANK" "$(date '+%m%d %H:%M:%S.%6N')" "$PID" "$1" "$2" >&2
}

info() { printf '%s INFO [train.py:412] %s\n' "$(date '+%Y-%m-%d %H:%M:%S,%3N')" "$*"; }

nccl_init() {
  echo "$NODE:$PID:$PID [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>"
  echo "$NODE:$PID:$PID [0] NCCL INFO Using network Socket"
  echo "$NODE:$PID:$((PID + 1)) [0] NCCL INFO comm 0x7f3a$RANK rank $RANK nranks $NTASKS cudaDev 0 nvmlDev 0 busId 3b000 commId 0x5e1d7a0c - Init COMPLETE"
}

# Waits (bounded) for a file to appear; a lost test must not leave jobs hanging.
wait_file() {
  local f=$1 i
  for ((i = 0; i < SYNC_LIMIT_S * 10; i++)); do
    [[ -e $f ]] && return 0
    sleep 0.1
  done
  echo "rank $RANK: gave up waiting for $f" >&2
  exit 2
}

# Every rank has started its collective: the ranks are in lock step.
barrier() {
  touch "$SYNC/ready-$RANK"
  local i
  for ((i = 0; i < SYNC_LIMIT_S * 10; i++)); do
    (($(compgen -G "$SYNC/ready-*" | wc -l) >= NTASKS)) && return 0
    sleep 0.1
  done
  echo "rank $RANK: barrier timed out" >&2
  exit 2
}

watchdog_timeout() {
  local started_ns=$1 ms
  ms=$((($(date +%s%N) - started_ns) / 1000000))
  glog 616 "[Rank $RANK] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20511, OpType=ALLREDUCE, NumelIn=26214400, NumelOut=26214400, Timeout(ms)=2000) ran for $ms milliseconds before timing out."
  glog 1785 "[PG ID 0 PG GUID 0(default_pg) Rank $RANK] Exception (either an error or timeout) detected by watchdog at work: 20511, last enqueued NCCL work: 20513, last completed NCCL work: 20510."
  glog 630 "[PG ID 0 PG GUID 0(default_pg) Rank $RANK] Timeout at NCCL work: 20511, last enqueued NCCL work: 20513, last completed NCCL work: 20510."
  echo "terminate called after throwing an instance of 'c10::DistBackendError'" >&2
  echo "  what():  [PG ID 0 PG GUID 0(default_pg) Rank $RANK] Process group watchdog thread terminated with exception: [Rank $RANK] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20511, OpType=ALLREDUCE, NumelIn=26214400, NumelOut=26214400, Timeout(ms)=2000) ran for $ms milliseconds before timing out." >&2
}

# A real traceback from a real interpreter, prefixed per line as torchrun does.
python_exception() {
  "$PYTHON" -c '
import os
def write_trainer_state(ckpt_dir):
    with open(os.path.join(ckpt_dir, "trainer_state.json"), "w") as f:
        f.write("{}")
def save_checkpoint(step):
    write_trainer_state("/nonexistent/checkpoints/step_%07d" % step)
save_checkpoint(12000)
' 2>&1 | sed -u "s/^/[rank$RANK]: /" >&2
  return "${PIPESTATUS[0]}"
}

scenario_hang() {
  local started
  nccl_init
  info "step 100 | loss 2.5016"
  started=$(date +%s%N)
  barrier
  wait_file "$SYNC/go"
  # The allreduce never completes; the watchdog fires after its timeout.
  sleep 2.5
  if [[ $NODE != "${FF_FAULTY_NODE:-}" ]]; then
    watchdog_timeout "$started"
  fi
  exit 1
}

scenario_exception() {
  local started
  nccl_init
  info "step 100 | loss 2.5016"
  started=$(date +%s%N)
  barrier
  if [[ $RANK == "${FF_FAILING_RANK:-1}" ]]; then
    info "saving checkpoint at step 12000"
    python_exception
    local rc=$?
    touch "$SYNC/failed"
    exit "$rc"
  fi
  wait_file "$SYNC/failed"
  sleep 2.5
  watchdog_timeout "$started"
  exit 1
}

scenario_forge() {
  local started xid
  nccl_init
  info "step 100 | loss 2.5016"
  started=$(date +%s%N)
  barrier
  if [[ $NODE == "${FF_FAULTY_NODE:-}" ]]; then
    xid="NVRM: Xid (PCI:0000:3b:00): 79, pid=$PID, name=python3, GPU has fallen off the bus."
    logger --socket "${FF_DEVLOG_DIR:?}/$NODE/dev-log" -t kernel "$xid"
    if { printf '<3>%s\n' "$xid" >/dev/kmsg; } 2>/dev/null; then
      echo written >"$SYNC/kmsg-$RANK"
    else
      echo refused >"$SYNC/kmsg-$RANK"
    fi
    echo "$NODE: CUDA error: uncorrectable ECC error encountered"
    echo "[rank$RANK]: RuntimeError: CUDA error: uncorrectable ECC error encountered" >&2
    touch "$SYNC/forged"
    exit 1
  fi
  wait_file "$SYNC/forged"
  sleep 2.5
  watchdog_timeout "$started"
  exit 1
}

scenario_flood() {
  if [[ $RANK == 0 ]]; then
    awk -v n="${FF_FLOOD_LINES:-1000000}" \
      'BEGIN { for (i = 0; i < n; i++) printf "step %d | loss 2.41 | lr 3.0e-04 | tokens/s 181734\n", i }'
  fi
  scenario_exception
}

scenario_sleep() {
  nccl_init
  barrier
  local step
  for ((step = 100; step < 100000; step++)); do
    info "step $step | loss 2.41"
    sleep 1
  done
}

scenario_ok() {
  nccl_init
  barrier
  local step
  for step in 100 101 102; do info "step $step | loss 2.41"; sleep 0.3; done
  exit 0
}

echo "$NODE" >"$SYNC/rank-$RANK.node"
case ${1:-} in
  hang) scenario_hang ;;
  exception) scenario_exception ;;
  sleep) scenario_sleep ;;
  ok) scenario_ok ;;
  forge) scenario_forge ;;
  flood) scenario_flood ;;
  *) echo "usage: rank.sh hang|exception|sleep|ok|forge|flood" >&2; exit 64 ;;
esac
