// What the agent refuses before it reads a byte of a request's body, on
// every route and without a credential: no Transfer-Encoding, no
// Content-Encoding, a POST only with a Content-Length within the limit, a
// write only with a credential of a uid that may write. And the bytes a
// credential vouches for: the digest in its payload. Raw sockets, so the
// test sees when the reply comes and how much of the body the agent took.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/run_process.h"
#include "tests/agent/agent_process.h"
#include "tests/agent/raw_http.h"

namespace {

using namespace fftest;

constexpr std::uint64_t kMiB = 1024 * 1024;

std::string head(const std::string& request_line, const std::string& headers) {
  return request_line + "\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
}

// A credential of uid 65534 (nobody), which may not write.
std::string nobody_credential(const std::string& payload) {
  auto made = ff::run_process(
      {"/usr/sbin/runuser", "-u", "nobody", "--", "/usr/bin/munge", "-n", "-s", payload});
  if (!made.ok()) throw std::runtime_error("munge as nobody: " + made.describe() + made.err);
  return made.out.substr(0, made.out.find('\n'));
}

TEST(RequestGuard, ChunkedBodyIsRefusedUnreadAndCostsNoMemory) {
  AgentProcess agent;
  long before = peak_rss_kib(agent.pid());
  ASSERT_GT(before, 0);
  RawConnection c(agent.port());
  ASSERT_TRUE(c.send_all(head("POST /api/v1/bundles HTTP/1.1",
                              "Transfer-Encoding: chunked\r\n"
                              "Content-Type: multipart/form-data; boundary=b\r\n")));
  // 512 MiB in 1 MiB chunks, one file part (which httplib would keep in
  // memory whole), while watching for the reply.
  std::string part_head =
      "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"nodes/n1/kernel\"\r\n"
      "Content-Type: application/octet-stream\r\n\r\n";
  auto chunk_of = [](const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + data + "\r\n";
  };
  std::string chunk = chunk_of(std::string(kMiB, 'c'));
  std::uint64_t sent = 0;
  for (int i = 0; i < 512; ++i) {
    pollfd p{c.fd(), POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) break;
    if (!c.send_all(i == 0 ? chunk_of(part_head) : chunk)) break;
    sent += chunk.size();
  }
  if (sent >= 512 * kMiB) c.send_all(chunk_of("\r\n--b--\r\n") + "0\r\n\r\n");
  c.read_reply(std::chrono::seconds(60));
  EXPECT_EQ(c.status(), 411) << c.received();
  long after = peak_rss_kib(agent.pid());
  std::printf("chunked 512 MiB: %llu bytes taken, peak RSS %ld -> %ld KiB\n",
              static_cast<unsigned long long>(sent), before, after);
  EXPECT_LT(after - before, 64 * 1024)
      << "the agent's peak RSS grew by " << (after - before) << " KiB";
  EXPECT_LT(sent, 64 * kMiB);
  // Still serving.
  auto client = agent.client();
  auto res = client.Get("/api/v1/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(RequestGuard, EncodedBodyIs415BeforeTheCredential) {
  AgentProcess agent;
  // 3 KiB that gzip would inflate; neither gzip nor br is ever decoded.
  for (std::string encoding : {"gzip", "br", "deflate"}) {
    RawConnection c(agent.port());
    std::string body(3072, '\0');
    ASSERT_TRUE(c.send_all(head("POST /api/v1/bundles HTTP/1.1",
                                "Content-Encoding: " + encoding +
                                    "\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                                    "Content-Length: " +
                                    std::to_string(body.size()) + "\r\n") +
                           body));
    c.read_reply();
    EXPECT_EQ(c.status(), 415) << encoding << ": " << c.received();
  }
  // On a read route too.
  RawConnection c(agent.port());
  ASSERT_TRUE(c.send_all(head("GET /api/v1/health HTTP/1.1", "Content-Encoding: gzip\r\n")));
  c.read_reply();
  EXPECT_EQ(c.status(), 415) << c.received();
}

TEST(RequestGuard, PostWithoutContentLengthIs411) {
  AgentProcess agent;
  for (std::string path : {"/api/v1/bundles", "/api/v1/jobs/48213/fastpass"}) {
    RawConnection c(agent.port());
    ASSERT_TRUE(c.send_all(
        head("POST " + path + " HTTP/1.1", "Content-Type: application/json\r\n") + "{}"));
    c.read_reply();
    EXPECT_EQ(c.status(), 411) << path << ": " << c.received();
  }
}

TEST(RequestGuard, ContentLengthOverTheLimitIs413BeforeTheBody) {
  AgentProcess agent("max_request_bytes: 1048576\n");
  struct Case {
    std::string path;
    std::uint64_t length;
  };
  for (const Case& k : {Case{"/api/v1/bundles", 1048577}, Case{"/api/v1/bundles", 1ULL << 40},
                        Case{"/api/v1/jobs/48213/fastpass", 65537}}) {
    RawConnection c(agent.port());
    // Only the headers: the reply must come without a byte of the body.
    ASSERT_TRUE(c.send_all(head(
        "POST " + k.path + " HTTP/1.1",
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(k.length) + "\r\n")));
    c.read_reply(std::chrono::seconds(5));
    EXPECT_EQ(c.status(), 413) << k.path << " " << k.length << ": " << c.received();
  }
}

TEST(RequestGuard, WriteCredentialIsCheckedBeforeTheBodyIsRead) {
  AgentProcess agent;
  std::uint64_t body = 60 * kMiB;
  std::string headers =
      "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: " + std::to_string(body) +
      "\r\n";
  // A uid that may not write: 403 while the client is still sending.
  {
    RawConnection c(agent.port());
    std::uint64_t taken = c.send_body_until_reply(
        head("POST /api/v1/bundles HTTP/1.1",
             headers + "X-Firstfault-Munge: " +
                 nobody_credential("firstfault-bundle 48213 n1 n1-48213-epilog-1 x") + "\r\n"),
        body);
    c.read_reply();
    std::printf("uid 65534, 60 MiB body: %llu bytes taken before the reply\n",
                static_cast<unsigned long long>(taken));
    EXPECT_EQ(c.status(), 403) << c.received();
    EXPECT_LT(taken, 16 * kMiB);
  }
  // No credential, and one that is not a credential: 401, the same way.
  for (std::string credential_header :
       {std::string(), std::string("X-Firstfault-Munge: junk\r\n")}) {
    RawConnection c(agent.port());
    std::uint64_t taken = c.send_body_until_reply(
        head("POST /api/v1/bundles HTTP/1.1", headers + credential_header), body);
    c.read_reply();
    EXPECT_EQ(c.status(), 401) << c.received();
    EXPECT_LT(taken, 16 * kMiB);
  }
  // The uid is checked once, before the body: a credential decoded there is
  // not refused as a replay when the handler binds it to the body.
  auto client = agent.client();
  Bundle b;
  b.job_id = "48213";
  b.node = "n1";
  b.bundle_id = "n1-48213-epilog-7";
  b.files = {{"job.json", R"({"job_id": "48213"})"}, {"nodes/n1/kernel.log", "ok\n"}};
  auto res = upload(client, b);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
}

// A client that asks first (Expect: 100-continue) is refused instead of
// being told to send; one that may send is told so and stored.
TEST(RequestGuard, ExpectContinueGetsTheRefusalInsteadOf100) {
  AgentProcess agent;
  RawConnection c(agent.port());
  ASSERT_TRUE(c.send_all(head("POST /api/v1/bundles HTTP/1.1",
                              "Content-Type: multipart/form-data; boundary=b\r\n"
                              "Content-Length: 1000000\r\nExpect: 100-continue\r\n")));
  c.read_reply();
  EXPECT_EQ(c.status(), 401) << c.received();
  auto client = agent.client();
  Bundle b;
  b.job_id = "48213";
  b.node = "n1";
  b.bundle_id = "n1-48213-epilog-11";
  b.files = {{"job.json", R"({"job_id": "48213"})"}};
  httplib::MultipartFormDataItems items = {{"meta", b.meta_text(), "", "application/json"},
                                           {"file", b.files[0].second, "job.json", ""}};
  std::string boundary = "fftestboundary";
  std::string body;
  for (const auto& item : items)
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + item.name + "\"" +
            (item.filename.empty() ? "" : "; filename=\"" + item.filename + "\"") + "\r\n\r\n" +
            item.content + "\r\n";
  body += "--" + boundary + "--\r\n";
  RawConnection ok(agent.port());
  ASSERT_TRUE(ok.send_all(head(
      "POST /api/v1/bundles HTTP/1.1",
      "Content-Type: multipart/form-data; boundary=" + boundary +
          "\r\nContent-Length: " + std::to_string(body.size()) +
          "\r\nExpect: 100-continue\r\nX-Firstfault-Munge: " + credential(b.payload()) + "\r\n")));
  ok.read_reply();
  ASSERT_EQ(ok.status(), 100) << ok.received();
  ASSERT_TRUE(ok.send_all(body));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ok.closed_by_server(std::chrono::seconds(2));
  EXPECT_NE(ok.received().find("HTTP/1.1 201"), std::string::npos) << ok.received();
}

TEST(RequestGuard, CredentialNamesTheDigestOfTheBundleBytes) {
  AgentProcess agent;
  auto client = agent.client();
  Bundle b;
  b.job_id = "48213";
  b.node = "n1";
  b.bundle_id = "n1-48213-epilog-8";
  b.files = {{"job.json", R"({"job_id": "48213"})"},
             {"nodes/n1/kernel.log", "Xid 79 on the node\n"}};
  std::string vouched = b.payload();
  // The same ids, other bytes: the credential does not vouch for them.
  b.files[1].second = "nothing happened\n";
  auto res = upload(client, b, credential(vouched));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  EXPECT_NE(res->body.find("digest"), std::string::npos) << res->body;
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/48213/0/bundles/n1-48213-epilog-8"));
  // A file added, or the meta changed, is not vouched for either.
  b.files[1].second = "Xid 79 on the node\n";
  auto more = b;
  more.files.push_back({"nodes/n1/syslog", "forged\n"});
  res = upload(client, more, credential(vouched));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  auto other_pass = b;
  other_pass.pass = "step";
  res = upload(client, other_pass, credential(vouched));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  // The bytes it names, with the files in another order: stored.
  std::swap(b.files[0], b.files[1]);
  res = upload(client, b, credential(vouched));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
}

TEST(RequestGuard, FastPassCredentialNamesTheDigestOfItsBody) {
  AgentProcess agent("fastpass_wait_s: 0\n", running_job());
  auto client = agent.client();
  json body = {{"job_id", "48213"}, {"node", "gpu-a01"}, {"exit_status", 0}, {"attempt", 0}};
  std::string vouched = fastpass_payload("48213", "gpu-a01", body.dump());
  body["exit_status"] = 256;  // another exit status than the one vouched for
  auto res =
      client.Post("/api/v1/jobs/48213/fastpass", {{"X-Firstfault-Munge", credential(vouched)}},
                  body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  // The body it names gets past the credential (no bundle yet: 404).
  body["exit_status"] = 0;
  res = client.Post("/api/v1/jobs/48213/fastpass", {{"X-Firstfault-Munge", credential(vouched)}},
                    body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404) << res->body;
}

TEST(RequestGuard, AcceptedConnectionsAreCloseOnExec) {
  AgentProcess agent;
  std::vector<RawConnection> open;
  for (int i = 0; i < 3; ++i) open.emplace_back(agent.port());
  // One of them mid-request too.
  ASSERT_TRUE(open[0].send_all("GET /api/v1/health HTTP/1.1\r\nHost: x\r\n"));
  std::vector<std::string> fds;
  for (int i = 0; i < 50 && fds.size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fds = connection_fds(agent.pid(), agent.port());
  }
  ASSERT_EQ(fds.size(), 3u);
  for (const auto& fd : fds) {
    std::ifstream info("/proc/" + std::to_string(agent.pid()) + "/fdinfo/" + fd);
    std::string key, flags;
    while (info >> key && key != "flags:") {
    }
    info >> flags;
    EXPECT_TRUE(std::stoul(flags, nullptr, 8) & 02000000) << "fd " << fd << " flags " << flags;
  }
}

}  // namespace
