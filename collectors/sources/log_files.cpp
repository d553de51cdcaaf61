#include "collectors/sources/log_files.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

namespace ff::collect {
namespace {

// ".3" / ".3.gz" → 3 (larger is older); unnumbered → 0.
long long rotation_number(const std::string& path) {
  std::string n = path;
  if (n.size() > 3 && n.compare(n.size() - 3, 3, ".gz") == 0) n.resize(n.size() - 3);
  auto dot = n.find_last_of(".-");
  if (dot == std::string::npos || dot + 1 >= n.size()) return 0;
  std::string digits = n.substr(dot + 1);
  if (digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return 0;
  long long v = std::stoll(digits);
  return n[dot] == '-' ? -v : v;  // dated (-YYYYMMDD): a later date is newer
}

}  // namespace

GlobResult expand_log_globs(const std::vector<std::string>& globs) {
  GlobResult result;
  std::set<std::string> seen;
  std::vector<std::tuple<long long, long long, std::string>> found;  // mtime ns, -rotation, path
  for (const auto& pattern : globs) {
    glob_t g{};
    int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
    if (rc == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) {
        std::string path = g.gl_pathv[i];
        if (!seen.insert(path).second) continue;
        struct stat st {};
        long long mtime = 0;
        if (::stat(path.c_str(), &st) == 0)
          mtime = static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec;
        found.emplace_back(mtime, -rotation_number(path), path);
      }
    } else if (rc != GLOB_NOMATCH) {
      result.errors.push_back(pattern + ": " +
                              (rc == GLOB_ABORTED ? "cannot read directory" : "glob failed"));
    }
    ::globfree(&g);
  }
  std::sort(found.begin(), found.end());
  for (auto& [mtime, rotation, path] : found) result.files.push_back(std::move(path));
  return result;
}

}  // namespace ff::collect
