// Delivery to a real local HTTP server: multipart layout, munge credential,
// retries while the agent is unavailable, the outbox emptied afterwards.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collectors/bundle/bundle_builder.h"
#include "collectors/commands/commands.h"
#include "collectors/delivery/bundle_delivery.h"
#include "collectors/logging/collect_log.h"
#include "common/content_digest.h"
#include "common/munge_credential.h"
#include "tests/agent/agent_process.h"  // tests/agent: the real agent
#include "tests/collectors/collector_test_support.h"
#include "tests/collectors/recording_agent.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;
using testing::at;

class Delivery : public ::testing::Test {
 protected:
  void SetUp() override {
    setup_logging(dir / "spool/log");  // not stdout: the fast pass prints its reply there
    config = default_node_config("n2");
    config.agent_url = agent.url();
    config.spool = dir / "spool";
    config.timezone = "UTC";
    config.retry = {0.05, 0.2, 30};
    config.sources = {{"syslog", {(dir / "log/syslog*").string()}}};
    testing::write_file(dir / "log/syslog", "Nov 30 05:10:00 n2 kernel: NVRM: Xid 79\n");
  }

  BuiltBundle build(const std::string& pass = "step") {
    CollectRequest r;
    r.pass = pass;
    r.job_id = "12";
    r.node = "n2";
    r.now = at("2026-11-30T05:30:00Z");
    return build_bundle(config, r);
  }

  std::size_t outbox_size() { return Outbox(config.spool / "outbox").entries().size(); }

  ScratchDirectory dir{"collector"};
  testing::RecordingAgent agent;
  NodeConfig config;
};

TEST_F(Delivery, MultipartWithMetaFilesAndCredential) {
  BuiltBundle built = build();
  EXPECT_EQ(deliver_once(config, built.entry, 10), DeliveryOutcome::delivered);
  EXPECT_EQ(outbox_size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(built.entry.dir));

  auto requests = agent.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& r = requests[0];
  EXPECT_EQ(r.path, "/api/v1/bundles");
  auto meta = nlohmann::json::parse(r.meta);
  EXPECT_EQ(meta, (nlohmann::json{{"bundle_id", built.entry.meta.bundle_id},
                                  {"job_id", "12"},
                                  {"attempt", 0},
                                  {"node", "n2"},
                                  {"pass", "step"}}));
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files.at("nodes/n2/syslog"), "Nov 30 05:10:00 n2 kernel: NVRM: Xid 79\n");
  EXPECT_EQ(nlohmann::json::parse(r.files.at("job.json"))["job_id"], "12");

  auto decoded = munge_credential::decode(r.munge);
  ASSERT_TRUE(decoded.ok) << decoded.message;
  // The digest names the bytes the agent received (as the agent computes it).
  std::vector<std::pair<std::string_view, std::string_view>> received(r.files.begin(),
                                                                      r.files.end());
  EXPECT_EQ(decoded.payload, "firstfault-bundle 12 n2 " + built.entry.meta.bundle_id + " " +
                                 content_digest::bundle_digest(r.meta, received));
  EXPECT_EQ(decoded.uid, ::geteuid());
}

TEST_F(Delivery, UnavailableAgentIsRetriedUntilItTakesTheBundle) {
  agent.answer_unavailable(3);
  BuiltBundle built = build();
  std::vector<std::chrono::milliseconds> waits;
  auto kept = deliver_with_retry(config, {built.entry}, [&](std::chrono::milliseconds d) {
    waits.push_back(d);
    std::this_thread::sleep_for(d);
  });
  EXPECT_TRUE(kept.empty());
  EXPECT_EQ(outbox_size(), 0u);
  EXPECT_EQ(agent.requests().size(), 4u);
  // Exponential backoff, capped at max_s.
  EXPECT_EQ(waits, (std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(50),
                                                           std::chrono::milliseconds(100),
                                                           std::chrono::milliseconds(200)}));
  // Each attempt carries its own credential (munge refuses a replayed one).
  auto requests = agent.requests();
  EXPECT_NE(requests[0].munge, requests[3].munge);
  EXPECT_EQ(requests[0].meta, requests[3].meta);
}

TEST_F(Delivery, AgentDownKeepsTheBundleThenFlushSendsIt) {
  config.agent_url = "http://127.0.0.1:1";  // nothing listens
  config.retry.give_up_after_s = 0.1;
  BuiltBundle built = build("epilog");
  auto kept = deliver_with_retry(config, {built.entry}, [](std::chrono::milliseconds) {});
  EXPECT_EQ(kept.size(), 1u);
  EXPECT_EQ(outbox_size(), 1u);  // on disk: survives a reboot

  config.agent_url = agent.url();  // the agent is back
  EXPECT_EQ(run_flush(config, true), kExitDelivered);
  EXPECT_EQ(outbox_size(), 0u);
  ASSERT_EQ(agent.requests().size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(agent.requests()[0].meta)["pass"], "epilog");
}

