// Unit tests for read/line_reader: plain and gzip files, line numbers,
// defects (truncated gzip, overlong lines, NUL bytes) reported, not fatal.
#include "engine/read/line_reader.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ff {
namespace {

namespace fs = std::filesystem;
using ff::test_support::ScratchDirectory;

class LineReaderTest : public ::testing::Test {
 protected:
  fs::path write_plain(const std::string& name, const std::string& content) {
    fs::path p = dir_ / name;
    std::ofstream out(p, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    return p;
  }

  fs::path write_gzip(const std::string& name, const std::string& content) {
    fs::path p = dir_ / name;
    gzFile gz = gzopen(p.c_str(), "wb");
    EXPECT_NE(gz, nullptr);
    std::size_t off = 0;
    while (off < content.size()) {
      unsigned n = static_cast<unsigned>(std::min<std::size_t>(content.size() - off, 1 << 20));
      EXPECT_EQ(gzwrite(gz, content.data() + off, n), static_cast<int>(n));
      off += n;
    }
    EXPECT_EQ(gzclose(gz), Z_OK);
    return p;
  }

  ScratchDirectory dir_{"reader"};
};

struct Collected {
  std::string text;                         // all chunks concatenated
  std::vector<std::string> lines;           // split at '\n'
  std::vector<std::uint64_t> line_numbers;  // number of every line
  std::size_t chunks = 0;
  std::size_t max_chunk = 0;
  bool chunks_end_with_newline = true;
};

Collected read_all(const fs::path& path, ReadStats& st, std::size_t max_line = (1 << 20) - 1) {
  Collected c;
  st = read_lines_chunked(
      path.string(),
      [&](std::string_view chunk, std::uint64_t first_line) {
        ++c.chunks;
        c.max_chunk = std::max(c.max_chunk, chunk.size());
        if (chunk.empty() || chunk.back() != '\n') c.chunks_end_with_newline = false;
        c.text.append(chunk.data(), chunk.size());
        std::uint64_t n = first_line;
        std::size_t start = 0;
        while (start < chunk.size()) {
          std::size_t nl = chunk.find('\n', start);
          if (nl == std::string_view::npos) nl = chunk.size();
          c.lines.emplace_back(chunk.substr(start, nl - start));
          c.line_numbers.push_back(n++);
          start = nl + 1;
        }
      },
      max_line);
  return c;
}

std::string numbered_lines(int count) {
  std::string s;
  for (int i = 1; i <= count; ++i) s += "line " + std::to_string(i) + " of the log\n";
  return s;
}

TEST_F(LineReaderTest, PlainFileLinesAndCounts) {
  ReadStats st;
  Collected c = read_all(write_plain("a.log", "alpha\nbeta\n\ngamma\n"), st);
  EXPECT_TRUE(st.opened);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.lines, 4u);
  EXPECT_EQ(st.bytes, 18u);
  EXPECT_EQ(st.long_lines, 0u);
  EXPECT_EQ(st.nul_bytes, 0u);
  EXPECT_EQ(c.text, "alpha\nbeta\n\ngamma\n");
  EXPECT_EQ(c.lines, (std::vector<std::string>{"alpha", "beta", "", "gamma"}));
  EXPECT_EQ(c.line_numbers, (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST_F(LineReaderTest, EmptyFileHasNoLines) {
  ReadStats st;
  Collected c = read_all(write_plain("empty.log", ""), st);
  EXPECT_TRUE(st.opened);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.lines, 0u);
  EXPECT_EQ(c.chunks, 0u);
}

TEST_F(LineReaderTest, LastLineWithoutNewlineGetsOne) {
  ReadStats st;
  Collected c = read_all(write_plain("a.log", "alpha\nbeta"), st);
  EXPECT_EQ(st.lines, 2u);
  EXPECT_EQ(st.bytes, 10u);
  EXPECT_EQ(c.text, "alpha\nbeta\n");
  EXPECT_EQ(c.line_numbers, (std::vector<std::uint64_t>{1, 2}));
}

TEST_F(LineReaderTest, SingleLineWithoutNewline) {
  ReadStats st;
  Collected c = read_all(write_plain("a.log", "x"), st);
  EXPECT_EQ(st.lines, 1u);
  EXPECT_EQ(c.text, "x\n");
}

TEST_F(LineReaderTest, MissingFileIsAnErrorNotACrash) {
  ReadStats st;
  Collected c = read_all(dir_ / "does-not-exist.log", st);
  EXPECT_FALSE(st.opened);
  EXPECT_NE(st.error, "");
  EXPECT_EQ(c.chunks, 0u);
}

TEST_F(LineReaderTest, GzipFileIsReadTransparently) {
  const std::string content = numbered_lines(50000);
  ReadStats st;
  Collected c = read_all(write_gzip("syslog.2.gz", content), st);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.lines, 50000u);
  EXPECT_EQ(st.bytes, content.size());
  EXPECT_EQ(c.text, content);
  ASSERT_EQ(c.lines.size(), 50000u);
  EXPECT_EQ(c.lines[49999], "line 50000 of the log");
  EXPECT_EQ(c.line_numbers[49999], 50000u);
}

TEST_F(LineReaderTest, TruncatedGzipReportsErrorAndKeepsLinesBeforeTheDamage) {
  const int total = 200000;
  const std::string content = numbered_lines(total);
  fs::path gz = write_gzip("syslog.1.gz", content);
  // Cut off the second half of the compressed stream.
  std::string bytes = ff::test_support::read_file(gz);
  ASSERT_GT(bytes.size(), 1000u);
  fs::path cut = write_plain("cut.gz", bytes.substr(0, bytes.size() / 2));

  ReadStats st;
  Collected c = read_all(cut, st);
  EXPECT_TRUE(st.opened);
  EXPECT_NE(st.error, "") << "a truncated gzip must be reported";
  EXPECT_GT(st.lines, 1000u);
  EXPECT_LT(st.lines, static_cast<std::uint64_t>(total));
  ASSERT_FALSE(c.lines.empty());
  // every line but possibly the last (cut in the middle) is intact and in order
  for (std::size_t i = 0; i + 1 < c.lines.size(); ++i) {
    ASSERT_EQ(c.lines[i], "line " + std::to_string(i + 1) + " of the log") << i;
    ASSERT_EQ(c.line_numbers[i], i + 1);
  }
}

TEST_F(LineReaderTest, GzipMissingOnlyItsTrailerKeepsAllLines) {
  const std::string content = numbered_lines(1000);
  fs::path gz = write_gzip("a.gz", content);
  std::string bytes = ff::test_support::read_file(gz);
  fs::path cut = write_plain("cut.gz", bytes.substr(0, bytes.size() - 4));  // no ISIZE
  ReadStats st;
  Collected c = read_all(cut, st);
  EXPECT_NE(st.error, "");
  EXPECT_EQ(st.lines, 1000u);
  EXPECT_EQ(c.text, content);
}

TEST_F(LineReaderTest, CorruptGzipReportsError) {
  const std::string content = numbered_lines(100000);
  fs::path gz = write_gzip("a.gz", content);
  std::string bytes = ff::test_support::read_file(gz);
  for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) bytes[i] = '\xff';
  ReadStats st;
  Collected c = read_all(write_plain("corrupt.gz", bytes), st);
  EXPECT_NE(st.error, "");
  EXPECT_LT(st.lines, 100000u);
  for (std::size_t i = 0; i + 1 < c.lines.size(); ++i)
    ASSERT_EQ(c.lines[i], "line " + std::to_string(i + 1) + " of the log") << i;
}

TEST_F(LineReaderTest, TenMegabyteLineIsCutAndFollowingLinesKeepTheirNumbers) {
  std::string content = "first\n";
  content += std::string(10u << 20, 'x');
  content += "\nafter one\nafter two\n";
  ReadStats st;
  Collected c = read_all(write_plain("long.log", content), st);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.long_lines, 1u);
  EXPECT_EQ(st.first_long_line, 2u);
  EXPECT_EQ(st.lines, 4u);
  EXPECT_EQ(st.bytes, content.size());
  ASSERT_EQ(c.lines.size(), 4u);
  EXPECT_EQ(c.lines[0], "first");
  EXPECT_EQ(c.lines[1], std::string((1u << 20) - 1, 'x'));
  EXPECT_EQ(c.lines[2], "after one");
  EXPECT_EQ(c.lines[3], "after two");
  EXPECT_EQ(c.line_numbers, (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST_F(LineReaderTest, LongLineInGzipIsCutToo) {
  std::string content = "first\n" + std::string(3u << 20, 'y') + "\nafter\n";
  ReadStats st;
  Collected c = read_all(write_gzip("long.gz", content), st);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.long_lines, 1u);
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[2], "after");
  EXPECT_EQ(c.line_numbers[2], 3u);
}

TEST_F(LineReaderTest, LongLineAtEndOfFileWithoutNewline) {
  std::string content = "first\n" + std::string(3u << 20, 'z');
  ReadStats st;
  Collected c = read_all(write_plain("tail.log", content), st);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.long_lines, 1u);
  EXPECT_EQ(st.first_long_line, 2u);
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0], "first");
  EXPECT_EQ(c.lines[1].size(), (1u << 20) - 1);
}

