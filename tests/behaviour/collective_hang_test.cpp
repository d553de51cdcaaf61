// Hangs without an error: which rank never reached the collective the
// others timed out in, each principle on a small synthetic incident.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/behaviour/incident_builder.h"

using nlohmann::json;
using namespace fftest;

namespace {

// PyTorch 2.6's lines for global rank `rank`, group-local `group_rank` in group `pg`.
std::string timed_out(int rank, int group_rank, int pg, int seq, int enqueued, int completed,
                      const std::string& op = "ALLREDUCE") {
  std::string r = std::to_string(rank), l = std::to_string(group_rank), p = std::to_string(pg);
  std::string prefix = "[rank" + r + "]:[E1102 10:51:08.000000 42 ProcessGroupNCCL.cpp:";
  return prefix + "616] [Rank " + l +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) +
         ", OpType=" + op +
         ", NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600100 milliseconds before timing "
         "out.\n" +
         prefix + "1785] [PG ID " + p + " PG GUID " + p + (pg == 0 ? "(default_pg)" : "") +
         " Rank " + l + "] Exception (either an error or timeout) detected by watchdog at work: " +
         std::to_string(seq) + ", last enqueued NCCL work: " + std::to_string(enqueued) +
         ", last completed NCCL work: " + std::to_string(completed) + ".\n";
}

// A rank the others' timeout made dump: alive, its own progress in the default group.
std::string dump_signal(int rank, int enqueued, int completed) {
  std::string r = std::to_string(rank);
  return "[rank" + r + "]:[E1102 10:51:09.000000 42 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID " +
         "0(default_pg) Rank " + r +
         "] Received a dump signal due to a collective timeout from  rank 0 and we will try our "
         "best to dump the debug info. Last enqueued NCCL work: " +
         std::to_string(enqueued) + ", last completed NCCL work: " + std::to_string(completed) +
         ".This is most likely caused by incorrect usages of collectives.\n";
}

std::string kernel_ok(const std::string& node) {
  return "Nov  2 10:00:05 " + node + " kernel: [100.000000] mlx5_core 0000:c1:00.0: link up\n";
}

const json* candidate(const json& d, const std::string& event) {
  for (const auto& c : d["candidates"])
    if (c["event"] == event) return &c;
  return nullptr;
}

const json* hang_rank(const json& d, int pg_index, int rank) {
  for (const auto& r : d["hang"]["process_groups"][pg_index]["ranks"])
    if (r["rank"] == rank) return &r;
  return nullptr;
}

TEST(CollectiveHang, TheRankBehindTheCollectiveIsNamedWithItsNodeAndGpu) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log", kernel_ok("n2"));
  inc.write("app/slurm-77.out", timed_out(0, 0, 0, 9, 9, 8) + timed_out(1, 1, 0, 9, 10, 8) +
                                    dump_signal(2, 8, 8) + timed_out(3, 3, 0, 9, 9, 8));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["sub_domain"], "application.hang_rank");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  EXPECT_EQ(d["root_causes"][0]["rank"], 2);
  EXPECT_EQ(d["root_causes"][0]["device"], "00000000:18:00.0");
  EXPECT_EQ(d["root_causes"][0]["trusted"], false);
  // An application hang is investigated, never a reason to drain the node.
  EXPECT_EQ(d["recommended_action"], "investigate");
  EXPECT_EQ(d["hang"]["status"], "lagging");
  const json& g = d["hang"]["process_groups"][0];
  EXPECT_EQ(g["pg"], "0");
  EXPECT_EQ(g["seq"], 9);
  EXPECT_EQ(g["size"], 4);
  ASSERT_NE(hang_rank(d, 0, 2), nullptr);
  EXPECT_EQ((*hang_rank(d, 0, 2))["state"], "lagging");
  EXPECT_EQ((*hang_rank(d, 0, 2))["last_enqueued"], 8);
  EXPECT_EQ((*hang_rank(d, 0, 1))["state"], "joined");
  // The view: rank 2's cell at the hung collective is "not reached", the others' "enqueued".
  const json& v = d["hang"]["view"];
  ASSERT_EQ(v["rows"].size(), 4u);
  std::size_t at = 0;
  while (at < v["seqs"].size() && v["seqs"][at] != 9) ++at;
  ASSERT_LT(at, v["seqs"].size());
  EXPECT_EQ(v["rows"][2]["cells"][at], "not_reached");
  EXPECT_EQ(v["rows"][0]["cells"][at], "enqueued");
  EXPECT_EQ(v["rows"][0]["cells"][at - 1], "completed");
}

TEST(CollectiveHang, EveryRankAtTheCollectiveBlamesNoRank) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log", kernel_ok("n2"));
  inc.write("app/slurm-77.out", timed_out(0, 0, 0, 9, 9, 8) + timed_out(1, 1, 0, 9, 9, 8) +
                                    timed_out(2, 2, 0, 9, 9, 8) + timed_out(3, 3, 0, 9, 9, 8));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "unattributed");
  EXPECT_EQ(d["hang"]["status"], "all_joined");
  EXPECT_EQ(candidate(d, "collective.lagging_rank"), nullptr);
}

