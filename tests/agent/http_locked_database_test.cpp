// An operator's sqlite3 shell holds the agent's database in BEGIN EXCLUSIVE
// for longer than the agent's busy timeout and retries. Meanwhile the agent
// stays responsive (health and the read endpoints answer at once), an upload
// waits and is then refused with 503 — its files are kept — and nothing is
// lost: once the lock is gone, the collector's resend completes each bundle
// and the final pass stores the diagnosis once.
#include <gtest/gtest.h>

#include <cstdio>
#include <future>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;
using Clock = std::chrono::steady_clock;

// The real sqlite3 shell in a write transaction until release().
class ExclusiveLock {
 public:
  ExclusiveLock(const fs::path& db, const fs::path& marker) {
    shell_ = ::popen(("sqlite3 '" + db.string() + "'").c_str(), "w");
    if (!shell_) throw std::runtime_error("popen sqlite3");
    std::fprintf(shell_, "BEGIN EXCLUSIVE;\n.output %s\n.print locked\n.output stdout\n",
                 marker.c_str());
    std::fflush(shell_);
  }
  void release() {
    if (!shell_) return;
    std::fprintf(shell_, "COMMIT;\n.quit\n");
    ::pclose(shell_);
    shell_ = nullptr;
  }
  ~ExclusiveLock() { release(); }

 private:
  FILE* shell_ = nullptr;
};

// Milliseconds a GET takes, or -1 when it failed.
long long timed_get(httplib::Client& client, const std::string& path, bool with_credential) {
  auto start = Clock::now();
  auto res = with_credential ? read(client, path) : client.Get(path);
  if (!res) return -1;
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

TEST(LockedDatabase, ResponsiveLosesNothing) {
  AgentProcess agent("", ended_job());
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL);
  ASSERT_EQ(bundles.size(), 3u);
  ASSERT_EQ(upload(client, bundles[0])->status, 201);

  fs::path marker = agent.dir() / "locked";
  ExclusiveLock lock(agent.state() / "firstfault.db", marker);
  for (int i = 0; i < 100 && !fs::exists(marker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(marker)) << "sqlite3 did not take the lock";

  // Two uploads wait on the lock in the background.
  auto upload_async = [&](const Bundle& b) {
    return std::async(std::launch::async, [&agent, b] {
      auto c = agent.client();
      auto res = upload(c, b);
      return res ? res->status : -1;
    });
  };
  auto first = upload_async(bundles[1]);
  auto second = upload_async(bundles[2]);

  // While they wait, the agent answers at once.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (int i = 0; i < 5; ++i) {
    long long health = timed_get(client, "/api/v1/health", false);
    long long list = timed_get(client, "/api/v1/diagnoses", true);
    EXPECT_GE(health, 0);
    EXPECT_LT(health, 1000) << "health took " << health << " ms while the database was locked";
    EXPECT_GE(list, 0);
    EXPECT_LT(list, 1000) << "diagnoses took " << list << " ms while the database was locked";
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  // The lock outlasts the agent's retries: 503, try again later.
  int first_status = first.get();
  int second_status = second.get();
  EXPECT_EQ(first_status, 503) << agent.log();
  EXPECT_EQ(second_status, 503);
  // Their files are kept; only the rows are missing.
  EXPECT_TRUE(fs::exists(agent.state() / "jobs/48213/0/bundles" / bundles[1].bundle_id));
  lock.release();

  // The collector's resend: each bundle is stored now, the pass runs once.
  EXPECT_EQ(upload(client, bundles[1])->status, 201);
  EXPECT_EQ(upload(client, bundles[2])->status, 201);
  auto d = wait_for_diagnosis(client, "48213");
  ASSERT_TRUE(d) << agent.log();
  EXPECT_EQ((*d)["verdict"], "attributed");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto db = agent.state() / "firstfault.db";
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM bundles WHERE job_id = '48213'"), 3);
  EXPECT_EQ(count_rows(db, "SELECT count(*) FROM diagnoses WHERE job_id = '48213'"), 1);
}

}  // namespace
