// The agent restarts between the Epilog bundles and the deadline: the new
// process takes the job up again and still runs its deadline pass.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

TEST(RestartRecovery, DeadlinePassAfterRestart) {
  ScratchDirectory state{"agent"};
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "epilog", 1000);
  {
    AgentProcess first("final_pass_deadline_s: 600\n", {}, state.path() / "s");
    auto client = first.client();
    ASSERT_EQ(upload(client, bundles[0])->status, 201);
    ASSERT_EQ(upload(client, bundles[1])->status, 201);
    EXPECT_EQ(first.stop(), 0) << first.log();
  }
  AgentProcess second("final_pass_deadline_s: 1\n", {}, state.path() / "s");
  auto client = second.client();
  auto d = wait_for_diagnosis(client, "48213", 20);
  ASSERT_TRUE(d) << second.log();
  EXPECT_EQ((*d)["root_causes"][0]["node"], "gpu-a02");
  auto list = json::parse(read(client, "/api/v1/diagnoses")->body);
  EXPECT_EQ(list["diagnoses"][0]["trigger"], "deadline");
}

}  // namespace
