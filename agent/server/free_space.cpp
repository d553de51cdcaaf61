#include "agent/server/free_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace ff::agent {

FreeSpace free_space(const std::filesystem::path& dir) {
  FreeSpace space;
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) {
    space.error = "statvfs " + dir.string() + ": " + std::strerror(errno);
    return space;
  }
  space.known = true;
  space.free_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  space.total_bytes = static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize;
  return space;
}

std::string below_free_space_floor(const std::filesystem::path& dir, std::uint64_t incoming,
                                   const FreeSpaceFloor& floor) {
  FreeSpace space = free_space(dir);
  if (!space.known) return space.error;
  std::uint64_t left = space.free_bytes > incoming ? space.free_bytes - incoming : 0;
  if (left < floor.min_free_bytes)
    return "the state directory's filesystem would keep " + std::to_string(left) +
           " bytes free, less than min_free_bytes (" + std::to_string(floor.min_free_bytes) + ")";
  if (space.total_bytes > 0 && floor.min_free_percent > 0 &&
      left / static_cast<double>(space.total_bytes) * 100.0 < floor.min_free_percent)
    return "the state directory's filesystem would keep " + std::to_string(left) + " of " +
           std::to_string(space.total_bytes) + " bytes free, less than min_free_percent (" +
           std::to_string(floor.min_free_percent) + "%)";
  return "";
}

}  // namespace ff::agent
