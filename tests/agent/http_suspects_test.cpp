// GET /api/v1/suspects against the real agent: the engine's diagnosis of the
// xid79 example (gpu-a02's GPU 00000000:5D:00.0) plus two more failures of
// the same GPU written into the agent's database make it the top suspect;
// the read rule is the one of /api/v1/diagnoses.
#include <gtest/gtest.h>

#include <ctime>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

// The GPU the example's Xid 79 names, and its UUID from the example's job.json.
const std::string kGpu = "00000000:5D:00.0";
const std::string kGpuUuid = "GPU-3e724e8f-d8b4-fa19-78ac-2a60cbee9a99";

void exec_sql(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  char* error = nullptr;
  int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &error);
  std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(h);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

// The real diagnosis of job 48213, then jobs 9001 and 9002 (one hour and
// one day earlier) that blame the same GPU, and 9003 blaming gpu-b07 once.
void store_history(AgentProcess& agent, httplib::Client& client) {
  for (const auto& b :
       example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL)) {
    auto res = upload(client, b);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
  }
  ASSERT_TRUE(wait_for_diagnosis(client, "48213")) << agent.log();
  auto now = static_cast<long long>(std::time(nullptr));
  std::string sql;
  int id = 1000;
  for (auto [job, node, device, age] :
       {std::tuple{"9001", "gpu-a02", kGpu, 3600LL}, std::tuple{"9002", "gpu-a02", kGpu, 86400LL},
        std::tuple{"9003", "gpu-b07", std::string("00000000:1A:00.0"), 7200LL}}) {
    std::string at = std::to_string(now - age);
    sql +=
        "INSERT INTO diagnoses (id, job_id, attempt, pass_no, trigger, created_at, verdict, "
        "domain, diagnosis_json) VALUES (" +
        std::to_string(id) + ", '" + job + "', 0, 1, 'final', " + at +
        ", 'attributed', 'gpu', '{}');"
        "INSERT INTO root_causes (diagnosis_id, ordinal, node, device, event, domain, "
        "sub_domain, origin, trusted) VALUES (" +
        std::to_string(id) + ", 0, '" + node + "', '" + device +
        "', 'xid', 'gpu', 'gpu.fallen_off_bus', 'kernel', 1);";
    ++id;
  }
  exec_sql(agent.state() / "firstfault.db", sql);
}

TEST(HttpSuspects, RepeatGpuIsTheTopSuspect) {
  AgentProcess agent("read_access: open\n", ended_job());
  auto client = agent.client();
  store_history(agent, client);

  auto res = client.Get("/api/v1/suspects");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto body = json::parse(res->body);
  ASSERT_FALSE(body["suspects"].empty()) << body.dump(2);
  const auto& top = body["suspects"][0];
  EXPECT_EQ(top["kind"], "gpu") << body.dump(1);
  EXPECT_EQ(top["id"], "gpu-a02/" + kGpu);
  EXPECT_EQ(top["jobs"], 3);
  // 9001 and 9002 come from the kernel; the example's Xid (48213) is a
  // syslog line, which a user can forge: a candidate, not a certainty.
  EXPECT_EQ(top["attributed_jobs"], 2);
  EXPECT_EQ(top["ambiguous_jobs"], 1);
  EXPECT_EQ(top["flagged"], true);
  // From the engine's root cause through the store's device_uuid column.
  EXPECT_EQ(top["device_uuid"], kGpuUuid);
  std::vector<std::string> jobs;
  for (const auto& j : top["job_list"]) jobs.push_back(j["job_id"]);
  // Oldest first by the root cause's time; 48213's is the example's log time.
  std::sort(jobs.begin(), jobs.end());
  EXPECT_EQ(jobs, (std::vector<std::string>{"48213", "9001", "9002"}));
  // gpu-b07 failed once: only with all=1.
  for (const auto& s : body["suspects"]) EXPECT_NE(s["node"], "gpu-b07");
  EXPECT_GE(body["unflagged"], 2);
  auto all = client.Get("/api/v1/suspects?all=1");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->status, 200);
  EXPECT_NE(all->body.find("gpu-b07/00000000:1A:00.0"), std::string::npos) << all->body;

  // since: unix seconds, an age, RFC 3339.
  auto recent = client.Get("/api/v1/suspects?since=2h");
  ASSERT_TRUE(recent);
  ASSERT_EQ(recent->status, 200);
  auto recent_body = json::parse(recent->body);
  ASSERT_FALSE(recent_body["suspects"].empty()) << recent->body;
  EXPECT_EQ(recent_body["suspects"][0]["jobs"], 2);  // 9002 is a day old
  auto future = client.Get("/api/v1/suspects?since=" + std::to_string(std::time(nullptr) + 3600));
  ASSERT_TRUE(future);
  EXPECT_EQ(json::parse(future->body)["suspects"], json::array());
  auto dated = client.Get("/api/v1/suspects?since=2020-01-01T00:00:00Z");
  ASSERT_TRUE(dated);
  EXPECT_EQ(json::parse(dated->body)["since"], 1577836800);
  auto bad = client.Get("/api/v1/suspects?since=yesterday");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("since"), std::string::npos);
}

// The dashboard's list of recent failures: failures=1 leaves completed jobs
// out in the store, so the limit counts failures only.
TEST(HttpSuspects, DiagnosesListCanLeaveOutCompletedJobs) {
  AgentProcess agent("read_access: open\n", ended_job());
  auto client = agent.client();
  store_history(agent, client);
  auto now = std::to_string(static_cast<long long>(std::time(nullptr)));
  exec_sql(agent.state() / "firstfault.db",
           "INSERT INTO diagnoses (id, job_id, attempt, pass_no, trigger, created_at, verdict, "
           "diagnosis_json) VALUES (2000, '9100', 0, 1, 'final', " +
               now + ", 'no_failure', '{}');");
  auto ids = [&](const std::string& target) {
    std::vector<std::string> out;
    auto res = client.Get(target);
    EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
    if (!res) return out;
    json body = json::parse(res->body);  // not a temporary: the loop reads into it
    for (const auto& d : body["diagnoses"]) out.push_back(d["job_id"]);
    return out;
  };
  auto all = ids("/api/v1/diagnoses?limit=1");
  EXPECT_EQ(all, std::vector<std::string>{"9100"});
  auto failures = ids("/api/v1/diagnoses?limit=1&failures=1");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0], "9100");
  EXPECT_EQ(ids("/api/v1/diagnoses?failures=1").size(), 4u);
}

TEST(HttpSuspects, CredentialByDefault) {
  AgentProcess agent("suspects:\n  min_jobs: 4\n", ended_job());
  auto client = agent.client();
  store_history(agent, client);
  auto refused = client.Get("/api/v1/suspects");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401) << refused->body;
  // A credential for another path is refused too.
  auto other =
      client.Get("/api/v1/suspects",
                 {{"X-Firstfault-Munge", credential("firstfault-read /api/v1/diagnoses")}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);
  auto res = read(client, "/api/v1/suspects");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto body = json::parse(res->body);
  // agent.yaml suspects.min_jobs: 4, so three failures are not flagged.
  EXPECT_EQ(body["settings"]["min_jobs"], 4);
  EXPECT_EQ(body["suspects"], json::array()) << res->body;
}

}  // namespace
