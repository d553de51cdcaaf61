#include "bundle/size_limit.h"

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
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::uint64_t written = 0;
  if (in >= 0 && out >= 0) {
    std::vector<char> buf(256 * 1024);
    std::uint64_t pos = size - keep;
    bool skip_partial = pos > 0;
    while (pos < size) {
      ssize_t n = ::pread(in, buf.data(), std::min<std::uint64_t>(buf.size(), size - pos),
                          static_cast<off_t>(pos));
      if (n <= 0) break;
      pos += static_cast<std::uint64_t>(n);
      const char* p = buf.data();
      std::size_t len = static_cast<std::size_t>(n);
      if (skip_partial) {
        const char* nl = static_cast<const char*>(std::memchr(p, '\n', len));
        if (!nl) continue;
        len -= static_cast<std::size_t>(nl + 1 - p);
        p = nl + 1;
        skip_partial = false;
      }
      if (::write(out, p, len) != static_cast<ssize_t>(len)) break;
      written += len;
    }
  }
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
