#include "engine/read/line_reader.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace ff {
namespace {

std::uint64_t count_byte(const char* p, std::size_t n, char c) {
  return static_cast<std::uint64_t>(std::count(p, p + n, c));
}

// NUL bytes are rare in a log: memchr finds there is none far faster than
// a count; text that has one is counted in full.
std::uint64_t count_nul(const char* p, std::size_t n) {
  const char* z = static_cast<const char*>(std::memchr(p, '\0', n));
  return z ? count_byte(z, n - static_cast<std::size_t>(z - p), '\0') : 0;
}

// Where the bytes come from: zlib for gzip (sequential only), pread for
// plain files (positioned, so threads can share a descriptor).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Bytes read, 0 at the end, -1 on error (error() says which).
  virtual long read(char* into, std::size_t n) = 0;
  virtual std::string end_error() { return ""; }  // checked once the end is reached
  std::string error;
};

class PlainSource : public ByteSource {
 public:
  PlainSource(int fd, std::uint64_t at) : fd_(fd), at_(at) {}
  long read(char* into, std::size_t n) override {
    for (;;) {
      ssize_t r = ::pread(fd_, into, n, static_cast<off_t>(at_));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        error = std::string("read error: ") + std::strerror(errno);
        return -1;
      }
      at_ += static_cast<std::uint64_t>(r);
      return static_cast<long>(r);
    }
  }

 private:
  int fd_;
  std::uint64_t at_;
};

class GzipSource : public ByteSource {
 public:
  explicit GzipSource(gzFile gz) : gz_(gz) { gzbuffer(gz_, 256 * 1024); }
  ~GzipSource() override { gzclose(gz_); }
  long read(char* into, std::size_t n) override {
    int r = gzread(gz_, into, static_cast<unsigned>(std::min<std::size_t>(n, 1u << 30)));
    if (r < 0) {
      int errnum = 0;
      const char* msg = gzerror(gz_, &errnum);
      error = std::string("read error: ") + (msg ? msg : "unknown");
      return -1;
    }
    return r;
  }
  std::string end_error() override {
    int errnum = 0;
    const char* msg = gzerror(gz_, &errnum);
    if (errnum != Z_OK && errnum != Z_STREAM_END)
      return std::string("decompression error: ") + (msg ? msg : "unknown");
    return "";
  }

 private:
  gzFile gz_;
};

// The last complete lines of `text`, at most kContextBytes of them.
std::string_view tail_lines(std::string_view text) {
  if (text.size() <= kContextBytes) return text;
  std::size_t from = text.size() - kContextBytes;
  std::size_t nl = text.find('\n', from - 1);
  return nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
}

// The lines before `at` in a plain file, for the first chunk of a range.
std::string context_before(int fd, std::uint64_t at) {
  if (fd < 0 || at == 0) return "";
  std::uint64_t from = at > kContextBytes ? at - kContextBytes : 0;
  std::string text(static_cast<std::size_t>(at - from), '\0');
  ssize_t r;
  do r = ::pread(fd, text.data(), text.size(), static_cast<off_t>(from));
  while (r < 0 && errno == EINTR);
  if (r != static_cast<ssize_t>(text.size())) return "";
  if (from == 0) return text;
  std::size_t nl = text.find('\n');  // the first line may be cut: drop it
  return nl == std::string::npos ? "" : text.substr(nl + 1);
}

