// First-fault reasoning: time as intervals, causal chains on one node, and
// the provenance of kernel evidence. Each principle on a small synthetic
// incident (the example incidents show them on real logs).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/behaviour/incident_builder.h"

using nlohmann::json;
using namespace fftest;

namespace {

const json* candidate(const json& d, const std::string& event, const std::string& node) {
  for (const auto& c : d["candidates"])
    if (c["event"] == event && c["node"] == node) return &c;
  return nullptr;
}

bool ignored_with(const json& d, const std::string& kind, const std::string& node,
                  const std::string& reason_part) {
  for (const auto& i : d["ignored"])
    if (i["kind"] == kind && i["node"] == node &&
        i["reason"].get<std::string>().find(reason_part) != std::string::npos)
      return true;
  return false;
}

// A kernel log for a node that covers the whole job (first and last line).
std::string kernel_log(const std::string& node, const std::string& middle = "") {
  return "Nov  2 09:58:00 " + node + " kernel: [900.000000] EXT4-fs (nvme0n1p2): re-mounted\n" +
         middle + "Nov  2 11:01:00 " + node +
         " kernel: [4600.000000] docker0: port 2(veth1) entered disabled state\n";
}

// PyTorch < 2.4 prints the watchdog line with a glog prefix but no time.
std::string untimed_watchdog(int rank, long ran_for_ms) {
  return "[E ProcessGroupNCCL.cpp:475] [Rank " + std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, "
         "NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for " +
         std::to_string(ran_for_ms) + " milliseconds before timing out.\n";
}

std::string step_line(const std::string& time, int step) {
  return "2026-11-02T" + time + "Z iteration " + std::to_string(step) + " | lm loss: 2.31\n";
}

}  // namespace

// --- time as intervals --------------------------------------------------

TEST(Intervals, FaultInsideAnUntimedSymptomsIntervalIsTheRootCause) {
  // Last step line 10:10:00; the GPU falls off the bus 10:10:30; the
  // watchdog fires 30 min later, printed without a time; the job ends
  // 10:41. Taking the watchdog's time from the step line before it would put
  // the onset at 09:40 and make the Xid look late.
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("10:10:30", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/app.log", step_line("10:09:00", 499) + step_line("10:10:00", 500) +
                                    untimed_watchdog(0, 1800043) + untimed_watchdog(1, 1800051));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["sub_domain"], "gpu.fallen_off_bus");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  // The watchdog lines carry their interval, and the onset is one too.
  bool interval_shown = false;
  for (const auto& e : d["evidence"])
    if (e["event"] == "nccl.timeout" && e.value("time_inferred", false))
      interval_shown = e["earliest"] == "2026-11-02T10:10:00Z" && e["latest"].is_string();
  EXPECT_TRUE(interval_shown) << d["evidence"];
  EXPECT_TRUE(d["failure_onset_earliest"].is_string());
  EXPECT_TRUE(d["failure_onset_latest"].is_string());
  EXPECT_LT(d["failure_onset_earliest"].get<std::string>(),
            d["failure_onset_latest"].get<std::string>());
  auto text = run_firstfault("analyze " + inc.arg() + " --color never");
  EXPECT_NE(text.out.find("(between 2026-11-02T10:10:00Z .. "), std::string::npos) << text.out;
}

TEST(Intervals, NextTimedLineBoundsTheInterval) {
  // The same watchdog, but a timed line right after it: the collective began
  // by 10:10:10, so an Xid two minutes after that is provably late.
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("10:12:10", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/app.log",
            step_line("10:10:00", 500) + untimed_watchdog(0, 1800000) + step_line("10:40:10", 501));
  json d = analyze(inc);
  const json* c = candidate(d, "xid", "n2");
  ASSERT_NE(c, nullptr) << d["candidates"];
  EXPECT_EQ((*c)["status"], "late");
  EXPECT_NE(d["verdict"], "attributed");
}

TEST(Intervals, FaultAfterATimedFailureIsLate) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("10:45:00", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08") + watchdog_line(1, "10:51:08"));
  json d = analyze(inc);
  const json* c = candidate(d, "xid", "n2");
  ASSERT_NE(c, nullptr) << d["candidates"];
  EXPECT_EQ((*c)["status"], "late");
  EXPECT_NE(d["verdict"], "attributed");  // nodes without kernel logs stay candidates
}

// --- provenance -------------------------------------------------------------

