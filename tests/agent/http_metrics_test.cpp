// GET /metrics: the Prometheus text format, open like /api/v1/health. After
// uploads (stored, a retry, refused ones) and a fast pass, every counter moved
// by exactly what happened, promtool accepts the text, and a real Prometheus
// scraping the agent every second answers queries with the same values,
// the suspects gauge (computed from the database) among them.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "common/run_process.h"
#include "tests/agent/agent_process.h"
#include "tests/central/real_prometheus.h"

namespace {

using namespace fftest;

httplib::Result fastpass(httplib::Client& client, const std::string& job_id = "48213") {
  json body = {{"job_id", job_id}, {"node", "gpu-a01"}, {"exit_status", 256}, {"attempt", 0}};
  return client.Post(
      "/api/v1/jobs/" + job_id + "/fastpass",
      {{"X-Firstfault-Munge", credential(fastpass_payload(job_id, "gpu-a01", body.dump()))}},
      body.dump(), "application/json");
}

// The example's step bundles as those of another job on the same nodes (the
// fake scontrol describes every job as 48213, whose nodes are the same).
std::vector<Bundle> same_failure_in_job(const std::string& job_id) {
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "step", 300);
  for (auto& b : bundles) {
    b.bundle_id = b.node + "-" + job_id + "-step-300";
    b.job_id = job_id;
    json fragment = json::parse(b.files[0].second);
    fragment["job_id"] = job_id;
    b.files[0].second = fragment.dump(2);
  }
  return bundles;
}

// One sample of the text format: name, labels, value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// The samples of an exposition (label values here have no escapes).
std::vector<Sample> parse_exposition(const std::string& text) {
  std::vector<Sample> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    auto brace = line.find('{');
    auto space = line.rfind(' ');
    if (brace != std::string::npos && brace < space) {
      s.name = line.substr(0, brace);
      std::string labels = line.substr(brace + 1, line.rfind('}') - brace - 1);
      std::size_t pos = 0;
      while (pos < labels.size()) {
        auto eq = labels.find("=\"", pos);
        auto close = labels.find('"', eq + 2);
        s.labels[labels.substr(pos, eq - pos)] = labels.substr(eq + 2, close - eq - 2);
        pos = close + 2;  // past `",`
      }
    } else {
      s.name = line.substr(0, space);
    }
    s.value = std::stod(line.substr(space + 1));
    out.push_back(std::move(s));
  }
  return out;
}

// The sum of the samples of `name` whose labels include `match`; 0 when none.
double total(const std::vector<Sample>& samples, const std::string& name,
             const std::map<std::string, std::string>& match = {}) {
  double sum = 0;
  for (const auto& s : samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : match) all = all && s.labels.count(k) && s.labels.at(k) == v;
    if (all) sum += s.value;
  }
  return sum;
}

std::string scrape_text(httplib::Client& client) {
  auto res = client.Get("/metrics");  // no credential: it is open
  if (!res || res->status != 200) return "";
  return res->body;
}

// Step bundles of the example Xid 79 incident, a retry of one, one without a
// credential, one with a bad meta part, then the fast pass.
struct Traffic {
  std::string domain;  // of the stored diagnosis
  std::chrono::steady_clock::duration fastpass_took{};
};

Traffic drive(AgentProcess& agent) {
  Traffic t;
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "step", 100);
  for (const auto& b : bundles) EXPECT_EQ(upload(client, b)->status, 201);
  EXPECT_EQ(upload(client, bundles[0])->status, 200);  // a collector's retry
  Bundle stranger = bundles[1];
  stranger.bundle_id = "gpu-a02-48213-step-999";
  EXPECT_EQ(upload(client, stranger, std::string())->status, 401);
  Bundle bad = bundles[2];
  bad.bundle_id = "gpu-a03-48213-step-999";
  bad.pass = "later";
  EXPECT_EQ(upload(client, bad)->status, 400);
  auto start = std::chrono::steady_clock::now();
  auto res = fastpass(client);
  t.fastpass_took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no reply") << agent.log();
  auto d = read(client, "/api/v1/jobs/48213/diagnosis");
  EXPECT_TRUE(d && d->status == 200);
  if (d && d->status == 200) t.domain = json::parse(d->body).value("domain", "");
  return t;
}

