// Unit tests for extract/event_extractor: one real-format line per pattern
// family → the right event kind and fields; source-kind filters; groups; and
// the prefiltered scan of a whole file.
#include "engine/extract/event_extractor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rules/compiled_rules.h"
#include "incident/time/time.h"
#include "tests/support/scratch_directory.h"

namespace ff {
namespace {

namespace fs = std::filesystem;
using ff::test_support::ScratchDirectory;

const CompiledRules& builtin_rules() {
  static std::shared_ptr<const CompiledRules> rules = [] {
    std::vector<RuleError> errors;
    auto r = load_rules(true, {}, errors);
    if (!errors.empty()) throw std::runtime_error("built-in rules: " + errors.front().to_string());
    return r;
  }();
  return *rules;
}

SourceFile kernel_file() {
  return {"nodes/gpu-a02/kernel.log", "nodes/gpu-a02/kernel.log", "gpu-a02", "kernel"};
}
SourceFile syslog_file() {
  return {"nodes/gpu-a02/syslog", "nodes/gpu-a02/syslog", "gpu-a02", "syslog"};
}
SourceFile app_file() {
  return {"nodes/gpu-a02/app.log", "nodes/gpu-a02/app.log", "gpu-a02", "app"};
}
SourceFile job_output_file() {
  return {"app/slurm-48277.out", "app/slurm-48277.out", "", "app"};
}
SourceFile slurmctld_file() {
  return {"cluster/slurmctld.log", "cluster/slurmctld.log", "", "slurmctld"};
}

std::vector<Event> extract(const std::string& line, const SourceFile& file,
                           const TimeContext& tc = TimeContext{}) {
  EventExtractor x(builtin_rules());
  return x.extract_line(line, file, tc);
}

std::vector<std::string> kinds_of(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.kind);
  return out;
}

bool has_kind(const std::vector<Event>& events, const std::string& kind) {
  return std::any_of(events.begin(), events.end(), [&](const Event& e) { return e.kind == kind; });
}

// The only event of `line`; fails the test when there is not exactly one.
Event only_event(const std::string& line, const SourceFile& file,
                 const TimeContext& tc = TimeContext{}) {
  std::vector<Event> events = extract(line, file, tc);
  EXPECT_EQ(events.size(), 1u) << "line: " << line
                               << "\nkinds: " << ::testing::PrintToString(kinds_of(events));
  if (events.empty()) return Event{};
  return events.front();
}

std::string time_of(const Event& e) {
  return e.time ? format_time(*e.time) : "<none>";
}

// --- NVIDIA driver --------------------------------------------------------

TEST(EventExtractor, Xid79FromSyslogFormatKernelLine) {
  const std::string line =
      "Nov  2 10:41:07 gpu-a02 kernel: [971836.512044] NVRM: Xid (PCI:0000:5d:00): 79, "
      "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
  Event e = only_event(line, kernel_file());
  EXPECT_EQ(e.kind, "xid");
  EXPECT_EQ(e.pattern, "nvrm.xid");
  EXPECT_EQ(e.field("pci"), "0000:5d:00");
  EXPECT_EQ(e.field("code"), "79");
  EXPECT_EQ(e.field("detail"), "GPU has fallen off the bus.");
  EXPECT_EQ(e.node, "gpu-a02");
  EXPECT_EQ(e.source, "nodes/gpu-a02/kernel.log");
  EXPECT_EQ(e.source_kind, "kernel");
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(e.text, line);
  EXPECT_EQ(e.body(),
            "NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
            "the bus.");
  EXPECT_EQ(e.field("dmesg_seconds").substr(0, 9), "971836.51");
}

TEST(EventExtractor, Xid79TimeUsesJobReferenceYear) {
  TimeContext tc;
  tc.reference = parse_iso8601_utc("2026-11-02T08:00:00Z");
  Event e = only_event(
      "Nov  2 10:41:07 gpu-a02 kernel: [971836.512044] NVRM: Xid (PCI:0000:5d:00): 79, "
      "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
      kernel_file(), tc);
  EXPECT_EQ(time_of(e), "2026-11-02T10:41:07Z");
}

TEST(EventExtractor, Xid13WithPidAndProcessName) {
  Event e = only_event(
      "Nov  7 08:47:16 gpu-h01 kernel: [964285.410022] NVRM: Xid (PCI:0000:ba:00): 13, "
      "pid=202913, name=python3, Graphics SM Warp Exception on (GPC 4, TPC 2, SM 1): Out Of "
      "Range Address",
      kernel_file());
  EXPECT_EQ(e.kind, "xid");
  EXPECT_EQ(e.field("code"), "13");
  EXPECT_EQ(e.field("pci"), "0000:ba:00");
  EXPECT_EQ(e.field("pid"), "202913");
  EXPECT_EQ(e.field("proc"), "python3");
  EXPECT_EQ(e.field("detail"),
            "Graphics SM Warp Exception on (GPC 4, TPC 2, SM 1): Out Of Range Address");
}

TEST(EventExtractor, Xid149FromDmesgHumanReadableLine) {
  Event e = only_event(
      "[Tue Nov  3 14:22:31 2026] NVRM: Xid (PCI:0000:c3:00): 149, NETIR_LINK_EVT  Fatal   XC0 "
      "i0 Link 11 (0x004505c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
      kernel_file());
  EXPECT_EQ(e.kind, "xid");
  EXPECT_EQ(e.field("code"), "149");
  EXPECT_EQ(e.field("pci"), "0000:c3:00");
  EXPECT_EQ(e.field("pid"), "");
  EXPECT_EQ(e.field("proc"), "");
  EXPECT_EQ(e.field("detail").substr(0, 23), "NETIR_LINK_EVT  Fatal  ");
  EXPECT_EQ(time_of(e), "2026-11-03T14:22:31Z");
}

TEST(EventExtractor, NvswitchSxid) {
  Event e = only_event(
      "[Tue Nov  3 14:22:30 2026] nvidia-nvswitch3: SXid (PCI:0000:c6:00.0): 20034, Fatal, Link "
      "58 LTSSM Fault Up",
      kernel_file());
  EXPECT_EQ(e.kind, "sxid");
  EXPECT_EQ(e.field("switch"), "nvidia-nvswitch3");
  EXPECT_EQ(e.field("switch_pci"), "0000:c6:00.0");
  EXPECT_EQ(e.field("code"), "20034");
  EXPECT_EQ(e.field("severity"), "Fatal");
  EXPECT_EQ(e.field("detail"), "Link 58 LTSSM Fault Up");
}

TEST(EventExtractor, NvswitchSxidNonFatal) {
  Event e = only_event(
      "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted "
      "PRIV error (First)",
      syslog_file());
  EXPECT_EQ(e.kind, "sxid");
  EXPECT_EQ(e.field("code"), "12028");
  EXPECT_EQ(e.field("severity"), "Non-fatal");
}

TEST(EventExtractor, GpuFallenOffTheBusWithoutXid) {
  Event e = only_event(
      "Nov  2 10:41:07 gpu-a02 kernel: [971836.512064] NVRM: GPU 0000:5d:00.0: GPU has fallen "
      "off the bus.",
      kernel_file());
  EXPECT_EQ(e.kind, "gpu.fallen_off_bus");
  EXPECT_EQ(e.field("pci"), "0000:5d:00.0");
}

TEST(EventExtractor, FabricManagerError) {
  Event e = only_event(
      "[Nov 03 2026 14:22:31] [ERROR] [tid 1971] detected NVSwitch fatal error 20034 on fid 0 "
      "on NVSwitch pci bus id 00000000:c6:00.0 physical id 3 port 58",
      {"nodes/bgx-09/fabricmanager.log", "nodes/bgx-09/fabricmanager.log", "bgx-09",
       "fabricmanager"});
  EXPECT_EQ(e.kind, "fabricmanager.error");
  EXPECT_EQ(e.field("detail").substr(0, 30), "detected NVSwitch fatal error ");
  EXPECT_EQ(time_of(e), "2026-11-03T14:22:31Z");
}

// --- NCCL and PyTorch communication ---------------------------------------

TEST(EventExtractor, NcclIbCompletionError) {
  Event e = only_event(
      "gpu-m01:2184486:2184637 [1] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion "
      "from peer 10.20.1.13<56955> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid "
      "fe80::a088:c203:77:105a remoteGids fe80::a088:c203:77:10c2 hca mlx5_1",
      app_file());
  EXPECT_EQ(e.kind, "nccl.ib_completion_error");
  EXPECT_EQ(e.field("host"), "gpu-m01");
  EXPECT_EQ(e.field("nccl_dev"), "1");
  EXPECT_EQ(e.field("peer_ip"), "10.20.1.13");
  EXPECT_EQ(e.field("status"), "12");
  EXPECT_EQ(e.field("opcode"), "0");
  EXPECT_EQ(e.field("hca"), "mlx5_1");
  EXPECT_EQ(e.field("vendor_err"), "129");
}

TEST(EventExtractor, NcclIbCompletionErrorOldNcclFormat) {
  // NCCL <= 2.18 wrote "with error %d, opcode %d, len %d, vendor err %d".
  std::vector<Event> events = extract(
      "gpu-m01:2184486:2184637 [1] NCCL WARN NET/IB : Got completion from peer "
      "10.20.1.13<56955> with error 12, opcode 0, len 0, vendor err 129",
      app_file());
  ASSERT_TRUE(has_kind(events, "nccl.ib_completion_error"))
      << ::testing::PrintToString(kinds_of(events));
  for (const auto& e : events)
    if (e.kind == "nccl.ib_completion_error") {
      EXPECT_EQ(e.field("peer_ip"), "10.20.1.13");
      EXPECT_EQ(e.field("status"), "12");
      EXPECT_EQ(e.field("vendor_err"), "129");
    }
}

TEST(EventExtractor, NcclIbAsyncPortError) {
  Event e = only_event(
      "gpu-e03:1834508:1834605 [2] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_2:1 Got async "
      "event : port error",
      app_file());
  EXPECT_EQ(e.kind, "nccl.ib_async_event");
  EXPECT_EQ(e.field("hca"), "mlx5_2");
  EXPECT_EQ(e.field("port"), "1");
  EXPECT_EQ(e.field("event_name"), "port error");
  EXPECT_EQ(e.field("host"), "gpu-e03");
  EXPECT_EQ(e.field("nccl_dev"), "2");
}

TEST(EventExtractor, ConnectionResetNamesPeer) {
  Event e = only_event(
      "socketProgressOpt: Call to recv from 10.20.1.12<40000> failed : Connection reset by peer",
      app_file());
  EXPECT_EQ(e.kind, "nccl.connection_reset");
  EXPECT_EQ(e.field("peer_ip"), "10.20.1.12");
}

const char* kWatchdogTail =
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=401277, OpType=ALLREDUCE, "
    "NumelIn=26214400, NumelOut=26214400, Timeout(ms)=600000) ran for 600568 milliseconds before "
    "timing out.";

TEST(EventExtractor, C10dWatchdogTimeout) {
  Event e = only_event(
      std::string("[rank2]:[E1104 03:27:41.712715704 ProcessGroupNCCL.cpp:616] [Rank 2] ") +
          kWatchdogTail,
      app_file());
  EXPECT_EQ(e.kind, "nccl.timeout");
  EXPECT_EQ(e.pattern, "torch.watchdog_timeout");
  EXPECT_EQ(e.field("rank"), "2");
  EXPECT_EQ(e.field("rank2"), "2");
  EXPECT_EQ(e.field("seq"), "401277");
  EXPECT_EQ(e.field("op"), "ALLREDUCE");
  EXPECT_EQ(e.field("ran_for_ms"), "600568");
}

TEST(EventExtractor, C10dWatchdogTimeoutWithoutRankPrefix) {
  // PyTorch 2.0/2.1 logged without the "[rankN]:" prefix.
  Event e =
      only_event(std::string("[E ProcessGroupNCCL.cpp:828] [Rank 4] ") + kWatchdogTail, app_file());
  EXPECT_EQ(e.kind, "nccl.timeout");
  EXPECT_EQ(e.field("rank"), "");
  EXPECT_EQ(e.field("rank2"), "4");
  EXPECT_EQ(e.field("seq"), "401277");
}

TEST(EventExtractor, WatchdogMessageRepeatedInWhatLineIsNotATimeout) {
  std::vector<Event> events = extract(
      std::string("  what():  [PG ID 0 PG GUID 0(default_pg) Rank 4] Process group watchdog "
                  "thread terminated with exception: [Rank 4] ") +
          kWatchdogTail,
      app_file());
  EXPECT_FALSE(has_kind(events, "nccl.timeout")) << ::testing::PrintToString(kinds_of(events));
}

TEST(EventExtractor, WatchdogMessageRepeatedInTerminatedLineIsNotATimeout) {
  std::vector<Event> events = extract(
      std::string("[rank17]:[E1104 03:27:42.010242200 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG "
                  "GUID 0(default_pg) Rank 17] Process group watchdog thread terminated with "
                  "exception: [Rank 17] ") +
          kWatchdogTail,
      app_file());
  EXPECT_FALSE(has_kind(events, "nccl.timeout")) << ::testing::PrintToString(kinds_of(events));
}

TEST(EventExtractor, WatchdogMessageInOlderTerminatedLineIsNotATimeout) {
  std::vector<Event> events = extract(
      std::string("[rank17]:[E1104 03:27:42.010242200 ProcessGroupNCCL.cpp:1182] [Rank 17] NCCL "
                  "watchdog thread terminated with exception: [Rank 17] ") +
          kWatchdogTail,
      app_file());
  EXPECT_FALSE(has_kind(events, "nccl.timeout")) << ::testing::PrintToString(kinds_of(events));
}

TEST(EventExtractor, NcclWarnTimeout) {
  Event e = only_event("gpu-b01:1234:1300 [3] NCCL WARN Timeout waiting for connection from peer",
                       app_file());
  EXPECT_EQ(e.kind, "nccl.timeout");
  EXPECT_EQ(e.pattern, "nccl.warn_timeout");
  EXPECT_EQ(e.field("host"), "gpu-b01");
  EXPECT_EQ(e.field("nccl_dev"), "3");
}

TEST(EventExtractor, NcclRemoteError) {
  Event e = only_event(
      "[rank5]: torch.distributed.DistBackendError: NCCL error in: "
      "../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a "
      "network error, NCCL version 2.21.5",
      app_file());
  EXPECT_EQ(e.kind, "nccl.remote_error");
  EXPECT_EQ(e.field("rank"), "5");
}

TEST(EventExtractor, TorchrunChildFailed) {
  Event e = only_event(
      "E1102 10:51:09.112000 1627500 torch/distributed/elastic/multiprocessing/api.py:869] "
      "failed (exitcode: -6) local_rank: 0 (pid: 1627520) of binary: /usr/bin/python3",
      app_file());
  EXPECT_EQ(e.kind, "torch.child_failed");
  EXPECT_EQ(e.field("exitcode"), "-6");
  EXPECT_EQ(e.field("local_rank"), "0");
  EXPECT_EQ(e.field("pid"), "1627520");
}

TEST(EventExtractor, TorchrunWorkerSigterm) {
  Event e = only_event(
      "W1104 11:58:13.331210 787207 torch/distributed/elastic/multiprocessing/api.py:897] "
      "Sending process 787283 closing signal SIGTERM",
      app_file());
  EXPECT_EQ(e.kind, "torch.worker_sigterm");
  EXPECT_EQ(e.field("pid"), "787283");
  EXPECT_EQ(e.field("signal_name"), "SIGTERM");
}

// --- CUDA and Python errors (group line_error: one match per line) --------

TEST(EventExtractor, TorchOutOfMemoryIsCudaOomOnly) {
  std::vector<Event> events = extract(
      "[rank13]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 5 "
      "has a total capacity of 79.10 GiB of which 2.12 GiB is free.",
      app_file());
  ASSERT_EQ(events.size(), 1u) << ::testing::PrintToString(kinds_of(events));
  const Event& e = events.front();
  EXPECT_EQ(e.kind, "cuda.oom");
  EXPECT_EQ(e.field("rank"), "13");
  EXPECT_EQ(e.field("exception"), "torch.OutOfMemoryError");
  EXPECT_EQ(e.field("message").substr(0, 21), ". Tried to allocate 3");
}

TEST(EventExtractor, CudaErrorOutOfMemoryIsCudaOom) {
  Event e = only_event("[rank1]: RuntimeError: CUDA error: out of memory", app_file());
  EXPECT_EQ(e.kind, "cuda.oom");
  EXPECT_EQ(e.field("rank"), "1");
}

TEST(EventExtractor, IllegalMemoryAccess) {
  Event e = only_event(
      "[rank6]: RuntimeError: CUDA error: an illegal memory access was encountered", app_file());
  EXPECT_EQ(e.kind, "cuda.illegal_address");
  EXPECT_EQ(e.field("rank"), "6");
}

TEST(EventExtractor, UncorrectableEccCudaError) {
  Event e = only_event("[rank14]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
                       app_file());
  EXPECT_EQ(e.kind, "cuda.ecc_error");
  EXPECT_EQ(e.field("rank"), "14");
}

TEST(EventExtractor, DeviceSideAssert) {
  Event e =
      only_event("[rank0]: RuntimeError: CUDA error: device-side assert triggered", app_file());
  EXPECT_EQ(e.kind, "cuda.device_assert");
  EXPECT_EQ(e.field("rank"), "0");
}

TEST(EventExtractor, PythonExceptionWithRank) {
  Event e = only_event("[rank3]: ValueError: sequence 18211 has 8193 tokens", app_file());
  EXPECT_EQ(e.kind, "app.exception");
  EXPECT_EQ(e.field("exception"), "ValueError");
  EXPECT_EQ(e.field("rank"), "3");
  EXPECT_EQ(e.field("message"), "sequence 18211 has 8193 tokens");
}

TEST(EventExtractor, PythonExceptionWithoutRank) {
  Event e = only_event("FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/x.json'",
                       app_file());
  EXPECT_EQ(e.kind, "app.exception");
  EXPECT_EQ(e.field("exception"), "FileNotFoundError");
  EXPECT_EQ(e.field("rank"), "");
}

TEST(EventExtractor, NcclCommunicatorAbortedIsNotAnAppException) {
  std::vector<Event> events =
      extract("RuntimeError: NCCL communicator was aborted on rank 3", app_file());
  EXPECT_FALSE(has_kind(events, "app.exception")) << ::testing::PrintToString(kinds_of(events));
  EXPECT_TRUE(has_kind(events, "nccl.comm_aborted")) << ::testing::PrintToString(kinds_of(events));
}

TEST(EventExtractor, CommunicationExceptionIsNotAnAppException) {
  // line_error: python.comm_exception comes before python.exception.
  std::vector<Event> events = extract(
      "[rank4]: torch.distributed.DistStoreError: Socket Timeout while waiting", app_file());
  ASSERT_EQ(events.size(), 1u) << ::testing::PrintToString(kinds_of(events));
  EXPECT_EQ(events.front().kind, "nccl.comm_error");
  EXPECT_EQ(events.front().field("exception"), "torch.distributed.DistStoreError");
  EXPECT_EQ(events.front().field("rank"), "4");
}

TEST(EventExtractor, ConnectionClosedByPeerIsCommErrorAndConnectionClosed) {
  std::vector<Event> events = extract(
      "[rank4]: torch.distributed.DistNetworkError: Connection closed by remote peer", app_file());
  EXPECT_FALSE(has_kind(events, "app.exception")) << ::testing::PrintToString(kinds_of(events));
  EXPECT_TRUE(has_kind(events, "nccl.connection_closed"));
  EXPECT_TRUE(has_kind(events, "nccl.comm_error"));
}

TEST(EventExtractor, TracebackHeaderIsNotAnEvent) {
  EXPECT_TRUE(extract("Traceback (most recent call last):", app_file()).empty());
  EXPECT_TRUE(extract("  File \"/opt/train/train.py\", line 412, in <module>", app_file()).empty());
}

// --- host memory ------------------------------------------------------------

TEST(EventExtractor, KernelOomKill) {
  Event e = only_event(
      "Nov  7 02:14:09 gpu-g02 kernel: [971432.884612] Out of memory: Killed process 301184 "
      "(python3) total-vm:2103318164kB, anon-rss:1873204112kB, file-rss:120112kB, "
      "shmem-rss:8388608kB, UID:1043 pgtables:3741232kB oom_score_adj:0",
      kernel_file());
  EXPECT_EQ(e.kind, "host.oom_kill");
  EXPECT_EQ(e.field("pid"), "301184");
  EXPECT_EQ(e.field("proc"), "python3");
  EXPECT_EQ(e.field("cgroup"), "");
}

TEST(EventExtractor, CgroupOomKillIsItsOwnKind) {
  // The memory cgroup's kill (the job's own limit) is not the host-wide OOM
  // killer: one event, of its own kind.
  Event e = only_event(
      "[Sat Nov  7 02:14:09 2026] Memory cgroup out of memory: Killed process 301184 (python3) "
      "total-vm:2103318164kB",
      kernel_file());
  EXPECT_EQ(e.kind, "host.cgroup_oom_kill");
  EXPECT_EQ(e.field("pid"), "301184");
}

const char* kOomContext =
    "[Sat Nov  7 02:14:09 2026] "
    "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,"
    "task_memcg=/system.slice/slurmstepd.scope/job_48301/step_0/user/"
    "task_0,task=python3,pid=301184,uid=1043";

TEST(EventExtractor, OomKillContextNamesJobTaskAndPid) {
  Event e = only_event(kOomContext, kernel_file());
  EXPECT_EQ(e.kind, "host.oom_context");
  EXPECT_EQ(e.field("constraint"), "CONSTRAINT_NONE");
  EXPECT_EQ(e.field("job"), "48301");
  EXPECT_EQ(e.field("proc"), "python3");
  EXPECT_EQ(e.field("pid"), "301184");
}

TEST(EventExtractor, OomKillContextCapturesGlobalOomAndMemcg) {
  Event e = only_event(kOomContext, kernel_file());
  EXPECT_EQ(e.field("global"), "global_oom");
  EXPECT_EQ(e.field("memcg"), "/system.slice/slurmstepd.scope/job_48301/step_0/user/task_0");
}

TEST(EventExtractor, SlurmCgroupOomKillEvent) {
  Event e = only_event(
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=48301.0. Some of your processes "
      "may have been killed by the cgroup out-of-memory handler.",
      job_output_file());
  EXPECT_EQ(e.kind, "slurm.oom_kill");
  EXPECT_EQ(e.field("count"), "1");
  EXPECT_EQ(e.field("job"), "48301");
}

// --- Slurm ------------------------------------------------------------------

TEST(EventExtractor, SlurmTimeLimitCancelTakesTimeFromMessage) {
  Event e = only_event(
      "slurmstepd: error: *** JOB 48277 ON gpu-f01 CANCELLED AT 2026-11-06T16:00:41 DUE TO TIME "
      "LIMIT ***",
      job_output_file());
  EXPECT_EQ(e.kind, "slurm.time_limit");
  EXPECT_EQ(e.pattern, "slurm.cancel_time_limit");
  EXPECT_EQ(e.field("job"), "48277");
  EXPECT_EQ(e.field("on_node"), "gpu-f01");
  EXPECT_EQ(e.field("at"), "2026-11-06T16:00:41");
  EXPECT_EQ(time_of(e), "2026-11-06T16:00:41Z");
  EXPECT_FALSE(e.time_inferred);
}

TEST(EventExtractor, SlurmCancelTimeInMessageIsLocalToTheJobZone) {
  TimeContext tc;
  tc.zone = find_zone("Europe/Berlin");
  Event e = only_event(
      "slurmstepd: error: *** JOB 48277 ON gpu-f01 CANCELLED AT 2026-11-06T16:00:41 DUE TO TIME "
      "LIMIT ***",
      job_output_file(), tc);
  EXPECT_EQ(time_of(e), "2026-11-06T15:00:41Z");
}

TEST(EventExtractor, SlurmStepCancelDueToNodeFailure) {
  Event e = only_event(
      "slurmstepd: error: *** STEP 48350.0 ON gpu-m01 CANCELLED AT 2026-11-09T13:18:06 DUE TO "
      "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
      job_output_file());
  EXPECT_EQ(e.kind, "slurm.node_failure_cancel");
  EXPECT_EQ(e.field("job"), "48350");
  EXPECT_EQ(e.field("on_node"), "gpu-m01");
  EXPECT_EQ(time_of(e), "2026-11-09T13:18:06Z");
}

TEST(EventExtractor, SlurmPlainCancel) {
  Event e = only_event("*** JOB 1 ON n1 CANCELLED AT 2026-11-06T16:00:41 ***", job_output_file());
  EXPECT_EQ(e.kind, "slurm.cancelled");
  EXPECT_EQ(e.pattern, "slurm.cancel");
  EXPECT_EQ(e.field("job"), "1");
  EXPECT_EQ(e.field("on_node"), "n1");
  EXPECT_EQ(time_of(e), "2026-11-06T16:00:41Z");
}

TEST(EventExtractor, SlurmdLineTimeWinsOverMessageTime) {
  Event e = only_event(
      "[2026-11-06T16:00:41.218] [48277.batch] error: *** JOB 48277 ON gpu-f01 CANCELLED AT "
      "2026-11-06T16:00:40 DUE TO TIME LIMIT ***",
      {"nodes/gpu-f01/slurmd.log", "nodes/gpu-f01/slurmd.log", "gpu-f01", "slurmd"});
  EXPECT_EQ(e.kind, "slurm.time_limit");
  EXPECT_EQ(time_of(e), "2026-11-06T16:00:41.218Z");
}

TEST(EventExtractor, SlurmctldNodeNotResponding) {
  Event e =
      only_event("[2026-11-09T13:15:00.420] error: Nodes gpu-m03 not responding", slurmctld_file());
  EXPECT_EQ(e.kind, "slurm.node_not_responding");
  EXPECT_EQ(e.field("node"), "gpu-m03");
  EXPECT_EQ(e.field("down"), "");
  EXPECT_EQ(time_of(e), "2026-11-09T13:15:00.42Z");
}

TEST(EventExtractor, SlurmctldNodeNotRespondingSettingDown) {
  Event e =
      only_event("[2026-11-09T13:18:06.520] error: Nodes gpu-m03 not responding, setting DOWN",
                 slurmctld_file());
  EXPECT_EQ(e.field("node"), "gpu-m03");
  EXPECT_EQ(e.field("down"), ", setting DOWN");
}

TEST(EventExtractor, SlurmctldKillOnFailedNode) {
  Event e = only_event("[2026-11-09T13:18:06.530] Killing JobId=48350 on failed node gpu-m03",
                       slurmctld_file());
  EXPECT_EQ(e.kind, "slurm.node_failure");
  EXPECT_EQ(e.field("job"), "48350");
  EXPECT_EQ(e.field("node"), "gpu-m03");
}

TEST(EventExtractor, SlurmctldTimeLimitExhausted) {
  Event e = only_event("[2026-11-06T16:00:41.118] Time limit exhausted for JobId=48277",
                       slurmctld_file());
  EXPECT_EQ(e.kind, "slurm.time_limit");
  EXPECT_EQ(e.pattern, "slurmctld.time_limit");
  EXPECT_EQ(e.field("job"), "48277");
  EXPECT_EQ(time_of(e), "2026-11-06T16:00:41.118Z");
}

TEST(EventExtractor, SlurmctldPatternsDoNotApplyToAppFiles) {
  EXPECT_TRUE(extract("Time limit exhausted for JobId=48277", app_file()).empty());
}

TEST(EventExtractor, SrunTaskExitWithCode) {
  Event e = only_event("srun: error: gpu-a01: task 0: Exited with exit code 1", job_output_file());
  EXPECT_EQ(e.kind, "slurm.task_exit");
  EXPECT_EQ(e.field("node"), "gpu-a01");
  EXPECT_EQ(e.field("task"), "0");
  EXPECT_EQ(e.field("exit_code"), "1");
}

TEST(EventExtractor, SrunTaskTerminatedHasNoExitCode) {
  Event e = only_event("srun: error: gpu-f02: task 1: Terminated", job_output_file());
  EXPECT_EQ(e.kind, "slurm.task_exit");
  EXPECT_EQ(e.field("node"), "gpu-f02");
  EXPECT_EQ(e.field("how"), "Terminated");
  EXPECT_EQ(e.field("exit_code"), "");
}

TEST(EventExtractor, SrunNodeFailure) {
  Event e = only_event("srun: error: Node failure on gpu-m03", job_output_file());
  EXPECT_EQ(e.kind, "slurm.node_failure");
  EXPECT_EQ(e.pattern, "srun.node_failure");
  EXPECT_EQ(e.field("node"), "gpu-m03");
}

// --- PCIe, memory, network, storage ---------------------------------------

TEST(EventExtractor, PcieAerCorrectedIsInfoKind) {
  Event e = only_event(
      "Nov  8 05:11:24 gpu-n02 kernel: [970048.500000] pcieport 0000:80:01.0: AER: Correctable "
      "error message received from 0000:81:00.0",
      kernel_file());
  EXPECT_EQ(e.kind, "pcie.aer_corrected");
}

TEST(EventExtractor, PcieAerUncorrectedFatal) {
  Event e = only_event(
      "Nov  8 05:11:24 gpu-n02 kernel: [970048.500000] pcieport 0000:80:01.0: AER: Uncorrected "
      "(Fatal) error received: 0000:81:00.0",
      kernel_file());
  EXPECT_EQ(e.kind, "pcie.aer_uncorrected");
  EXPECT_EQ(e.field("severity"), "Fatal");
}

TEST(EventExtractor, PcieBusErrorUncorrectedNonFatal) {
  Event e = only_event(
      "[970048.500020] nvidia 0000:81:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), "
      "type=Transaction Layer, (Requester ID)",
      kernel_file());
  EXPECT_EQ(e.kind, "pcie.aer_uncorrected");
  EXPECT_EQ(e.field("severity2"), "Non-Fatal");
}

TEST(EventExtractor, PcieBusErrorCapturesDeviceAfterSyslogPrefix) {
  Event e = only_event(
      "Nov  8 05:11:24 gpu-n02 kernel: [970048.500020] nvidia 0000:81:00.0: PCIe Bus Error: "
      "severity=Correctable, type=Physical Layer, (Receiver ID)",
      kernel_file());
  EXPECT_EQ(e.kind, "pcie.aer_corrected");
  EXPECT_EQ(e.field("pci"), "0000:81:00.0");
}

TEST(EventExtractor, PcieAerUncorrectedCapturesDeviceAfterSyslogPrefix) {
  Event e = only_event(
      "Nov  8 05:11:24 gpu-n02 kernel: [970048.500020] nvidia 0000:81:00.0: PCIe Bus Error: "
      "severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)",
      kernel_file());
  EXPECT_EQ(e.kind, "pcie.aer_uncorrected");
  EXPECT_EQ(e.field("pci"), "0000:81:00.0");
}

TEST(EventExtractor, Mlx5LinkDown) {
  Event e = only_event(
      "Nov  5 19:03:27 gpu-e03 kernel: [970441.004410] mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 "
      "Link DOWN",
      kernel_file());
  EXPECT_EQ(e.kind, "ib.link_down");
  EXPECT_EQ(e.field("hca"), "mlx5_2");
  EXPECT_EQ(e.field("port"), "1");
  EXPECT_EQ(e.field("pci"), "0000:4b:00.0");
}

TEST(EventExtractor, Mlx5LinkActiveIsLinkUp) {
  Event e = only_event("[   17.402000] mlx5_core 0000:4b:00.0 mlx5_0: Port: 1 Link ACTIVE",
                       kernel_file());
  EXPECT_EQ(e.kind, "ib.link_up");
  EXPECT_EQ(e.field("hca"), "mlx5_0");
}

TEST(EventExtractor, EdacUncorrectable) {
  Event e = only_event(
      "Nov  8 05:11:24 gpu-n02 kernel: [970048.5] EDAC MC0: 1 UE memory read error on "
      "CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x12345 offset:0x0 grain:32)",
      kernel_file());
  EXPECT_EQ(e.kind, "host.edac_ue");
  EXPECT_EQ(e.field("mc"), "MC0");
  EXPECT_EQ(e.field("count"), "1");
}

TEST(EventExtractor, EdacCorrectable) {
  Event e = only_event(
      "Nov  8 05:11:24 gpu-n02 kernel: [970048.5] EDAC MC1: 3 CE memory read error on "
      "CPU_SrcID#1_Ha#0_Chan#0_DIMM#1 (channel:0 slot:1 page:0x4321 offset:0x0 grain:32)",
      kernel_file());
  EXPECT_EQ(e.kind, "host.edac_ce");
  EXPECT_EQ(e.field("mc"), "MC1");
  EXPECT_EQ(e.field("count"), "3");
}

TEST(EventExtractor, NoSpaceLeftInAppIsStorageNoSpace) {
  Event e = only_event(
      "[rank0]: OSError: [Errno 28] No space left on device: '/checkpoints/step_12000/model.pt'",
      app_file());
  EXPECT_EQ(e.kind, "storage.no_space");
  EXPECT_EQ(e.field("rank"), "0");
}

TEST(EventExtractor, NoSpaceLeftInKernelLogIsOneEvent) {
  Event e = only_event(
      "Nov  2 10:41:07 gpu-a02 kernel: [86123.5] EXT4-fs warning (device nvme0n1p1): "
      "ext4_dx_add_entry: Directory index full! No space left on device",
      kernel_file());
  EXPECT_EQ(e.kind, "storage.no_space");
}

TEST(EventExtractor, LustreError) {
  Event e = only_event(
      "Nov  2 10:41:07 gpu-a02 kernel: LustreError: 11-0: scratch-OST0003-osc-ffff8f2c: "
      "operation ost_write to node 10.1.1.5@o2ib failed: rc = -107",
      kernel_file());
  EXPECT_EQ(e.kind, "storage.lustre_error");
  EXPECT_EQ(e.field("detail").substr(0, 30), "11-0: scratch-OST0003-osc-ffff");
}

// --- source filters and noise ----------------------------------------------

TEST(EventExtractor, XidLineInAppFileIsNotAnXid) {
  std::vector<Event> events = extract(
      "NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.",
      app_file());
  EXPECT_FALSE(has_kind(events, "xid")) << ::testing::PrintToString(kinds_of(events));
  EXPECT_FALSE(has_kind(events, "gpu.fallen_off_bus"));
}

TEST(EventExtractor, PythonExceptionInKernelFileIsNotAnAppException) {
  std::vector<Event> events = extract("ValueError: sequence 18211 has 8193 tokens", kernel_file());
  EXPECT_FALSE(has_kind(events, "app.exception"));
}

TEST(EventExtractor, RoutineSyslogNoiseYieldsNoEvent) {
  for (const char* line : {
           "2026-10-28T22:57:25.813781+00:00 a100-n11 CRON[467944]: (root) CMD (command -v "
           "debian-sa1 > /dev/null && debian-sa1 1 1)",
           "2026-10-29T00:05:48.639557+00:00 a100-n11 systemd[1]: Starting "
           "sysstat-collect.service - system activity accounting tool...",
           "2026-10-29T00:57:30.243839+00:00 a100-n12 systemd-logind[1893]: Session 2250 logged "
           "out. Waiting for processes to exit.",
           "[    3.811000] mlx5_core 0000:4b:00.0: firmware version: 28.42.1000",
       }) {
    EXPECT_TRUE(extract(line, syslog_file()).empty()) << line;
    EXPECT_TRUE(extract(line, kernel_file()).empty()) << line;
  }
}

TEST(EventExtractor, RoutineTrainingLogYieldsNoEvent) {
  EXPECT_TRUE(extract("2026-11-04 11:05:20,116 INFO [train.py:412] step 1000 | loss 2.8948 | lr "
                      "3.000e-04 | grad_norm 0.709 | 383700 tok/s",
                      app_file())
                  .empty());
  EXPECT_TRUE(extract("gpu-p02:2081166:2081166 [7] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB "
                      "[1]mlx5_1:1/IB ; OOB ibp26s0:10.20.1.12<0>",
                      app_file())
                  .empty());
}

TEST(EventExtractor, EventTextIsCappedButStillMatches) {
  std::string line = "[rank3]: ValueError: " + std::string(5000, 'x');
  Event e = only_event(line, app_file());
  EXPECT_EQ(e.kind, "app.exception");
  EXPECT_EQ(e.text.size(), kMaxEventText);
  EXPECT_LE(e.body().size(), kMaxEventText);
}

// --- scan_file ----------------------------------------------------------------

class ScanFileTest : public ::testing::Test {
 protected:
  ScratchDirectory dir_{"scan"};
};

std::string noise_line(int i) {
  return "2026-11-02T10:" + std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60) +
         ":00.000000+00:00 gpu-a02 systemd[1]: Started session-" + std::to_string(i) +
         ".scope - Session " + std::to_string(i) + " of User monitor.";
}

