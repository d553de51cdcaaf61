// Text as Slurm should receive it (a job Comment, a node's drain Reason):
// printable ASCII only, bounded. The diagnosis summary already follows these
// rules; they are enforced again here because this is where text leaves for
// slurmctld.
#pragma once

#include <cstddef>
#include <string>

namespace ff::agent {

constexpr std::size_t kMaxCommentBytes = 1000;
// A drain Reason is shown in every `sinfo -R` line: kept short.
constexpr std::size_t kMaxDrainReasonBytes = 200;

// Control characters become spaces, other non-ASCII bytes '?', runs of
// spaces one space; the result is trimmed and cut to `max_bytes`.
std::string slurm_text(const std::string& text, std::size_t max_bytes);

// slurm_text(summary, kMaxCommentBytes).
std::string comment_text(const std::string& summary);

}  // namespace ff::agent
