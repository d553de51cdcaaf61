// Which stretch of the node's logs belongs to a job: from its start (the
// earliest alloc record the plugin wrote for this attempt, else a configured
// look-back) to now, widened by the margins.
#pragma once

#include <vector>

#include "collectors/config/node_config.h"
#include "collectors/spool/job_records.h"
#include "collectors/window/time_window.h"

namespace ff::collect {

struct JobWindow {
  TimeWindow window;
  MaybeTime job_start;  // from the alloc records; nullopt when there were none
};

JobWindow job_window(const std::vector<AllocRecord>& allocs, TimeUs now, const NodeConfig& config);

}  // namespace ff::collect
