// Copies the end of a file from a line start: the job output kept in a bundle
// and a file cut to fit the bundle's size limit both keep whole lines only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ff::collect {

struct TailCopy {
  std::uint64_t written = 0;    // bytes written to `out`
  std::uint64_t lines = 0;      // newlines among them
  std::uint64_t lines_cut = 0;  // lines longer than max_line, cut to it
  bool write_failed = false;
};

// The longest line a collector hands on (what the engine reads of a line,
// and the agent's default max_line_bytes).
constexpr std::size_t kMaxLineBytes = 1 << 20;

// Copies bytes [from, size) of the open file `in` to the open file `out`.
// When `from` is not 0 the partial line at `from` is dropped, so the copy
// starts at a line boundary. A line longer than `max_line` keeps only its
// first `max_line` bytes. Reads with pread: `in`'s offset is untouched.
TailCopy copy_tail_from_line_start(int in, int out, std::uint64_t from, std::uint64_t size,
                                   std::size_t max_line = kMaxLineBytes);

}  // namespace ff::collect
