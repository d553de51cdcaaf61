// A bundle in the outbox: outbox/<bundle_id>/{meta.json, files/{job.json,
// nodes/<node>/<kind>*, app/*}}, job.json as docs/spec/incident.md has it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collectors/bundle/bundle_builder.h"
#include "collectors/bundle/size_limit.h"
#include "collectors/delivery/outbox.h"
#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;
using testing::at;
using testing::rfc3164;

class BundleLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    config = default_node_config("n2");
    config.spool = dir / "spool";
    config.timezone = "UTC";
    // kernel: the node's journal of _TRANSPORT=kernel entries, absent here.
    config.journal_directory = (dir / "journal").string();
    config.sources = {
        {"kernel", {"journal:kernel"}, config.journal_directory},
        {"syslog", {(dir / "log/syslog*").string(), (dir / "log/kern.log*").string()}},
        {"fabricmanager", {(dir / "log/fabricmanager.log*").string()}}};
    std::filesystem::path job = dir / "spool/jobs/12";
    testing::write_file(job / "alloc-batch.json",
                        R"({"job_id":"12","step":"batch","node":"n2","restart_count":0,)"
                        R"("start_time":"2026-11-30T05:01:02Z","nodelist":"n[1-3]"})");
    testing::write_file(job / "alloc-0.json",
                        R"({"job_id":"12","step":"0","node":"n2","restart_count":0,)"
                        R"("start_time":"2026-11-30T05:01:10Z","nodelist":"n[1-3]"})");
    testing::write_file(job / "rank-0-1.json",
                        R"({"job_id":"12","step":"0","node":"n2","rank":1,"local_rank":0,)"
                        R"("pid":4242,"gpus":["0"],"gpu_pci":["00000000:3B:00.0"],)"
                        R"("exit_status":256,"exit_code":"1:0"})");
    testing::write_file(job / ".rank-0-2.json.tmp", "{half");  // a writer's temporary: ignored
    std::string syslog;
    TimeUs t = at("2026-11-30T04:00:00Z");
    for (int i = 0; i < 200; ++i)
      syslog += rfc3164(t + i * 60 * kUsPerSecond) + " n2 kernel: line " + std::to_string(i) + "\n";
    testing::write_file(dir / "log/syslog", syslog);
    testing::write_file(dir / "out/slurm-12.out", "Traceback\nRuntimeError: NCCL\n");
  }

  CollectRequest epilog_request() {
    CollectRequest r;
    r.pass = "epilog";
    r.job_id = "12";
    r.node = "n2";
    r.nodelist = "n[1-3]";
    r.exit_code = "1:0";
    r.outputs = {(dir / "out/slurm-%j.out").string(), (dir / "out/slurm-12.out").string()};
    r.owner_uid = ::getuid();  // the test wrote the output
    r.now = at("2026-11-30T05:30:00Z");
    return r;
  }

  ScratchDirectory dir{"collector"};
  NodeConfig config;
};

TEST_F(BundleLayout, OutboxEntryHoldsMetaAndIncidentFiles) {
  BuiltBundle built = build_bundle(config, epilog_request());
  const BundleMeta& meta = built.entry.meta;
  EXPECT_EQ(meta.bundle_id.rfind("n2-12-epilog-", 0), 0u);
  EXPECT_EQ(built.entry.dir, dir / "spool/outbox" / meta.bundle_id);
  EXPECT_TRUE(std::filesystem::exists(built.entry.dir / "meta.json"));
  EXPECT_EQ(bundle_files(built.entry.files()),
            (std::vector<std::string>{"job.json", "app/slurm-12.out", "nodes/n2/syslog"}));
  // Nothing staged is left behind.
  for (const auto& e : std::filesystem::directory_iterator(dir / "spool/outbox"))
    EXPECT_EQ(e.path().filename().string()[0] != '.', true) << e.path();

  // Window: 05:01:02 - 300 s .. 05:30:00 + 60 s → syslog minutes 57..91 (04:57..05:31).
  std::string syslog = testing::read_file(built.entry.files() / "nodes/n2/syslog");
  EXPECT_EQ(std::count(syslog.begin(), syslog.end(), '\n'), 35);

  auto job = nlohmann::json::parse(testing::read_file(built.entry.files() / "job.json"));
  EXPECT_EQ(job["schema"], "firstfault.incident/v1");
  EXPECT_EQ(job["job_id"], "12");
  EXPECT_EQ(job["attempt"], 0);
  EXPECT_EQ(job["nodes"], (nlohmann::json{"n1", "n2", "n3"}));
  EXPECT_EQ(job["start_time"], "2026-11-30T05:01:02Z");
  EXPECT_EQ(job["end_time"], "2026-11-30T05:30:00Z");
  EXPECT_EQ(job["exit_code"], "1:0");
  EXPECT_EQ(job["timezone"], "UTC");
  ASSERT_EQ(job["ranks"].size(), 1u);
  EXPECT_EQ(job["ranks"][0]["rank"], 1);
  EXPECT_EQ(job["ranks"][0]["node"], "n2");
  EXPECT_EQ(job["ranks"][0]["local_rank"], 0);
  EXPECT_EQ(job["ranks"][0]["gpus"], (nlohmann::json{"00000000:3B:00.0"}));
  EXPECT_EQ(job["ranks"][0]["exit_code"], "1:0");
  EXPECT_TRUE(job["node_info"]["n2"].contains("boot_time"));
  std::map<std::string, std::string> status;
  for (const auto& c : job["coverage"]) status[c["collector"]] = c["status"];
  EXPECT_EQ(
      status,
      (std::map<std::string, std::string>{
          {"kernel", "missing"}, {"syslog", "ok"}, {"fabricmanager", "missing"}, {"app", "ok"}}));
}

