#include "common/user_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace ff {

FileHandle& FileHandle::operator=(FileHandle&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileHandle::~FileHandle() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

std::string file_type(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link (not followed)";
  if (S_ISDIR(mode)) return "a directory, not a regular file";
  if (S_ISFIFO(mode)) return "a FIFO, not a regular file";
  if (S_ISCHR(mode)) return "a character device, not a regular file";
  if (S_ISBLK(mode)) return "a block device, not a regular file";
  if (S_ISSOCK(mode)) return "a socket, not a regular file";
  return "not a regular file";
}

}  // namespace

UserFileOpen open_user_file(const std::string& path, std::optional<uid_t> owner) {
  return open_user_file_at(AT_FDCWD, path, owner);
}

UserFileOpen open_user_directory(const std::string& path, std::optional<uid_t> owner) {
  UserFileOpen r;
  // O_DIRECTORY fails on anything but a directory before any driver's open
  // runs; the directory opened for reading is what readdir and openat use.
  FileHandle dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) {
    int err = errno;
    r.outcome = err == ENOENT    ? UserFileOpen::Outcome::missing
                : err == ENOTDIR ? UserFileOpen::Outcome::refused
                                 : UserFileOpen::Outcome::failed;
    r.problem = err == ENOTDIR ? "not a directory" : std::strerror(err);
    return r;
  }
  if (::fstat(dir.get(), &r.st) != 0) {
    r.problem = std::string("fstat: ") + std::strerror(errno);
    return r;
  }
  r.outcome = UserFileOpen::Outcome::refused;
  if (!owner || (r.st.st_uid != *owner && r.st.st_uid != 0)) {
    r.problem = "a directory owned by uid " + std::to_string(r.st.st_uid) +
                (owner ? ", neither the job's user (uid " + std::to_string(*owner) + ") nor root"
                       : ", and the job's user is unknown");
    return r;
  }
  if ((r.st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (r.st.st_mode & S_ISVTX) == 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(r.st.st_mode & 07777));
    r.problem = std::string("a directory others may write to (mode ") + mode +
                ", no sticky bit): its files could be another user's doing";
    return r;
  }
  r.outcome = UserFileOpen::Outcome::opened;
  r.file = std::move(dir);
  return r;
}

// `path` is one name under `dir`, or a whole path with AT_FDCWD.
UserFileOpen open_user_file_at(int dir, const std::string& path, std::optional<uid_t> owner) {
  UserFileOpen r;
  // O_PATH looks the path up without opening what it names: no device
  // driver's open runs, a FIFO gets no reader. O_NOFOLLOW keeps a symlink as
  // the last component from being followed (O_PATH then yields the link
  // itself). Symlinks among the directories before it are followed: home
  // and scratch directories are often symlinks. What protects there is the
  // owner check below on the file that is finally reached: a path through
  // any directory only yields a file the job's user owns.
  FileHandle located(::openat(dir, path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!located) {
    int err = errno;
    r.outcome = err == ENOENT || err == ENOTDIR ? UserFileOpen::Outcome::missing
                                                : UserFileOpen::Outcome::failed;
    r.problem = std::strerror(err);
    return r;
  }
  if (::fstat(located.get(), &r.st) != 0) {
    r.problem = std::string("fstat: ") + std::strerror(errno);
    return r;
  }
  r.outcome = UserFileOpen::Outcome::refused;
  if (!S_ISREG(r.st.st_mode)) {
    r.problem = file_type(r.st.st_mode);
    return r;
  }
  // A hard link to another user's file is a regular file, but not the
  // job's user's: the owner is what tells the user's own output apart.
  if (!owner || r.st.st_uid != *owner) {
    r.problem = "owned by uid " + std::to_string(r.st.st_uid) +
                (owner ? ", not by the job's user (uid " + std::to_string(*owner) + ")"
                       : ", and the job's user is unknown");
    return r;
  }
  // The inode just checked, opened for reading: through the O_PATH handle,
  // so a rename or symlink swapped in at `path` meanwhile changes nothing.
  std::string via = "/proc/self/fd/" + std::to_string(located.get());
  FileHandle opened(::open(via.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
  if (!opened) {
    r.outcome = UserFileOpen::Outcome::failed;
    r.problem = std::string("cannot open: ") + std::strerror(errno);
    return r;
  }
  struct stat now {};
  if (::fstat(opened.get(), &now) != 0 || now.st_dev != r.st.st_dev || now.st_ino != r.st.st_ino ||
      !S_ISREG(now.st_mode)) {
    r.outcome = UserFileOpen::Outcome::failed;
    r.problem = "changed while it was opened";
    return r;
  }
  r.st = now;
  r.outcome = UserFileOpen::Outcome::opened;
  r.file = std::move(opened);
  return r;
}

std::uint64_t tail_start(const struct stat& st, std::uint64_t max_bytes) {
  auto size = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0));
  return size > max_bytes ? size - max_bytes : 0;
}

std::optional<std::uint64_t> copy_bounded(int in, int out, std::uint64_t from,
                                          std::uint64_t max_bytes) {
  std::vector<char> buf(256 * 1024);
  std::uint64_t read_total = 0;
  while (read_total < max_bytes) {
    std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), max_bytes - read_total));
    ssize_t n = ::pread(in, buf.data(), want, static_cast<off_t>(from + read_total));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    read_total += static_cast<std::uint64_t>(n);
    const char* p = buf.data();
    auto left = static_cast<std::size_t>(n);
    while (left > 0) {
      ssize_t w = ::write(out, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return std::nullopt;
      p += w;
      left -= static_cast<std::size_t>(w);
    }
  }
  return read_total;
}

std::string printable_path(std::string_view path) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(path.size());
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

}  // namespace ff
