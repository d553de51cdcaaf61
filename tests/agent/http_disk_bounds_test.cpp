// What the agent may put on the head node's disk: a floor of free space
// on the state directory's filesystem (507 below it, nothing written), a
// bound on a job attempt's bytes over all its bundles (413), and a
// retention sweep that deletes old job attempts, files and rows, but never
// one whose final or deadline pass has not run.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

std::string metric_line(const std::string& metrics, const std::string& prefix) {
  // At the start of a line: not the "# HELP" line naming the metric.
  auto at = metrics.find("\n" + prefix);
  if (at == std::string::npos) return "";
  ++at;
  return metrics.substr(at, metrics.find('\n', at) - at);
}

// The sweep deletes an attempt's files before its rows, and counts it in
// /metrics after both: a test waits for the last of what it checks.
template <typename Done>
bool within_20s(Done done) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

TEST(DiskBounds, BelowTheFreeSpaceFloorAnUploadIs507AndNothingIsWritten) {
  // No filesystem here has an exabyte free: every upload is below the floor.
  AgentProcess agent("min_free_bytes: 1000000000000000000\n", ended_job());
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "epilog", 1000);
  auto res = upload(client, bundles[0]);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 507) << res->body;
  EXPECT_NE(res->body.find("min_free_bytes"), std::string::npos) << res->body;
  EXPECT_TRUE(files_under(agent.state() / "jobs").empty());
  EXPECT_TRUE(files_under(agent.state() / "tmp").empty());
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db", "SELECT count(*) FROM bundles"), 0);
  EXPECT_NE(agent.log().find("min_free_bytes"), std::string::npos);
  std::string m = client.Get("/metrics")->body;
  EXPECT_EQ(metric_line(m, "firstfault_bundles_rejected_total{reason=\"disk_full\"}"),
            "firstfault_bundles_rejected_total{reason=\"disk_full\"} 1")
      << m;
  // What is free, for an alert before the floor is reached.
  std::string free = metric_line(m, "firstfault_state_free_bytes ");
  ASSERT_FALSE(free.empty()) << m;
  EXPECT_GT(std::stod(free.substr(free.rfind(' ') + 1)), 0) << free;
}

TEST(DiskBounds, FreeSpaceFloorInPercentToo) {
  AgentProcess agent("min_free_bytes: 0\nmin_free_percent: 90\n", ended_job());
  auto client = agent.client();
  // This test's filesystem is not 90% free (were it so, the test says nothing).
  auto res = upload(client, example_bundles("01-xid79-fallen-off-bus", "epilog", 1000)[0]);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 507) << res->body;
  EXPECT_NE(res->body.find("min_free_percent"), std::string::npos) << res->body;
}

TEST(DiskBounds, AJobAttemptsBytesOverAllItsBundlesAreBounded) {
  AgentProcess agent("max_job_bytes: 1048576\n", ended_job());
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "step", 1000);
  bundles[0].files.push_back({"app/padding.log", std::string(600000, 'x') + "\n"});
  bundles[1].files.push_back({"app/padding.log", std::string(600000, 'y') + "\n"});
  ASSERT_EQ(upload(client, bundles[0])->status, 201);
  auto res = upload(client, bundles[1]);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413) << res->body;
  EXPECT_NE(res->body.find("max_job_bytes"), std::string::npos) << res->body;
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db", "SELECT count(*) FROM bundles"), 1);
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/48213/0/bundles" / bundles[1].bundle_id));
  // Another job attempt has its own bound.
  auto other = bundles[1];
  other.attempt = 1;
  other.bundle_id += "1";
  EXPECT_EQ(upload(client, other)->status, 201);
}

// Every stored time of a job, moved `days` into the past.
std::string age_job(const std::string& job_id, int days) {
  std::string s = std::to_string(days * 86400);
  return "UPDATE bundles SET received_at = received_at - " + s + " WHERE job_id = '" + job_id +
         "'; UPDATE diagnoses SET created_at = created_at - " + s + " WHERE job_id = '" + job_id +
         "'; UPDATE jobs SET updated_at = updated_at - " + s + " WHERE job_id = '" + job_id + "';";
}

