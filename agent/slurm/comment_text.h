// The job Comment as Slurm should receive it: printable ASCII only, at most
// kMaxCommentBytes. The diagnosis summary already follows these rules; they
// are enforced again here because this is where text leaves for slurmctld.
#pragma once

#include <cstddef>
#include <string>

namespace ff::agent {

constexpr std::size_t kMaxCommentBytes = 1000;

// Control characters become spaces, other non-ASCII bytes '?', runs of
// spaces one space; the result is trimmed and cut to kMaxCommentBytes.
std::string comment_text(const std::string& summary);

}  // namespace ff::agent