TEST(CollectiveHang, ARankThatSaidNothingIsNotBlamed) {
  // Its output may just be missing: silence is not evidence.
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log", kernel_ok("n2"));
  inc.write("app/slurm-77.out", timed_out(0, 0, 0, 9, 9, 8) + timed_out(1, 1, 0, 9, 9, 8) +
                                    timed_out(3, 3, 0, 9, 9, 8));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "unattributed");
  EXPECT_EQ(d["hang"]["status"], "undetermined");
  EXPECT_EQ((*hang_rank(d, 0, 2))["state"], "silent");
  EXPECT_EQ(candidate(d, "collective.lagging_rank"), nullptr);
}

TEST(CollectiveHang, WatchdogLinesWithoutGroupsThatDisagreeCompareNothing) {
  // Before 2.3 every group's lines read "[Rank N]": a rank timed out at an
  // earlier collective may be in another group, not behind.
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log", kernel_ok("n2"));
  std::string lines;
  for (int r = 0; r < 4; ++r)
    lines +=
        "[E ProcessGroupNCCL.cpp:737] [Rank " + std::to_string(r) +
        "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + (r == 2 ? "5" : "9") +
        ", OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing "
        "out.\n";
  inc.write("app/slurm-77.out", lines);
  json d = analyze(inc);
  EXPECT_EQ(d["hang"]["status"], "undetermined");
  EXPECT_EQ(candidate(d, "collective.lagging_rank"), nullptr);
}

TEST(CollectiveHang, AFaultOnTheLaggingRanksGpuExplainsTheHang) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write(
      "nodes/n2/kernel.log",
      kernel_ok("n2") + xid_line("10:40:11", "n2", "18", 119,
                                 "Timeout after 6s of waiting for RPC response from GPU0 GSP! "
                                 "Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4)."));
  inc.write("app/slurm-77.out", timed_out(0, 0, 0, 9, 9, 8) + timed_out(1, 1, 0, 9, 9, 8) +
                                    dump_signal(2, 8, 8) + timed_out(3, 3, 0, 9, 9, 8));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["domain"], "gpu");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  ASSERT_NE(candidate(d, "collective.lagging_rank"), nullptr);
  EXPECT_EQ((*candidate(d, "collective.lagging_rank"))["status"], "explained");
  EXPECT_EQ(d["hang"]["status"], "lagging");
}

TEST(CollectiveHang, WithoutTheLaggingNodesKernelLogTheHangIsNotCertain) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/app.log", "nothing from the kernel here\n");
  inc.write("app/slurm-77.out", timed_out(0, 0, 0, 9, 9, 8) + timed_out(1, 1, 0, 9, 9, 8) +
                                    dump_signal(2, 8, 8) + timed_out(3, 3, 0, 9, 9, 8));
  json d = analyze(inc);
  EXPECT_NE(d["verdict"], "attributed") << d["summary"];
  EXPECT_EQ(d["hang"]["status"], "lagging");
}

TEST(CollectiveHang, ASubGroupsRanksAreItsOwnAndTheGlobalOneIsNamed) {
  // "[PG ID 2 ... Rank 1]" under "[rank3]:": rank 1 of group 2 is global
  // rank 3; global rank 1 is fine and must not be named.
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log", kernel_ok("n2"));
  inc.write("app/slurm-77.out", timed_out(1, 0, 2, 40, 40, 39) +
                                    "[rank3]:[E1102 10:51:08.500000 42 ProcessGroupNCCL.cpp:"
                                    "1785] [PG ID 2 PG GUID 2 Rank 1] Exception (either "
                                    "an error or timeout) detected by watchdog at work: "
                                    "38, last enqueued NCCL work: 38, last completed NCCL "
                                    "work: 37.\n");
  json d = analyze(inc);
  EXPECT_EQ(d["hang"]["process_groups"][0]["pg"], "2");
  ASSERT_NE(hang_rank(d, 0, 3), nullptr) << d["hang"];
  EXPECT_EQ((*hang_rank(d, 0, 3))["group_rank"], 1);
  EXPECT_EQ((*hang_rank(d, 0, 3))["state"], "lagging");
  EXPECT_EQ((*hang_rank(d, 0, 1))["state"], "joined");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(CollectiveHang, RanksInDifferentCollectivesAreOneJobWideCause) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log", kernel_ok("n2"));
  inc.write("app/slurm-77.out", timed_out(0, 0, 0, 9, 9, 8) + timed_out(1, 1, 0, 9, 9, 8) +
                                    timed_out(2, 2, 0, 9, 9, 8, "BROADCAST") +
                                    timed_out(3, 3, 0, 9, 9, 8));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed");
  EXPECT_EQ(d["sub_domain"], "application.collective_mismatch");
  EXPECT_TRUE(root_nodes(d).empty());
  EXPECT_EQ(d["hang"]["status"], "mismatch");
  EXPECT_EQ((*hang_rank(d, 0, 2))["state"], "mismatched");
}

