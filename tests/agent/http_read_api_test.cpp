// The read endpoints and the daemon's life cycle: health, JSON errors,
// parameter checks, SIGTERM → clean exit 0.
#include <gtest/gtest.h>

#include <zlib.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

TEST(ReadApi, HealthErrorsAndParameters) {
  AgentProcess agent;
  auto client = agent.client();
  auto health = client.Get("/api/v1/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body)["status"], "ok");
  auto missing = read(client, "/api/v1/jobs/999/diagnosis");
  EXPECT_EQ(missing->status, 404);
  EXPECT_TRUE(json::parse(missing->body).contains("error"));
  EXPECT_EQ(read(client, "/api/v1/jobs/abc/diagnosis")->status, 400);
  EXPECT_EQ(read(client, "/api/v1/diagnoses?limit=0")->status, 400);
  EXPECT_EQ(read(client, "/api/v1/diagnoses?since=yesterday")->status, 400);
  auto list = read(client, "/api/v1/diagnoses?node=n1&since=0&limit=5");
  EXPECT_EQ(list->status, 200);
  EXPECT_EQ(json::parse(list->body)["diagnoses"], json::array());
  auto nowhere = client.Get("/api/v1/nowhere");
  EXPECT_EQ(nowhere->status, 404);
  EXPECT_TRUE(json::parse(nowhere->body).contains("error"));
  // The credential comes first (before the body is read), then the form.
  auto not_multipart = client.Post("/api/v1/bundles", "{}", "application/json");
  EXPECT_EQ(not_multipart->status, 401);
  not_multipart = client.Post("/api/v1/bundles",
                              {{"X-Firstfault-Munge", credential("firstfault-bundle 1 n1 b")}},
                              "{}", "application/json");
  EXPECT_EQ(not_multipart->status, 400);
  EXPECT_EQ(agent.stop(), 0) << agent.log();
}

// httplib would compress JSON itself with Brotli at its slowest setting
// whenever a browser offers "br" (seconds of a core for a large diagnosis):
// the agent's JSON is never Brotli, and a large one is gzip when accepted.
TEST(ReadApi, ADiagnosisIsGzipWhenAcceptedAndNeverBrotli) {
  AgentProcess agent("", ended_job());
  auto client = agent.client();
  client.set_decompress(false);
  for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "epilog", 1000))
    ASSERT_EQ(upload(client, b)->status, 201);
  auto plain = wait_for_diagnosis(client, "48213");
  ASSERT_TRUE(plain);
  const std::string path = "/api/v1/jobs/48213/diagnosis";
  auto get = [&](const std::string& accept) {
    return client.Get(path, {{"X-Firstfault-Munge", credential("firstfault-read " + path)},
                             {"Accept-Encoding", accept}});
  };
  auto br = get("br");
  ASSERT_TRUE(br);
  EXPECT_EQ(br->status, 200);
  EXPECT_FALSE(br->has_header("Content-Encoding")) << br->get_header_value("Content-Encoding");
  EXPECT_EQ(json::parse(br->body), *plain);
  auto gz = get("gzip, deflate, br");
  ASSERT_TRUE(gz);
  ASSERT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_LT(gz->body.size(), br->body.size() / 4);
  // Inflate it back: the same document.
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out(br->body.size() + 1024, '\0');
  z.next_in = reinterpret_cast<Bytef*>(gz->body.data());
  z.avail_in = static_cast<uInt>(gz->body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  EXPECT_EQ(out, br->body);
  EXPECT_EQ(agent.stop(), 0) << agent.log();
}

}  // namespace
