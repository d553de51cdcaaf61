// The read endpoints and the daemon's life cycle: health, JSON errors,
// parameter checks, SIGTERM → clean exit 0.
#include <gtest/gtest.h>

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

}  // namespace
