#include "agent/slurm/comment_text.h"

namespace ff::agent {

std::string slurm_text(const std::string& text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    char put = c < 0x20 || c == 0x7f ? ' ' : c > 0x7e ? '?' : ch;
    if (put == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(put);
    if (out.size() >= max_bytes) break;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string comment_text(const std::string& summary) {
  return slurm_text(summary, kMaxCommentBytes);
}

}  // namespace ff::agent
