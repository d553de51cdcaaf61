// The limits of agent.yaml (max_files_per_bundle, max_file_bytes,
// max_line_bytes, max_lines_per_job): a bundle over one is refused with 413
// and an error naming the limit, and nothing of it is stored — not its good
// files, not a row — while what was stored before stays as it was.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

Bundle bundle(const std::string& node, const std::string& id,
              std::vector<std::pair<std::string, std::string>> extra) {
  Bundle b;
  b.job_id = "505";
  b.node = node;
  b.bundle_id = id;
  b.files = {{"job.json", R"({"job_id": "505", "nodes": ["n1", "n2"]})"}};
  for (auto& f : extra) b.files.push_back(std::move(f));
  return b;
}

std::string lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += "kernel: line " + std::to_string(i) + "\n";
  return text;
}

// Refused with 413, the message naming `setting`, nothing of `b` kept.
void expect_refused_whole(AgentProcess& agent, httplib::Client& client, const Bundle& b,
                          const std::string& setting) {
  auto res = upload(client, b);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413) << res->body;
  auto body = json::parse(res->body, nullptr, false);
  ASSERT_TRUE(body.is_object() && body.contains("error")) << res->body;
  EXPECT_NE(body["error"].get<std::string>().find(setting), std::string::npos) << res->body;
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/505/0/bundles" / b.bundle_id));
  EXPECT_TRUE(files_under(agent.state() / "tmp").empty());
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT count(*) FROM bundles WHERE bundle_id = '" + b.bundle_id + "'"),
            0);
}

TEST(Limits, FileCount) {
  AgentProcess agent("max_files_per_bundle: 3\n");
  auto client = agent.client();
  expect_refused_whole(
      agent, client,
      bundle("n1", "n1-505-a",
             {{"nodes/n1/kernel", "k\n"}, {"nodes/n1/syslog", "s\n"}, {"nodes/n1/slurmd", "d\n"}}),
      "max_files_per_bundle");
  EXPECT_EQ(upload(client, bundle("n1", "n1-505-b", {{"nodes/n1/kernel", "k\n"}}))->status, 201);
}

TEST(Limits, FileSize) {
  AgentProcess agent("max_file_bytes: 4096\n");
  auto client = agent.client();
  // The good file comes first: it must not be kept either.
  expect_refused_whole(
      agent, client,
      bundle("n1", "n1-505-a", {{"nodes/n1/kernel", "fine\n"}, {"app/out.log", lines(400)}}),
      "max_file_bytes");
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/505"));
}

TEST(Limits, LineLength) {
  AgentProcess agent("max_line_bytes: 2048\n");
  auto client = agent.client();
  auto res = upload(
      client,
      bundle("n1", "n1-505-a", {{"nodes/n1/kernel", "short\n" + std::string(3000, 'x') + "\n"}}));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  // Which file, which line and which setting.
  EXPECT_NE(res->body.find("nodes/n1/kernel' line 2"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("max_line_bytes"), std::string::npos) << res->body;
  // Exactly the limit is allowed, newline not counted.
  EXPECT_EQ(
      upload(client, bundle("n1", "n1-505-b", {{"nodes/n1/kernel", std::string(2048, 'x') + "\n"}}))
          ->status,
      201);
}

TEST(Limits, LinesPerJobOverEveryBundle) {
  AgentProcess agent("max_lines_per_job: 100\n");
  auto client = agent.client();
  // job.json is one line (no newline at its end) in each bundle.
  ASSERT_EQ(upload(client, bundle("n1", "n1-505-a", {{"nodes/n1/kernel", lines(60)}}))->status,
            201);
  expect_refused_whole(agent, client, bundle("n2", "n2-505-a", {{"nodes/n2/kernel", lines(60)}}),
                       "max_lines_per_job");
  // What was stored before is untouched; a bundle that fits still goes in.
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/505/0/bundles/n1-505-a/nodes/n1/kernel"));
  EXPECT_EQ(upload(client, bundle("n2", "n2-505-b", {{"nodes/n2/kernel", lines(30)}}))->status,
            201);
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT sum(lines) FROM bundles WHERE job_id = '505'"),
            61 + 31);
  // A resend of a stored bundle is acknowledged, not counted again.
  EXPECT_EQ(upload(client, bundle("n1", "n1-505-a", {{"nodes/n1/kernel", lines(60)}}))->status,
            200);
}

}  // namespace