// node.yaml's flight_recorder: the dumps of this node's ranks (the spool
// records rank 1 on n2), %j expanded, each whole under its global rank.
TEST_F(BundleLayout, FlightRecorderDumpsOfTheNodesRanks) {
  for (int rank : {0, 1, 2})
    testing::write_file(dir / "fr/12" / ("rank_" + std::to_string(rank)),
                        "pickle of rank " + std::to_string(rank));
  config.flight_recorder = (dir / "fr/%j/rank_%r").string();
  BuiltBundle built = build_bundle(config, epilog_request());
  EXPECT_EQ(bundle_files(built.entry.files()),
            (std::vector<std::string>{"job.json", "app/slurm-12.out", "nodes/n2/flight_recorder/1",
                                      "nodes/n2/syslog"}));
  EXPECT_EQ(testing::read_file(built.entry.files() / "nodes/n2/flight_recorder/1"),
            "pickle of rank 1");
  auto job = nlohmann::json::parse(testing::read_file(built.entry.files() / "job.json"));
  nlohmann::json entry;
  for (const auto& c : job["coverage"])
    if (c["collector"] == "flight_recorder") entry = c;
  EXPECT_EQ(entry["node"], "n2");
  EXPECT_EQ(entry["status"], "ok") << entry.dump();
  EXPECT_FALSE(entry.contains("lines"));
}

TEST_F(BundleLayout, SuccessfulJobSendsJobJsonOnly) {
  std::filesystem::remove(dir / "spool/jobs/12/rank-0-1.json");
  CollectRequest r = epilog_request();
  r.exit_code = "0:0";
  r.derived_ec = 0;
  BuiltBundle built = build_bundle(config, r);
  EXPECT_TRUE(built.logs_skipped);
  EXPECT_EQ(bundle_files(built.entry.files()), (std::vector<std::string>{"job.json"}));

  config.collect_on_success = true;
  BuiltBundle full = build_bundle(config, r);
  EXPECT_FALSE(full.logs_skipped);
  EXPECT_GT(bundle_files(full.entry.files()).size(), 1u);
}

TEST_F(BundleLayout, FailedRankMeansCollectEvenWhenTheScriptExitedZero) {
  CollectRequest r = epilog_request();
  r.exit_code = "0:0";
  EXPECT_FALSE(build_bundle(config, r).logs_skipped);
}

TEST_F(BundleLayout, StepBundleWithoutAllocRecordsUsesTheLookback) {
  std::filesystem::remove_all(dir / "spool/jobs/12");
  config.fallback_lookback_s = 600;
  CollectRequest r;
  r.pass = "step";
  r.job_id = "12";
  r.node = "n2";
  r.now = at("2026-11-30T05:30:00Z");
  BuiltBundle built = build_bundle(config, r);
  auto job = nlohmann::json::parse(testing::read_file(built.entry.files() / "job.json"));
  EXPECT_FALSE(job.contains("start_time"));
  EXPECT_FALSE(job.contains("end_time"));
  EXPECT_EQ(job["nodes"], (nlohmann::json{"n2"}));
  // 05:30 - 600 s - 300 s margin = 05:15 .. 05:31 → syslog minutes 75..91.
  std::string syslog = testing::read_file(built.entry.files() / "nodes/n2/syslog");
  EXPECT_EQ(std::count(syslog.begin(), syslog.end(), '\n'), 17);
}

TEST(SizeLimit, LargestLogsLoseTheirOldestLines) {
  ScratchDirectory dir{"collector"};
  std::string big, small = "s1\ns2\n";
  for (int i = 0; i < 1000; ++i) big += "big line " + std::to_string(i) + "\n";
  testing::write_file(dir / "nodes/n1/syslog", big);
  testing::write_file(dir / "nodes/n1/kernel", small);
  testing::write_file(dir / "app/out", big);
  std::vector<BundleFile> files = {{"nodes/n1/syslog", "syslog", big.size(), true},
                                   {"nodes/n1/kernel", "kernel", small.size(), true},
                                   {"app/out", "app", big.size(), false}};
  auto cut = fit_to_size(dir.path(), files, big.size() + 4000, 0);
  EXPECT_EQ(cut, (std::set<std::string>{"syslog"}));
  std::string kept = testing::read_file(dir / "nodes/n1/syslog");
  EXPECT_LE(kept.size(), 4000u);
  EXPECT_EQ(kept.substr(0, 9), "big line ");
  EXPECT_EQ(kept.substr(kept.size() - 13), "big line 999\n");
  EXPECT_EQ(testing::read_file(dir / "nodes/n1/kernel"), small);
  EXPECT_EQ(files[0].bytes, kept.size());
}

}  // namespace
}  // namespace ff::collect