TEST_F(ScanFileTest, FindsMatchingLinesAmongNoiseWithTheirLineNumbers) {
  const fs::path path = dir_ / "syslog";
  const int total = 30000;  // > 2 MB: several read chunks
  const std::vector<int> hits = {1, 15001, total};
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 1; i <= total; ++i) {
      if (std::find(hits.begin(), hits.end(), i) != hits.end())
        out << "2026-11-02T10:41:07.512004+00:00 gpu-a02 kernel: NVRM: Xid (PCI:0000:5d:00): "
            << (i == 1       ? 13
                : i == total ? 48
                             : 79)
            << ", pid='<unknown>', name=<unknown>, x";
      else
        out << noise_line(i);
      if (i != total) out << '\n';  // last line without '\n'
    }
  }
  ASSERT_GT(fs::file_size(path), 2u << 20);

  EventExtractor x(builtin_rules());
  SourceFile file{path, "nodes/gpu-a02/syslog", "gpu-a02", "syslog"};
  std::uint64_t seq = 100;
  std::vector<Event> events;
  ExtractStats st = x.scan_file(file, TimeContext{}, seq, [&](Event&& e) { events.push_back(e); });

  EXPECT_EQ(st.read.error, "");
  EXPECT_EQ(st.read.lines, static_cast<std::uint64_t>(total));
  EXPECT_EQ(st.candidate_lines, 3u);
  EXPECT_EQ(st.events, 3u);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].line, 1u);
  EXPECT_EQ(events[1].line, 15001u);
  EXPECT_EQ(events[2].line, static_cast<std::uint64_t>(total));
  EXPECT_EQ(events[0].field("code"), "13");
  EXPECT_EQ(events[1].field("code"), "79");
  EXPECT_EQ(events[2].field("code"), "48");
  EXPECT_EQ(events[0].seq, 101u);
  EXPECT_EQ(events[2].seq, 103u);
  EXPECT_EQ(seq, 103u);
  EXPECT_EQ(events[1].source, "nodes/gpu-a02/syslog");
  EXPECT_EQ(events[1].node, "gpu-a02");
  ASSERT_TRUE(events[1].time.has_value());
  EXPECT_EQ(format_time(*events[1].time), "2026-11-02T10:41:07.512004Z");
  EXPECT_EQ(events[2].text.back(), 'x');  // no '\n' in the text
}

