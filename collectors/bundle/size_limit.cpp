#include "collectors/bundle/size_limit.h"

#include "collectors/sources/tail_copy.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace ff::collect {
namespace {

// Keeps the last `keep` bytes of a file, from a line start.
std::uint64_t keep_tail(const std::filesystem::path& path, std::uint64_t size, std::uint64_t keep) {
  std::filesystem::path tmp = path.string() + ".cut";
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  std::uint64_t written = 0;
  if (in >= 0 && out >= 0) written = copy_tail_from_line_start(in, out, size - keep, size).written;
  if (in >= 0) ::close(in);
  if (out >= 0) ::close(out);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return written;
}

}  // namespace

std::set<std::string> fit_to_size(const std::filesystem::path& bundle_root,
                                  std::vector<BundleFile>& files, std::uint64_t max_bytes,
                                  std::uint64_t reserve) {
  std::set<std::string> cut;
  std::uint64_t budget = max_bytes > reserve ? max_bytes - reserve : 0;
  std::uint64_t fixed = 0, cuttable = 0;
  std::vector<std::uint64_t> sizes;
  for (const auto& f : files) (f.cuttable ? cuttable : fixed) += f.bytes;
  if (fixed + cuttable <= budget) return cut;
  std::uint64_t room = budget > fixed ? budget - fixed : 0;
  // The common cap: the largest C with sum(min(size, C)) <= room.
  for (const auto& f : files)
    if (f.cuttable) sizes.push_back(f.bytes);
  std::sort(sizes.begin(), sizes.end());
  std::uint64_t cap = 0, below = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::uint64_t remaining = sizes.size() - i;
    std::uint64_t c = (room - below) / remaining;
    if (c <= sizes[i]) {
      cap = c;
      break;
    }
    below += sizes[i];
    cap = sizes[i];
  }
  for (auto& f : files) {
    if (!f.cuttable || f.bytes <= cap) continue;
    f.bytes = keep_tail(bundle_root / f.rel, f.bytes, cap);
    cut.insert(f.collector);
  }
  return cut;
}

}  // namespace ff::collect
