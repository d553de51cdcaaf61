// A request over max_request_bytes is refused with 413 and stores nothing.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

TEST(Oversize, Is413) {
  AgentProcess agent("max_request_bytes: 65536\n");
  auto client = agent.client();
  Bundle b;
  b.job_id = "404";
  b.node = "n1";
  b.bundle_id = "n1-404-epilog-1";
  b.files = {{"job.json", R"({"job_id": "404"})"}, {"nodes/n1/kernel", std::string(200000, 'k')}};
  auto res = upload(client, b);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/404"));
  b.files[1].second = "small\n";
  res = upload(client, b);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
}

}  // namespace
