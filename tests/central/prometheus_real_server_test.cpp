// fetch_metrics against a real Prometheus (/usr/bin/prometheus, Debian's
// `prometheus` package), started here on a free loopback port with a
// temporary TSDB, scraping every second an exporter this test serves with
// values it controls: gpu-a01's IB port error counter jumps at a known
// moment, gpu-a03's exporter starts failing (up == 0) and gpu-a02's target is
// removed from the scrape config (its `up` series stops). The files written
// are then given to the engine, which must find those three facts as events.
// Skipped only when /usr/bin/prometheus is not installed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "central/prometheus/prometheus_fetch.h"
#include "common/http/http_client.h"
#include "engine/pipeline/analyze.h"
#include "engine/rules/compiled_rules.h"
#include "incident/diagnosis_json.h"
#include "incident/time/time.h"
#include "tests/central/real_prometheus.h"
#include "tests/support/scratch_directory.h"

extern char** environ;

namespace ff::sources {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// node_exporter's exposition for one node, with counters the test sets.
class Exporter {
 public:
  Exporter() {
    server_.Get(
        R"(/nodes/([\w-]+)/metrics)", [this](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard<std::mutex> lock(mu_);
          std::string node = req.matches[1];
          if (failing_.count(node)) {
            res.status = 503;
            res.set_content("exporter broken\n", "text/plain");
            return;
          }
          std::string body =
              "# HELP node_infiniband_port_errors_received_total Number of packets containing an "
              "error that were received on this port\n"
              "# TYPE node_infiniband_port_errors_received_total counter\n";
          for (const char* hca : {"mlx5_0", "mlx5_1"})
            body += std::string("node_infiniband_port_errors_received_total{device=\"") + hca +
                    "\",port=\"1\"} " + std::to_string(errors_[node + "/" + hca]) + "\n";
          res.set_content(body, "text/plain; version=0.0.4");
        });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(milliseconds(5));
  }
  ~Exporter() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  void set_errors(const std::string& node, const std::string& hca, long v) {
    std::lock_guard<std::mutex> lock(mu_);
    errors_[node + "/" + hca] = v;
  }
  void fail(const std::string& node) {
    std::lock_guard<std::mutex> lock(mu_);
    failing_.insert(node);
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, long> errors_;
  std::set<std::string> failing_;
};

// The shared real Prometheus (real_prometheus.h), configured so that each
// node is a target of its own: instance "gpu-aNN:9100", path
// /nodes/<node>/metrics.
class PrometheusServer : public fftest::RealPrometheus {
 public:
  explicit PrometheusServer(const fs::path& dir) : RealPrometheus(dir) {}
  void write_config(int exporter_port, const std::vector<std::string>& nodes) {
    std::string y =
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: node\n    static_configs:\n";
    for (const auto& n : nodes)
      y += "      - targets: ['127.0.0.1:" + std::to_string(exporter_port) +
           "']\n        labels: {instance: '" + n + ":9100', __metrics_path__: '/nodes/" + n +
           "/metrics'}\n";
    RealPrometheus::write_config(y);
  }
  // Series of `query` right now, by instance, with their values.
  std::map<std::string, std::string> instant(const std::string& query) const {
    std::map<std::string, std::string> out;
    for (const auto& s : RealPrometheus::query(query))
      out[s["metric"].value("instance", "")] = s["value"][1].get<std::string>();
    return out;
  }
};

std::string iso(Clock::time_point t) {
  return format_time(
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count());
}

TimeUs us(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

TEST(PrometheusRealServer, CounterJumpUpZeroAndVanishedTargetBecomeEvents) {
  if (!fftest::RealPrometheus::installed())
    GTEST_SKIP() << fftest::kPrometheusBinary << " is not installed (Debian package `prometheus`)";
  ff::test_support::ScratchDirectory scratch{"prometheus-real"};
  const fs::path& dir = scratch.path();
  const std::vector<std::string> nodes = {"gpu-a01", "gpu-a02", "gpu-a03"};
  Exporter exporter;
  PrometheusServer prom(dir);
  prom.write_config(exporter.port(), nodes);
  ASSERT_TRUE(prom.start()) << prom.log();

  // Every target scraped and up before anything happens.
  ASSERT_TRUE(fftest::wait_until([&] { return prom.instant("up").size() == 3; }, seconds(20)))
      << prom.log();
  auto t0 = Clock::now();
  std::this_thread::sleep_for(seconds(3));
  auto jump = Clock::now();
  exporter.set_errors("gpu-a01", "mlx5_1", 57);
  ASSERT_TRUE(fftest::wait_until(
      [&] {
        return prom.instant("node_infiniband_port_errors_received_total{device=\"mlx5_1\"}")
                   ["gpu-a01:9100"] == "57";
      },
      seconds(10)));
  std::this_thread::sleep_for(seconds(2));
  auto down = Clock::now();
  exporter.fail("gpu-a03");
  prom.write_config(exporter.port(), {"gpu-a01", "gpu-a03"});
  prom.reload();
  ASSERT_TRUE(
      fftest::wait_until([&] { return prom.instant("up")["gpu-a03:9100"] == "0"; }, seconds(10)));
  ASSERT_TRUE(
      fftest::wait_until([&] { return !prom.instant("up").count("gpu-a02:9100"); }, seconds(10)));
  std::this_thread::sleep_for(seconds(6));
  auto t_end = Clock::now();

  PrometheusConfig config;
  config.url = prom.url();
  config.timeout_s = 10;
  config.step_s = 1;
  config.margin_before_s = 0;
  config.margin_after_s = 0;
  config.queries = default_prometheus_queries();
  fs::path incident = dir / "incident";
  auto cov = fetch_metrics(config, nodes, t0, t_end, incident);

  std::map<std::string, ff::Coverage> by_name;
  for (const auto& c : cov) by_name[c.collector] = c;
  ASSERT_EQ(by_name.size(), config.queries.size());
  EXPECT_EQ(by_name["prometheus:ib_port_errors"].status_text(), "ok")
      << by_name["prometheus:ib_port_errors"].detail;
  EXPECT_EQ(by_name["prometheus:up"].status_text(), "ok") << by_name["prometheus:up"].detail;
  // No DCGM exporter here: its queries are empty, not healthy.
  EXPECT_EQ(by_name["prometheus:gpu_xid"].status_text(), "empty");
  EXPECT_EQ(by_name["prometheus:nvlink_errors"].status_text(), "empty");

  // The file is Prometheus's own reply: the counter's jump is in it.
  json ib = json::parse(std::ifstream(incident / "metrics" / "ib_port_errors.json"));
  ASSERT_EQ(ib["status"], "success");
  ASSERT_EQ(ib["data"]["resultType"], "matrix");
  bool saw_jump = false;
  for (const auto& s : ib["data"]["result"])
    if (s["metric"]["instance"] == "gpu-a01:9100" && s["metric"]["device"] == "mlx5_1")
      for (const auto& v : s["values"]) saw_jump = saw_jump || v[1] == "57";
  EXPECT_TRUE(saw_jump) << ib.dump().substr(0, 2000);

  // The engine reads what was written.
  json job = {{"schema", "firstfault.incident/v1"},
              {"job_id", "4711"},
              {"state", "FAILED"},
              {"start_time", iso(t0)},
              {"end_time", iso(t_end)},
              {"nodes", nodes},
              {"coverage", json::array()}};
  for (const auto& c : cov) job["coverage"].push_back(to_json(c));
  std::ofstream(incident / "job.json") << job.dump(2);
  std::vector<RuleError> rule_errors;
  auto rules = load_rules(true, {}, rule_errors);
  ASSERT_TRUE(rule_errors.empty());
  AnalyzeResult r = analyze_incident(incident, *rules);
  ASSERT_TRUE(r.usable) << r.problem;
  const Diagnosis& d = r.diagnosis;

  const CandidateItem* ib_fault = nullptr;
  std::set<std::string> stopped;
  for (const auto& c : d.candidates) {
    if (c.event == "ib.port_errors") ib_fault = &c;
    if (c.event == "node.stopped_reporting") stopped.insert(c.node);
  }
  ASSERT_NE(ib_fault, nullptr) << diagnosis_to_json(d);
  EXPECT_EQ(ib_fault->node, "gpu-a01");
  EXPECT_EQ(ib_fault->device, "mlx5_1:1");
  ASSERT_TRUE(ib_fault->time.has_value());
  // The first sample showing the jump: after it happened, within a few scrapes.
  EXPECT_GE(*ib_fault->time, us(jump) - 1'000'000);
  EXPECT_LE(*ib_fault->time, us(jump) + 5'000'000);
  EXPECT_EQ(stopped, (std::set<std::string>{"gpu-a02", "gpu-a03"}));
  for (const auto& c : d.candidates)
    if (c.event == "node.stopped_reporting") {
      ASSERT_TRUE(c.time.has_value());
      EXPECT_GE(*c.time, us(down) - 2'000'000) << c.node;
    }
  // The evidence says which metric, labels, value and file.
  bool evidence = false;
  for (const auto& e : d.evidence)
    if (e.event == "ib.port_errors") {
      evidence = true;
      EXPECT_EQ(e.source, "metrics/ib_port_errors.json");
      EXPECT_NE(e.text.find("node_infiniband_port_errors_received_total{device=\"mlx5_1\","
                            "instance=\"gpu-a01:9100\""),
                std::string::npos)
          << e.text;
      EXPECT_NE(e.text.find("to 57"), std::string::npos) << e.text;
    }
  EXPECT_TRUE(evidence);
  // Coverage: files read, and the DCGM queries reported empty, not healthy.
  std::map<std::string, std::string> metrics_cov;
  for (const auto& c : d.coverage)
    if (c.source == "metrics") metrics_cov[c.detail.substr(0, c.detail.find(':'))] = c.status;
  EXPECT_EQ(metrics_cov["metrics/ib_port_errors.json"], "ok");
  EXPECT_EQ(metrics_cov["metrics/gpu_xid.json"], "empty");
}

}  // namespace
}  // namespace ff::sources
