// POST /api/v1/bundles with a valid credential: 201, on disk, one row; the
// same bundle_id again: 200, still one row, nothing rewritten.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

Bundle small_bundle() {
  Bundle b;
  b.job_id = "101";
  b.node = "n1";
  b.pass = "step";
  b.bundle_id = "n1-101-step-1000";
  b.files = {{"job.json", R"({"job_id": "101", "nodes": ["n1", "n2"]})"},
             {"nodes/n1/kernel", "[  1.0] hello\n"},
             {"app/slurm-101.out", "Traceback\n"}};
  return b;
}

TEST(Upload, ValidCredentialStoresBundleAndRow) {
  AgentProcess agent;
  auto client = agent.client();
  auto res = upload(client, small_bundle());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
  fs::path dir = agent.state() / "jobs/101/0/bundles/n1-101-step-1000";
  EXPECT_EQ(files_under(dir),
            (std::vector<std::string>{"app/slurm-101.out", "job.json", "nodes/n1/kernel"}));
  EXPECT_EQ(read_file(dir / "nodes/n1/kernel"), "[  1.0] hello\n");
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db",
                       "SELECT count(*) FROM bundles WHERE bundle_id = 'n1-101-step-1000' AND "
                       "job_id = '101' AND node = 'n1' AND pass = 'step'"),
            1);
  EXPECT_TRUE(files_under(agent.state() / "tmp").empty());
  EXPECT_EQ(agent.stop(), 0) << agent.log();
}

TEST(Upload, DuplicateBundleIdIsAcknowledgedOnce) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b = small_bundle();
  auto first = upload(client, b);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 201);
  b.files[1].second = "different content\n";  // a retry is not re-read
  auto second = upload(client, b);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 200) << second->body;
  EXPECT_EQ(read_file(agent.state() / "jobs/101/0/bundles/n1-101-step-1000/nodes/n1/kernel"),
            "[  1.0] hello\n");
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db", "SELECT count(*) FROM bundles"), 1);
}

TEST(Upload, IncidentIsRebuiltAfterArrival) {
  AgentProcess agent;
  auto client = agent.client();
  ASSERT_EQ(upload(client, small_bundle())->status, 201);
  fs::path job = agent.state() / "jobs/101/0/incident/job.json";
  for (int i = 0; i < 100 && !fs::exists(job); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(job));
  auto merged = json::parse(read_file(job));
  EXPECT_EQ(merged["nodes"], json({"n1", "n2"}));
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/101/0/incident/nodes/n1/kernel"));
}

TEST(Upload, MalformedMetaIs400) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b = small_bundle();
  b.pass = "later";
  auto res = upload(client, b);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(json::parse(res->body)["error"].get<std::string>().find("pass"), std::string::npos);
  Bundle no_job_json = small_bundle();
  no_job_json.files.erase(no_job_json.files.begin());
  res = upload(client, no_job_json);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/101"));
}

// A flight-recorder dump is stored and merged as the bytes sent, under its
// node (binary: a 2 MiB run without a newline is no over-long line); a name
// that is not a global rank is refused whole.
TEST(Upload, FlightRecorderDumpLandsUnderItsNode) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b = small_bundle();
  const char head[] = "\x80\x02}q\x00(X\x07\x00\x00\x00version";
  std::string pickle(head, sizeof head - 1);
  pickle += std::string(2u << 20, '\x01');
  pickle += '.';
  b.files.push_back({"nodes/n1/flight_recorder/3", pickle});
  auto res = upload(client, b);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  fs::path dump = agent.state() / "jobs/101/0/incident/nodes/n1/flight_recorder/3";
  for (int i = 0; i < 100 && !fs::exists(dump); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(dump));
  EXPECT_EQ(read_file(dump), pickle);
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/101/0/incident/nodes/n1/kernel"));

  for (const char* bad : {"nodes/n1/flight_recorder/../x", "nodes/n1/flight_recorder/rank_3",
                          "nodes/n1/flight_recorder/03", "flight_recorder/3"}) {
    Bundle refused = small_bundle();
    refused.job_id = "102";
    refused.bundle_id = "n1-102-step-1000";
    refused.files[0].second = R"({"job_id": "102", "nodes": ["n1"]})";
    refused.files.push_back({bad, "x"});
    res = upload(client, refused);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << bad << ": " << res->body;
  }
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/102"));
  EXPECT_EQ(agent.stop(), 0) << agent.log();
}

}  // namespace
