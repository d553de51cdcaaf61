// Watches files with inotify for opens and reads, so that a test can show a
// file was never opened (not merely that its content did not come out): the
// difference between refusing a device or FIFO before opening it and after.
// O_PATH lookups raise no event; any open for reading, writing or executing
// does, on regular files, FIFOs and devices alike.
#pragma once

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

namespace ff::test_support {

class OpenWatch {
 public:
  OpenWatch() : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error("inotify_init1 failed");
  }
  ~OpenWatch() { ::close(fd_); }
  OpenWatch(const OpenWatch&) = delete;
  OpenWatch& operator=(const OpenWatch&) = delete;

  // Watches `path` itself (IN_DONT_FOLLOW: a symlink is watched as the link).
  void watch(const std::string& path) {
    if (::inotify_add_watch(fd_, path.c_str(), IN_OPEN | IN_ACCESS | IN_DONT_FOLLOW) < 0)
      throw std::runtime_error("inotify_add_watch " + path + " failed");
  }

  // The open and access events since the last call (and drops them).
  int events() {
    alignas(inotify_event) char buf[4096];
    int count = 0;
    while (true) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      for (char* p = buf; p < buf + n;) {
        auto* e = reinterpret_cast<inotify_event*>(p);
        if (e->mask & (IN_OPEN | IN_ACCESS)) ++count;
        p += sizeof(inotify_event) + e->len;
      }
    }
    return count;
  }

 private:
  int fd_;
};

}  // namespace ff::test_support