TEST(Provenance, ForgedKernelTextInSyslogIsNotEvidence) {
  // `logger -t kernel 'NVRM: Xid ...'` on n2; n2's kernel log covers the
  // job and has no such line. The job's real failure is its own exception.
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n2/kernel.log", kernel_log("n2"));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("10:30:00", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/kernel.log", kernel_log("n1"));
  inc.write("nodes/n1/app.log",
            "[rank0]: ValueError: shapes (4,3) and (2,2) not aligned\n"
            "E1102 10:31:00.000000 1 api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 5) of "
            "binary: python\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["domain"], "application");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n1"});
  EXPECT_TRUE(ignored_with(d, "xid", "n2", "not kernel evidence")) << d["ignored"];
  bool said = false;
  for (const auto& r : d["reasoning"])
    said |= r.get<std::string>().find("not in n2's kernel log") != std::string::npos;
  EXPECT_TRUE(said) << d["reasoning"];
}

TEST(Provenance, AQuietKernelJournalReadOverTheWindowVouchesForIt) {
  // n2's kernel journal logged nothing during the job (no kernel file in
  // the bundle), but its collector read it over the whole window and says
  // so in coverage: the Xid that only syslog has is someone's `logger` line.
  TempIncident inc;
  inc.write("job.json",
            job_json("FAILED", R"(,"coverage":[{"collector":"kernel","node":"n2","status":"empty",
              "detail":"journal read, no line in the window",
              "covers_from":"2026-11-02T09:55:00Z","covers_until":"2026-11-02T11:05:00Z"}])"));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08"));
  json d = analyze(inc);
  EXPECT_NE(d["verdict"], "attributed") << d["root_causes"];
  EXPECT_EQ(root_nodes(d).count("n2"), 0u) << d["root_causes"];
  EXPECT_TRUE(ignored_with(d, "xid", "n2", "not kernel evidence")) << d["ignored"];
}

TEST(Provenance, AKernelJournalReadOverPartOfTheWindowVouchesForThatPartOnly) {
  // The journal begins after the Xid's time (rotated, or journald started
  // late): it cannot say the kernel did not log it.
  TempIncident inc;
  inc.write("job.json",
            job_json("FAILED", R"(,"coverage":[{"collector":"kernel","node":"n2","status":"empty",
              "detail":"journal read","covers_from":"2026-11-02T10:45:00Z",
              "covers_until":"2026-11-02T11:05:00Z"}])"));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08"));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["root_causes"][0]["trusted"], false);
}

TEST(Provenance, KernelTextInSyslogWithoutAKernelLogCountsButIsUntrusted) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08"));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["root_causes"][0]["origin"], "syslog");
  EXPECT_EQ(d["root_causes"][0]["trusted"], false);
  EXPECT_NE(d["root_causes"][0]["provenance"].get<std::string>().find("syslog"), std::string::npos);
}

TEST(Provenance, TheKernelLogsOwnCopyIsTrusted) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  std::string xid = xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus.");
  inc.write("nodes/n2/kernel.log", kernel_log("n2", xid));
  inc.write("nodes/n2/syslog", noise(3) + xid);
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08"));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["root_causes"][0]["origin"], "kernel");
  EXPECT_EQ(d["root_causes"][0]["trusted"], true);
}

TEST(Provenance, HardwareErrorPrintedByTheJobAloneIsNotCertain) {
  // The job prints a CUDA ECC error naming n2's host; n2's kernel log covers
  // the time and shows no GPU fault: the claim is unconfirmed, never a
  // certain hardware verdict.
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n1/kernel.log", kernel_log("n1"));
  inc.write("nodes/n2/kernel.log", kernel_log("n2"));
  inc.write("app/slurm-77.out",
            "n2:5:9 [0] include/alloc.h:99 NCCL WARN Cuda failure 'uncorrectable ECC error "
            "encountered'\n");
  json d = analyze(inc);
  EXPECT_FALSE(d["verdict"] == "attributed" && d["domain"] == "gpu") << d["summary"];
}

// --- chains -------------------------------------------------------------------