TEST_F(LineReaderTest, SeveralLongLinesWithSmallLimit) {
  std::string content;
  for (int i = 1; i <= 20; ++i)
    content += (i % 5 == 0 ? std::string(5000, 'a') : "short " + std::to_string(i)) + "\n";
  ReadStats st;
  Collected c = read_all(write_plain("mixed.log", content), st, 1023);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.long_lines, 4u);
  EXPECT_EQ(st.first_long_line, 5u);
  EXPECT_EQ(st.lines, 20u);
  ASSERT_EQ(c.lines.size(), 20u);
  for (int i = 1; i <= 20; ++i) {
    EXPECT_EQ(c.line_numbers[static_cast<std::size_t>(i - 1)], static_cast<std::uint64_t>(i));
    if (i % 5 == 0)
      EXPECT_EQ(c.lines[static_cast<std::size_t>(i - 1)], std::string(1023, 'a')) << i;
    else
      EXPECT_EQ(c.lines[static_cast<std::size_t>(i - 1)], "short " + std::to_string(i)) << i;
  }
}

TEST_F(LineReaderTest, LineLongerThanLimitButShorterThanChunkIsCut) {
  // The header promises: lines longer than `max_line` are cut to it.
  std::string content = "short\n" + std::string(2000, 'c') + "\nafter\n";
  ReadStats st;
  Collected c = read_all(write_plain("mid.log", content), st, 1023);
  EXPECT_EQ(st.long_lines, 1u);
  EXPECT_EQ(st.first_long_line, 2u);
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[1].size(), 1023u);
  EXPECT_EQ(c.lines[2], "after");
  EXPECT_EQ(c.line_numbers[2], 3u);
}