TEST(DiskBounds, RetentionDeletesOldFinishedJobsOnlyAndKeepsDrainRecords) {
  ScratchDirectory state{"agent"};
  auto dir = state.path() / "s";
  auto db = dir / "firstfault.db";
  {
    AgentProcess first("", {}, dir);
    auto client = first.client();
    // Finished (final pass): 48213 and 993120. Unfinished (step bundles
    // only): 77001.
    for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "epilog", 1000))
      ASSERT_EQ(upload(client, b)->status, 201);
    for (const auto& b : example_bundles("03-xid48-dbe", "epilog", 2000))
      ASSERT_EQ(upload(client, b)->status, 201);
    Bundle step;
    step.job_id = "77001";
    step.node = "gpu-z01";
    step.pass = "step";
    step.bundle_id = "gpu-z01-77001-step-3000";
    step.files = {{"job.json", json({{"job_id", "77001"}, {"nodes", {"gpu-z01"}}}).dump()}};
    ASSERT_EQ(upload(client, step)->status, 201);
    ASSERT_TRUE(wait_for_diagnosis(client, "48213"));
    ASSERT_TRUE(wait_for_diagnosis(client, "993120"));
    EXPECT_EQ(first.stop(), 0);
  }
  ASSERT_TRUE(exec_sql(db, age_job("48213", 100) + age_job("77001", 100) + age_job("993120", 30) +
                               "INSERT INTO drain_actions (created_at, job_id, node, decision) "
                               "VALUES (1, '48213', 'gpu-a02', 'would_drain');"));
  // The sweep runs at start.
  AgentProcess second("retention_days: 90\n", {}, dir);
  auto client = second.client();
  const std::string deleted = "firstfault_job_attempts_deleted_total{reason=\"retention\"} 1";
  EXPECT_TRUE(within_20s([&] {
    auto res = client.Get("/metrics");
    return res &&
           metric_line(res->body, "firstfault_job_attempts_deleted_total{reason=\"retention\"}") ==
               deleted;
  })) << second.log();
  EXPECT_FALSE(fs::exists(dir / "jobs/48213")) << second.log();
  for (const char* table : {"diagnoses", "bundles", "jobs", "root_causes", "evidence"}) {
    std::string where = std::string(table) == "root_causes" || std::string(table) == "evidence"
                            ? " WHERE diagnosis_id NOT IN (SELECT id FROM diagnoses)"
                            : " WHERE job_id = '48213'";
    EXPECT_EQ(count_rows(db, std::string("SELECT count(*) FROM ") + table + where), 0) << table;
  }
  // Younger than retention_days: kept. Without its final pass: kept.
  EXPECT_TRUE(fs::exists(dir / "jobs/993120/0/passes/1.json"));
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM diagnoses WHERE job_id = '993120'"), 1);
  EXPECT_TRUE(fs::exists(dir / "jobs/77001/0/bundles/gpu-z01-77001-step-3000/job.json"));
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM bundles WHERE job_id = '77001'"), 1);
  // A drain stays on record.
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM drain_actions WHERE job_id = '48213'"), 1);
}

TEST(DiskBounds, MaxStateBytesDeletesTheLeastRecentFinishedJobs) {
  ScratchDirectory state{"agent"};
  auto dir = state.path() / "s";
  auto db = dir / "firstfault.db";
  {
    AgentProcess first("", {}, dir);
    auto client = first.client();
    auto a = example_bundles("01-xid79-fallen-off-bus", "epilog", 1000);
    auto b = example_bundles("03-xid48-dbe", "epilog", 2000);
    a[0].files.push_back({"app/padding.log", std::string(300000, 'a') + "\n"});
    b[0].files.push_back({"app/padding.log", std::string(300000, 'b') + "\n"});
    for (const auto& x : a) ASSERT_EQ(upload(client, x)->status, 201);
    ASSERT_TRUE(wait_for_diagnosis(client, "48213"));
    for (const auto& x : b) ASSERT_EQ(upload(client, x)->status, 201);
    ASSERT_TRUE(wait_for_diagnosis(client, "993120"));
    EXPECT_EQ(first.stop(), 0);
  }
  // Both are young; 48213 was heard of first.
  ASSERT_TRUE(exec_sql(db, age_job("48213", 2) + age_job("993120", 1)));
  AgentProcess second("max_job_bytes: 1048576\nmax_state_bytes: 1048576\n", {}, dir);
  EXPECT_TRUE(within_20s([&] {
    return !fs::exists(dir / "jobs/48213") &&
           count_rows(db, "SELECT count(*) FROM diagnoses WHERE job_id = '48213'") == 0;
  })) << second.log();
  EXPECT_TRUE(fs::exists(dir / "jobs/993120/0/passes/1.json")) << second.log();
}

}  // namespace