TEST(CollectiveHang, AThousandsOfRanksHangStaysSmall) {
  TempIncident inc;
  std::ostringstream job;
  job << R"({"schema":"firstfault.incident/v1","cluster":"t","job_id":"77","attempt":0,)"
      << R"("state":"FAILED","start_time":"2026-11-02T10:00:00Z","end_time":"2026-11-02T11:00:00Z",)"
      << R"("nodes":[)";
  for (int n = 0; n < 512; ++n) job << (n ? "," : "") << "\"g" << n << "\"";
  job << R"(],"ranks":[)";
  for (int r = 0; r < 4096; ++r)
    job << (r ? "," : "") << R"({"rank":)" << r << R"(,"node":"g)" << r / 8 << R"(","local_rank":)"
        << r % 8 << "}";
  job << "]}";
  inc.write("job.json", job.str());
  std::string out;
  for (int r = 0; r < 4096; ++r)
    out += r == 4000 ? dump_signal(r, 8, 8) : timed_out(r, r, 0, 9, 9, 8);
  inc.write("app/slurm-77.out", out);
  json d = analyze(inc);
  const json& g = d["hang"]["process_groups"][0];
  EXPECT_EQ(g["status"], "lagging");
  EXPECT_LE(g["ranks"].size(), 64u + 1u);
  EXPECT_EQ(g["ranks_not_listed"].get<int>() + static_cast<int>(g["ranks"].size()), 4096);
  EXPECT_NE(hang_rank(d, 0, 4000), nullptr);
  EXPECT_LE(d["hang"]["view"]["rows"].size(), 256u);
  // No node's kernel log is in this incident: the rank is a candidate, not a certainty.
  ASSERT_NE(candidate(d, "collective.lagging_rank"), nullptr);
  EXPECT_EQ((*candidate(d, "collective.lagging_rank"))["node"], "g500");
}

TEST(CollectiveHang, AFlightRecorderDumpThatWouldRunCodeIsAnErrorNotRun) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log", kernel_ok("n2"));
  std::ifstream in(
      std::string(FF_SOURCE_DIR) + "/tests/unit/data/flight_recorder/reduce-os-system.pkl",
      std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  ASSERT_FALSE(bytes.str().empty());
  inc.write("nodes/n1/flight_recorder/0", bytes.str());
  inc.write("app/slurm-77.out", timed_out(0, 0, 0, 9, 9, 8));
  json d = analyze(inc);
  bool reported = false;
  for (const auto& e : d["errors"])
    if (e["source"] == "nodes/n1/flight_recorder/0" &&
        e["message"].get<std::string>().find("not allowed") != std::string::npos)
      reported = true;
  EXPECT_TRUE(reported) << d["errors"];
}

TEST(CollectiveHang, AKernelLineNamingARanksProcessIsAboutThatRank) {
  // The plugin's record of each task's pid (job.json ranks[].pid) ties the
  // OOM killer's victim to its rank, and so to the rank the others waited for.
  TempIncident inc;
  std::string job = job_json();
  auto at = job.find(R"({"rank":2,"node":"n2","local_rank":0,)");
  ASSERT_NE(at, std::string::npos);
  job.insert(at + 1, R"("pid":4242,)");
  inc.write("job.json", job);
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log",
            kernel_ok("n2") +
                "Nov  2 10:40:30 n2 kernel: [2000.000000] Memory cgroup out of memory: Killed "
                "process 4242 (pt_main_thread) total-vm:88123456kB, anon-rss:61234567kB, "
                "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:120000kB oom_score_adj:0\n");
  inc.write("app/slurm-77.out", timed_out(0, 0, 0, 9, 9, 8) + timed_out(1, 1, 0, 9, 9, 8) +
                                    timed_out(3, 3, 0, 9, 9, 8));
  json d = analyze(inc);
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"}) << d["reasoning"];
  ASSERT_FALSE(d["root_causes"].empty());
  EXPECT_EQ(d["root_causes"][0]["rank"], 2) << d["root_causes"];
}

TEST(CollectiveHang, ADumpWithoutATimeoutIsNoHang) {
  // PyTorch dumps on any exception too: collectives in flight then are no
  // hang, and a rank a little behind in them is not the cause.
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/kernel.log", kernel_ok("n1"));
  inc.write("nodes/n2/kernel.log", kernel_ok("n2"));
  std::ifstream in(std::string(FF_SOURCE_DIR) + "/tests/unit/data/flight_recorder/dump-2.4-p2.pkl",
                   std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  ASSERT_FALSE(bytes.str().empty());
  inc.write("nodes/n1/flight_recorder/0", bytes.str());
  inc.write("app/slurm-77.out", "[rank1]: ValueError: bad batch\n");
  json d = analyze(inc);
  EXPECT_FALSE(d.contains("hang")) << d["hang"];
  EXPECT_EQ(d["sub_domain"], "application.exception");
}

}  // namespace
