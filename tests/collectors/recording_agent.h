// A stand-in for the agent in delivery tests: a cpp-httplib server on a free
// local port that records every request and answers as it is told to.
#pragma once

#include <httplib.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ff::collect::testing {

struct RecordedRequest {
  std::string path;
  std::string munge;
  std::string deadline_ms;
  std::string meta;
  std::string body;
  std::map<std::string, std::string> files;  // filename → content
};

class RecordingAgent {
 public:
  RecordingAgent() {
    auto record = [this](const httplib::Request& req, httplib::Response& res) {
      RecordedRequest r;
      r.path = req.path;
      r.munge = req.get_header_value("X-Firstfault-Munge");
      r.deadline_ms = req.get_header_value("X-Firstfault-Deadline-Ms");
      r.body = req.body;
      for (const auto& [name, part] : req.files) {
        if (name == "meta") r.meta = part.content;
        if (name == "file") r.files[part.filename] = part.content;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      requests_.push_back(std::move(r));
      if (unavailable_ > 0) {
        --unavailable_;
        res.status = 503;
        res.set_content("{\"error\":\"busy\"}", "application/json");
        return;
      }
      res.status = req.path == "/api/v1/bundles" ? status_.load() : 200;
      res.set_content(reply_, "application/json");
    };
    server_.Post("/api/v1/bundles", record);
    server_.Post(R"(/api/v1/jobs/(\d+)/fastpass)", record);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~RecordingAgent() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void answer_unavailable(int times) {
    std::lock_guard<std::mutex> lock(mutex_);
    unavailable_ = times;
  }
  void answer_status(int status) { status_ = status; }
  void answer_body(const std::string& reply) { reply_ = reply; }
  std::vector<RecordedRequest> requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::vector<RecordedRequest> requests_;
  int unavailable_ = 0;
  std::atomic<int> status_{201};
  std::string reply_ = "{}";
};

}  // namespace ff::collect::testing
