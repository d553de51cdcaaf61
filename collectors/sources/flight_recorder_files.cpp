#include "collectors/sources/flight_recorder_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

#include "collectors/sources/app_output.h"
#include "common/user_file.h"
#include "incident/node_file_kind.h"

namespace ff::collect {
namespace {

// Entries of the dump directory read at most: a directory the job's user
// filled with names must not hold the Epilog's collector for long.
constexpr std::size_t kMaxListedEntries = 100'000;

// The job's user name for %u; "" when the pattern does not need it or the
// user is unknown to this node.
std::string user_name(std::optional<uid_t> uid) {
  if (!uid) return "";
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(*uid, &pw, buf.data(), buf.size(), &found) != 0 || !found) return "";
  return found->pw_name;
}

bool needs_user(const std::string& text) {
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '%') continue;
    if (text[i + 1] == 'u') return true;
    ++i;  // "%%" and the other escapes
  }
  return false;
}

// Up to `limit` items of `ranks` as text: "3, 5, 9 and 2 more".
std::string rank_list(const std::vector<int>& ranks, std::size_t limit = 8) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < limit; ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > limit) out += " and " + std::to_string(ranks.size() - limit) + " more";
  return out;
}

}  // namespace

std::optional<FlightRecorderPattern> parse_flight_recorder_pattern(const std::string& pattern,
                                                                   std::string& error) {
  if (pattern.empty() || pattern[0] != '/') {
    error = "must be an absolute path";
    return std::nullopt;
  }
  auto slash = pattern.find_last_of('/');
  FlightRecorderPattern p;
  p.directory = slash == 0 ? "/" : pattern.substr(0, slash);
  std::string last = pattern.substr(slash + 1);
  std::optional<std::size_t> rank_at;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (i + 1 >= pattern.size()) {
      error = "ends in a lone '%' (write %% for a percent sign)";
      return std::nullopt;
    }
    char c = pattern[++i];
    if (c == 'r') {
      if (i < slash) {
        error = "%r (the rank) may stand only in the file name, not in a directory";
        return std::nullopt;
      }
      if (rank_at) {
        error = "%r (the rank) appears more than once";
        return std::nullopt;
      }
      rank_at = i - 1 - (slash + 1);
    } else if (std::string_view("jJNnu%").find(c) == std::string_view::npos) {
      error = std::string("unknown escape '%") + c + "' (%j, %J, %N, %n, %u, %r, %%)";
      return std::nullopt;
    }
  }
  if (!rank_at) {
    error = "has no %r in its file name: PyTorch ends each rank's dump name with the rank";
    return std::nullopt;
  }
  p.before = last.substr(0, *rank_at);
  p.after = last.substr(*rank_at + 2);
  return p;
}

