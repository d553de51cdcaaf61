// A pass is stored before its Comment is written. The agent is killed
// (SIGKILL) while scontrol is still writing the Comment: the restarted
// agent finds the pass whose Comment was never settled and writes it.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

TEST(CommentRecovery, KilledBetweenStoreAndCommentWrittenAfterRestart) {
  ScratchDirectory state{"agent"};
  auto db = state.path() / "s" / "firstfault.db";
  FakeSlurm slow = running_job();  // the fast pass writes the Comment with scontrol
  slow.update_hangs = true;
  {
    AgentProcess first("", slow, state.path() / "s");
    auto client = first.client();
    for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "step", 1000))
      ASSERT_EQ(upload(client, b)->status, 201);
    std::thread fast([&] {
      auto c = first.client();
      json body = {{"job_id", "48213"}, {"node", "gpu-a01"}, {"exit_status", 256}};
      c.Post(
          "/api/v1/jobs/48213/fastpass",
          {{"X-Firstfault-Munge", credential(fastpass_payload("48213", "gpu-a01", body.dump()))}},
          body.dump(), "application/json");
    });
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!fs::exists(first.dir() / "update-started") && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(fs::exists(first.dir() / "update-started")) << first.log();
    first.kill_now();
    // The update never reached slurmctld: the machine went down with it.
    pid_t update = std::stoi(read_file(first.dir() / "update-started"));
    ::kill(-update, SIGKILL);  // its process group: the shell and its sleep
    auto killed_at = std::chrono::steady_clock::now();
    fast.join();
    // The agent's connections went with it (its children hold none).
    EXPECT_LT(std::chrono::steady_clock::now() - killed_at, std::chrono::seconds(5));
    EXPECT_EQ(first.slurm_calls(), "");
    EXPECT_EQ(count_rows(db, "SELECT count(*) FROM diagnoses WHERE comment_status = ''"), 1);
  }
  AgentProcess second("", running_job(), state.path() / "s");
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (count_rows(db, "SELECT count(*) FROM diagnoses WHERE comment_status = 'written'") != 1 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM diagnoses WHERE comment_status = 'written'"), 1)
      << second.log();
  std::string calls = second.slurm_calls();
  auto client = second.client();
  auto pass = json::parse(read(client, "/api/v1/jobs/48213/diagnosis")->body);
  EXPECT_EQ(calls, "scontrol [update] [JobId=48213] [Comment=" +
                       pass["summary"].get<std::string>() + "]\n");
  // Once: a second restart finds nothing left to write.
  EXPECT_EQ(second.stop(), 0);
  AgentProcess third("", running_job(), state.path() / "s");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(third.slurm_calls(), "");
}

}  // namespace
