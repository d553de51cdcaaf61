// Sending outbox bundles to the agent: POST /api/v1/bundles with a munge
// credential, removed from the outbox on 200/201, kept otherwise and retried
// with exponential backoff until retry.give_up_after_s after the bundle was
// made. A bundle that gives up stays in the outbox for the next flush.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "config/node_config.h"
#include "delivery/http_client.h"
#include "delivery/outbox.h"

namespace ff::collect {

enum class DeliveryOutcome {
  delivered,  // the agent acknowledged it; removed from the outbox
  kept,       // the agent did not take it (yet); still in the outbox
  busy,       // another collector is sending it right now
  gone,       // already delivered by another collector
};

const char* outcome_name(DeliveryOutcome outcome);

// One attempt. `total_s` bounds the request (the fast pass gives less).
DeliveryOutcome deliver_once(const NodeConfig& config, const OutboxEntry& entry, double total_s,
                             HttpReply* reply = nullptr);

using SleepFn = std::function<void(std::chrono::milliseconds)>;

// Attempts the bundles until each is delivered (or gone) or has given up.
// Returns the bundles still in the outbox.
std::vector<OutboxEntry> deliver_with_retry(const NodeConfig& config,
                                            std::vector<OutboxEntry> entries,
                                            const SleepFn& sleep = {});

}  // namespace ff::collect
