// Step 1 of the pipeline, part 2: reading one file as a stream of line
// buffers. Plain and gzip files alike (zlib reads both), in fixed-size
// chunks, so memory does not grow with file size. Defects are reported, not
// fatal: a truncated gzip keeps the lines before the damage, a line longer
// than the limit is cut, NUL bytes are counted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ff {

struct ReadStats {
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  std::uint64_t long_lines = 0;  // lines cut at the limit
  std::uint64_t first_long_line = 0;
  std::uint64_t nul_bytes = 0;
  bool opened = false;
  std::string error;  // open/read/decompression error, "" when none
};

// A chunk is a run of complete lines; `first_line` is the 1-based number of
// its first line. Every line in it ends with '\n' (one is added to a last
// line without one). Lines longer than `max_line` are cut to it.
using ChunkFn = std::function<void(std::string_view chunk, std::uint64_t first_line)>;

ReadStats read_lines_chunked(const std::string& path, const ChunkFn& fn,
                             std::size_t max_line = (1 << 20) - 1);

}  // namespace ff
