// Reads a file as lines from any byte offset, plain or gzip, counting every
// byte it reads. The window search positions it; nothing reads more of a
// file than the lines it is asked for.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ff::collect {

class LineScanner {
 public:
  // Lines longer than max_line are cut (the rest of the line is skipped).
  explicit LineScanner(std::size_t max_line = 1 << 20);
  ~LineScanner();
  LineScanner(const LineScanner&) = delete;
  LineScanner& operator=(const LineScanner&) = delete;

  // Opens `path`; a gzip file (by its magic bytes) is decompressed and can
  // only be read from its start. Returns false and sets error() on failure.
  // Only a regular file is read; with `follow_symlinks` false a symbolic
  // link is refused ("is a symbolic link").
  bool open(const std::string& path, bool follow_symlinks = true);
  // Modification time of the opened file, in seconds (for gzip: the file's).
  std::int64_t mtime() const { return mtime_; }
  bool compressed() const { return gz_ != nullptr; }
  // Size of a plain file when it was opened; lines appended later are not read.
  std::uint64_t size() const { return size_; }

  // Plain files: continue reading at `offset`, which becomes a line start only
  // if `align` is false; with `align` the partial line at `offset` is skipped.
  void seek(std::uint64_t offset, bool align);
  // Reads in steps of this many bytes (small for probes, large for streaming).
  void set_read_size(std::size_t bytes) { read_size_ = bytes; }

  // The next line without its '\n'; false at end of file or on error.
  bool next(std::string_view& line);
  // File offset of the line next() returned last (plain files).
  std::uint64_t line_offset() const { return line_offset_; }

  std::uint64_t bytes_read() const { return bytes_read_; }
  const std::string& error() const { return error_; }

 private:
  bool fill();

  int fd_ = -1;
  gzFile gz_ = nullptr;
  std::uint64_t size_ = 0;
  std::int64_t mtime_ = 0;
  std::uint64_t file_pos_ = 0;    // offset of the next byte to read (plain)
  std::uint64_t buf_offset_ = 0;  // file offset of buf_[0] (plain)
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  std::size_t max_line_;
  std::size_t read_size_ = 256 * 1024;
  bool eof_ = false;
  bool skip_partial_ = false;  // drop bytes up to the next '\n' first
  std::uint64_t line_offset_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::string error_;
};

}  // namespace ff::collect
