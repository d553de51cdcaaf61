// The same bundles uploaded in two orders to two agents give byte-identical
// merged job.json and diagnosis: only "newest bundle per node" (by the stamp
// in bundle_id) and "Epilog beats step" decide, never arrival order.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

std::vector<Bundle> bundle_set() {
  auto steps = example_bundles("01-xid79-fallen-off-bus", "step", 100);
  std::vector<Bundle> all = steps;
  // An older step bundle of gpu-a01 that claims an Xid 79 there: it must lose.
  Bundle stale = steps[0];
  stale.bundle_id = "gpu-a01-48213-step-50";
  for (auto& [name, content] : stale.files)
    if (name == "nodes/gpu-a01/syslog")
      content =
          "Nov  2 10:40:00 gpu-a01 kernel: [1.0] NVRM: Xid (PCI:0000:18:00): 79, pid=1, "
          "GPU has fallen off the bus.\n";
  all.push_back(stale);
  // gpu-a02's Epilog bundle beats its (newer-stamped) step bundle.
  auto epilogs = example_bundles("01-xid79-fallen-off-bus", "epilog", 10);
  all.push_back(epilogs[1]);
  return all;
}

struct Outcome {
  std::string job_json, pass_json, reply_verdict, diagnosis;
};

Outcome run(const std::vector<Bundle>& order) {
  AgentProcess agent;
  auto client = agent.client();
  for (const auto& b : order) {
    auto res = upload(client, b);
    EXPECT_TRUE(res && res->status == 201) << b.bundle_id;
  }
  json body = {{"job_id", "48213"}, {"node", "gpu-a01"}, {"exit_status", 256}, {"attempt", 0}};
  auto res = client.Post(
      "/api/v1/jobs/48213/fastpass",
      {{"X-Firstfault-Munge", credential(fastpass_payload("48213", "gpu-a01", body.dump()))}},
      body.dump(), "application/json");
  Outcome o;
  EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no reply") << agent.log();
  if (!res || res->status != 200) return o;
  auto reply = json::parse(res->body);
  EXPECT_EQ(reply["pass"], "fastpass");
  EXPECT_EQ(reply["all_nodes_reported"], true);
  o.reply_verdict = reply["verdict"];
  o.job_json = read_file(agent.state() / "jobs/48213/0/incident/job.json");
  o.pass_json = read_file(agent.state() / "jobs/48213/0/passes/1.json");
  o.diagnosis = read(client, "/api/v1/jobs/48213/diagnosis")->body;
  return o;
}

TEST(MergeDeterminism, TwoOrdersSameBytes) {
  auto forward = bundle_set();
  auto backward = forward;
  std::reverse(backward.begin(), backward.end());
  Outcome a = run(forward);
  Outcome b = run(backward);
  ASSERT_FALSE(a.job_json.empty());
  EXPECT_EQ(a.job_json, b.job_json);
  EXPECT_EQ(a.pass_json, b.pass_json);
  EXPECT_EQ(a.diagnosis, a.pass_json);
  EXPECT_EQ(a.reply_verdict, "attributed");
  auto d = json::parse(a.pass_json);
  EXPECT_EQ(d["root_causes"][0]["node"], "gpu-a02");
  auto job = json::parse(a.job_json);
  EXPECT_EQ(job["state"], "FAILED");
  EXPECT_EQ(job["exit_code"], "1:0");
  EXPECT_EQ(job["ranks"].size(), 24u);
}

}  // namespace
