// POST /api/v1/jobs/<id>/fastpass: waits for the step bundles of the job's
// nodes (bounded by the client's deadline), runs the pass, writes the
// Comment with `scontrol update` while the job runs.
#include <gtest/gtest.h>

#include "common/run_process.h"
#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

httplib::Result fastpass(httplib::Client& client, const std::string& node,
                         std::optional<int> deadline_ms = std::nullopt,
                         std::optional<std::string> cred = std::nullopt) {
  json body = {{"job_id", "48213"}, {"node", node}, {"exit_status", 256}, {"attempt", 0}};
  httplib::Headers headers = {
      {"X-Firstfault-Munge",
       cred ? *cred : credential(fastpass_payload("48213", node, body.dump()))}};
  if (deadline_ms) headers.emplace("X-Firstfault-Deadline-Ms", std::to_string(*deadline_ms));
  return client.Post("/api/v1/jobs/48213/fastpass", headers, body.dump(), "application/json");
}

TEST(FastPass, WaitsForTheOtherNodesThenWritesTheComment) {
  AgentProcess agent("fastpass_wait_s: 20\n", running_job());
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "step", 100);
  ASSERT_EQ(upload(client, bundles[0])->status, 201);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    auto c = agent.client();
    upload(c, bundles[1]);
    upload(c, bundles[2]);
  });
  auto start = std::chrono::steady_clock::now();
  auto res = fastpass(client, "gpu-a01");
  auto took = std::chrono::steady_clock::now() - start;
  late.join();
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body << agent.log();
  EXPECT_GE(took, std::chrono::milliseconds(600));
  EXPECT_LT(took, std::chrono::seconds(15));
  auto reply = json::parse(res->body);
  EXPECT_EQ(reply["all_nodes_reported"], true);
  EXPECT_EQ(reply["verdict"], "attributed");
  EXPECT_EQ(reply["comment_written"], true);
  std::string summary = reply["summary"];
  EXPECT_NE(summary.find("gpu-a02"), std::string::npos);
  EXPECT_EQ(agent.slurm_calls(), "scontrol [update] [JobId=48213] [Comment=" + summary + "]\n");
}

TEST(FastPass, ClientDeadlineBoundsTheWait) {
  AgentProcess agent("fastpass_wait_s: 30\n", running_job());
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "step", 100);
  ASSERT_EQ(upload(client, bundles[0])->status, 201);
  ASSERT_EQ(upload(client, bundles[1])->status, 201);
  auto start = std::chrono::steady_clock::now();
  auto res = fastpass(client, "gpu-a01", 1500);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_LT(took, std::chrono::milliseconds(1500));
  EXPECT_EQ(json::parse(res->body)["all_nodes_reported"], false);
}

TEST(FastPass, HangingControllerCannotMakeTheReplyLate) {
  FakeSlurm hanging;
  hanging.controller_hangs = true;
  AgentProcess agent("fastpass_wait_s: 30\n", hanging);
  auto client = agent.client();
  for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "step", 100))
    ASSERT_EQ(upload(client, b)->status, 201);
  auto start = std::chrono::steady_clock::now();
  auto res = fastpass(client, "gpu-a01", 3000);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_LT(took, std::chrono::milliseconds(4000));
  auto reply = json::parse(res->body);
  EXPECT_EQ(reply["verdict"], "attributed");
  EXPECT_EQ(reply["comment_written"], false);
  EXPECT_NE(reply["comment_status"].get<std::string>().find("timed out"), std::string::npos);
}

TEST(FastPass, CredentialMustNameThisRequest) {
  AgentProcess agent("fastpass_wait_s: 1\n", running_job());
  auto client = agent.client();
  auto res = fastpass(client, "gpu-a01", std::nullopt, credential("firstfault-fastpass 1 gpu-a01"));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  res = fastpass(client, "gpu-a01", std::nullopt, "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  // A job's user can make a credential for the right payload, but with their
  // own uid: a job cannot have its Comment written for it.
  json body = {{"job_id", "48213"}, {"node", "gpu-a01"}, {"exit_status", 256}, {"attempt", 0}};
  auto made = ff::run_process({"/usr/sbin/runuser", "-u", "nobody", "--", "/usr/bin/munge", "-n",
                               "-s", fastpass_payload("48213", "gpu-a01", body.dump())});
  ASSERT_TRUE(made.ok()) << made.describe() << made.err;
  res = fastpass(client, "gpu-a01", std::nullopt, made.out.substr(0, made.out.find('\n')));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  EXPECT_EQ(agent.slurm_calls(), "");
}

TEST(FastPass, NoBundleAtAllIsAnError) {
  AgentProcess agent("fastpass_wait_s: 0\n");
  auto client = agent.client();
  auto res = fastpass(client, "gpu-a01");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_TRUE(json::parse(res->body).contains("error"));
}

}  // namespace
