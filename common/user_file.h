// Opening a file whose path a user chose, from a process with more rights
// than that user: the collector (root on a compute node) and the agent
// (SlurmUser on the head node) both read the job's output, at a path the
// job's user controls. The user can point that path at a device (opening
// /dev/watchdog arms the hardware watchdog), a FIFO (an open for reading
// blocks, and unblocks the user's writer), another user's or root's file, or
// a file that grows without end. So nothing is opened for reading before the
// thing at the path is known to be a regular file of that user, and a read of
// it is bounded by the bytes read, never by a size seen earlier.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ff {

// An open file descriptor, closed when it goes out of scope.
class FileHandle {
 public:
  FileHandle() = default;
  explicit FileHandle(int fd) : fd_(fd) {}
  FileHandle(FileHandle&& other) noexcept : fd_(other.release()) {}
  FileHandle& operator=(FileHandle&& other) noexcept;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle();

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

struct UserFileOpen {
  enum class Outcome {
    opened,   // `file` is open for reading
    missing,  // nothing at the path (ENOENT, ENOTDIR): normal where the file system is not mounted
    refused,  // something is there, but not a regular file of the owner: not opened
    failed,   // the path could not be looked up or the file not opened (permissions, I/O)
  };
  Outcome outcome = Outcome::failed;
  FileHandle file;      // O_RDONLY, only when opened
  struct stat st {};    // of the opened file; of what was found when refused
  std::string problem;  // why not opened, in words: "a symbolic link (not followed)"
};

// Opens `path` for reading only when its last component is a regular file
// (not a symbolic link) owned by `owner`. Nothing else at the path is ever
// opened for reading: the path is first looked up with O_PATH|O_NOFOLLOW
// (which runs no driver's open and does not follow a final symlink), that
// handle is checked with fstat, and only then is the same inode re-opened
// through /proc/self/fd. An unknown owner (nullopt) refuses every file.
UserFileOpen open_user_file(const std::string& path, std::optional<uid_t> owner);

// The same rule for `name` looked up relative to the open directory `dir`
// (openat): a name found by listing a directory checked with
// open_user_directory is opened in that very directory, whatever is renamed
// or swapped in on the path to it meanwhile. `name` should be one
// component; symbolic links among earlier components are followed as above.
UserFileOpen open_user_file_at(int dir, const std::string& name, std::optional<uid_t> owner);

// Opens `path` as a directory to list and to open files in with
// open_user_file_at, only when no one but `owner` (the job's user) and root
// can put a file in it: a directory owned by `owner` or root, and writable by
// its group or others only with the sticky bit (/tmp), where no one else can
// rename or remove the owner's files. Symbolic links on the way are followed
// as above (scratch directories are often links); O_DIRECTORY opens nothing
// but a directory. `refused` (with `st` of what was found) otherwise; an
// unknown owner refuses every directory.
UserFileOpen open_user_directory(const std::string& path, std::optional<uid_t> owner);

// The last bytes of an opened user file: the offset where a copy of at most
// `max_bytes` starts, from the size fstat saw.
std::uint64_t tail_start(const struct stat& st, std::uint64_t max_bytes);

// Copies bytes of `in` from `from` to `out`, reading at most `max_bytes` in
// all and stopping at end of file: the bound is the count of bytes read, so a
// file that grows (or a sparse file extended) while it is read never yields
// more. Reads with pread: `in`'s offset is untouched. nullopt when a write
// failed; else the bytes copied.
std::optional<std::uint64_t> copy_bounded(int in, int out, std::uint64_t from,
                                          std::uint64_t max_bytes);

// A path or file name a user chose, as it may be shown in coverage, logs and
// JSON: printable ASCII stays, every other byte (control characters, bytes
// of non-ASCII or invalid UTF-8) and the backslash become \xNN. JSON
// serialisers refuse invalid UTF-8, and a control character can forge a log
// line.
std::string printable_path(std::string_view path);

}  // namespace ff
