// Credentials: missing, garbage, replayed, expired → 401; another uid or a payload
// that names another request → 403; nothing is written in any case.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "common/run_process.h"
#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

Bundle bundle() {
  Bundle b;
  b.job_id = "202";
  b.node = "n1";
  b.bundle_id = "n1-202-epilog-1";
  b.files = {{"job.json", R"({"job_id": "202", "nodes": ["n1"]})"}};
  return b;
}

void expect_nothing_stored(const AgentProcess& agent) {
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/202"));
  EXPECT_TRUE(files_under(agent.state() / "tmp").empty());
  EXPECT_EQ(count_rows(agent.state() / "firstfault.db", "SELECT count(*) FROM bundles"), 0);
}

int status_of(httplib::Result res) {
  return res ? res->status : -1;
}

TEST(Credential, MissingIs401) {
  AgentProcess agent;
  auto client = agent.client();
  EXPECT_EQ(status_of(upload(client, bundle(), "")), 401);
  expect_nothing_stored(agent);
}

TEST(Credential, GarbageIs401) {
  AgentProcess agent;
  auto client = agent.client();
  EXPECT_EQ(status_of(upload(client, bundle(), "MUNGE:not-a-credential:")), 401);
  expect_nothing_stored(agent);
}

TEST(Credential, ReplayedIs401) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b = bundle();
  std::string cred = credential(b.payload());
  // Someone decoded it before (munged remembers): a copied request.
  ASSERT_TRUE(ff::munge_credential::decode(cred).ok);
  EXPECT_EQ(status_of(upload(client, b, cred)), 401);
  expect_nothing_stored(agent);
}

TEST(Credential, ExpiredIs401) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b = bundle();
  // A credential with a time to live of 1 s, used 3 s later (a request
  // captured and sent again after its time).
  auto made = ff::run_process({"/usr/bin/munge", "-n", "-t", "1", "-s", b.payload()});
  ASSERT_TRUE(made.ok()) << made.describe() << made.err;
  std::this_thread::sleep_for(std::chrono::seconds(3));
  auto res = upload(client, b, made.out.substr(0, made.out.find('\n')));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401) << res->body;
  EXPECT_NE(res->body.find("expired"), std::string::npos) << res->body;
  expect_nothing_stored(agent);
}

TEST(Credential, WrongPayloadIs403) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b = bundle();
  EXPECT_EQ(status_of(upload(client, b, credential("firstfault-bundle 202 n2 " + b.bundle_id))),
            403);
  EXPECT_EQ(status_of(upload(client, b, credential("firstfault-bundle 203 n1 " + b.bundle_id))),
            403);
  expect_nothing_stored(agent);
}

TEST(Credential, UidNotAllowedIs403) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b = bundle();
  // A credential made by `nobody`, as an unprivileged job would.
  auto made = ff::run_process(
      {"/usr/sbin/runuser", "-u", "nobody", "--", "/usr/bin/munge", "-n", "-s", b.payload()});
  ASSERT_TRUE(made.ok()) << made.describe() << made.err;
  std::string cred = made.out.substr(0, made.out.find('\n'));
  auto res = upload(client, b, cred);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  expect_nothing_stored(agent);
}

TEST(Credential, AllowedUidsAdmitsAnotherUser) {
  AgentProcess agent("allowed_uids: [65534]\n");
  auto client = agent.client();
  Bundle b = bundle();
  auto made = ff::run_process(
      {"/usr/sbin/runuser", "-u", "nobody", "--", "/usr/bin/munge", "-n", "-s", b.payload()});
  ASSERT_TRUE(made.ok());
  auto res = upload(client, b, made.out.substr(0, made.out.find('\n')));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
}

}  // namespace
