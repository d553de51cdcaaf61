// A job output that grows while it is read: a sparse file (holes cost no
// disk) that a thread extends by `step` bytes each time someone reads it, up
// to `grow_limit` bytes past its first size. A reader that copies "to the end
// of file" keeps finding more; a reader bounded by the bytes it read stops at
// its limit. The growth follows the reads (inotify IN_ACCESS), so it happens
// during the copy, not before or after it.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace ff::test_support {

// Bytes this process has read so far (read, pread, ...: rchar of /proc/self/io).
inline std::uint64_t bytes_read_by_this_process() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value)
    if (key == "rchar:") return value;
  return 0;
}

class GrowingFile {
 public:
  GrowingFile(const std::filesystem::path& path, off_t size, uid_t owner, off_t step,
              off_t grow_limit)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)),
        watch_(::inotify_init1(IN_CLOEXEC)) {
    if (fd_ < 0 || watch_ < 0 || ::fchown(fd_, owner, owner) != 0 || ::ftruncate(fd_, size) != 0 ||
        ::inotify_add_watch(watch_, path.c_str(), IN_ACCESS) < 0)
      throw std::runtime_error("cannot make the growing file " + path.string());
    thread_ = std::thread([this, size, step, grow_limit] {
      off_t end = size;
      alignas(inotify_event) char buf[4096];
      while (!stop_ && end < size + grow_limit) {
        pollfd p{watch_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        if (::read(watch_, buf, sizeof buf) <= 0) break;
        end += step;
        if (::ftruncate(fd_, end) != 0) break;
        if (::pwrite(fd_, "grown\n", 6, end - 6) != 6) break;
        grown_ += step;
      }
    });
  }
  ~GrowingFile() {
    stop_ = true;
    thread_.join();
    ::close(watch_);
    ::close(fd_);
  }
  GrowingFile(const GrowingFile&) = delete;
  GrowingFile& operator=(const GrowingFile&) = delete;

  // How much it grew while it was read.
  std::uint64_t grown() const { return grown_; }

 private:
  int fd_;
  int watch_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> grown_{0};
  std::thread thread_;
};

}  // namespace ff::test_support
