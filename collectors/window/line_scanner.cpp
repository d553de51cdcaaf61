#include "collectors/window/line_scanner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ff::collect {

LineScanner::LineScanner(std::size_t max_line) : max_line_(max_line) {}

LineScanner::~LineScanner() {
  if (gz_) gzclose(gz_);
  if (fd_ >= 0) ::close(fd_);
}

bool LineScanner::open(const std::string& path, bool follow_symlinks) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;  // a FIFO must not block
  if (!follow_symlinks) flags |= O_NOFOLLOW;
  fd_ = ::open(path.c_str(), flags);
  if (fd_ < 0) {
    error_ = (errno == ELOOP && !follow_symlinks) ? "is a symbolic link" : std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    error_ = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
    return false;
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  mtime_ = static_cast<std::int64_t>(st.st_mtime);
  unsigned char magic[2] = {0, 0};
  if (::pread(fd_, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    int dup_fd = ::dup(fd_);
    gz_ = dup_fd >= 0 ? gzdopen(dup_fd, "rb") : nullptr;
    if (!gz_) {
      if (dup_fd >= 0) ::close(dup_fd);
      error_ = "cannot open gzip stream";
      return false;
    }
    gzbuffer(gz_, 128 * 1024);
  }
  return true;
}

void LineScanner::seek(std::uint64_t offset, bool align) {
  if (gz_) return;  // gzip: forward streaming only
  // Aligning at offset N: the line containing byte N-1 is partial unless
  // N-1 is its '\n', so reading starts one byte early and drops up to the
  // first '\n'.
  if (align && offset > 0) {
    file_pos_ = offset - 1;
    skip_partial_ = true;
  } else {
    file_pos_ = offset;
    skip_partial_ = false;
  }
  buf_offset_ = file_pos_;
  begin_ = end_ = 0;
  eof_ = false;
}

bool LineScanner::fill() {
  if (eof_) return false;
  // Keep the unread tail; grow up to one line plus one read.
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    buf_offset_ += begin_;
    begin_ = 0;
  }
  if (buf_.size() < end_ + read_size_) buf_.resize(end_ + read_size_);
  std::size_t want = read_size_;
  long long n;
  if (gz_) {
    n = gzread(gz_, buf_.data() + end_, static_cast<unsigned>(want));
    if (n < 0) {
      int errnum = 0;
      error_ = gzerror(gz_, &errnum);
      n = 0;
    }
  } else {
    if (file_pos_ >= size_) {
      n = 0;
    } else {
      if (want > size_ - file_pos_) want = static_cast<std::size_t>(size_ - file_pos_);
      n = ::pread(fd_, buf_.data() + end_, want, static_cast<off_t>(file_pos_));
      if (n < 0) {
        error_ = std::strerror(errno);
        n = 0;
      }
    }
    file_pos_ += static_cast<std::uint64_t>(n);
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  bytes_read_ += static_cast<std::uint64_t>(n);
  end_ += static_cast<std::size_t>(n);
  return true;
}

bool LineScanner::next(std::string_view& line) {
  // memchr/memmove on an empty vector's data() (a null pointer) is undefined
  // even for zero bytes (UBSan in scripts/sanitize.sh).
  if (buf_.empty()) buf_.resize(read_size_);
  for (;;) {
    if (skip_partial_) {
      const char* nl =
          static_cast<const char*>(std::memchr(buf_.data() + begin_, '\n', end_ - begin_));
      if (nl) {
        begin_ = static_cast<std::size_t>(nl - buf_.data()) + 1;
        skip_partial_ = false;
        continue;
      }
      begin_ = end_;
      if (!fill()) return false;
      continue;
    }
    const char* start = buf_.data() + begin_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (nl) {
      std::size_t len = static_cast<std::size_t>(nl - start);
      line_offset_ = buf_offset_ + begin_;
      if (len > max_line_) len = max_line_;
      line = std::string_view(start, len);
      begin_ = static_cast<std::size_t>(nl - buf_.data()) + 1;
      return true;
    }
    if (end_ - begin_ >= max_line_) {  // an overlong line: hand out its start, drop the rest
      line_offset_ = buf_offset_ + begin_;
      line = std::string_view(start, max_line_);
      begin_ = end_;
      skip_partial_ = true;
      return true;
    }
    if (!fill()) {
      if (end_ == begin_) return false;
      line_offset_ = buf_offset_ + begin_;  // last line without '\n'
      line = std::string_view(buf_.data() + begin_, end_ - begin_);
      begin_ = end_;
      return true;
    }
  }
}

}  // namespace ff::collect
