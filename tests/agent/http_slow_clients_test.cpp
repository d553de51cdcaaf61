// Slow and idle clients cost the agent a file descriptor each, never a
// worker: health, uploads and fast passes are answered while hundreds of
// connections send their headers a byte at a time or nothing at all, and
// the deadlines close those connections. Raw sockets from several 127/8
// addresses (each a peer of its own for the per-address limit).
#include <gtest/gtest.h>

#include <atomic>

#include "tests/agent/agent_process.h"
#include "tests/agent/raw_http.h"

namespace {

using namespace fftest;
using Clock = std::chrono::steady_clock;

std::string peer(int i) {
  return "127.0.0." + std::to_string(2 + i % 16);
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST(SlowClients, HealthUploadsAndFastPassesAreServedDuringSlowloris) {
  AgentProcess agent("fastpass_wait_s: 1\n", ended_job());
  std::vector<RawConnection> slow, idle;
  for (int i = 0; i < 32; ++i) slow.emplace_back(agent.port(), peer(i));
  for (int i = 0; i < 200; ++i) idle.emplace_back(agent.port(), peer(i));
  auto start = Clock::now();
  // Headers one byte every 2 s on each slow connection, until it is closed.
  std::string request =
      "POST /api/v1/bundles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n";
  std::vector<double> slow_closed_at(slow.size(), -1);
  std::atomic<bool> done{false};
  std::thread dribble([&] {
    for (std::size_t byte = 0; byte < request.size() && !done; ++byte) {
      for (std::size_t i = 0; i < slow.size(); ++i)
        if (slow_closed_at[i] < 0 && !slow[i].send_all(request.substr(byte, 1)))
          slow_closed_at[i] = seconds_since(start);
      for (int t = 0; t < 20 && !done; ++t)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });

  // Health from another address every 250 ms for 15 s; an upload and a fast
  // pass in the middle.
  std::vector<double> latencies;
  int upload_status = 0, fastpass_status = 0;
  bool uploaded = false;
  while (seconds_since(start) < 15) {
    auto asked = Clock::now();
    httplib::Client client("127.0.0.1", agent.port());
    client.set_connection_timeout(5, 0);
    client.set_read_timeout(5, 0);
    auto res = client.Get("/api/v1/health");
    latencies.push_back(seconds_since(asked));
    EXPECT_TRUE(res && res->status == 200) << "at " << seconds_since(start) << " s";
    if (!uploaded && seconds_since(start) > 3) {
      uploaded = true;
      auto bundles = example_bundles("01-xid79-fallen-off-bus", "step", 500);
      auto c = agent.client();
      auto up = upload(c, bundles[0]);
      upload_status = up ? up->status : 0;
      json body = {{"job_id", "48213"}, {"node", "gpu-a01"}, {"exit_status", 256}, {"attempt", 0}};
      auto fp = c.Post(
          "/api/v1/jobs/48213/fastpass",
          {{"X-Firstfault-Munge", credential(fastpass_payload("48213", "gpu-a01", body.dump()))}},
          body.dump(), "application/json");
      fastpass_status = fp ? fp->status : 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  done = true;
  dribble.join();

  double worst = *std::max_element(latencies.begin(), latencies.end());
  std::printf("health: %zu probes, slowest %.3f s\n", latencies.size(), worst);
  EXPECT_LT(worst, 1.0);
  EXPECT_EQ(upload_status, 201);
  EXPECT_EQ(fastpass_status, 200) << agent.log();
  // Headers not complete within http_header_timeout_s (10 s): closed.
  int slow_closed = 0, idle_closed = 0;
  for (std::size_t i = 0; i < slow.size(); ++i)
    if (slow_closed_at[i] >= 0 || slow[i].closed_by_server(std::chrono::milliseconds(10)))
      ++slow_closed;
  for (auto& c : idle)
    if (c.closed_by_server(std::chrono::milliseconds(10))) ++idle_closed;
  EXPECT_EQ(slow_closed, 32);
  EXPECT_EQ(idle_closed, 200);
}

TEST(SlowClients, ConnectionsOverTheLimitsAreRefusedAtOnce) {
  AgentProcess agent("http_max_connections_per_peer: 4\nhttp_max_connections: 10\n");
  std::vector<RawConnection> held;
  for (int i = 0; i < 4; ++i) held.emplace_back(agent.port(), "127.0.0.2");
  ASSERT_TRUE(wait_for_connections(agent.pid(), agent.port(), 4));
  // A fifth from the same address: 503 and closed, at once.
  RawConnection fifth(agent.port(), "127.0.0.2");
  ASSERT_TRUE(fifth.send_all("GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"));
  fifth.read_reply(std::chrono::seconds(2));
  EXPECT_EQ(fifth.status(), 503) << fifth.received();
  EXPECT_TRUE(fifth.closed_by_server(std::chrono::seconds(1)));
  // Another address still gets in, up to the total.
  for (int i = 0; i < 4; ++i) held.emplace_back(agent.port(), "127.0.0.3");
  ASSERT_TRUE(wait_for_connections(agent.pid(), agent.port(), 8));
  auto client = agent.client();
  auto res = client.Get("/api/v1/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  for (int i = 0; i < 2; ++i) held.emplace_back(agent.port(), "127.0.0.4");
  ASSERT_TRUE(wait_for_connections(agent.pid(), agent.port(), 10));
  RawConnection eleventh(agent.port(), "127.0.0.5");
  ASSERT_TRUE(eleventh.send_all("GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"));
  eleventh.read_reply(std::chrono::seconds(2));
  EXPECT_EQ(eleventh.status(), 503) << eleventh.received();
  // Closing them makes room again.
  held.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  res = client.Get("/api/v1/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(SlowClients, BodyMustArriveWithinTheRequestTimeout) {
  AgentProcess agent("http_request_timeout_s: 3\n");
  Bundle b;
  b.job_id = "48213";
  b.node = "n1";
  b.bundle_id = "n1-48213-epilog-9";
  b.files = {{"job.json", R"({"job_id": "48213"})"}};
  RawConnection c(agent.port());
  // An allowed credential, a body of 1 MiB announced, sent 100 bytes a second.
  ASSERT_TRUE(
      c.send_all("POST /api/v1/bundles HTTP/1.1\r\nHost: x\r\n"
                 "Content-Type: multipart/form-data; boundary=b\r\n"
                 "Content-Length: 1048576\r\nX-Firstfault-Munge: " +
                 credential(b.payload()) + "\r\n\r\n"));
  auto start = Clock::now();
  bool closed = false;
  while (seconds_since(start) < 10) {
    if (!c.send_all(std::string(100, 'x')) || c.closed_by_server(std::chrono::milliseconds(1000))) {
      closed = true;
      break;
    }
  }
  double took = seconds_since(start);
  EXPECT_TRUE(closed);
  EXPECT_LT(took, 6.0);
  EXPECT_GE(took, 2.5);
}

// Writers that are allowed but slow (their bodies trickle in) hold the
// upload lane's workers only: a fast pass and health are still answered.
TEST(SlowClients, SlowUploadsCannotStarveFastPasses) {
  AgentProcess agent("fastpass_wait_s: 0\n");
  std::vector<RawConnection> uploads;
  for (int i = 0; i < 20; ++i) {
    Bundle b;
    b.job_id = "48213";
    b.node = "n1";
    b.bundle_id = "n1-48213-epilog-" + std::to_string(100 + i);
    uploads.emplace_back(agent.port(), peer(i));
    ASSERT_TRUE(uploads.back().send_all(
        "POST /api/v1/bundles HTTP/1.1\r\nHost: x\r\n"
        "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1048576\r\n"
        "X-Firstfault-Munge: " +
        credential(b.payload()) + "\r\n\r\n"));
  }
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    while (!done) {
      for (auto& c : uploads) c.send_all("x");
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  httplib::Client client("127.0.0.1", agent.port());
  client.set_read_timeout(5, 0);
  json body = {{"job_id", "48213"}, {"node", "gpu-a01"}, {"exit_status", 256}, {"attempt", 0}};
  auto asked = Clock::now();
  auto fp = client.Post(
      "/api/v1/jobs/48213/fastpass",
      {{"X-Firstfault-Munge", credential(fastpass_payload("48213", "gpu-a01", body.dump()))}},
      body.dump(), "application/json");
  double fastpass_s = seconds_since(asked);
  asked = Clock::now();
  auto health = client.Get("/api/v1/health");
  double health_s = seconds_since(asked);
  done = true;
  trickle.join();
  ASSERT_TRUE(fp) << "no fast-pass reply";
  EXPECT_EQ(fp->status, 404) << fp->body;  // no bundle of the job: answered, not stuck
  EXPECT_LT(fastpass_s, 2.0);
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_LT(health_s, 1.0);
  std::printf("20 slow uploads: fast pass answered in %.3f s, health in %.3f s\n", fastpass_s,
              health_s);
}

// Fast passes beyond their lane's workers and queue are refused at once
// (their clients' deadlines are seconds): with one worker, one runs, one
// waits, a third is answered 503 while the first still waits for bundles.
TEST(SlowClients, FastPassesOverTheirShareAre503AtOnce) {
  AgentProcess agent("fastpass_wait_s: 3\nhttp_fastpass_workers: 1\n", running_job());
  auto client = agent.client();
  auto bundles = example_bundles("01-xid79-fallen-off-bus", "step", 700);
  ASSERT_EQ(upload(client, bundles[0])->status, 201);  // the other two nodes never report
  json body = {{"job_id", "48213"}, {"node", "gpu-a01"}, {"exit_status", 256}, {"attempt", 0}};
  auto ask = [&] {
    auto c = agent.client();
    auto res = c.Post(
        "/api/v1/jobs/48213/fastpass",
        {{"X-Firstfault-Munge", credential(fastpass_payload("48213", "gpu-a01", body.dump()))}},
        body.dump(), "application/json");
    return res ? res->status : 0;
  };
  int first = 0, second = 0;
  std::thread a([&] { first = ask(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::thread b([&] { second = ask(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto asked = Clock::now();
  int third = ask();
  double third_s = seconds_since(asked);
  a.join();
  b.join();
  EXPECT_EQ(third, 503);
  EXPECT_LT(third_s, 1.0);
  EXPECT_EQ(first, 200);
  EXPECT_EQ(second, 200);
}

// The poller hands a keep-alive connection back and forth between requests:
// pipelined requests (several in one packet) and a client that reuses its
// connection are all answered, in order.
TEST(SlowClients, KeepAliveAndPipelinedRequestsAreServed) {
  AgentProcess agent;
  RawConnection c(agent.port());
  std::string get = "GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(c.send_all(get + get + "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"));
  c.closed_by_server(std::chrono::seconds(2));  // reads what comes; keep-alive: not closed
  const std::string& all = c.received();
  std::size_t ok = 0;
  for (auto at = all.find("HTTP/1.1 200"); at != std::string::npos;
       at = all.find("HTTP/1.1 200", at + 1))
    ++ok;
  EXPECT_EQ(ok, 2u) << all;
  EXPECT_NE(all.find("404 Not Found"), std::string::npos) << all;
  httplib::Client client("127.0.0.1", agent.port());
  client.set_keep_alive(true);
  for (int i = 0; i < 12; ++i) {
    auto res = client.Get("/api/v1/health");
    ASSERT_TRUE(res) << i;
    EXPECT_EQ(res->status, 200) << i;
  }
}

}  // namespace
