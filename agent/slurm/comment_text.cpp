#include "slurm/comment_text.h"

namespace ff::agent {

std::string comment_text(const std::string& summary) {
  std::string out;
  out.reserve(std::min(summary.size(), kMaxCommentBytes));
  for (char ch : summary) {
    auto c = static_cast<unsigned char>(ch);
    char put = c < 0x20 || c == 0x7f ? ' ' : c > 0x7e ? '?' : ch;
    if (put == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(put);
    if (out.size() >= kMaxCommentBytes) break;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace ff::agent
