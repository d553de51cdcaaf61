// A node that never sends its Epilog bundle: the `deadline` pass runs
// final_pass_deadline_s after the first Epilog bundle.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

TEST(DeadlinePass, RunsWhenANodeNeverReports) {
  AgentProcess agent("final_pass_deadline_s: 1\n");
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "epilog", 1000);
  // gpu-a03 never reports.
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(upload(client, bundles[0])->status, 201);
  ASSERT_EQ(upload(client, bundles[1])->status, 201);
  auto d = wait_for_diagnosis(client, "48213", 20);
  ASSERT_TRUE(d) << agent.log();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  EXPECT_EQ((*d)["root_causes"][0]["node"], "gpu-a02");
  auto list = json::parse(read(client, "/api/v1/diagnoses")->body);
  ASSERT_EQ(list["diagnoses"].size(), 1u);
  EXPECT_EQ(list["diagnoses"][0]["trigger"], "deadline");
  // One deadline pass, not one per tick.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db", "SELECT count(*) FROM diagnoses"), 1);

  // The late node's bundle completes the job: the final pass follows.
  ASSERT_EQ(upload(client, bundles[2])->status, 201);
  for (int i = 0; i < 100; ++i) {
    if (count_rows(agent.state() / "firstfault.db", "SELECT count(*) FROM diagnoses") == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT count(*) FROM diagnoses WHERE trigger = 'final' AND pass_no = 2"),
            1);
}

}  // namespace
