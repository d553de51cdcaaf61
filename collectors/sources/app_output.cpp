#include "collectors/sources/app_output.h"

#include "collectors/sources/tail_copy.h"
#include "common/user_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace ff::collect {

std::string expand_output_path(const std::string& path, const std::string& job_id,
                               const std::string& node, const std::string& user) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%' || i + 1 >= path.size()) {
      out += path[i];
      continue;
    }
    char c = path[++i];
    if (c == 'j' || c == 'J')
      out += job_id;
    else if (c == 'N' || c == 'n')
      out += node;
    else if (c == 'u' && !user.empty())
      out += user;
    else if (c == '%')
      out += '%';
    else
      out += std::string("%") + c;
  }
  return out;
}

std::optional<uid_t> parse_uid(const std::string& text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  unsigned long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v >= 0xffffffffull) return std::nullopt;  // (uid_t)-1 is "no user"
  return static_cast<uid_t>(v);
}

AppOutputCopy copy_app_output(const std::string& path, const std::string& file_name,
                              const std::string& node, const std::filesystem::path& bundle_root,
                              std::uint64_t max_bytes, std::optional<uid_t> owner) {
  AppOutputCopy result;
  // The path is the user's text: shown escaped, so that job.json stays valid
  // JSON whatever bytes it holds.
  const std::string shown = ff::printable_path(path);
  result.coverage.collector = "app";
  result.coverage.node = node;
  result.coverage.status = CoverageStatus::kMissing;
  result.coverage.lines = 0;
  result.coverage.detail = shown;
  ff::UserFileOpen in = ff::open_user_file(path, owner);
  if (in.outcome != ff::UserFileOpen::Outcome::opened) {
    // Output on a file system this node does not see is normal: another node has it.
    bool missing = in.outcome == ff::UserFileOpen::Outcome::missing;
    result.coverage.status = missing ? CoverageStatus::kMissing : CoverageStatus::kError;
    result.coverage.detail =
        shown + ": " + in.problem +
        (in.outcome == ff::UserFileOpen::Outcome::refused ? ": not collected" : "");
    return result;
  }
  std::uint64_t size = static_cast<std::uint64_t>(std::max<off_t>(in.st.st_size, 0));
  std::uint64_t from = ff::tail_start(in.st, max_bytes);
  std::error_code ec;
  std::filesystem::create_directories(bundle_root / "app", ec);
  std::filesystem::path out_path = bundle_root / "app" / file_name;
  int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (out < 0) {
    result.coverage.status = CoverageStatus::kError;
    result.coverage.detail = out_path.string() + ": " + std::strerror(errno);
    return result;
  }
  // At most max_bytes are read, whatever the file does meanwhile: the end
  // is the size fstat saw, and that is at most max_bytes after `from`.
  TailCopy copy =
      copy_tail_from_line_start(in.file.get(), out, from, from + std::min(size - from, max_bytes));
  std::uint64_t written = copy.written, lines = copy.lines;
  if (copy.write_failed) {
    result.coverage.status = CoverageStatus::kError;
    result.coverage.detail = out_path.string() + ": write failed";
  }
  ::close(out);
  if (result.coverage.status == CoverageStatus::kError) return result;
  result.file = {"app/" + file_name, "app", written, false};
  result.coverage.lines = lines;
  result.coverage.status = from > 0  ? CoverageStatus::kTruncated
                           : written ? CoverageStatus::kOk
                                     : CoverageStatus::kEmpty;
  result.coverage.detail = from > 0 ? shown + ": the last " + std::to_string(written) + " of " +
                                          std::to_string(size) + " bytes"
                                    : shown;
  if (file_name != std::filesystem::path(path).filename().string())
    result.coverage.detail += "; kept as app/" + file_name;
  if (copy.lines_cut > 0) {
    result.coverage.status = CoverageStatus::kTruncated;
    result.coverage.detail += "; " + std::to_string(copy.lines_cut) + " line(s) longer than " +
                              std::to_string(kMaxLineBytes) + " bytes cut";
  }
  return result;
}

}  // namespace ff::collect
