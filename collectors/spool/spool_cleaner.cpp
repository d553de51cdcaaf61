#include "collectors/spool/spool_cleaner.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace ff::collect {
namespace fs = std::filesystem;
namespace {

// The newest modification below `path` (a job directory is alive while any
// of its records changes).
fs::file_time_type newest_change(const fs::path& path) {
  std::error_code ec;
  fs::file_time_type newest = fs::last_write_time(path, ec);
  if (fs::is_directory(path, ec))
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
      newest = std::max(newest, it->last_write_time(ec));
  return newest;
}

}  // namespace

int clean_spool(const SpoolLayout& spool, int keep_days) {
  auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24) * keep_days;
  // Staging leftovers of a crashed collector are stale after an hour.
  auto staging_cutoff = fs::file_time_type::clock::now() - std::chrono::hours(1);
  int removed = 0;
  std::error_code ec;
  for (const fs::path& dir : {spool.jobs(), spool.pending(), spool.outbox(), spool.rejected()}) {
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      bool staging = name.rfind(".tmp-", 0) == 0 || name.rfind(".sent-", 0) == 0;
      if (newest_change(it->path()) >= (staging ? staging_cutoff : cutoff)) continue;
      std::error_code rm;
      fs::remove_all(it->path(), rm);
      if (!rm) {
        ++removed;
        spdlog::info("spool: removed {} (older than {})", it->path().string(),
                     staging ? "an hour" : std::to_string(keep_days) + " days");
      }
    }
  }
  return removed;
}

}  // namespace ff::collect
