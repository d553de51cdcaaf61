#include "collectors/sources/tail_copy.h"

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace ff::collect {

TailCopy copy_tail_from_line_start(int in, int out, std::uint64_t from, std::uint64_t size,
                                   std::size_t max_line) {
  TailCopy copy;
  std::vector<char> buf(256 * 1024);
  std::vector<char> kept;
  kept.reserve(buf.size() + 1);
  std::uint64_t pos = from;
  bool skip_partial = from > 0;
  std::size_t line_length = 0;  // bytes of the current line read so far
  while (pos < size) {
    ssize_t n = ::pread(in, buf.data(), std::min<std::uint64_t>(buf.size(), size - pos),
                        static_cast<off_t>(pos));
    if (n <= 0) break;
    pos += static_cast<std::uint64_t>(n);
    const char* p = buf.data();
    const char* end = p + n;
    if (skip_partial) {
      const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(n)));
      if (!nl) continue;
      p = nl + 1;
      skip_partial = false;
    }
    // Whole lines pass as they are; a line longer than max_line keeps its
    // first max_line bytes (the agent refuses longer ones).
    kept.clear();
    while (p < end) {
      const auto* nl =
          static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      const char* piece_end = nl ? nl : end;
      auto piece = static_cast<std::size_t>(piece_end - p);
      std::size_t room = line_length < max_line ? max_line - line_length : 0;
      if (piece > room && line_length <= max_line) ++copy.lines_cut;
      kept.insert(kept.end(), p, p + std::min(piece, room));
      line_length += piece;
      if (line_length > max_line) line_length = max_line + 1;  // cut once, no overflow
      if (nl) {
        kept.push_back('\n');
        ++copy.lines;
        line_length = 0;
      }
      p = nl ? nl + 1 : end;
    }
    if (::write(out, kept.data(), kept.size()) != static_cast<ssize_t>(kept.size())) {
      copy.write_failed = true;
      break;
    }
    copy.written += kept.size();
  }
  return copy;
}

}  // namespace ff::collect
