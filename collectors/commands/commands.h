// The subcommands of firstfault-collect (docs/slurm-path.md §2). Each
// returns the process exit code.
#pragma once

#include <string>

#include "collectors/bundle/bundle_builder.h"
#include "collectors/config/node_config.h"

namespace ff::collect {

enum ExitCode : int {
  kExitDelivered = 0,
  kExitInternal = 1,
  kExitKept = 2,  // the bundle stays in the outbox for a later retry
  kExitUsage = 64,
};

// step / epilog: build the bundle, deliver it with retries (this process is
// detached; it may wait), then try the rest of the outbox once.
int run_collect(const NodeConfig& config, const CollectRequest& request);

// fastpass: this node's step bundle, then the agent's fast pass, all within
// timeout_s; the reply is printed on stdout.
int run_fastpass(const NodeConfig& config, const std::string& config_path,
                 const CollectRequest& request, int exit_status, double timeout_s);

// flush: collect Epilog hand-offs left behind, then deliver every outbox
// bundle with retries. `once`: one attempt each, no waiting.
int run_flush(const NodeConfig& config, bool once);

// Before any invocation exits: one attempt for every other outbox bundle and
// the spool cleaned of old entries.
void finish_invocation(const NodeConfig& config);

}  // namespace ff::collect
