// The decision principles, each on a small synthetic incident.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/behaviour/incident_builder.h"

using nlohmann::json;
using namespace fftest;

namespace {

std::string symptom_status(const json& d, const std::string& node, const std::string& kind) {
  for (const auto& s : d["symptoms"])
    if (s["node"] == node && s["kind"] == kind) return s["status"];
  return "";
}

TEST(Decisions, HardwareFaultOnOneNodeOutranksTimeoutsOnOthers) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog",
            noise(5) + xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08") + watchdog_line(1, "10:51:08"));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["sub_domain"], "gpu.fallen_off_bus");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  EXPECT_EQ(d["root_causes"][0]["device"], "00000000:2A:00.0");
  EXPECT_EQ(d["root_causes"][0]["rank"], 3);
  EXPECT_EQ(symptom_status(d, "n1", "nccl.timeout"), "demoted");
  EXPECT_EQ(d["recommended_action"], "drain_node");
}

TEST(Decisions, XidOnAGpuTheJobDidNotUseIsIgnored) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog", xid_line("10:41:07", "n2", "9a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/app.log",
            "[rank0]: ValueError: bad batch\nE1102 10:40:00.000000 1 api.py:869] failed (exitcode: "
            "1) local_rank: 0 (pid: 5) of binary: python\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["domain"], "application");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n1"});
}

TEST(Decisions, StaleXidBeforeTheJobIsIgnored) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write(
      "nodes/n2/syslog",
      "Oct 31 10:41:07 n2 kernel: NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.\n");
  inc.write("nodes/n1/app.log",
            "[rank0]: KeyError: 'labels'\nE1102 10:40:00.000000 1 api.py:869] failed (exitcode: 1) "
            "local_rank: 0 (pid: 5) of binary: python\n");
  json d = analyze(inc);
  EXPECT_EQ(d["domain"], "application");
  bool ignored = false;
  for (const auto& i : d["ignored"])
    if (i["kind"] == "xid" && i["node"] == "n2") ignored = true;
  EXPECT_TRUE(ignored) << d["ignored"];
}

TEST(Decisions, TwoIndependentHardwareFaultsAreAmbiguous) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/syslog",
            xid_line("10:41:00", "n1", "18", 48, "An uncorrectable double bit error (DBE)"));
  inc.write("nodes/n2/syslog", xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus."));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "ambiguous");
  EXPECT_EQ(d["sub_domain"], "ambiguous");
  EXPECT_EQ(root_nodes(d), (std::set<std::string>{"n1", "n2"}));
}

TEST(Decisions, ApplicationInducedXidWithTheRanksOwnErrorIsApplication) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog",
            "Nov  2 10:41:07 n2 kernel: NVRM: Xid (PCI:0000:2a:00): 13, pid=4242, name=python3, "
            "Graphics SM Warp Exception: Out Of Range Address\n");
  inc.write("nodes/n2/app.log",
            "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\nE1102 "
            "10:41:09.000000 1 api.py:869] failed (exitcode: -6) local_rank: 1 (pid: 4242) of "
            "binary: python\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["domain"], "application");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  EXPECT_EQ(d["recommended_action"], "fix_application");
}

TEST(Decisions, OneRanksCudaOomFollowedByTimeoutsIsThatRank) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/app.log",
            "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
            "GiB\nE1102 10:30:02.000000 1 api.py:869] failed (exitcode: 1) local_rank: 1 (pid: 9) "
            "of binary: python\n");
  inc.write("nodes/n2/app.log", watchdog_line(2, "10:40:03") + watchdog_line(3, "10:40:03"));
  json d = analyze(inc);
  EXPECT_EQ(d["sub_domain"], "application.cuda_oom");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n1"});
  EXPECT_EQ(d["root_causes"][0]["rank"], 1);
}

TEST(Decisions, TimeoutStateWithNothingElseIsScheduler) {
  TempIncident inc;
  inc.write("job.json", job_json("TIMEOUT"));
  inc.write("nodes/n1/syslog", noise(10));
  inc.write("nodes/n2/syslog", noise(10));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["sub_domain"], "scheduler.time_limit");
  EXPECT_TRUE(root_nodes(d).empty());
  EXPECT_EQ(d["recommended_action"], "increase_time_limit");
}

TEST(Decisions, CancelledStateWithNothingElseIsScheduler) {
  TempIncident inc;
  inc.write("job.json", job_json("CANCELLED"));
  inc.write("nodes/n1/syslog", noise(3));
  inc.write("nodes/n2/syslog", noise(3));
  json d = analyze(inc);
  EXPECT_EQ(d["sub_domain"], "scheduler.cancelled");
}

TEST(Decisions, HardwareFaultBeforeTheTimeLimitWins) {
  TempIncident inc;
  inc.write("job.json", job_json("TIMEOUT"));
  inc.write("nodes/n2/syslog", xid_line("10:20:00", "n2", "2a", 79, "GPU has fallen off the bus."));
  inc.write("nodes/n1/syslog", noise(3));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["domain"], "gpu");
}

