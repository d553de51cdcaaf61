#include "agent/server/bundle_limits.h"

#include <cstring>

#include "incident/bundle_paths.h"

namespace ff::agent {

namespace {

struct TextShape {
  std::uint64_t lines = 0;
  std::size_t longest = 0;  // bytes of the longest line, its newline not counted
  std::uint64_t longest_line_no = 0;
};

TextShape text_shape(const std::string& text) {
  TextShape shape;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const auto* nl =
        static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* line_end = nl ? nl : end;
    ++shape.lines;
    auto length = static_cast<std::size_t>(line_end - p);
    if (length > shape.longest) {
      shape.longest = length;
      shape.longest_line_no = shape.lines;
    }
    p = nl ? nl + 1 : end;
  }
  return shape;
}

}  // namespace

std::string bundle_over_limits(const std::vector<UploadedFile>& files, const BundleLimits& limits,
                               BundleWeight& weight) {
  weight = {};
  if (files.size() > limits.max_files)
    return std::to_string(files.size()) + " files, more than max_files_per_bundle (" +
           std::to_string(limits.max_files) + ")";
  for (const auto& f : files) {
    weight.bytes += f.content.size();
    if (f.content.size() > limits.max_file_bytes)
      return "file '" + f.name + "': " + std::to_string(f.content.size()) +
             " bytes, more than max_file_bytes (" + std::to_string(limits.max_file_bytes) + ")";
    if (weight.bytes > limits.max_total_bytes)
      return "bundle larger than max_request_bytes (" + std::to_string(limits.max_total_bytes) +
             ")";
    if (ff::is_flight_recorder_path(f.name)) {
      if (f.content.size() > limits.max_flight_recorder_file_bytes)
        return "file '" + f.name + "': " + std::to_string(f.content.size()) +
               " bytes, more than a flight-recorder dump may hold (" +
               std::to_string(limits.max_flight_recorder_file_bytes) + ")";
      continue;
    }
    TextShape shape = text_shape(f.content);
    weight.lines += shape.lines;
    if (shape.longest > limits.max_line_bytes)
      return "file '" + f.name + "' line " + std::to_string(shape.longest_line_no) + ": " +
             std::to_string(shape.longest) + " bytes, more than max_line_bytes (" +
             std::to_string(limits.max_line_bytes) + ")";
    if (weight.lines > limits.max_lines_per_job)
      return "bundle of more than max_lines_per_job (" + std::to_string(limits.max_lines_per_job) +
             ") lines";
  }
  return "";
}

}  // namespace ff::agent
