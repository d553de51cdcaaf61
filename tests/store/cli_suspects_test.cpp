// `firstfault suspects` on a prepared database, through the real binary.
#include <gtest/gtest.h>

#include <ctime>

#include "agent/store/diagnosis_store.h"
#include "tests/store/run_cli.h"
#include "tests/store/store_fixture.h"
#include "tests/support/files.h"

using ff::agent::DiagnosisStore;
using fftest::quote;
using fftest::run_cli;
using nlohmann::json;

namespace {

const std::string kGpu = "00000000:3B:00.0";

class SuspectsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = DiagnosisStore::open(tmp_.db());
    std::int64_t now = std::time(nullptr);
    auto failure = [&](const std::string& job, std::int64_t age, const std::string& node,
                       const std::string& device, const std::string& domain) {
      store->add_pass(job, 0, "final",
                      fftest::synthetic_diagnosis(job, "attributed", domain,
                                                  {{node, device, domain, domain + ".x"}}, {node}),
                      now - age);
    };
    // n2's GPU: three jobs this week, one twenty days ago.
    failure("101", 3600, "n2", kGpu, "gpu");
    failure("102", 2 * 86400, "n2", kGpu, "gpu");
    failure("103", 5 * 86400, "n2", kGpu, "gpu");
    failure("100", 20 * 86400, "n2", kGpu, "gpu");
    // A one-off.
    failure("201", 86400, "n5", "", "host");
    // A fabric outage: five nodes in five jobs within a minute. The root
    // cause times of synthetic_diagnosis are all one fixed instant.
    for (int i = 0; i < 5; ++i)
      failure("30" + std::to_string(i), 3 * 86400 + i, "n1" + std::to_string(i), "mlx5_0:1",
              "network");
    db_ = quote(tmp_.db());
  }
  fftest::TempDir tmp_;
  std::string db_;
};

TEST_F(SuspectsCli, JsonRanksTheRepeatGpu) {
  auto r = run_cli("suspects --json --db " + db_);
  ASSERT_EQ(r.exit_code, 0);
  auto body = json::parse(r.out);
  ASSERT_EQ(body["suspects"].size(), 2u) << r.out;
  EXPECT_EQ(body["suspects"][0]["id"], "n2/" + kGpu);
  EXPECT_EQ(body["suspects"][0]["kind"], "gpu");
  EXPECT_EQ(body["suspects"][0]["jobs"], 3) << "the 20-day-old failure is outside 14 days";
  EXPECT_EQ(body["suspects"][1]["id"], "n2");
  ASSERT_EQ(body["systemic_events"].size(), 1u);
  EXPECT_EQ(body["systemic_events"][0]["nodes"].size(), 5u);

  auto all = json::parse(run_cli("suspects --json --all --db " + db_).out);
  EXPECT_GT(all["suspects"].size(), 2u);
  bool n5 = false;
  for (const auto& s : all["suspects"])
    if (s["id"] == "n5") n5 = s["flagged"] == false;
  EXPECT_TRUE(n5);

  auto wide = json::parse(run_cli("suspects --json --since 30d --db " + db_).out);
  EXPECT_EQ(wide["suspects"][0]["jobs"], 4);
  // The same through $FIRSTFAULT_DB.
  auto env = run_cli("suspects --json", "FIRSTFAULT_DB=" + db_);
  EXPECT_EQ(env.exit_code, 0);
  EXPECT_EQ(json::parse(env.out)["suspects"], body["suspects"]);
}

TEST_F(SuspectsCli, TextTableThenSystemicEvents) {
  auto r = run_cli("suspects --db " + db_);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("RANK  KIND"), std::string::npos) << r.out;
  auto gpu = r.out.find("1     gpu   n2/" + kGpu);
  EXPECT_NE(gpu, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2     node  n2 "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("n5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not shown (--all)"), std::string::npos) << r.out;
  auto systemic = r.out.find("systemic events");
  ASSERT_NE(systemic, std::string::npos) << r.out;
  EXPECT_GT(systemic, gpu);
  EXPECT_NE(r.out.find("network: 5 nodes in 5 jobs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodes: n10 n11 n12 n13 n14"), std::string::npos) << r.out;
  EXPECT_NE(run_cli("suspects --all --db " + db_).out.find("n5"), std::string::npos);
}

// --config: the agent's suspects: settings and database, so the command
// answers as GET /api/v1/suspects does; options given still win.
TEST_F(SuspectsCli, AgentConfigSetsWindowThresholdAndDatabase) {
  std::string config = tmp_.path().string() + "/agent.yaml";
  ff::test_support::write_file(
      config, "database: " + tmp_.db() + "\nsuspects:\n  window_days: 30\n  min_jobs: 4\n");
  auto r = run_cli("suspects --json --config " + quote(config));
  ASSERT_EQ(r.exit_code, 0);
  auto body = json::parse(r.out);
  EXPECT_EQ(body["settings"]["min_jobs"], 4);
  ASSERT_EQ(body["suspects"].size(), 2u) << r.out;  // n2's GPU and n2: 4 jobs in 30 days
  EXPECT_EQ(body["suspects"][0]["jobs"], 4);
  auto narrower = json::parse(run_cli("suspects --json --since 14d --config " + quote(config)).out);
  EXPECT_EQ(narrower["suspects"], json::array()) << "3 jobs in 14 days, min_jobs 4";

  ff::test_support::write_file(config, "suspects:\n  window_days: nine\n");
  auto bad = run_cli("suspects --config " + quote(config) + " --db " + db_);
  EXPECT_EQ(bad.exit_code, 64) << "a bad agent.yaml is a usage error";
}

TEST_F(SuspectsCli, Refusals) {
  EXPECT_EQ(run_cli("suspects --since yesterday --db " + db_).exit_code, 64);
  EXPECT_EQ(run_cli("suspects --db " + quote(tmp_.path().string() + "/missing.db")).exit_code, 2);
}

}  // namespace