TEST_F(LineReaderTest, LineOfExactlyMaxLengthIsNotCut) {
  std::string content = std::string(1023, 'b') + "\nnext\n";
  ReadStats st;
  Collected c = read_all(write_plain("exact.log", content), st, 1023);
  EXPECT_EQ(st.long_lines, 0u);
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].size(), 1023u);
  EXPECT_EQ(c.lines[1], "next");
}

TEST_F(LineReaderTest, NulBytesAreCounted) {
  std::string content = "a";
  content += '\0';
  content += "b\nc";
  content += '\0';
  content += '\0';
  content += "\nd\n";
  ReadStats st;
  Collected c = read_all(write_plain("nul.log", content), st);
  EXPECT_EQ(st.nul_bytes, 3u);
  EXPECT_EQ(st.lines, 3u);
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[0], std::string("a\0b", 3));
  EXPECT_EQ(c.lines[2], "d");
}

TEST_F(LineReaderTest, BigFileIsDeliveredInBoundedChunks) {
  // ~12 MB read with a 64 KiB chunk: no chunk larger than the buffer, every
  // chunk made of whole lines, nothing lost or duplicated.
  const int total = 400000;
  const std::string content = numbered_lines(total);
  ReadStats st;
  Collected c = read_all(write_plain("big.log", content), st, 4095);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.lines, static_cast<std::uint64_t>(total));
  EXPECT_GT(c.chunks, 100u);
  EXPECT_LE(c.max_chunk, 64u << 10);
  EXPECT_TRUE(c.chunks_end_with_newline);
  EXPECT_TRUE(c.text == content);
  ASSERT_EQ(c.line_numbers.size(), static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < c.line_numbers.size(); ++i) ASSERT_EQ(c.line_numbers[i], i + 1) << i;
}

// --- ranges -------------------------------------------------------------------

