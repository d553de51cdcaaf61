#include "engine/read/incident_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace ff {
namespace fs = std::filesystem;

namespace {

// More links than this on one path is a loop (the kernel's own limit is 40).
constexpr int kMaxSymlinks = 40;

std::string describe_errno(int err) {
  switch (err) {
    case EXDEV:
      return "symbolic link leading outside the incident";
    case ELOOP:
      return "symbolic link loop, or a /proc magic link";
    case ENOENT:
      return "not found (or a broken symbolic link)";
    case ENOTDIR:
      return "not found (a component of the path is not a directory)";
    default:
      return std::string("cannot open: ") + std::strerror(err);
  }
}

std::string describe_type(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of an unknown file type";
}

// The components of `path` pushed so that the first one is at the back.
void push_components(const std::string& path, std::vector<std::string>& todo) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    parts.push_back(
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  todo.insert(todo.end(), parts.rbegin(), parts.rend());
}

UniqueFd open_path_at(int dirfd, const char* name) {
  return UniqueFd(::openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
}

}  // namespace

IncidentRoot IncidentRoot::open(const fs::path& dir, std::string& error, Resolver resolver) {
  IncidentRoot root;
  root.dir_ = dir;
  root.root_ = UniqueFd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.root_) {
    error = "cannot open the incident directory " + dir.string() + ": " + std::strerror(errno);
    return root;
  }
  if (resolver == Resolver::automatic) {
    // ENOSYS: a kernel before 5.6. EPERM: a seccomp filter that does not
    // know openat2 (looking up "." itself needs no permission).
    int err = 0;
    UniqueFd probe = root.locate_by_kernel("", O_PATH, err);
    resolver =
        !probe && (err == ENOSYS || err == EPERM) ? Resolver::component_walk : Resolver::kernel;
  }
  root.resolver_ = resolver;
  return root;
}

UniqueFd IncidentRoot::locate(const std::string& rel, int& err) const {
  return resolver_ == Resolver::component_walk ? locate_by_walk(rel, O_PATH, err)
                                               : locate_by_kernel(rel, O_PATH, err);
}

UniqueFd IncidentRoot::locate_by_kernel(const std::string& rel, int flags, int& err) const {
  // glibc 2.36 has no openat2 wrapper.
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const char* path = rel.empty() ? "." : rel.c_str();
  // EAGAIN: a rename elsewhere in the tree raced a ".." lookup; the kernel
  // asks for a retry rather than risk an escape.
  for (int attempt = 0; attempt < 16; ++attempt) {
    long fd = ::syscall(SYS_openat2, root_.get(), path, &how, sizeof how);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    err = errno;
    if (err != EAGAIN && err != EINTR) break;
  }
  return UniqueFd();
}

