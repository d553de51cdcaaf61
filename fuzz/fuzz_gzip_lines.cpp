// Fuzzes read_lines_chunked (plain and gzip input through zlib): the input
// is a file. Checks the documented chunk contract: every line ends with '\n'
// and is at most max_line bytes long plus the newline; a plain file read in
// ranges gives the same lines as read whole.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/read/line_reader.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto path = fuzz::write_input("nodes/n1/syslog.1.gz", data, size);
  // A small limit so that the cut-long-line path is reached too.
  for (std::size_t max_line : {std::size_t{64}, std::size_t{(1 << 20) - 1}}) {
    std::uint64_t lines = 0;
    ff::ReadStats st = ff::read_lines_chunked(
        path.string(),
        [&](std::string_view chunk, std::uint64_t first_line) {
          if (chunk.empty() || chunk.back() != '\n') __builtin_trap();
          if (first_line != lines + 1) __builtin_trap();
          std::size_t start = 0;
          while (start < chunk.size()) {
            std::size_t nl = chunk.find('\n', start);
            if (nl - start > max_line) __builtin_trap();
            ++lines;
            start = nl + 1;
          }
        },
        max_line);
    if (st.opened && st.lines != lines) __builtin_trap();
  }
  // Read in ranges (as threads share a large plain file), the same lines
  // come out, each once, wherever the ranges cut.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  if (!ff::is_gzip_file(fd)) {
    const std::size_t max_line = 64;
    auto collect = [&](const ff::ByteRange& r, std::vector<std::string>& into) {
      ff::read_lines_chunked(
          fd, r,
          [&](std::string_view chunk, std::uint64_t, std::string_view before) {
            if (!before.empty() && before.back() != '\n') __builtin_trap();
            std::size_t start = 0;
            while (start < chunk.size()) {
              std::size_t nl = chunk.find('\n', start);
              into.emplace_back(chunk.substr(start, nl - start));
              start = nl + 1;
            }
          },
          max_line);
    };
    std::vector<std::string> whole, ranged;
    collect(ff::ByteRange{}, whole);
    std::uint64_t split = 1 + (size ? data[0] % 97 : 0);
    for (std::uint64_t at = 0; at < size; at += split)
      collect({at, at + split >= size ? ff::ByteRange{}.end : at + split}, ranged);
    if (ranged != whole) __builtin_trap();
  }
  ::close(fd);
  return 0;
}