TEST(Chains, LustreEvictionExplainsTheApplicationsIOError) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n2/kernel.log",
            kernel_log("n2",
                       "Nov  2 10:30:02 n2 kernel: [3000.1] LustreError: 167-0: "
                       "scratch-OST0004-osc-ffff8e: This client was evicted by "
                       "scratch-OST0004; in progress operations using this service will "
                       "fail.\n"));
  inc.write("nodes/n1/kernel.log", kernel_log("n1"));
  inc.write("nodes/n2/app.log",
            "[rank2]: OSError: [Errno 5] Input/output error: '/scratch/run/ckpt/step_400.pt'\n"
            "E1102 10:30:40.000000 1 api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 7) of "
            "binary: python\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["domain"], "storage");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(Chains, KernelPanicExplainsTheSchedulersNodeFailure) {
  TempIncident inc;
  inc.write("job.json", job_json("NODE_FAIL"));
  inc.write("nodes/n2/kernel.log",
            kernel_log("n2",
                       "Nov  2 10:20:00 n2 kernel: [2000.1] mce: [Hardware Error]: CPU 12: "
                       "Machine Check Exception: 5 Bank 7: be00000000800400\n"
                       "Nov  2 10:20:00 n2 kernel: [2000.2] Kernel panic - not syncing: "
                       "Fatal machine check\n"));
  inc.write("nodes/n1/kernel.log", kernel_log("n1"));
  inc.write("cluster/slurmctld.log",
            "[2026-11-02T10:25:41.000] error: Nodes n2 not responding, setting DOWN\n"
            "[2026-11-02T10:25:41.100] Killing JobId=77 on failed node n2\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["domain"], "host");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(Chains, FatalAerAndXid79AreOneFaultNamingTheGpuAndThePort) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n2/kernel.log",
            kernel_log("n2",
                       "Nov  2 10:41:05 n2 kernel: [3700.1] pcieport 0000:29:01.0: AER: "
                       "Uncorrected (Fatal) error received: 0000:29:01.0\n"
                       "Nov  2 10:41:05 n2 kernel: [3700.2] pcieport 0000:29:01.0: PCIe Bus "
                       "Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver "
                       "ID)\n" +
                           xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus.")));
  inc.write("nodes/n1/kernel.log", kernel_log("n1"));
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08"));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["sub_domain"], "gpu.fallen_off_bus");
  EXPECT_EQ(d["root_causes"][0]["device"], "00000000:2A:00.0");
  EXPECT_EQ(d["root_causes"][0]["related_devices"], json::array({"00000000:29:01.0"}));
}

TEST(Chains, CgroupOomKillAndSlurmstepdReportAreOneFaultOnTheKilledTasksNode) {
  // slurmstepd's line in the job output names no node; the kernel's memcg
  // kill on n2 and srun's task report place it.
  TempIncident inc;
  inc.write("job.json", job_json("OUT_OF_MEMORY"));
  inc.write("nodes/n2/kernel.log",
            kernel_log("n2",
                       "Nov  2 10:33:00 n2 kernel: [3300.1] Memory cgroup out of memory: "
                       "Killed process 4242 (python) total-vm:93012340kB, "
                       "anon-rss:62571412kB, file-rss:0kB, shmem-rss:0kB\n"));
  inc.write("nodes/n1/kernel.log", kernel_log("n1"));
  inc.write("app/slurm-77.out",
            "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=77.0. Some of your "
            "processes may have been killed by the cgroup out-of-memory handler.\n"
            "srun: error: n2: task 2: Out Of Memory\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["sub_domain"], "host.cgroup_oom");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(Chains, AGpuThatFellOffStaysLostUntilTheTimeLimit) {
  // The GPU falls off the bus, the job hangs without a watchdog until its
  // time limit; a health check keeps failing to reach that GPU every 10 min.
  // One fault, the GPU: neither the later health checks nor the time limit.
  TempIncident inc;
  inc.write("job.json", job_json("TIMEOUT"));
  std::string checks;
  for (int m = 20; m <= 50; m += 10)
    checks += "Nov  2 10:" + std::to_string(m) +
              ":46 n2 node-health[7106]: nvidia-smi: Unable to determine the device handle for "
              "GPU 0000:2A:00.0: Unknown Error\n";
  std::string xid = xid_line("10:11:07", "n2", "2a", 79, "GPU has fallen off the bus.");
  inc.write("nodes/n2/kernel.log", kernel_log("n2", xid));
  inc.write("nodes/n2/syslog", noise(3) + xid + checks);
  inc.write("nodes/n1/kernel.log", kernel_log("n1"));
  inc.write("app/slurm-77.out",
            "slurmstepd: error: *** JOB 77 ON n1 CANCELLED AT 2026-11-02T11:00:00 DUE TO TIME "
            "LIMIT ***\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["sub_domain"], "gpu.fallen_off_bus");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

// --- survived faults and common causes -----------------------------------------

TEST(Decisions, FaultsTheJobOutlivedYieldToTheOneItDidNot) {
  // An Xid 79 on n1 two hours before the failure (the job ran on), then an
  // Xid 48 on n2 right before the watchdog: n2.
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n1/syslog",
            noise(3) + xid_line("10:05:00", "n1", "18", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n2/syslog", noise(3) + xid_line("10:48:00", "n2", "2a", 48,
                                                   "An uncorrectable double bit error (DBE)."));
  inc.write("nodes/n1/app.log", watchdog_line(1, "10:58:20"));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  const json* old = candidate(d, "xid", "n1");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ((*old)["status"], "explained");
}

TEST(Decisions, TheSameConfigurationFaultOnEveryNodeIsOneCause) {
  // Fabric Manager does not match the driver on both nodes (one image):
  // one cause on both nodes, not two independent faults.
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  for (const std::string n : {"n1", "n2"})
    inc.write("nodes/" + n + "/fabricmanager.log",
              "[Nov 02 2026 09:58:1" + std::string(n == "n1" ? "1" : "4") +
                  "] [ERROR] [tid 2210] fabric manager NVIDIA GPU driver interface version "
                  "550.90.07 don't match with driver version 550.127.05. Please update with "
                  "matching NVIDIA driver package.\n");
  inc.write("nodes/n1/app.log", "[rank0]: RuntimeError: CUDA error: system not yet initialized\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["domain"], "gpu_fabric");
  EXPECT_EQ(root_nodes(d), (std::set<std::string>{"n1", "n2"}));
}

TEST(Decisions, TheSameHardwareFaultOnTwoNodesStaysTwoCauses) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n1/syslog",
            noise(3) + xid_line("10:41:00", "n1", "18", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("10:41:03", "n2", "2a", 79, "GPU has fallen off the bus."));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "ambiguous");
}

TEST(Decisions, NoRouteToAPeerBlamesThePeerNotTheReporter) {
  // Ranks on n1 cannot reach n2's bootstrap address: n2's network, not n1.
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write(
      "nodes/n1/app.log",
      "n1:100:100 [0] NCCL INFO Bootstrap : Using ib0:10.9.0.1<0>\n"
      "n1:100:190 [0] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to "
      "10.9.0.2<41873> returned 113(No route to host) errno 115(Operation now in progress)\n");
  inc.write("nodes/n2/app.log", "n2:200:200 [0] NCCL INFO Bootstrap : Using ib0:10.9.0.2<0>\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["domain"], "network");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  EXPECT_TRUE(d["root_causes"][0]["rank"].is_null());
}

TEST(Decisions, AnApplicationXidTheGpuLoggedBeforeIsAlsoTheGpus) {
  // Xid 31 (an MMU fault, usually the program's) on a GPU that logged the
  // same Xid for other programs twice before the job: the program or the GPU.
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  std::string mmu = "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f21_4c9e8000.";
  inc.write("nodes/n2/syslog",
            "Oct 31 08:11:02 n2 kernel: NVRM: Xid (PCI:0000:2a:00): 31, pid=4411, name=python, " +
                mmu +
                "\nOct 31 21:40:12 n2 kernel: NVRM: Xid (PCI:0000:2a:00): 31, pid=9120, "
                "name=cryosparcw, " +
                mmu + "\n" + noise(3) + xid_line("10:30:00", "n2", "2a", 31, mmu));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "ambiguous") << d["reasoning"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  std::set<std::string> subs;
  for (const auto& c : d["candidates"])
    if (c["status"] == "candidate") subs.insert(c["sub_domain"]);
  EXPECT_TRUE(subs.count("gpu.recurring_xid")) << d["candidates"];

  // The same Xid without that history is the program's.
  TempIncident once;
  once.write("job.json", job_json("FAILED"));
  once.write("nodes/n2/syslog", noise(3) + xid_line("10:30:00", "n2", "2a", 31, mmu));
  json d1 = analyze(once);
  EXPECT_EQ(d1["verdict"], "attributed");
  EXPECT_EQ(d1["domain"], "application");
}

TEST(Intervals, ANodesClockCorrectedByItsTimeDaemonIsReadInTrueTime) {
  // n2's clock ran 900 s ahead until chrony stepped it: its Xid 79, logged
  // at 11:03:00 by that clock (after the job ended), happened at 10:48:00,
  // before the collective n1's watchdog reports began to hang (10:49).
  TempIncident inc;
  inc.write("job.json", job_json("FAILED"));
  inc.write("nodes/n2/syslog",
            noise(3) + xid_line("11:03:00", "n2", "2a", 79, "GPU has fallen off the bus.") +
                "Nov  2 11:10:00 n2 chronyd[1702]: System clock wrong by -900.000000 seconds\n");
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:59:00"));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  EXPECT_EQ(d["root_causes"][0]["time"], "2026-11-02T10:48:00Z");
}