TEST(Decisions, CompletedJobIsNoFailure) {
  TempIncident inc;
  std::string job = job_json("COMPLETED");
  job.replace(job.find("\"1:0\""), 5, "\"0:0\"");
  inc.write("job.json", job);
  inc.write("nodes/n1/syslog", noise(3));
  inc.write("nodes/n2/syslog", noise(3));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "no_failure");
  EXPECT_TRUE(d["root_causes"].empty());
  EXPECT_TRUE(d["domain"].is_null());
  EXPECT_EQ(d["recommended_action"], "none");
}

TEST(Decisions, OnlyTimeoutsAndAPeerWithoutLogsIsAmbiguousNotCertain) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08") + watchdog_line(1, "10:51:08"));
  inc.write("nodes/n1/syslog", noise(3));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "ambiguous");
  EXPECT_TRUE(root_nodes(d).count("n2"));
}

TEST(Decisions, OnlyTimeoutsWithFullCoverageIsUnattributed) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08") + watchdog_line(1, "10:51:08"));
  inc.write("nodes/n1/syslog", noise(3));
  inc.write("nodes/n2/syslog", noise(3));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "unattributed");
  EXPECT_EQ(symptom_status(d, "n1", "nccl.timeout"), "active");
}

// n2's syslog is there, but its kernel messages were to come from Loki,
// which did not answer: n2 is a gap in the evidence, not a healthy node.
TEST(Decisions, KernelSourceThatFailedIsAGapEvenWithASyslog) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED", R"(,"coverage":[{"collector":"loki:kernel","node":"n2",
                       "status":"unreachable","detail":"no reply: Connection refused"}])"));
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:51:08") + watchdog_line(1, "10:51:08"));
  inc.write("nodes/n1/syslog", noise(3));
  inc.write("nodes/n2/syslog", noise(3));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "ambiguous");
  EXPECT_TRUE(root_nodes(d).count("n2"));
  bool shown = false;
  for (const auto& c : d["coverage"])
    shown |= c["node"] == "n2" && c["source"] == "kernel" && c["status"] == "unreachable";
  EXPECT_TRUE(shown) << d["coverage"].dump(2);
}

// Only timeouts, every log there, but Prometheus did not answer: a fault
// only the metrics would show (an IB port counter) cannot be excluded, so the
// verdict is ambiguous, not "every source was read". A query that answered
// with no series is no such gap.
TEST(Decisions, MetricsThatCouldNotBeReadAreAGap) {
  auto incident = [](const std::string& status) {
    auto inc = std::make_unique<TempIncident>();
    inc->write(
        "job.json", job_json("FAILED", R"(,"coverage":[{"collector":"prometheus:ib_port_errors",
                 "status":")" + status + R"(","detail":"no reply: Connection refused"}])"));
    inc->write("nodes/n1/app.log", watchdog_line(0, "10:51:08") + watchdog_line(1, "10:51:08"));
    inc->write("nodes/n1/syslog", noise(3));
    inc->write("nodes/n2/syslog", noise(3));
    return inc;
  };
  json down = analyze(*incident("unreachable"));
  EXPECT_EQ(down["verdict"], "ambiguous");
  bool candidate = false;
  for (const auto& c : down["candidates"]) candidate |= c["event"] == "missing_metrics";
  EXPECT_TRUE(candidate) << down["candidates"].dump(2);
  EXPECT_EQ(analyze(*incident("empty"))["verdict"], "unattributed");
}

TEST(Decisions, SiteRuleFromRulesDirectoryExtendsTheBuiltInSet) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/syslog",
            "Nov  2 10:30:00 n1 nhc[40211]: Health check failed:  check_fs_mount:  /scratch not "
            "mounted\n");
  inc.write("nodes/n2/syslog", noise(3));
  inc.write("nodes/n2/app.log", watchdog_line(2, "10:40:03"));
  json without = analyze(inc);
  EXPECT_NE(without["verdict"], "attributed");
  json with =
      analyze(inc, "--rules " + shell_quote(std::string(FF_SOURCE_DIR) + "/examples/rules"));
  EXPECT_EQ(with["verdict"], "attributed");
  EXPECT_EQ(with["sub_domain"], "host.health_check_failed");
  EXPECT_EQ(root_nodes(with), std::set<std::string>{"n1"});
}

TEST(Decisions, TextReportLeadsWithTheVerdictAndRootCause) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog", xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus."));
  auto r = run_firstfault("analyze " + inc.arg() + " --format text --color never");
  ASSERT_EQ(r.exit_code, 0);
  auto first_lines = r.out.substr(0, r.out.find("timeline"));
  EXPECT_NE(first_lines.find("attributed"), std::string::npos);
  EXPECT_NE(first_lines.find("n2"), std::string::npos);
  EXPECT_NE(first_lines.find("drain_node"), std::string::npos);
  EXPECT_EQ(r.out.find("\033["), std::string::npos);  // no colour when not asked
}

}  // namespace
