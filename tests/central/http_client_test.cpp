// common/http/http_client: the one HTTP client of the central sources and the
// node collector, against a local server in the test. What a request carries
// (query, headers, token, JSON or multipart body), how a reply is bounded
// (refused or cut past max_body_bytes) and timed, and its error text.
#include "common/http/http_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

namespace ff::http {
namespace {

using Clock = std::chrono::steady_clock;

class LocalServer {
 public:
  LocalServer() {
    server_.Get("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.set_content(
          "query=" + req.get_param_value("query") + " step=" + req.get_param_value("step"),
          "text/plain");
    });
    server_.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content("no such series", "text/plain");
    });
    server_.Get("/large", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(100000, 'x'), "text/plain");
    });
    server_.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      res.set_content("late", "text/plain");
    });
    server_.Post("/json", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.status = 201;
      res.set_content("{\"stored\": true}", "application/json");
    });
    server_.Post("/upload", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      std::string parts;
      for (const auto& [name, file] : req.files)
        parts += name + ":" + file.filename + "=" + file.content + ";";
      res.set_content(parts, "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LocalServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  httplib::Request last() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_;
  }

 private:
  void record(const httplib::Request& req) {
    std::lock_guard<std::mutex> lock(mutex_);
    last_ = req;
  }
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  httplib::Request last_;
};

TEST(HttpClient, GetEncodesTheQueryAndSendsTokenAndHeaders) {
  LocalServer server;
  RequestOptions options;
  options.bearer_token = "s3cret";
  options.headers = {"X-Scope-OrgID: tenant-a"};
  Reply reply =
      get(server.url("/echo"), {{"query", "up{node=~\"n1|n2\"} & x"}, {"step", "15"}}, options);
  ASSERT_TRUE(reply.ok()) << reply.describe();
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "query=up{node=~\"n1|n2\"} & x step=15");
  httplib::Request seen = server.last();
  EXPECT_EQ(seen.get_header_value("Authorization"), "Bearer s3cret");
  EXPECT_EQ(seen.get_header_value("X-Scope-OrgID"), "tenant-a");
  EXPECT_EQ(encode_query({{"a", "1"}, {"b", "x y"}}), "a=1&b=x%20y");
}

TEST(HttpClient, AnErrorStatusKeepsItsBody) {
  LocalServer server;
  Reply reply = get(server.url("/missing"), {}, {});
  EXPECT_FALSE(reply.ok());
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(reply.describe(), "HTTP 404: no such series");
}

TEST(HttpClient, ALongReplyIsRefusedOrCut) {
  LocalServer server;
  RequestOptions options;
  options.max_body_bytes = 1000;
  Reply refused = get(server.url("/large"), {}, options);
  EXPECT_EQ(refused.status, 0);
  EXPECT_EQ(refused.body, "");
  EXPECT_EQ(refused.describe(), "no reply: reply larger than 1000 bytes");

  options.truncate_long_reply = true;
  Reply cut = get(server.url("/large"), {}, options);
  EXPECT_EQ(cut.status, 200);
  EXPECT_EQ(cut.body, std::string(1000, 'x'));

  options.max_body_bytes = 100000;
  options.truncate_long_reply = false;
  EXPECT_EQ(get(server.url("/large"), {}, options).body.size(), 100000u);
}

TEST(HttpClient, TheTotalTimeBoundsTheRequest) {
  LocalServer server;
  RequestOptions options;
  options.total_timeout_s = 0.3;
  Clock::time_point start = Clock::now();
  Reply reply = get(server.url("/slow"), {}, options);
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(reply.status, 0);
  EXPECT_LT(took, 1.2);
  EXPECT_EQ(reply.describe().rfind("no reply: ", 0), 0u) << reply.describe();
  EXPECT_NE(reply.error.find("timed out"), std::string::npos) << reply.error;
}

TEST(HttpClient, NoServerIsNoReplyWithCurlsMessage) {
  // A port that was free a moment ago: bound, never listened on, closed.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  int port = ntohs(address.sin_port);
  ::close(fd);
  RequestOptions options;
  options.total_timeout_s = 5;
  Reply reply = get("http://127.0.0.1:" + std::to_string(port) + "/", {}, options);
  EXPECT_EQ(reply.status, 0);
  EXPECT_FALSE(reply.error.empty());
  EXPECT_EQ(reply.describe(), "no reply: " + reply.error);
}

// A large body goes at once: curl would otherwise wait up to a second for
// "100 Continue" (a fast pass has a few seconds in all).
TEST(HttpClient, PostJsonSendsTheBodyWithoutWaitingToContinue) {
  LocalServer server;
  std::string body = "{\"pad\": \"" + std::string(2 << 20, 'p') + "\"}";
  RequestOptions options;
  options.headers = {"X-Firstfault-Deadline-Ms: 4000"};
  Clock::time_point start = Clock::now();
  Reply reply = post_json(server.url("/json"), body, options);
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_EQ(reply.status, 201) << reply.describe();
  EXPECT_EQ(reply.body, "{\"stored\": true}");
  EXPECT_LT(took, 0.9);
  httplib::Request seen = server.last();
  EXPECT_EQ(seen.body, body);
  EXPECT_EQ(seen.get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(seen.get_header_value("X-Firstfault-Deadline-Ms"), "4000");
  EXPECT_FALSE(seen.has_header("Expect"));
}

TEST(HttpClient, MultipartSendsFieldsAndFilesUnderTheirNames) {
  LocalServer server;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ff-http-client-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "kernel.log") << "Xid 79\n";
  Reply reply = post_multipart(server.url("/upload"), {{"meta", "{\"job_id\": \"12\"}"}}, "file",
                               {{"nodes/n1/kernel.log", dir / "kernel.log"}}, {});
  ASSERT_TRUE(reply.ok()) << reply.describe();
  EXPECT_EQ(reply.body, "file:nodes/n1/kernel.log=Xid 79\n;meta:={\"job_id\": \"12\"};");

  Reply unreadable =
      post_multipart(server.url("/upload"), {}, "file", {{"gone.log", dir / "gone.log"}}, {});
  EXPECT_EQ(unreadable.status, 0);
  EXPECT_EQ(unreadable.error, "cannot read " + (dir / "gone.log").string());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ff::http
