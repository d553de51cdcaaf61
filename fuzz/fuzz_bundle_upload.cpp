// Fuzzes the bundle upload body as the agent handles it after HTTP: the
// `meta` part and the `file` parts (multipart filename = path in the bundle,
// content) through server/upload_validation.h, the checks
// BundleReceiver::receive runs before it stores anything (the credential
// check between them needs munged and is left out).
//
// Input: NUL-separated fields: meta JSON, then name, content, name,
// content, ... (a missing last content is empty). Each input is checked
// under the agent's default limits and under small ones (server/
// bundle_limits.h: 4 files, 256 bytes, 128 per file, 64-byte lines, 16
// lines), so every limit branch is reached. Besides not crashing: a refused
// upload is a 400 or 413 with a message; an accepted one has a valid meta
// part, a job.json, no name twice, every name allowed by bundle_rules.h and
// safe to join under the bundle directory, keeps every limit, and its
// weight (bytes, lines) is what the files hold.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "agent/server/bundle_rules.h"
#include "agent/server/upload_validation.h"

namespace {

using ff::agent::BundleLimits;
using ff::agent::UploadedFile;

// The path stays inside the bundle directory: relative, no empty, "." or ".." component.
bool safe_relative_path(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return false;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    std::string comp =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (comp.empty() || comp == "." || comp == "..") return false;
    if (comp.find('\0') != std::string::npos) return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

void check(const std::string& meta_text, const std::vector<UploadedFile>& files,
           const BundleLimits& limits) {
  ff::agent::UploadMeta meta;
  ff::agent::UploadCheck c = ff::agent::validate_upload(meta_text, files, limits, meta);
  if (c.status != 200) {
    if ((c.status != 400 && c.status != 413) || c.error.empty()) __builtin_trap();
    return;
  }
  if (!c.error.empty()) __builtin_trap();
  if (!ff::agent::valid_job_id(meta.job_id) || !ff::agent::valid_node_name(meta.node) ||
      !ff::agent::valid_bundle_id(meta.bundle_id) ||
      (meta.pass != "step" && meta.pass != "epilog") || meta.attempt < 0)
    __builtin_trap();
  if (files.size() > limits.max_files) __builtin_trap();
  std::set<std::string> names;
  std::uint64_t total = 0, lines = 0;
  for (const auto& f : files) {
    if (!ff::agent::bundle_path_problem(f.name, meta.node).empty()) __builtin_trap();
    if (!safe_relative_path(f.name)) __builtin_trap();
    if (!names.insert(f.name).second) __builtin_trap();
    if (f.content.size() > limits.max_file_bytes) __builtin_trap();
    total += f.content.size();
    std::size_t start = 0;
    while (start < f.content.size()) {
      std::size_t nl = f.content.find('\n', start);
      std::size_t end = nl == std::string::npos ? f.content.size() : nl;
      if (end - start > limits.max_line_bytes) __builtin_trap();
      ++lines;
      start = end + 1;
    }
  }
  if (names.count("job.json") == 0) __builtin_trap();
  if (total != c.weight.bytes || total > limits.max_total_bytes) __builtin_trap();
  if (lines != c.weight.lines || lines > limits.max_lines_per_job) __builtin_trap();
  for (const auto& n : c.fragment_nodes)
    if (!ff::agent::valid_node_name(n)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    std::size_t nul = in.find('\0', start);
    fields.push_back(in.substr(start, nul == std::string::npos ? std::string::npos : nul - start));
    if (nul == std::string::npos) break;
    start = nul + 1;
  }
  std::vector<UploadedFile> files;
  for (std::size_t i = 1; i < fields.size(); i += 2)
    files.push_back({fields[i], i + 1 < fields.size() ? fields[i + 1] : std::string()});

  check(fields[0], files, BundleLimits{});
  BundleLimits small;
  small.max_files = 4;
  small.max_total_bytes = 256;
  small.max_file_bytes = 128;
  small.max_line_bytes = 64;
  small.max_lines_per_job = 16;
  check(fields[0], files, small);
  return 0;
}
