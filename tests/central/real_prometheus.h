// Test support: a real Prometheus (/usr/bin/prometheus, Debian's
// `prometheus` package) on a free loopback port with a temporary TSDB,
// asked through its HTTP API with cpp-httplib. Every wait is bounded.
// Used by tests/agent/http_metrics_test.cpp and
// tests/central/prometheus_real_server_test.cpp.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/files.h"

extern char** environ;

namespace fftest {

constexpr const char* kPrometheusBinary = "/usr/bin/prometheus";

// A loopback port nothing listens on right now.
inline int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Polls `pred` every 200 ms until it holds or `limit` passed; then asks once more.
template <typename F>
bool wait_until(F pred, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return pred();
}

class RealPrometheus {
 public:
  // `dir` holds prometheus.yml, the TSDB and prometheus.log.
  explicit RealPrometheus(std::filesystem::path dir)
      : dir_(std::move(dir)), port_(free_loopback_port()) {}
  ~RealPrometheus() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status;
    for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
  RealPrometheus(const RealPrometheus&) = delete;
  RealPrometheus& operator=(const RealPrometheus&) = delete;

  static bool installed() { return ::access(kPrometheusBinary, X_OK) == 0; }

  // Writes prometheus.yml (atomically, so a reload never reads half of it).
  void write_config(const std::string& yaml) const {
    std::ofstream(dir_ / "prometheus.yml.tmp") << yaml;
    std::filesystem::rename(dir_ / "prometheus.yml.tmp", dir_ / "prometheus.yml");
  }

  // Starts it and waits (at most 30 s) until /-/ready answers 200.
  bool start() {
    std::vector<std::string> args = {
        kPrometheusBinary, "--config.file=" + (dir_ / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    std::string log_path = (dir_ / "prometheus.log").string();
    posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int rc = posix_spawn(&pid_, kPrometheusBinary, &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      pid_ = -1;
      return false;
    }
    return wait_until(
        [&] {
          auto res = client().Get("/-/ready");
          return res && res->status == 200;
        },
        std::chrono::seconds(30));
  }

  void reload() const { ::kill(pid_, SIGHUP); }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const {
    return ff::test_support::read_file_if_present(dir_ / "prometheus.log");
  }

  // GET /api/v1/query: the result vector now, [] when the query failed.
  nlohmann::json query(const std::string& promql) const {
    auto res = client().Get("/api/v1/query", httplib::Params{{"query", promql}}, {});
    if (!res || res->status != 200) return nlohmann::json::array();
    auto r = nlohmann::json::parse(res->body, nullptr, false);
    if (r.is_discarded() || r.value("status", "") != "success") return nlohmann::json::array();
    return r["data"]["result"];
  }
  // The value of a query that yields one series, "" when it yields none or more.
  std::string scalar(const std::string& promql) const {
    auto result = query(promql);
    if (result.size() != 1) return "";
    return result[0]["value"][1].get<std::string>();
  }

 private:
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(5, 0);
    return c;
  }

  std::filesystem::path dir_;
  int port_;
  pid_t pid_ = -1;
};

}  // namespace fftest
