// File names that try to leave the bundle or claim another node's files:
// 400, and nothing on disk.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

TEST(PathTricks, RefusedWithNothingOnDisk) {
  AgentProcess agent;
  auto client = agent.client();
  const char* tricks[] = {
      "../x",           "/etc/passwd",         "nodes/other/kernel",    "nodes/n1/../../x",
      "app/../../x",    "nodes/n1/sub/kernel", "cluster/slurmctld.log", "app/",
      "nodes/n1/passwd"};
  int n = 0;
  for (const char* trick : tricks) {
    Bundle b;
    b.job_id = "303";
    b.node = "n1";
    b.bundle_id = "n1-303-epilog-" + std::to_string(n++);
    b.files = {{"job.json", R"({"job_id": "303", "nodes": ["n1"]})"},
               {"nodes/n1/kernel", "fine\n"},
               {trick, "x\n"}};
    auto res = upload(client, b);
    ASSERT_TRUE(res) << trick;
    EXPECT_EQ(res->status, 400) << trick << ": " << res->body;
    auto body = json::parse(res->body, nullptr, false);
    EXPECT_TRUE(body.is_object() && body.contains("error")) << res->body;
  }
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/303"));
  EXPECT_TRUE(files_under(agent.state() / "tmp").empty());
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db", "SELECT count(*) FROM bundles"), 0);
}

TEST(PathTricks, MetaNamesAreChecked) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b;
  b.job_id = "../303";
  b.node = "n1";
  b.bundle_id = "x";
  b.files = {{"job.json", "{}"}};
  EXPECT_EQ(upload(client, b)->status, 400);
  b.job_id = "303";
  b.bundle_id = "../../etc";
  EXPECT_EQ(upload(client, b)->status, 400);
  b.bundle_id = "ok";
  b.node = "../n1";
  EXPECT_EQ(upload(client, b)->status, 400);
  EXPECT_FALSE(fs::exists(agent.state() / "jobs" / "303"));
}

}  // namespace