TEST(Metrics, CountersMoveByExactlyWhatHappenedAndPromtoolAcceptsTheText) {
  AgentProcess agent("fastpass_wait_s: 5\n", running_job());
  auto client = agent.client();
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  auto before = parse_exposition(res->body);
  EXPECT_EQ(total(before, "firstfault_build_info", {{"version", FF_PROJECT_VERSION}}), 1);
  double started = total(before, "firstfault_agent_start_time_seconds");
  double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_GT(started, now - 120);
  EXPECT_LE(started, now + 1);
  EXPECT_EQ(total(before, "firstfault_bundles_received_total"), 0);
  EXPECT_EQ(total(before, "firstfault_fastpass_duration_seconds_count"), 0);
  for (const char* kind : {"node", "gpu", "ib_port", "switch_port"})
    EXPECT_EQ(total(before, "firstfault_suspects", {{"kind", kind}}), 0) << kind;
  EXPECT_NE(res->body.find("firstfault_suspects{kind=\"node\"} 0\n"), std::string::npos);

  Traffic t = drive(agent);
  ASSERT_FALSE(t.domain.empty());

  std::string text = scrape_text(client);
  auto after = parse_exposition(text);
  EXPECT_EQ(total(after, "firstfault_bundles_received_total", {{"pass", "step"}}), 3) << text;
  EXPECT_EQ(total(after, "firstfault_bundles_received_total"), 3);
  EXPECT_EQ(total(after, "firstfault_bundles_duplicate_total"), 1);
  EXPECT_EQ(total(after, "firstfault_bundles_rejected_total", {{"reason", "auth"}}), 1) << text;
  EXPECT_EQ(total(after, "firstfault_bundles_rejected_total", {{"reason", "invalid"}}), 1);
  EXPECT_EQ(total(after, "firstfault_bundles_rejected_total"), 2);
  EXPECT_EQ(total(after, "firstfault_diagnoses_total",
                  {{"trigger", "fastpass"}, {"verdict", "attributed"}, {"domain", t.domain}}),
            1)
      << text;
  EXPECT_EQ(total(after, "firstfault_diagnoses_total"), 1);
  EXPECT_EQ(total(after, "firstfault_fastpass_duration_seconds_count"), 1);
  EXPECT_EQ(total(after, "firstfault_fastpass_duration_seconds_bucket", {{"le", "+Inf"}}), 1);
  double fastpass_s = total(after, "firstfault_fastpass_duration_seconds_sum");
  EXPECT_GT(fastpass_s, 0);
  EXPECT_LE(fastpass_s, std::chrono::duration<double>(t.fastpass_took).count());
  EXPECT_EQ(total(after, "firstfault_engine_duration_seconds_count", {{"trigger", "fastpass"}}), 1);
  EXPECT_EQ(total(after, "firstfault_pass_duration_seconds_count", {{"trigger", "fastpass"}}), 1);
  EXPECT_LE(total(after, "firstfault_engine_duration_seconds_sum"),
            total(after, "firstfault_pass_duration_seconds_sum"));

  // Prometheus's own checker: syntax, and its lint rules (names, units, _total).
  auto check = ff::run_process({"/usr/bin/promtool", "check", "metrics"},
                               {.stdin_text = text, .timeout = std::chrono::seconds(20)});
  EXPECT_TRUE(check.ok()) << check.describe() << "\n" << check.out << check.err << "\n" << text;
}

TEST(Metrics, ScrapedByARealPrometheus) {
  if (!RealPrometheus::installed())
    GTEST_SKIP() << kPrometheusBinary << " is not installed (Debian package `prometheus`)";
  AgentProcess agent("fastpass_wait_s: 5\n", running_job());
  drive(agent);
  // The same GPU fails a second job: gpu-a02 becomes a flagged suspect.
  {
    auto client = agent.client();
    for (const auto& b : same_failure_in_job("48214")) ASSERT_EQ(upload(client, b)->status, 201);
    auto res = fastpass(client, "48214");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
  }

  ScratchDirectory dir{"agent"};
  RealPrometheus prom(dir.path());
  prom.write_config(
      "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      "scrape_configs:\n  - job_name: firstfault\n    static_configs:\n"
      "      - targets: ['127.0.0.1:" +
      std::to_string(agent.port()) + "']\n");
  ASSERT_TRUE(prom.start()) << prom.log();

  ASSERT_TRUE(wait_until([&] { return prom.scalar("up{job=\"firstfault\"}") == "1"; },
                         std::chrono::seconds(20)))
      << prom.log() << prom.query("up").dump();
  EXPECT_EQ(prom.scalar("firstfault_bundles_received_total{pass=\"step\"}"), "6");
  EXPECT_EQ(prom.scalar("sum(firstfault_bundles_rejected_total)"), "2");
  EXPECT_EQ(prom.scalar("firstfault_diagnoses_total{trigger=\"fastpass\",verdict=\"attributed\"}"),
            "2")
      << prom.query("firstfault_diagnoses_total").dump();
  EXPECT_EQ(prom.scalar("firstfault_fastpass_duration_seconds_count"), "2");
  // Computed from the database at the scrape: the node and its GPU, in two failed jobs.
  EXPECT_EQ(prom.scalar("firstfault_suspects{kind=\"node\"}"), "1")
      << prom.query("firstfault_suspects").dump();
  EXPECT_EQ(prom.scalar("firstfault_suspects{kind=\"gpu\"}"), "1");
  EXPECT_EQ(prom.scalar("firstfault_suspects{kind=\"ib_port\"}"), "0");

  // Later counts reach Prometheus at the next scrapes.
  auto client = agent.client();
  auto epilog = example_bundles("01-xid79-fallen-off-bus", "epilog", 200);
  for (const auto& b : epilog) ASSERT_EQ(upload(client, b)->status, 201);
  EXPECT_TRUE(wait_until(
      [&] { return prom.scalar("firstfault_bundles_received_total{pass=\"epilog\"}") == "3"; },
      std::chrono::seconds(15)))
      << prom.query("firstfault_bundles_received_total").dump();
  EXPECT_EQ(prom.scalar("sum(firstfault_bundles_received_total)"), "9");
}

}  // namespace
