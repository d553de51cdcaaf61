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

#include "http/http_get.h"
#include "model/time.h"
#include "pipeline/analyze.h"
#include "prometheus/prometheus_fetch.h"
#include "rules/compiled_rules.h"
#include "verdict/diagnosis_json.h"

extern char** environ;

namespace ff::sources {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kPrometheus = "/usr/bin/prometheus";

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

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

class PrometheusServer {
 public:
  PrometheusServer(const fs::path& dir, int port) : dir_(dir), port_(port) {}
  ~PrometheusServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status;
      for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(milliseconds(50));
      if (waitpid(pid_, &status, WNOHANG) == 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
    }
  }
  // Each node is a target of its own: instance "gpu-aNN:9100", path /nodes/<node>/metrics.
  void write_config(int exporter_port, const std::vector<std::string>& nodes) {
    std::string y =
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: node\n    static_configs:\n";
    for (const auto& n : nodes)
      y += "      - targets: ['127.0.0.1:" + std::to_string(exporter_port) +
           "']\n        labels: {instance: '" + n + ":9100', __metrics_path__: '/nodes/" + n +
           "/metrics'}\n";
    std::ofstream(dir_ / "prometheus.yml.tmp") << y;
    fs::rename(dir_ / "prometheus.yml.tmp", dir_ / "prometheus.yml");
  }
  bool start() {
    std::vector<std::string> args = {
        kPrometheus, "--config.file=" + (dir_ / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    std::string log = (dir_ / "prometheus.log").string();
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int rc = posix_spawn(&pid_, kPrometheus, &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return false;
    for (int i = 0; i < 300; ++i) {
      if (get("/-/ready").status == 200) return true;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return false;
  }
  void reload() { kill(pid_, SIGHUP); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  HttpGetReply get(const std::string& path, const QueryParams& params = {}) const {
    HttpGetOptions o;
    o.total_timeout_s = 5;
    return http_get(url() + path, params, o);
  }
  std::string log() const {
    std::ifstream in(dir_ / "prometheus.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Series of `query` right now, by instance, with their values.
  std::map<std::string, std::string> instant(const std::string& query) const {
    std::map<std::string, std::string> out;
    json r = json::parse(get("/api/v1/query", {{"query", query}}).body, nullptr, false);
    if (r.is_discarded() || r.value("status", "") != "success") return out;
    for (const auto& s : r["data"]["result"])
      out[s["metric"].value("instance", "")] = s["value"][1].get<std::string>();
    return out;
  }

 private:
  fs::path dir_;
  int port_;
  pid_t pid_ = -1;
};

template <typename F>
bool wait_for(F pred, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(200));
  }
  return pred();
}

std::string iso(Clock::time_point t) {
  return format_time(
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count());
}

TimeUs us(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

TEST(PrometheusRealServer, CounterJumpUpZeroAndVanishedTargetBecomeEvents) {
  if (access(kPrometheus, X_OK) != 0)
    GTEST_SKIP() << kPrometheus << " is not installed (Debian package `prometheus`)";
  char tmpl[] = "/tmp/ff-prom-real-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  const std::vector<std::string> nodes = {"gpu-a01", "gpu-a02", "gpu-a03"};
  Exporter exporter;
  PrometheusServer prom(dir, free_port());
  prom.write_config(exporter.port(), nodes);
  ASSERT_TRUE(prom.start()) << prom.log();

  // Every target scraped and up before anything happens.
  ASSERT_TRUE(wait_for([&] { return prom.instant("up").size() == 3; }, seconds(20))) << prom.log();
  auto t0 = Clock::now();
  std::this_thread::sleep_for(seconds(3));
  auto jump = Clock::now();
  exporter.set_errors("gpu-a01", "mlx5_1", 57);
  ASSERT_TRUE(wait_for(
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
  ASSERT_TRUE(wait_for([&] { return prom.instant("up")["gpu-a03:9100"] == "0"; }, seconds(10)));
  ASSERT_TRUE(wait_for([&] { return !prom.instant("up").count("gpu-a02:9100"); }, seconds(10)));
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

  std::map<std::string, MetricsCoverage> by_name;
  for (const auto& c : cov) by_name[c.collector] = c;
  ASSERT_EQ(by_name.size(), config.queries.size());
  EXPECT_EQ(by_name["prometheus:ib_port_errors"].status, "ok")
      << by_name["prometheus:ib_port_errors"].detail;
  EXPECT_EQ(by_name["prometheus:up"].status, "ok") << by_name["prometheus:up"].detail;
  // No DCGM exporter here: its queries are empty, not healthy.
  EXPECT_EQ(by_name["prometheus:gpu_xid"].status, "empty");
  EXPECT_EQ(by_name["prometheus:nvlink_errors"].status, "empty");

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
  for (const auto& c : cov) job["coverage"].push_back(c.to_json());
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
