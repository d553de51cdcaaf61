#include "spank/spool_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace firstfault::spank {
namespace {

std::string ErrnoText(const std::string& what, const std::string& path, int error) {
  return what + " " + path + ": " + std::strerror(error);
}

// Distinct temporary names for tasks of one step written from several threads.
std::atomic<unsigned> temporary_counter{0};

}  // namespace

std::string MakeDirectories(const std::string& path) {
  if (path.empty()) return "empty directory path";
  size_t position = 0;
  while (position != std::string::npos) {
    position = path.find('/', position + 1);
    std::string prefix = path.substr(0, position);
    if (prefix.empty() || prefix.back() == '/') continue;
    // Root's only: the spool holds windows of root-only logs (kern.log,
    // syslog) and copies of the jobs' output, which other users of the node
    // must not read. Every firstfault program that uses it runs as root.
    if (mkdir(prefix.c_str(), 0700) == 0) {
      chmod(prefix.c_str(), 0700);  // the umask of slurmstepd is not ours
      continue;
    }
    int error = errno;
    struct stat status {};
    if (error == EEXIST && stat(prefix.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
      continue;
    }
    return ErrnoText(error == EEXIST ? "not a directory:" : "cannot create", prefix,
                     error == EEXIST ? ENOTDIR : error);
  }
  return "";
}

SpoolWriter::SpoolWriter(std::string root, ErrorSink report_first_error)
    : root_(std::move(root)), report_first_error_(std::move(report_first_error)) {}

void SpoolWriter::Fail(const std::string& message) {
  if (failures_.fetch_add(1) == 0 && report_first_error_) {
    report_first_error_("spool " + root_ + " not writable, records are skipped: " + message);
  }
}

bool SpoolWriter::WriteFile(std::string_view relative_path, std::string_view content) {
  std::string path = root_ + "/" + std::string(relative_path);
  size_t slash = path.rfind('/');
  std::string directory = path.substr(0, slash);
  std::string name = path.substr(slash + 1);
  if (std::string error = MakeDirectories(directory); !error.empty()) {
    Fail(error);
    return false;
  }
  std::string temporary = directory + "/." + name + "." + std::to_string(getpid()) + "." +
                          std::to_string(temporary_counter.fetch_add(1)) + ".tmp";
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    Fail(ErrnoText("cannot create", temporary, errno));
    return false;
  }
  fchmod(fd, 0600);
  const char* data = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t written = write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      int error = written < 0 ? errno : EIO;
      close(fd);
      unlink(temporary.c_str());
      Fail(ErrnoText("cannot write", temporary, error));
      return false;
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  // No fsync: readers need whole files, not durability across a crash, and a sync
  // would cost milliseconds per task on a busy disk.
  if (close(fd) != 0) {
    int error = errno;
    unlink(temporary.c_str());
    Fail(ErrnoText("cannot write", temporary, error));
    return false;
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    unlink(temporary.c_str());
    Fail(ErrnoText("cannot rename to", path, error));
    return false;
  }
  return true;
}

}  // namespace firstfault::spank
