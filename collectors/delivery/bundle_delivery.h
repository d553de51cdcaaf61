// Sending outbox bundles to the agent: POST /api/v1/bundles with a munge
// credential, removed from the outbox on 200/201, kept otherwise and retried
// with exponential backoff until retry.give_up_after_s after the bundle was
// made. A bundle that gives up stays in the outbox for the next flush. One
// the agent refuses for what it is (400 malformed, 413 over a limit) would
// be refused forever: it moves to <spool>/rejected/ with the agent's reason
// at once, and goes with the spool's other leftovers after spool_keep_days.
// 401/403/5xx may pass once munged or the agent's configuration is fixed:
// those are retried.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "collectors/config/node_config.h"
#include "collectors/delivery/outbox.h"
#include "common/http/http_client.h"

namespace ff::collect {

enum class DeliveryOutcome {
  delivered,  // the agent acknowledged it; removed from the outbox
  kept,       // the agent did not take it (yet); still in the outbox
  busy,       // another collector is sending it right now
  gone,       // already delivered by another collector
  rejected,   // refused for good (400, 413); moved to <spool>/rejected/
};

const char* outcome_name(DeliveryOutcome outcome);

// A request to the agent. Its replies are short JSON: past 1 MiB a reply is
// cut, not refused, since what matters is its status.
http::RequestOptions agent_request(double connect_timeout_s, double total_timeout_s,
                                   std::vector<std::string> headers);

// The digest the credential's payload names (common/content_digest.h):
// over the meta part's text and the files as they are sent, read from disk.
std::string upload_digest(const std::string& meta_text,
                          const std::vector<http::MultipartFile>& files);

// One attempt. `total_s` bounds the request (the fast pass gives less).
DeliveryOutcome deliver_once(const NodeConfig& config, const OutboxEntry& entry, double total_s,
                             http::Reply* reply = nullptr);

using SleepFn = std::function<void(std::chrono::milliseconds)>;

// Attempts the bundles until each is delivered (or gone) or has given up.
// Returns the bundles still in the outbox.
std::vector<OutboxEntry> deliver_with_retry(const NodeConfig& config,
                                            std::vector<OutboxEntry> entries,
                                            const SleepFn& sleep = {});

}  // namespace ff::collect
