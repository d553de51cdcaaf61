// A local HTTP server that answers GET /loki/api/v1/query_range as Loki's
// documented API does (https://grafana.com/docs/loki/latest/reference/loki-http-api/):
// stream selectors matched exactly against the streams it holds, start
// inclusive and end exclusive in unix nanoseconds, `limit` entries in
// `direction` order over all streams, grouped by stream in the reply; 400
// with Loki's plain-text message for a query it cannot parse; 401 when it
// wants a tenant (X-Scope-OrgID) or a token it did not get; 503 on demand;
// on demand too, a stall: queries naming a given text get no answer until
// released (a Loki under load).
// No Loki server is packaged for Debian: this stands in for one.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace fftest {

struct LokiEntry {
  std::int64_t ts;
  std::string line;
};

class FakeLoki {
 public:
  FakeLoki() {
    server_.Get("/loki/api/v1/query_range",
                [this](const auto& req, auto& res) { answer(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // httplib 0.11 has no wait_until_ready; the port is bound, so clients queue
    // until the thread listens.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeLoki() {
    release();
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // A stream: its selector as the client will send it, its labels, entries.
  void add_stream(const std::string& selector, const nlohmann::json& labels,
                  std::vector<LokiEntry> entries) {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_[selector].push_back({labels, std::move(entries)});
  }
  void require_org(const std::string& org) { org_ = org; }
  void require_token(const std::string& token) { token_ = token; }
  void fail_next(int times, int status) {
    fail_times_ = times;
    fail_status_ = status;
  }
  int requests() const { return requests_; }
  // Queries whose selector contains `text` wait until release().
  void stall_queries_with(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    stall_text_ = text;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stall_text_.clear();
    }
    released_.notify_all();
  }
  int stalled() const { return stalled_; }

 private:
  struct Stream {
    nlohmann::json labels;
    std::vector<LokiEntry> entries;
  };

  void answer(const httplib::Request& req, httplib::Response& res) {
    ++requests_;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const std::string query = req.get_param_value("query");
      if (!stall_text_.empty() && query.find(stall_text_) != std::string::npos) {
        ++stalled_;
        released_.wait(lock, [&] {
          return stall_text_.empty() || query.find(stall_text_) == std::string::npos;
        });
      }
    }
    if (fail_times_ > 0) {
      --fail_times_;
      res.status = fail_status_;
      res.set_content("too many outstanding requests", "text/plain");
      return;
    }
    if (!org_.empty() && req.get_header_value("X-Scope-OrgID") != org_) {
      res.status = 401;
      res.set_content("no org id", "text/plain");
      return;
    }
    if (!token_.empty() && req.get_header_value("Authorization") != "Bearer " + token_) {
      res.status = 401;
      res.set_content("unauthorized", "text/plain");
      return;
    }
    std::string query = req.get_param_value("query");
    if (query.empty() || query.front() != '{' || query.back() != '}') {
      res.status = 400;
      res.set_content("parse error at line 1, col 1: syntax error: unexpected IDENTIFIER",
                      "text/plain");
      return;
    }
    std::int64_t start = std::stoll(req.get_param_value("start"));
    std::int64_t end = std::stoll(req.get_param_value("end"));
    std::size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 100;
    bool forward = req.get_param_value("direction") == "forward";
    struct Hit {
      std::int64_t ts;
      std::size_t stream;
      std::size_t index;
    };
    std::vector<Hit> hits;
    std::vector<Stream> streams;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = streams_.find(query);
      if (it != streams_.end()) streams = it->second;
    }
    for (std::size_t s = 0; s < streams.size(); ++s)
      for (std::size_t i = 0; i < streams[s].entries.size(); ++i) {
        std::int64_t ts = streams[s].entries[i].ts;
        if (ts >= start && ts < end) hits.push_back({ts, s, i});
      }
    std::stable_sort(hits.begin(), hits.end(), [&](const Hit& a, const Hit& b) {
      return forward ? a.ts < b.ts : a.ts > b.ts;
    });
    if (hits.size() > limit) hits.resize(limit);
    std::map<std::size_t, nlohmann::json> values;
    for (const auto& h : hits)
      values[h.stream].push_back({std::to_string(h.ts), streams[h.stream].entries[h.index].line});
    nlohmann::json result = nlohmann::json::array();
    for (auto& [s, v] : values) result.push_back({{"stream", streams[s].labels}, {"values", v}});
    nlohmann::json body = {
        {"status", "success"},
        {"data",
         {{"resultType", "streams"}, {"result", result}, {"stats", nlohmann::json::object()}}}};
    res.set_content(body.dump(), "application/json");
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::map<std::string, std::vector<Stream>> streams_;
  std::string org_, token_;
  std::atomic<int> fail_times_{0};
  int fail_status_ = 503;
  std::atomic<int> requests_{0};
  std::string stall_text_;
  std::condition_variable released_;
  std::atomic<int> stalled_{0};
};

}  // namespace fftest
