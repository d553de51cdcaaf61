// Step 1 of the pipeline, part 2: reading one file as a stream of line
// buffers. Plain and gzip files alike, in fixed-size chunks, so memory does
// not grow with file size. Defects are reported, not fatal: a truncated gzip
// keeps the lines before the damage, a line longer than the limit is cut,
// NUL bytes are counted.
//
// A plain file can also be read as a range of its bytes, so that several
// threads share one large file: a range holds the lines that *start* inside
// it, whatever its ends cut through, so consecutive ranges read every line
// exactly once.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>

namespace ff {

struct ReadStats {
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;       // bytes read from the file (decompressed)
  std::uint64_t long_lines = 0;  // lines cut at the limit
  std::uint64_t first_long_line = 0;
  std::uint64_t nul_bytes = 0;   // in the lines of the range
  std::uint64_t end_offset = 0;  // plain files: the offset after the range's last line
  bool opened = false;
  std::string error;  // open/read/decompression error, "" when none
};

// [begin, end) in bytes of a plain file; the default is the whole file.
struct ByteRange {
  std::uint64_t begin = 0;
  std::uint64_t end = std::numeric_limits<std::uint64_t>::max();
  bool whole() const { return begin == 0 && end == std::numeric_limits<std::uint64_t>::max(); }
};

// A chunk is a run of complete lines; `first_line` is the 1-based number of
// its first line, counted from the start of the range. Every line in it
// ends with '\n' (one is added to a last line without one). Lines longer
// than `max_line` are cut to it.
using ChunkFn = std::function<void(std::string_view chunk, std::uint64_t first_line)>;
// The same, with `before`: up to kContextBytes of complete lines that
// precede the chunk in the file (from an earlier chunk, or read from before
// the range), so that what a line's neighbours say does not depend on where
// a buffer or a range happens to end.
using ChunkInContextFn =
    std::function<void(std::string_view chunk, std::uint64_t first_line, std::string_view before)>;
constexpr std::size_t kContextBytes = 64 * 1024;

constexpr std::size_t kMaxLineBytes = (1 << 20) - 1;

// Whether the open file starts with gzip's magic bytes. Such a file can only
// be read whole: a compressed stream cannot be entered in the middle.
bool is_gzip_file(int fd);

// Reads the lines of `range` from an open file (which stays open; its file
// offset is not used for plain files, so ranges of one file may be read by
// several threads through one descriptor). A gzip file is decompressed and
// must be read whole.
ReadStats read_lines_chunked(int fd, const ByteRange& range, const ChunkInContextFn& fn,
                             std::size_t max_line = kMaxLineBytes);

// Opens `path` and reads it whole.
ReadStats read_lines_chunked(const std::string& path, const ChunkFn& fn,
                             std::size_t max_line = kMaxLineBytes);

}  // namespace ff
