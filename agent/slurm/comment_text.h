// The agent's text for Slurm: a job's Comment and a node's drain Reason, under
// the rules of incident/slurm_text.h. The diagnosis summary already obeys them;
// they are applied again here, where text leaves for slurmctld.
#pragma once

#include <cstddef>
#include <string>

#include "incident/slurm_text.h"

namespace ff::agent {

using ff::kMaxCommentBytes;
// A drain Reason is shown in every `sinfo -R` line: kept short.
constexpr std::size_t kMaxDrainReasonBytes = 200;

// slurm_safe_text(summary, kMaxCommentBytes).
std::string comment_text(const std::string& summary);

}  // namespace ff::agent