// The rule of RESOLVE_BENEATH, one component at a time: each component is
// looked up with O_NOFOLLOW; a symbolic link is read and its target resolved
// in its place, relative to the directory holding it; ".." leaves only a
// directory this walk entered (never the root); an absolute target is an
// escape, like the kernel's EXDEV.
UniqueFd IncidentRoot::locate_by_walk(const std::string& rel, int flags, int& err) const {
  if (!rel.empty() && rel[0] == '/') {  // the kernel's answer to an absolute path beneath a root
    err = EXDEV;
    return UniqueFd();
  }
  std::vector<std::string> todo;
  if (!rel.empty()) push_components(rel, todo);
  std::vector<UniqueFd> dirs;  // directories entered below the root, innermost last
  int links = 0;
  auto base = [&] { return dirs.empty() ? root_.get() : dirs.back().get(); };
  while (!todo.empty()) {
    std::string name = std::move(todo.back());
    todo.pop_back();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      if (dirs.empty()) {
        err = EXDEV;
        return UniqueFd();
      }
      dirs.pop_back();
      continue;
    }
    UniqueFd found = open_path_at(base(), name.c_str());
    struct stat st {};
    if (!found || ::fstat(found.get(), &st) != 0) {
      err = errno;
      return UniqueFd();
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxSymlinks) {
        err = ELOOP;
        return UniqueFd();
      }
      std::string target(PATH_MAX + 1, '\0');
      ssize_t n = ::readlinkat(found.get(), "", target.data(), target.size());
      if (n < 0 || n > PATH_MAX) {  // longer than a path can be: cut by readlinkat
        err = n < 0 ? errno : ENAMETOOLONG;
        return UniqueFd();
      }
      target.resize(static_cast<std::size_t>(n));
      if (target.empty()) {
        err = ENOENT;
        return UniqueFd();
      }
      if (target[0] == '/') {
        err = EXDEV;
        return UniqueFd();
      }
      push_components(target, todo);
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      dirs.push_back(std::move(found));
      continue;
    }
    if (!todo.empty()) {  // "file/x", and "file/" too, as the kernel says
      err = ENOTDIR;
      return UniqueFd();
    }
    if (flags == O_PATH) return found;
    // Opening for reading: the name just checked, again without following.
    UniqueFd opened(::openat(base(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
    if (!opened) err = errno;
    return opened;
  }
  // The path named a directory: the one entered last, or the root.
  UniqueFd here(::openat(base(), ".", flags | O_CLOEXEC));
  if (!here) err = errno;
  return here;
}

UniqueFd IncidentRoot::open_file(const std::string& rel, std::string& error) const {
  if (!root_) {
    error = "the incident directory is not open";
    return UniqueFd();
  }
  int err = 0;
  UniqueFd located = locate(rel, err);
  if (!located) {
    error = describe_errno(err);
    return UniqueFd();
  }
  struct stat seen {};
  if (::fstat(located.get(), &seen) != 0) {
    error = std::string("fstat: ") + std::strerror(errno);
    return UniqueFd();
  }
  if (!S_ISREG(seen.st_mode)) {
    error = describe_type(seen.st_mode) + ", not a regular file";
    return UniqueFd();
  }
  // The inode just checked, opened for reading through its O_PATH handle,
  // so nothing swapped in at `rel` meanwhile is opened. O_NONBLOCK: should
  // anything but a regular file be reached all the same, its open does not wait.
  constexpr int kReadFlags = O_RDONLY | O_NOCTTY | O_NONBLOCK;
  std::string via = "/proc/self/fd/" + std::to_string(located.get());
  UniqueFd file(::open(via.c_str(), kReadFlags | O_CLOEXEC));
  if (!file && errno == ENOENT) {
    // No /proc (a minimal chroot): resolve the path again, opening it this
    // time; the device and inode check below refuses anything else.
    file = resolver_ == Resolver::component_walk ? locate_by_walk(rel, kReadFlags, err)
                                                 : locate_by_kernel(rel, kReadFlags, err);
    if (!file) errno = err;
  }
  if (!file) {
    error = std::string("cannot open: ") + std::strerror(errno);
    return UniqueFd();
  }
  struct stat now {};
  if (::fstat(file.get(), &now) != 0 || !S_ISREG(now.st_mode) || now.st_dev != seen.st_dev ||
      now.st_ino != seen.st_ino) {
    error = "changed while it was opened";
    return UniqueFd();
  }
  int fl = ::fcntl(file.get(), F_GETFL);
  if (fl < 0 || ::fcntl(file.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) {
    error = std::string("fcntl: ") + std::strerror(errno);
    return UniqueFd();
  }
  return file;
}

IncidentListing IncidentRoot::list_dir(const std::string& rel) const {
  IncidentListing out;
  if (!root_) {
    out.error = "the incident directory is not open";
    return out;
  }
  int err = 0;
  UniqueFd located = locate(rel, err);
  if (!located) {
    if (err != ENOENT) out.error = describe_errno(err);
    return out;
  }
  struct stat st {};
  if (::fstat(located.get(), &st) != 0) {
    out.error = std::string("fstat: ") + std::strerror(errno);
    return out;
  }
  if (!S_ISDIR(st.st_mode)) {
    out.error = describe_type(st.st_mode) + ", not a directory";
    return out;
  }
  // A directory opened for reading through its O_PATH handle; fdopendir owns it.
  int fd = ::openat(located.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (!d) {
    out.error = std::string("cannot list directory: ") + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return out;
  }
  out.found = true;
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
    errno = 0;
  }
  if (errno != 0) out.error = std::string("cannot list directory: ") + std::strerror(errno);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (auto& name : names) {
    IncidentEntry entry;
    UniqueFd child = locate(rel.empty() ? name : rel + "/" + name, err);
    struct stat cst {};
    if (!child) {
      entry.problem = describe_errno(err);
    } else if (::fstat(child.get(), &cst) != 0) {
      entry.problem = std::string("fstat: ") + std::strerror(errno);
    } else if (S_ISREG(cst.st_mode)) {
      entry.type = IncidentEntry::Type::file;
    } else if (S_ISDIR(cst.st_mode)) {
      entry.type = IncidentEntry::Type::directory;
    } else {
      entry.problem = describe_type(cst.st_mode) + ", not a regular file";
    }
    entry.name = std::move(name);
    out.entries.push_back(std::move(entry));
  }
  return out;
}

bool read_bounded(int fd, std::uint64_t max_bytes, std::string& out, std::string& error) {
  out.clear();
  char buf[64 * 1024];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::string("read error: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) return true;
    if (out.size() + static_cast<std::uint64_t>(n) > max_bytes) {
      error = "larger than " +
              (max_bytes % (1u << 20) == 0 ? std::to_string(max_bytes >> 20) + " MiB"
                                           : std::to_string(max_bytes) + " bytes") +
              ": not read";
      out.clear();
      return false;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace ff
