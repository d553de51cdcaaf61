#include "sources/tail_copy.h"

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace ff::collect {

TailCopy copy_tail_from_line_start(int in, int out, std::uint64_t from, std::uint64_t size) {
  TailCopy copy;
  std::vector<char> buf(256 * 1024);
  std::uint64_t pos = from;
  bool skip_partial = from > 0;
  while (pos < size) {
    ssize_t n = ::pread(in, buf.data(), std::min<std::uint64_t>(buf.size(), size - pos),
                        static_cast<off_t>(pos));
    if (n <= 0) break;
    pos += static_cast<std::uint64_t>(n);
    const char* p = buf.data();
    std::size_t len = static_cast<std::size_t>(n);
    if (skip_partial) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', len));
      if (!nl) continue;
      len -= static_cast<std::size_t>(nl + 1 - p);
      p = nl + 1;
      skip_partial = false;
    }
    copy.lines += static_cast<std::uint64_t>(std::count(p, p + len, '\n'));
    if (::write(out, p, len) != static_cast<ssize_t>(len)) {
      copy.write_failed = true;
      break;
    }
    copy.written += len;
  }
  return copy;
}

}  // namespace ff::collect
