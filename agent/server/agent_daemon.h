// `firstfault agent`: opens the store, starts the pass worker and the HTTP
// server, and runs in the foreground until SIGTERM or SIGINT, then stops
// gracefully (requests in flight finish, the worker ends its current pass).
#pragma once

#include "agent/server/agent_config.h"

namespace ff::agent {

// Returns the process exit code: 0 after a clean stop, 1 when the store or
// the listening socket cannot be opened, 3 when rule files have errors.
// Prints "listening on <host>:<port>" on stdout once requests are accepted
// (with `listen: host:0` this is how a caller learns the port).
int run_agent(const AgentConfig& config);

}  // namespace ff::agent