TEST_F(ScanFileTest, SourceKindOfTheFileSelectsThePatterns) {
  const fs::path path = dir_ / "app.log";
  {
    std::ofstream out(path, std::ios::binary);
    out << "NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, x\n";
    out << "[rank3]: ValueError: bad\n";
  }
  EventExtractor x(builtin_rules());
  std::uint64_t seq = 0;
  std::vector<Event> events;
  x.scan_file({path, "nodes/n1/app.log", "n1", "app"}, TimeContext{}, seq,
              [&](Event&& e) { events.push_back(e); });
  ASSERT_EQ(events.size(), 1u) << ::testing::PrintToString(kinds_of(events));
  EXPECT_EQ(events[0].kind, "app.exception");
  EXPECT_EQ(events[0].line, 2u);
}

TEST_F(ScanFileTest, LineWithoutTimeRecordsThePreviousLineTime) {
  const fs::path path = dir_ / "app.log";
  {
    std::ofstream out(path, std::ios::binary);
    out << "2026-11-02 08:04:13,168 INFO [train.py:412] step 1000\n";
    out << "Traceback (most recent call last):\n";
    out << "  File \"/opt/train.py\", line 3, in <module>\n";
    out << "ValueError: sequence 18211 has 8193 tokens\n";
  }
  EventExtractor x(builtin_rules());
  std::uint64_t seq = 0;
  std::vector<Event> events;
  x.scan_file({path, "nodes/n1/app.log", "n1", "app"}, TimeContext{}, seq,
              [&](Event&& e) { events.push_back(e); });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].line, 4u);
  EXPECT_FALSE(events[0].time.has_value());
  EXPECT_EQ(events[0].field("prev_line_time"),
            std::to_string(*parse_iso8601_utc("2026-11-02T08:04:13.168Z")));
}

TEST_F(ScanFileTest, MissingFileReportsErrorAndNoEvents) {
  EventExtractor x(builtin_rules());
  std::uint64_t seq = 0;
  int n = 0;
  ExtractStats st = x.scan_file({dir_ / "nope.log", "nodes/n1/nope.log", "n1", "kernel"},
                                TimeContext{}, seq, [&](Event&&) { ++n; });
  EXPECT_FALSE(st.read.opened);
  EXPECT_NE(st.read.error, "");
  EXPECT_EQ(n, 0);
}

}  // namespace
}  // namespace ff
