#include "read/line_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace ff {

ReadStats read_lines_chunked(const std::string& path, const ChunkFn& fn, std::size_t max_line) {
  ReadStats st;
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) {
    st.error = std::string("cannot open: ") + std::strerror(errno);
    return st;
  }
  st.opened = true;
  gzbuffer(gz, 256 * 1024);
  // A buffer of max_line + 1 bytes: a line that does not fit is cut at max_line.
  const std::size_t chunk_size = max_line + 1;
  std::vector<char> buf(chunk_size);
  std::size_t have = 0;         // bytes in buf
  std::uint64_t next_line = 1;  // number of the first line in buf
  bool skipping = false;        // inside the remainder of a cut line
  std::string out;              // chunk handed to fn when lines had to be cut
  bool eof = false;

  auto count_lines = [](const char* p, std::size_t n) {
    return static_cast<std::uint64_t>(std::count(p, p + n, '\n'));
  };

  while (!eof) {
    int n = gzread(gz, buf.data() + have, static_cast<unsigned>(buf.size() - have));
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(gz, &errnum);
      st.error = std::string("read error: ") + (msg ? msg : "unknown");
      eof = true;
      n = 0;
    } else if (n == 0) {
      eof = true;
      int errnum = 0;
      const char* msg = gzerror(gz, &errnum);
      if (errnum != Z_OK && errnum != Z_STREAM_END)
        st.error = std::string("decompression error: ") + (msg ? msg : "unknown");
    }
    st.bytes += static_cast<std::uint64_t>(n);
    st.nul_bytes +=
        static_cast<std::uint64_t>(std::count(buf.data() + have, buf.data() + have + n, '\0'));
    have += static_cast<std::size_t>(n);

    std::size_t start = 0;
    if (skipping) {  // drop the rest of a cut line
      const char* nl = static_cast<const char*>(std::memchr(buf.data(), '\n', have));
      if (!nl) {
        have = 0;
        continue;
      }
      start = static_cast<std::size_t>(nl - buf.data()) + 1;
      skipping = false;
    }
    // Complete lines: up to the last '\n'.
    std::size_t end = have;
    while (end > start && buf[end - 1] != '\n') --end;
    if (eof && end < have) {  // last line without '\n'
      if (have == buf.size()) --have;
      buf[have++] = '\n';
      end = have;
    }
    if (end > start) {
      std::string_view chunk(buf.data() + start, end - start);
      std::uint64_t nlines = count_lines(chunk.data(), chunk.size());
      fn(chunk, next_line);
      next_line += nlines;
      st.lines += nlines;
    } else if (!eof && have - start >= max_line) {
      // No newline within max_line bytes: emit the cut line, skip its rest.
      out.assign(buf.data() + start, max_line);
      out.push_back('\n');
      fn(out, next_line);
      if (!st.long_lines) st.first_long_line = next_line;
      ++st.long_lines;
      ++next_line;
      ++st.lines;
      end = have;
      skipping = true;
      // the bytes after max_line are the rest of this line
    }
    // keep the partial line
    std::size_t rest = have - end;
    if (rest && end) std::memmove(buf.data(), buf.data() + end, rest);
    have = rest;
    if (skipping) {
      const char* nl = static_cast<const char*>(std::memchr(buf.data(), '\n', have));
      if (nl) {
        std::size_t drop = static_cast<std::size_t>(nl - buf.data()) + 1;
        std::memmove(buf.data(), buf.data() + drop, have - drop);
        have -= drop;
        skipping = false;
      } else {
        have = 0;
      }
    }
  }
  gzclose(gz);
  return st;
}

}  // namespace ff