FlightRecorderGather gather_flight_recorder(const FlightRecorderSettings& settings,
                                            const std::string& job_id, const std::string& node,
                                            std::optional<uid_t> owner,
                                            const std::optional<std::set<int>>& ranks,
                                            const std::filesystem::path& bundle_root) {
  FlightRecorderGather result;
  if (settings.pattern.empty()) return result;
  Coverage& coverage = result.coverage.emplace();
  coverage.collector = kFlightRecorderCollector;
  coverage.node = node;
  coverage.status = CoverageStatus::kError;

  std::string error;
  auto pattern = parse_flight_recorder_pattern(settings.pattern, error);
  if (!pattern) {  // node.yaml is checked at load; a config built otherwise is not
    coverage.detail = ff::printable_path(settings.pattern) + ": " + error;
    return result;
  }
  std::string user;
  if (needs_user(settings.pattern)) {
    user = user_name(owner);
    if (user.empty()) {
      coverage.detail = ff::printable_path(settings.pattern) +
                        ": %u needs the job's user, unknown on this node: not collected";
      return result;
    }
  }
  const std::string directory = expand_output_path(pattern->directory, job_id, node, user);
  const std::string before = expand_output_path(pattern->before, job_id, node, user);
  const std::string after = expand_output_path(pattern->after, job_id, node, user);
  const std::string shown_dir = ff::printable_path(directory);
  const std::string shown = shown_dir + (directory == "/" ? "" : "/") + ff::printable_path(before) +
                            "<rank>" + ff::printable_path(after);

  ff::UserFileOpen dir = ff::open_user_directory(directory, owner);
  if (dir.outcome != ff::UserFileOpen::Outcome::opened) {
    // No directory is the common case: dumps are written only on a timeout.
    coverage.status = dir.outcome == ff::UserFileOpen::Outcome::missing ? CoverageStatus::kMissing
                                                                        : CoverageStatus::kError;
    coverage.detail = shown_dir + ": " + dir.problem +
                      (dir.outcome == ff::UserFileOpen::Outcome::refused ? ": not collected" : "");
    return result;
  }

  // The names, listed once, through a descriptor of its own: the directory's
  // stays for openat.
  // The directory is the job user's: it may hold millions of names. Only
  // the lowest ranks that can still be taken are kept (room for some to be
  // refused), and the listing stops after a bound.
  std::map<int, std::string> found;  // rank → name
  std::size_t other_ranks = 0, not_kept = 0;
  bool listing_cut = false;
  const std::size_t keep = settings.max_files * 2 + 16;
  {
    int listing = ::openat(dir.file.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = listing < 0 ? nullptr : ::fdopendir(listing);
    if (!d) {
      if (listing >= 0) ::close(listing);
      coverage.detail = shown_dir + ": cannot list: " + std::strerror(errno);
      return result;
    }
    std::size_t entries = 0;
    while (dirent* e = ::readdir(d)) {
      if (++entries > kMaxListedEntries) {
        listing_cut = true;
        break;
      }
      std::string_view name = e->d_name;
      if (name.size() <= before.size() + after.size() || name.substr(0, before.size()) != before ||
          name.substr(name.size() - after.size()) != after)
        continue;
      auto rank = ff::flight_recorder_rank(
          name.substr(before.size(), name.size() - before.size() - after.size()));
      if (!rank) continue;
      if (ranks && !ranks->count(*rank)) {
        ++other_ranks;
        continue;
      }
      found.emplace(*rank, std::string(name));
      if (found.size() > keep) {
        found.erase(std::prev(found.end()));
        ++not_kept;
      }
    }
    ::closedir(d);
  }

  std::string other = other_ranks ? "; " + std::to_string(other_ranks) +
                                        " dump(s) of ranks not on this node left to their node"
                                  : "";
  if (not_kept)
    other += "; " + std::to_string(not_kept) +
             " more dump(s) of higher ranks over flight_recorder_max_files not looked at";
  if (listing_cut)
    other += "; the directory holds more than " + std::to_string(kMaxListedEntries) +
             " entries: the rest were not listed";
  if (found.empty()) {
    coverage.status = CoverageStatus::kMissing;
    coverage.detail = shown + ": no dump" + (ranks ? " of this node's ranks" : "") + other;
    return result;
  }

  const std::filesystem::path out_dir =
      bundle_root / "nodes" / node / std::string(ff::kFlightRecorderDir);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  std::vector<int> taken, over_count, over_size, over_total;
  std::vector<std::string> refused;  // "rank 3: a symbolic link (not followed)"
  std::uint64_t total = 0;
  for (const auto& [rank, name] : found) {
    if (taken.size() >= settings.max_files) {
      over_count.push_back(rank);
      continue;
    }
    ff::UserFileOpen in = ff::open_user_file_at(dir.file.get(), name, owner);
    if (in.outcome != ff::UserFileOpen::Outcome::opened) {
      refused.push_back("rank " + std::to_string(rank) + ": " + in.problem);
      continue;
    }
    auto size = static_cast<std::uint64_t>(std::max<off_t>(in.st.st_size, 0));
    if (size > settings.max_bytes) {
      over_size.push_back(rank);
      continue;
    }
    if (total + size > settings.max_total_bytes) {
      over_total.push_back(rank);
      continue;
    }
    const std::filesystem::path out_path = out_dir / std::to_string(rank);
    ff::FileHandle out(
        ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!out) {
      refused.push_back("rank " + std::to_string(rank) + ": " + out_path.string() + ": " +
                        std::strerror(errno));
      continue;
    }
    // One byte past the limit tells a dump that grew past it while read.
    auto copied = ff::copy_bounded(in.file.get(), out.get(), 0, settings.max_bytes + 1);
    if (!copied || *copied > settings.max_bytes || total + *copied > settings.max_total_bytes) {
      out = ff::FileHandle();
      std::filesystem::remove(out_path, ec);
      if (!copied) {
        refused.push_back("rank " + std::to_string(rank) + ": write failed");
      } else if (*copied > settings.max_bytes) {
        over_size.push_back(rank);
      } else {
        over_total.push_back(rank);
      }
      continue;
    }
    total += *copied;
    taken.push_back(rank);
    result.files.push_back(
        {"nodes/" + node + "/" + std::string(ff::kFlightRecorderDir) + "/" + std::to_string(rank),
         kFlightRecorderCollector, *copied, false});
  }

  std::string detail = shown + ": " + std::to_string(taken.size()) + " dump(s)";
  if (!taken.empty()) detail += " (ranks " + rank_list(taken) + ")";
  if (!over_count.empty())
    detail += "; " + std::to_string(over_count.size()) + " more over flight_recorder_max_files (" +
              std::to_string(settings.max_files) + ") not collected (ranks " +
              rank_list(over_count) + ")";
  if (!over_size.empty())
    detail += "; " + std::to_string(over_size.size()) + " larger than flight_recorder_max_bytes (" +
              std::to_string(settings.max_bytes) +
              ") not collected, a cut dump loses its newest entries (ranks " +
              rank_list(over_size) + ")";
  if (!over_total.empty())
    detail += "; " + std::to_string(over_total.size()) + " over the bundle's share for dumps (" +
              std::to_string(settings.max_total_bytes) + " bytes) not collected (ranks " +
              rank_list(over_total) + ")";
  for (std::size_t i = 0; i < refused.size() && i < 8; ++i)
    detail += "; " + refused[i] + ": not collected";
  if (refused.size() > 8) detail += "; " + std::to_string(refused.size() - 8) + " more refused";
  detail += other;
  coverage.detail = detail;
  bool skipped = !over_count.empty() || !over_size.empty() || !over_total.empty() ||
                 !refused.empty() || not_kept || listing_cut;
  // Dumps were there but none could be taken: an error, not "partial".
  coverage.status = taken.empty() ? CoverageStatus::kError
                    : skipped     ? CoverageStatus::kPartial
                                  : CoverageStatus::kOk;
  if (taken.empty()) std::filesystem::remove(out_dir, ec);
  return result;
}

}  // namespace ff::collect