ReadStats read_source(ByteSource& src, int plain_fd, std::uint64_t at, const ByteRange& range,
                      const ChunkInContextFn& fn, std::size_t max_line) {
  ReadStats st;
  st.opened = true;
  // A buffer of max_line + 1 bytes: a line that does not fit is cut at max_line.
  // Not zero-filled: every byte is written by a read before it is looked at,
  // and most files of an incident are far smaller than the buffer.
  const std::size_t buf_size = max_line + 1;
  auto buf = std::make_unique_for_overwrite<char[]>(buf_size);
  std::size_t have = 0;         // bytes in buf
  std::uint64_t buf_at = at;    // file offset of buf[0]
  std::uint64_t next_line = 1;  // number of the first line in buf
  // Dropping bytes up to and including the next '\n': the rest of a cut
  // line (counted as this range's), or, at the start of a range that does
  // not begin the file, the line the previous range owns.
  bool skipping = false, aligning = at < range.begin;
  std::string out;      // chunk handed to fn when a line had to be cut
  std::string context;  // lines before the chunk (see ChunkInContextFn)
  bool need_context = at < range.begin;
  auto emitted = [&](std::string_view chunk) {
    if (chunk.size() >= kContextBytes) {
      context.assign(tail_lines(chunk));
    } else {
      context.append(chunk);
      context.erase(0, context.size() - tail_lines(context).size());
    }
  };
  bool eof = false, past_range = false;

  auto drop_through_newline = [&]() -> bool {  // true once the newline is found
    const char* nl = static_cast<const char*>(std::memchr(buf.get(), '\n', have));
    std::size_t drop = nl ? static_cast<std::size_t>(nl - buf.get()) + 1 : have;
    if (skipping) st.nul_bytes += count_nul(buf.get(), drop);
    std::memmove(buf.get(), buf.get() + drop, have - drop);
    have -= drop;
    buf_at += drop;
    if (nl) skipping = aligning = false;
    return nl != nullptr;
  };

  while (!eof && !past_range) {
    long n = src.read(buf.get() + have, buf_size - have);
    if (n < 0) {
      st.error = src.error;
      eof = true;
      n = 0;
    } else if (n == 0) {
      eof = true;
      st.error = src.end_error();
    }
    st.bytes += static_cast<std::uint64_t>(n);
    have += static_cast<std::size_t>(n);

    if ((skipping || aligning) && !drop_through_newline()) continue;
    if (need_context) {
      context = context_before(plain_fd, buf_at);
      need_context = false;
    }
    // A line starting at or after the range's end belongs to the next range.
    if (buf_at >= range.end) break;

    // Complete lines: up to the last '\n'.
    std::size_t end = have;
    while (end > 0 && buf[end - 1] != '\n') --end;
    if (eof && end < have) {  // last line without '\n'
      if (have == buf_size) --have;
      buf[have++] = '\n';
      end = have;
    }
    // Only the lines that start before the range's end: the last of them
    // ends at the first '\n' at or after the range's last byte.
    if (end > 0 && buf_at + end > range.end) {
      std::size_t last_byte = static_cast<std::size_t>(range.end - buf_at) - 1;
      const char* nl =
          static_cast<const char*>(std::memchr(buf.get() + last_byte, '\n', end - last_byte));
      end = static_cast<std::size_t>(nl - buf.get()) + 1;
      past_range = true;
    }
    if (end > 0) {
      std::string_view chunk(buf.get(), end);
      std::uint64_t nlines = count_byte(chunk.data(), chunk.size(), '\n');
      st.nul_bytes += count_nul(chunk.data(), chunk.size());
      fn(chunk, next_line, context);
      emitted(chunk);
      next_line += nlines;
      st.lines += nlines;
    } else if (!eof && have >= max_line) {
      // No newline within max_line bytes: emit the cut line, skip its rest.
      st.nul_bytes += count_nul(buf.get(), have);
      out.assign(buf.get(), max_line);
      out.push_back('\n');
      fn(out, next_line, context);
      emitted(out);
      if (!st.long_lines) st.first_long_line = next_line;
      ++st.long_lines;
      ++next_line;
      ++st.lines;
      end = have;
      skipping = true;  // the bytes after max_line are the rest of this line
    }
    // keep the partial line
    std::size_t rest = have - end;
    if (rest && end) std::memmove(buf.get(), buf.get() + end, rest);
    have = rest;
    buf_at += end;
    if (skipping) drop_through_newline();
  }
  st.end_offset = buf_at;
  return st;
}

}  // namespace

bool is_gzip_file(int fd) {
  unsigned char magic[2];
  ssize_t r;
  do r = ::pread(fd, magic, sizeof magic, 0);
  while (r < 0 && errno == EINTR);
  return r == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

ReadStats read_lines_chunked(int fd, const ByteRange& range, const ChunkInContextFn& fn,
                             std::size_t max_line) {
  if (is_gzip_file(fd)) {
    ReadStats st;
    if (!range.whole()) {
      st.error = "a gzip file cannot be read from an offset";
      return st;
    }
    // zlib owns (and closes) a descriptor of its own, read from the start
    // (zlib takes the offset it finds as the stream's start).
    int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0 || ::lseek(own, 0, SEEK_SET) != 0) {
      st.error = std::string("cannot open: ") + std::strerror(errno);
      if (own >= 0) ::close(own);
      return st;
    }
    gzFile gz = gzdopen(own, "rb");
    if (!gz) {
      ::close(own);
      st.error = "cannot open: out of memory";
      return st;
    }
    GzipSource src(gz);
    return read_source(src, -1, 0, range, fn, max_line);
  }
  // The first range starts at the file's start; any other one a byte early,
  // to see whether a line starts exactly at its beginning.
  std::uint64_t at = range.begin ? range.begin - 1 : 0;
  PlainSource src(fd, at);
  return read_source(src, fd, at, range, fn, max_line);
}

ReadStats read_lines_chunked(const std::string& path, const ChunkFn& fn, std::size_t max_line) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ReadStats st;
    st.error = std::string("cannot open: ") + std::strerror(errno);
    return st;
  }
  ReadStats st = read_lines_chunked(
      fd, ByteRange{},
      [&](std::string_view chunk, std::uint64_t first_line, std::string_view) {
        fn(chunk, first_line);
      },
      max_line);
  ::close(fd);
  return st;
}

}  // namespace ff
