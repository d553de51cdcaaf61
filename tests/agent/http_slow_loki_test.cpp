// Loki is asked before a job's final pass, and may be slow: a Loki that
// stalls on one job's queries must not hold up another job's final pass
// (final passes run on a pool of workers) nor the same job's bundles and
// fast pass (the job's lock is not held while Loki is asked). The Loki is
// the real HTTP server of tests/central/fake_loki.h, stalling on demand.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"
#include "tests/central/fake_loki.h"

namespace {

using namespace fftest;

bool wait_until(const std::function<bool()>& done, int seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

TEST(SlowLoki, OneJobsStalledQueriesHoldUpNoOtherPassNorItsOwnUploads) {
  FakeLoki loki;
  loki.stall_queries_with("gpu-a0");  // job 48213's nodes: gpu-a01..03
  // No job known to scontrol: each job's nodes are its bundles', and its
  // final pass runs once they are all in.
  AgentProcess agent("final_pass_workers: 2\nloki:\n  url: " + loki.url() +
                     "\n  timeout_s: 60\n  selectors:\n"
                     "    kernel: '{host=\"%n\", source=\"kernel\"}'\n");
  auto client = agent.client();
  for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL))
    ASSERT_EQ(upload(client, b)->status, 201);
  ASSERT_TRUE(wait_until([&] { return loki.stalled() >= 1; }, 20)) << agent.log();

  // The same job: a late bundle is stored, and its fast pass answers, while
  // its Loki queries hang.
  auto t0 = std::chrono::steady_clock::now();
  Bundle late;
  late.job_id = "48213";
  late.node = "gpu-a01";
  late.pass = "step";
  late.bundle_id = "gpu-a01-48213-step-1796000000000000100";
  late.files = {{"job.json", json({{"job_id", "48213"}, {"nodes", {"gpu-a01"}}}).dump()},
                {"app/late.log", "late line\n"}};
  ASSERT_EQ(upload(client, late)->status, 201);
  json body = {{"job_id", "48213"}, {"node", "gpu-a01"}, {"exit_status", 256}, {"attempt", 0}};
  auto fast = client.Post(
      "/api/v1/jobs/48213/fastpass",
      {{"X-Firstfault-Munge", credential(fastpass_payload("48213", "gpu-a01", body.dump()))}},
      body.dump(), "application/json");
  ASSERT_TRUE(fast);
  EXPECT_EQ(fast->status, 200) << fast->body;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10))
      << "the fast pass waited for Loki";

  // Another job: its final pass (Loki answers its queries) is stored while
  // the first job's queries still hang.
  for (const auto& b : example_bundles("03-xid48-dbe", "epilog", 1796000000000000200LL))
    ASSERT_EQ(upload(client, b)->status, 201);
  auto other = wait_for_diagnosis(client, "993120", 20);
  ASSERT_TRUE(other) << agent.log();
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT count(*) FROM diagnoses WHERE job_id = '993120' AND trigger = "
                       "'final'"),
            1);
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT count(*) FROM diagnoses WHERE job_id = '48213' AND trigger = "
                       "'final'"),
            0)
      << "the stalled job's final pass should still be waiting for Loki";

  // Loki answers: the stalled job's final pass completes with its coverage.
  loki.release();
  ASSERT_TRUE(wait_until(
      [&] {
        return count_rows(agent.state() / "firstfault.db",
                          "SELECT count(*) FROM diagnoses WHERE job_id = '48213' AND trigger = "
                          "'final'") == 1;
      },
      30))
      << agent.log();
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/48213/0/central/coverage.json"));
  // No scratch copies of the gather are left behind.
  for (const auto& e : fs::directory_iterator(agent.state() / "jobs/48213/0"))
    EXPECT_EQ(e.path().filename().string().find("central."), std::string::npos) << e.path();
}

}  // namespace
