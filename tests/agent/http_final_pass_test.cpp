// The example Xid 79 incident split into per-node Epilog bundles: once every
// node's bundle is in, the final pass stores a diagnosis blaming gpu-a02; the
// Comment goes to the accounting record (the job ended, accounting is
// configured).
#include <gtest/gtest.h>

#include "common/run_process.h"
#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

FakeSlurm ended_job_with_accounting() {
  FakeSlurm s = ended_job();
  s.config = "SlurmUser = slurm(64030)\nAccountingStorageType = accounting_storage/slurmdbd\n";
  return s;
}

TEST(FinalPass, AfterEveryNodesEpilogBundle) {
  AgentProcess agent("", ended_job_with_accounting());
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL);
  ASSERT_EQ(bundles.size(), 3u);
  for (std::size_t i = 0; i + 1 < bundles.size(); ++i)
    ASSERT_EQ(upload(client, bundles[i])->status, 201);
  // Two of three nodes: no pass yet.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(read(client, "/api/v1/jobs/48213/diagnosis")->status, 404);
  ASSERT_EQ(upload(client, bundles.back())->status, 201);

  auto d = wait_for_diagnosis(client, "48213");
  ASSERT_TRUE(d) << agent.log();
  EXPECT_EQ((*d)["verdict"], "attributed");
  EXPECT_EQ((*d)["sub_domain"], "gpu.fallen_off_bus");
  ASSERT_FALSE((*d)["root_causes"].empty());
  EXPECT_EQ((*d)["root_causes"][0]["node"], "gpu-a02");
  EXPECT_EQ((*d)["terminal_state"], "FAILED");

  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT count(*) FROM diagnoses WHERE job_id = '48213' AND "
                       "trigger = 'final' AND root_node = 'gpu-a02'"),
            1);
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/48213/0/passes/1.json"));
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/48213/0/incident/app/slurm-48213.out"));
  // The merged incident replays to the same bytes with `firstfault analyze`.
  auto replay = ff::run_process({FF_BINARY, "analyze", "--format", "json",
                                 (agent.state() / "jobs/48213/0/incident").string()});
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(replay.out, read_file(agent.state() / "jobs/48213/0/passes/1.json"));

  // Comment: the job ended, so its accounting record, not scontrol update.
  std::string summary = (*d)["summary"];
  for (int i = 0; i < 50 && agent.slurm_calls().empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(agent.slurm_calls(),
            "firstfault-slurm-job [--set-comment] [48213] [0] [" + summary + "]\n");
  auto list = json::parse(read(client, "/api/v1/diagnoses?node=gpu-a02")->body);
  ASSERT_EQ(list["diagnoses"].size(), 1u);
  EXPECT_EQ(list["diagnoses"][0]["comment_status"], "written: slurmdbd");
  EXPECT_EQ(list["diagnoses"][0]["trigger"], "final");
}

// Every Epilog bundle is in while slurmctld still shows the job COMPLETING:
// the final pass waits for the terminal state instead of guessing it.
TEST(FinalPass, WaitsForTheTerminalStateOfACompletingJob) {
  FakeSlurm s = ended_job_with_accounting();
  json failed = s.job;
  s.job["state"] = "COMPLETING";
  AgentProcess agent("", s);
  auto client = agent.client();
  for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL))
    ASSERT_EQ(upload(client, b)->status, 201);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(read(client, "/api/v1/jobs/48213/diagnosis")->status, 404) << agent.log();

  write_file(FakeSlurm::job_file(agent.dir()), failed.dump());  // slurmctld heard the last Epilog
  auto d = wait_for_diagnosis(client, "48213");
  ASSERT_TRUE(d) << agent.log();
  EXPECT_EQ((*d)["terminal_state"], "FAILED");
  EXPECT_EQ((*d)["verdict"], "attributed");
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT count(*) FROM diagnoses WHERE job_id = '48213'"),
            1);
}

TEST(FinalPass, CompletedJobGetsNoComment) {
  FakeSlurm s;
  s.job = {{"job_id", "77"}, {"state", "COMPLETED"}, {"exit_code", "0:0"}, {"nodes", {"n1"}}};
  s.config = "SlurmUser = slurm(64030)\nAccountingStorageType = accounting_storage/slurmdbd\n";
  AgentProcess agent("", s);
  auto client = agent.client();
  Bundle b;
  b.job_id = "77";
  b.node = "n1";
  b.bundle_id = "n1-77-epilog-1";
  b.files = {{"job.json",
              R"({"job_id": "77", "nodes": ["n1"], "state": "COMPLETED", "exit_code": "0:0"})"}};
  ASSERT_EQ(upload(client, b)->status, 201);
  auto d = wait_for_diagnosis(client, "77");
  ASSERT_TRUE(d) << agent.log();
  EXPECT_EQ((*d)["verdict"], "no_failure");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(agent.slurm_calls(), "");
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT count(*) FROM diagnoses WHERE comment_status = 'not_needed'"),
            1);
}

}  // namespace
