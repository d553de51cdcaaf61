// `firstfault history` on a prepared database, through the real binary.
#include <gtest/gtest.h>

#include <ctime>

#include "agent/store/diagnosis_store.h"
#include "tests/store/run_cli.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using fftest::quote;
using fftest::run_cli;
using nlohmann::json;

class History : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = DiagnosisStore::open(tmp_.db());
    fftest::add_synthetic_history(*store);  // all in 1970
    // Two recent failures: one hour and three days ago.
    std::int64_t now = std::time(nullptr);
    store->add_pass(
        "recent-1h", 0, "final",
        fftest::synthetic_diagnosis("recent-1h", "attributed", "gpu",
                                    {{"n7", "GPU-7", "gpu", "gpu.fallen_off_bus"}}, {"n7"}),
        now - 3600);
    store->add_pass(
        "recent-3d", 0, "final",
        fftest::synthetic_diagnosis("recent-3d", "attributed", "network",
                                    {{"n8", "mlx5_0:1", "network", "network.x"}}, {"n8"}),
        now - 3 * 86400);
    db_ = quote(tmp_.db());
  }
  std::vector<std::string> jobs(const std::string& args) {
    auto r = run_cli("history --db " + db_ + " --format json " + args);
    EXPECT_EQ(r.exit_code, 0) << args;
    std::vector<std::string> out;
    for (const auto& row : json::parse(r.out)) out.push_back(row["job_id"]);
    return out;
  }
  fftest::TempDir tmp_;
  std::string db_;
};

using V = std::vector<std::string>;

TEST_F(History, JsonRowsNewestFirstFailuresOnly) {
  EXPECT_EQ(jobs(""), (V{"recent-1h", "recent-3d", "1", "8", "7", "5", "4", "3", "2", "1"}));
  auto r = run_cli("history --db " + db_ + " --format json --limit 1");
  auto row = json::parse(r.out).at(0);
  EXPECT_EQ(row["verdict"], "attributed");
  EXPECT_EQ(row["domain"], "gpu");
  EXPECT_EQ(row["root_node"], "n7");
  EXPECT_EQ(row["root_device"], "GPU-7");
  EXPECT_FALSE(row.contains("diagnosis")) << "summaries only, no evidence lines";
  EXPECT_EQ(jobs("--all --limit 0").size(), 11u) << "completed jobs too";
}

TEST_F(History, NodeAndSinceFilters) {
  EXPECT_EQ(jobs("--node n2"), (V{"8", "3", "1"}));
  EXPECT_EQ(jobs("--since 7d"), (V{"recent-1h", "recent-3d"}));
  EXPECT_EQ(jobs("--since 24h"), (V{"recent-1h"}));
  EXPECT_EQ(jobs("--since 90m"), (V{"recent-1h"}));
  EXPECT_EQ(jobs("--since 1970-01-01T00:06:00Z"),
            (V{"recent-1h", "recent-3d", "1", "8", "7", "5", "4"}));
  EXPECT_EQ(jobs("--since 1970-01-01T01:06:00+01:00").size(), 7u) << "offsets";
  EXPECT_EQ(jobs("--since 2000-01-01"), (V{"recent-1h", "recent-3d"})) << "a bare date";
  EXPECT_EQ(jobs("--node n7 --since 7d"), (V{"recent-1h"}));
}

TEST_F(History, TextTable) {
  auto r = run_cli("history --db " + db_ + " --limit 3");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("TIME", 0), 0u) << r.out;
  for (const char* want : {"JOB", "VERDICT", "DOMAIN", "ROOT NODE", "SUMMARY", "recent-1h",
                           "attributed recent-1h", "1.1", "n1"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
}

TEST_F(History, ExitCodes) {
  EXPECT_EQ(run_cli("history --db " + db_ + " --since yesterday").exit_code, 64);
  EXPECT_EQ(run_cli("history --db " + db_ + " --limit -3").exit_code, 64);
  EXPECT_EQ(run_cli("history --db " + quote(tmp_.path().string() + "/none.db")).exit_code, 2);
  auto empty = run_cli("history --db " + db_ + " --node nobody");
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_EQ(empty.out, "no failures recorded\n");
}
