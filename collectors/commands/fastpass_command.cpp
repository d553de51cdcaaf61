#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "collectors/commands/commands.h"
#include "collectors/delivery/bundle_delivery.h"
#include "common/content_digest.h"
#include "common/launch/detached_launch.h"
#include "common/munge_credential.h"

namespace ff::collect {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// A bundle the fast pass could not deliver in time is retried by a detached
// `flush`, so the plugin's time bound never costs evidence.
void start_detached_flush(const std::string& config_path, const std::string& node) {
  ff::DetachedCommand command;
  command.program = "/proc/self/exe";
  command.argv = {"firstfault-collect", "flush", "--config", config_path, "--node", node};
  command.environment = ff::current_environment();
  ff::LaunchResult result = ff::launch_detached(command);
  if (!result.ok()) spdlog::warn("flush not started: {}", ff::describe(result, command));
}

}  // namespace

int run_fastpass(const NodeConfig& config, const std::string& config_path,
                 const CollectRequest& request, int exit_status, double timeout_s) {
  auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  BuiltBundle built = build_bundle(config, request);
  spdlog::info("job {}: fast pass: step bundle {} built", request.job_id,
               built.entry.meta.bundle_id);

  // The upload may use half of what is left; the agent needs the rest to wait
  // for the other nodes' bundles and run the engine.
  double upload_s = std::max(0.5, seconds_left(deadline) / 2);
  DeliveryOutcome outcome = deliver_once(config, built.entry, upload_s);
  bool delivered = outcome == DeliveryOutcome::delivered || outcome == DeliveryOutcome::gone;

  int code = kExitInternal;
  double left = seconds_left(deadline);
  if (left > 0.2) {
    try {
      nlohmann::json body = {{"job_id", request.job_id},
                             {"node", request.node},
                             {"exit_status", exit_status},
                             {"attempt", built.entry.meta.attempt}};
      std::string body_text = body.dump();
      // The payload names the body's digest: the credential vouches for
      // this exit status, not only for the job and node.
      std::string credential =
          munge_credential::encode("firstfault-fastpass " + request.job_id + " " + request.node +
                                       " " + content_digest::sha256_hex(body_text),
                                   config.munge_socket);
      // The agent must answer before we are killed: tell it how long that is,
      // less a margin for the reply to travel.
      long long deadline_ms = std::max(0LL, static_cast<long long>((left - 0.2) * 1000));
      http::Reply reply = http::post_json(
          config.agent_url + "/api/v1/jobs/" + request.job_id + "/fastpass", body_text,
          agent_request(std::min(config.connect_timeout_s, left), left,
                        {"X-Firstfault-Munge: " + credential,
                         "X-Firstfault-Deadline-Ms: " + std::to_string(deadline_ms)}));
      if (reply.ok()) {
        std::fwrite(reply.body.data(), 1, reply.body.size(), stdout);
        if (reply.body.empty() || reply.body.back() != '\n') std::fputc('\n', stdout);
        std::fflush(stdout);
        spdlog::info("job {}: fast pass answered: {}", request.job_id, reply.describe());
        code = kExitDelivered;
      } else {
        spdlog::warn("job {}: fast pass failed: {}", request.job_id, reply.describe());
      }
    } catch (const std::exception& e) {
      spdlog::warn("job {}: fast pass not requested: {}", request.job_id, e.what());
    }
  } else {
    spdlog::warn("job {}: no time left for the fast pass request", request.job_id);
  }
  if (!delivered) {
    start_detached_flush(config_path, request.node);
    return kExitKept;
  }
  return code;
}

}  // namespace ff::collect
