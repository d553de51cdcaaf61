// Builds one node's bundle for a job into the outbox: job.json, the node's
// logs cut to the job's window, the job's output when it is on this node.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "collectors/bundle/job_fragment.h"
#include "collectors/config/node_config.h"
#include "collectors/delivery/outbox.h"

namespace ff::collect {

struct CollectRequest {
  std::string pass;  // "step" or "epilog"
  std::string job_id;
  std::string node;
  std::string nodelist;                  // SLURM_NODELIST from the Epilog, "" when unknown
  std::optional<std::string> exit_code;  // "exit:signal" (SLURM_JOB_EXIT_CODE2)
  std::optional<int> derived_ec;         // raw wait status (SLURM_JOB_DERIVED_EC)
  std::optional<int> attempt;            // SLURM_JOB_RESTART_COUNT
  std::vector<std::string> outputs;      // the job's stdout/stderr paths
  std::optional<uid_t> owner_uid;        // SLURM_JOB_UID: outputs must be this user's
  TimeUs now = 0;                        // the window's end and, in the Epilog, end_time
};

struct BuiltBundle {
  OutboxEntry entry;
  JobFragment job;
  bool logs_skipped = false;  // a successful job with collect_on_success: false
  std::uint64_t bytes_read = 0;
};

BuiltBundle build_bundle(const NodeConfig& config, const CollectRequest& request);

TimeUs wall_clock_now();

}  // namespace ff::collect
