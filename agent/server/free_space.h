// The free space the agent leaves on its state directory's filesystem. The
// head node often keeps slurmctld's state (StateSaveLocation) and its logs on
// that filesystem: an agent that filled it would take the cluster down with
// it, so an upload that would leave less than the floor is refused instead.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ff::agent {

struct FreeSpaceFloor {
  std::uint64_t min_free_bytes = 1u << 30;  // agent.yaml min_free_bytes
  int min_free_percent = 5;                 // agent.yaml min_free_percent
};

struct FreeSpace {
  bool known = false;             // false: statvfs failed (`error` says why)
  std::uint64_t free_bytes = 0;   // available to an unprivileged user (f_bavail)
  std::uint64_t total_bytes = 0;  // the filesystem's size (f_blocks)
  std::string error;
};

FreeSpace free_space(const std::filesystem::path& dir);

// "" when writing `incoming` more bytes under `dir` leaves at least the
// floor free, else why not (free bytes, the floor, the agent.yaml key).
// A filesystem statvfs cannot read is taken as full: refusing an upload is
// recoverable (the collector sends it again), a full disk on the head node is not.
std::string below_free_space_floor(const std::filesystem::path& dir, std::uint64_t incoming,
                                   const FreeSpaceFloor& floor);

}  // namespace ff::agent
