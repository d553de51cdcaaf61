// Opening the files of an incident directory by their incident-relative path.
// An incident comes from someone else's machine (a tarball, a copied
// directory, the agent's merge of uploaded bundles), so nothing in it is
// trusted: a file may be a symbolic link to /etc/shadow or to a file beside
// the incident, a node directory may be a link to /etc, a log may be a FIFO
// (an open for reading blocks until someone writes) or a device node (opening
// /dev/watchdog arms the hardware watchdog). This is the one place the engine
// turns an incident-relative path into an open file, and it holds to:
//   - nothing outside the incident directory is ever reached through it;
//   - nothing but a regular file or a directory is ever opened: every path is
//     first looked up with O_PATH, which runs no driver's open and gives a
//     FIFO no reader, and is refused unless fstat says regular file;
//   - a symbolic link that stays inside the incident is followed (collectors
//     and people link rotated logs and node aliases), one that leads outside
//     (absolute, or through "..") is refused, as is a /proc magic link.
// Paths are resolved by the kernel with openat2(2) RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS. Where openat2 is missing (kernels before 5.6) or
// refused (a seccomp filter), the same rule is applied by a walk one
// component at a time, each opened with O_NOFOLLOW and each symbolic link read
// and resolved against the directories already opened, so an incident gives
// the same diagnosis on either kind of kernel.
// An IncidentRoot is immutable once open: open_file and list_dir may be called
// from several threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/read/unique_fd.h"

namespace ff {

struct IncidentEntry {
  enum class Type { file, directory, refused };
  std::string name;
  Type type = Type::refused;
  std::string problem;  // why refused: "symbolic link leading outside the incident"
};

struct IncidentListing {
  bool found = false;                  // a directory was there and was listed
  std::string error;                   // why not, when something was there ("" when simply absent)
  std::vector<IncidentEntry> entries;  // sorted by name, without "." and ".."
};

class IncidentRoot {
 public:
  // How paths beneath the root are resolved: by the kernel (openat2), or by
  // the component walk. `automatic` uses openat2 where the kernel has it.
  enum class Resolver { automatic, kernel, component_walk };

  IncidentRoot() = default;

  // Opens the incident directory `dir` itself. The operator named it, so
  // symbolic links on the way to it are followed. When it cannot be opened,
  // the result is !ok() and `error` says why.
  static IncidentRoot open(const std::filesystem::path& dir, std::string& error,
                           Resolver resolver = Resolver::automatic);

  bool ok() const { return static_cast<bool>(root_); }
  const std::filesystem::path& dir() const { return dir_; }
  Resolver resolver() const { return resolver_; }

  // Opens the regular file at `rel` (incident-relative, '/' separators) for
  // reading, in blocking mode, close-on-exec. An empty UniqueFd when it cannot
  // be, and `error` says why in words ("symbolic link leading outside the
  // incident", "a FIFO, not a regular file", "not found").
  UniqueFd open_file(const std::string& rel, std::string& error) const;

  // The entries of the directory at `rel` ("" for the root), each classified
  // by the same rule open_file applies, so what is listed as a file opens.
  IncidentListing list_dir(const std::string& rel) const;

 private:
  // An O_PATH handle on what `rel` names, under the rule above; -errno on failure.
  UniqueFd locate(const std::string& rel, int& err) const;
  UniqueFd locate_by_kernel(const std::string& rel, int flags, int& err) const;
  UniqueFd locate_by_walk(const std::string& rel, int flags, int& err) const;

  std::filesystem::path dir_;
  UniqueFd root_;
  Resolver resolver_ = Resolver::automatic;
};

// Reads the whole of `fd` from its offset, at most `max_bytes`: the bound is
// the count of bytes read, never a size seen before, so a file that grows
// while it is read cannot make it larger. False, with `error`, when the file
// holds more than `max_bytes` or a read fails.
bool read_bounded(int fd, std::uint64_t max_bytes, std::string& out, std::string& error);

}  // namespace ff
