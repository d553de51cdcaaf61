#include "agent/slurm/comment_text.h"

namespace ff::agent {

std::string comment_text(const std::string& summary) {
  return slurm_safe_text(summary, kMaxCommentBytes);
}

}  // namespace ff::agent
