// Who may read diagnoses (they quote the job's own output): with the default
// read_access: credential, a GET without a credential is 401, one from a
// uid neither allowed to write nor in read_uids is 403, and a credential
// naming another path is 403; read_uids admits a reader who still cannot
// upload; read_access: open serves anyone. /api/v1/health stays open.
#include <gtest/gtest.h>

#include "common/run_process.h"
#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

// A credential made by `nobody` (uid 65534), as an ordinary user would.
std::string nobody_credential(const std::string& payload) {
  auto made = ff::run_process(
      {"/usr/sbin/runuser", "-u", "nobody", "--", "/usr/bin/munge", "-n", "-s", payload});
  EXPECT_TRUE(made.ok()) << made.describe() << made.err;
  return made.out.substr(0, made.out.find('\n'));
}

int get_status(httplib::Client& client, const std::string& path, const std::string& cred) {
  httplib::Headers headers;
  if (!cred.empty()) headers.emplace("X-Firstfault-Munge", cred);
  auto res = client.Get(path, headers);
  return res ? res->status : -1;
}

// One stored diagnosis (its evidence quotes node logs and the job's output).
void store_one(AgentProcess& agent, httplib::Client& client) {
  for (const auto& b :
       example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL)) {
    auto res = upload(client, b);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
  }
  ASSERT_TRUE(wait_for_diagnosis(client, "48213")) << agent.log();
}

TEST(ReadAccess, CredentialIsTheDefault) {
  AgentProcess agent("", ended_job());
  auto client = agent.client();
  store_one(agent, client);
  const std::string path = "/api/v1/jobs/48213/diagnosis";
  EXPECT_EQ(get_status(client, "/api/v1/health", ""), 200);
  EXPECT_EQ(get_status(client, path, ""), 401);
  EXPECT_EQ(get_status(client, "/api/v1/diagnoses", ""), 401);
  EXPECT_EQ(get_status(client, path, "MUNGE:garbage:"), 401);
  EXPECT_EQ(get_status(client, path, nobody_credential("firstfault-read " + path)), 403);
  // A credential for the listing does not open a job's diagnosis.
  EXPECT_EQ(get_status(client, path, credential("firstfault-read /api/v1/diagnoses")), 403);
  // Nor does an upload's credential.
  EXPECT_EQ(get_status(client, path, credential("firstfault-bundle 48213 n1 x")), 403);
  EXPECT_EQ(get_status(client, path, credential("firstfault-read " + path)), 200);
  // munged remembers: the same credential twice is a replay.
  std::string once = credential("firstfault-read " + path);
  EXPECT_EQ(get_status(client, path, once), 200);
  EXPECT_EQ(get_status(client, path, once), 401);
}

TEST(ReadAccess, ReadUidsReadButDoNotWrite) {
  AgentProcess agent("read_uids: [65534]\n", ended_job());
  auto client = agent.client();
  store_one(agent, client);
  const std::string path = "/api/v1/jobs/48213/diagnosis";
  EXPECT_EQ(get_status(client, path, nobody_credential("firstfault-read " + path)), 200);
  Bundle b;
  b.job_id = "7";
  b.node = "n1";
  b.bundle_id = "n1-7-epilog-1";
  b.files = {{"job.json", R"({"job_id": "7"})"}};
  auto res = upload(client, b, nobody_credential(b.payload()));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
}

TEST(ReadAccess, OpenServesAnyone) {
  AgentProcess agent("read_access: open\n", ended_job());
  auto client = agent.client();
  store_one(agent, client);
  EXPECT_EQ(get_status(client, "/api/v1/jobs/48213/diagnosis", ""), 200);
  EXPECT_EQ(get_status(client, "/api/v1/diagnoses", ""), 200);
}

}  // namespace