TEST_F(Delivery, AlreadyStoredCountsAsDelivered) {
  agent.answer_status(200);
  BuiltBundle built = build();
  EXPECT_EQ(deliver_once(config, built.entry, 10), DeliveryOutcome::delivered);
  EXPECT_EQ(outbox_size(), 0u);
}

TEST_F(Delivery, RefusedBundleStaysInTheOutbox) {
  agent.answer_status(403);
  BuiltBundle built = build();
  EXPECT_EQ(deliver_once(config, built.entry, 10), DeliveryOutcome::kept);
  EXPECT_EQ(outbox_size(), 1u);
}

TEST_F(Delivery, BundleOverALimitIsSetAsideNotRetried) {
  agent.answer_status(413);
  BuiltBundle built = build();
  std::string id = built.entry.meta.bundle_id;
  auto kept = deliver_with_retry(config, {built.entry}, [](std::chrono::milliseconds) {});
  EXPECT_TRUE(kept.empty());
  EXPECT_EQ(agent.requests().size(), 1u);  // once: it would be refused every time
  EXPECT_EQ(outbox_size(), 0u);
  EXPECT_TRUE(std::filesystem::exists(config.spool / "rejected" / id / "meta.json"));
  EXPECT_NE(testing::read_file(config.spool / "rejected" / id / "rejected.txt").find("413"),
            std::string::npos);
}

TEST_F(Delivery, ALockedBundleIsLeftToItsSender) {
  BuiltBundle built = build();
  {
    BundleLock other(built.entry.dir);
    ASSERT_TRUE(other.held());
    EXPECT_EQ(deliver_once(config, built.entry, 10), DeliveryOutcome::busy);
    EXPECT_TRUE(agent.requests().empty());
  }
  EXPECT_EQ(deliver_once(config, built.entry, 10), DeliveryOutcome::delivered);
  EXPECT_EQ(deliver_once(config, built.entry, 10), DeliveryOutcome::gone);
}

TEST_F(Delivery, FastPassUploadsThenAsksTheAgentWithinTheBound) {
  agent.answer_body(R"({"job_id":"12","pass":"fastpass","verdict":"attributed"})");
  CollectRequest r;
  r.pass = "step";
  r.job_id = "12";
  r.node = "n2";
  ::testing::internal::CaptureStdout();
  auto start = std::chrono::steady_clock::now();
  int rc = run_fastpass(config, "", r, 256, 5);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, kExitDelivered);
  EXPECT_LT(took, 5);
  EXPECT_EQ(printed, "{\"job_id\":\"12\",\"pass\":\"fastpass\",\"verdict\":\"attributed\"}\n");
  auto requests = agent.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].path, "/api/v1/bundles");
  EXPECT_EQ(requests[1].path, "/api/v1/jobs/12/fastpass");
  auto body = nlohmann::json::parse(requests[1].body);
  EXPECT_EQ(body, (nlohmann::json{
                      {"job_id", "12"}, {"node", "n2"}, {"exit_status", 256}, {"attempt", 0}}));
  long deadline = std::stol(requests[1].deadline_ms);
  EXPECT_GT(deadline, 3000);
  EXPECT_LE(deadline, 5000);
  auto decoded = munge_credential::decode(requests[1].munge);
  ASSERT_TRUE(decoded.ok) << decoded.message;
  EXPECT_EQ(decoded.payload,
            "firstfault-fastpass 12 n2 " + content_digest::sha256_hex(requests[1].body));
}

// The collector's upload as the real agent takes it: both compute the
// digest the credential names over the same bytes, so the bundle is stored.
TEST_F(Delivery, RealAgentStoresTheCollectorsBundle) {
  fftest::AgentProcess real;
  config.agent_url = "http://127.0.0.1:" + std::to_string(real.port());
  BuiltBundle built = build("epilog");
  http::Reply reply;
  EXPECT_EQ(deliver_once(config, built.entry, 30, &reply), DeliveryOutcome::delivered)
      << reply.describe() << real.log();
  EXPECT_EQ(reply.status, 201) << reply.describe();
  EXPECT_TRUE(
      std::filesystem::exists(real.state() / "jobs/12/0/bundles" / built.entry.meta.bundle_id))
      << real.log();
}

}  // namespace
}  // namespace ff::collect
