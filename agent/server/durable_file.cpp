#include "agent/server/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace ff::agent {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void throw_errno(const std::string& what, const fs::path& p) {
  throw std::system_error(errno, std::generic_category(), what + " " + p.string());
}

}  // namespace

void write_file_synced(const fs::path& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) throw_errno("open", path);
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      errno = e;
      throw_errno("write", path);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    throw_errno("fsync", path);
  }
  if (::close(fd) != 0) throw_errno("close", path);
}

void sync_directory(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno("open directory", dir);
  int rc = ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (rc != 0) {
    errno = e;
    throw_errno("fsync directory", dir);
  }
}

void replace_file_synced(const fs::path& path, std::string_view data) {
  fs::path tmp = path;
  tmp += ".tmp";
  write_file_synced(tmp, data);
  fs::rename(tmp, path);
  sync_directory(path.parent_path());
}

void create_directories_synced(const fs::path& dir) {
  if (dir.empty() || fs::is_directory(dir)) return;
  create_directories_synced(dir.parent_path());
  std::error_code ec;
  if (!fs::create_directory(dir, ec) && ec) throw std::system_error(ec, "mkdir " + dir.string());
  sync_directory(dir.parent_path());
}

}  // namespace ff::agent