// Lines of every kind a range boundary can cut through: empty lines, lines
// longer than the limit, NUL bytes, and a last line without '\n'.
std::string awkward_content(std::size_t max_line) {
  std::string s;
  for (int i = 1; i <= 400; ++i) {
    if (i % 37 == 0)
      s += std::string(max_line * 3 + static_cast<std::size_t>(i), 'L');
    else if (i % 11 == 0)
      s += "";
    else if (i % 13 == 0)
      s += std::string("nul") + '\0' + "inside " + std::to_string(i);
    else
      s += "line " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 7) * 9, '.');
    if (i != 400) s += '\n';
  }
  return s;
}

struct RangeRead {
  std::vector<std::string> lines;
  ReadStats total;
  std::vector<std::string> first_contexts;  // `before` of each range's first chunk
};

RangeRead read_in_ranges(const fs::path& path, std::uint64_t split, std::size_t max_line) {
  RangeRead out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  std::uint64_t size = fs::file_size(path);
  for (std::uint64_t at = 0; at < size; at += split) {
    ByteRange r{at, at + split >= size ? ByteRange{}.end : at + split};
    bool first_chunk = true;
    std::uint64_t expect_line = 1;
    ReadStats st = read_lines_chunked(
        fd, r,
        [&](std::string_view chunk, std::uint64_t first_line, std::string_view before) {
          EXPECT_EQ(first_line, expect_line);
          if (first_chunk) out.first_contexts.emplace_back(before);
          first_chunk = false;
          std::size_t start = 0;
          while (start < chunk.size()) {
            std::size_t nl = chunk.find('\n', start);
            out.lines.emplace_back(chunk.substr(start, nl - start));
            ++expect_line;
            start = nl + 1;
          }
        },
        max_line);
    EXPECT_EQ(st.error, "");
    out.total.lines += st.lines;
    out.total.long_lines += st.long_lines;
    out.total.nul_bytes += st.nul_bytes;
  }
  ::close(fd);
  return out;
}

TEST_F(LineReaderTest, RangesReadEveryLineOnceWhereverTheyCut) {
  const std::size_t max_line = 64;
  fs::path p = write_plain("a.log", awkward_content(max_line));
  ReadStats whole_st;
  Collected whole = read_all(p, whole_st, max_line);
  ASSERT_GT(whole_st.long_lines, 0u);
  ASSERT_GT(whole_st.nul_bytes, 0u);
  for (std::uint64_t split : {1, 2, 3, 7, 64, 65, 100, 1000, 4096, 1 << 20}) {
    RangeRead r = read_in_ranges(p, split, max_line);
    EXPECT_EQ(r.lines, whole.lines) << "split " << split;
    EXPECT_EQ(r.total.lines, whole_st.lines) << "split " << split;
    EXPECT_EQ(r.total.long_lines, whole_st.long_lines) << "split " << split;
    EXPECT_EQ(r.total.nul_bytes, whole_st.nul_bytes) << "split " << split;
  }
}

TEST_F(LineReaderTest, ARangeSeesTheLinesBeforeIt) {
  std::string content = numbered_lines(2000);
  fs::path p = write_plain("a.log", content);
  RangeRead r = read_in_ranges(p, 10000, kMaxLineBytes);
  ASSERT_GT(r.first_contexts.size(), 2u);
  EXPECT_EQ(r.first_contexts[0], "");
  // The second range's context is the whole file up to its first line,
  // which follows the line the boundary at byte 10000 cuts through.
  std::size_t first_of_second = content.find('\n', 9999) + 1;
  EXPECT_EQ(r.first_contexts[1], content.substr(0, first_of_second));
  // A context holds complete lines and at most kContextBytes.
  for (const auto& c : r.first_contexts) {
    EXPECT_LE(c.size(), kContextBytes);
    if (!c.empty()) EXPECT_EQ(c.back(), '\n');
  }
}

TEST_F(LineReaderTest, AGzipFileIsReadWholeNeverFromAnOffset) {
  fs::path p = write_gzip("syslog.1.gz", numbered_lines(100));
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(is_gzip_file(fd));
  auto ignore = [](std::string_view, std::uint64_t, std::string_view) {};
  ReadStats st = read_lines_chunked(fd, ByteRange{10, 20}, ignore);
  EXPECT_NE(st.error, "");
  EXPECT_EQ(st.lines, 0u);
  st = read_lines_chunked(fd, ByteRange{}, ignore);
  EXPECT_EQ(st.error, "");
  EXPECT_EQ(st.lines, 100u);
  ::close(fd);
}

}  // namespace
}  // namespace ff
