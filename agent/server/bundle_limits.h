// What one uploaded bundle may weigh (docs/slurm-path.md section 4). Every
// limit is checked on the whole upload before anything touches the disk, so
// a bundle over one is refused whole (413) and never half-stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ff::agent {

struct UploadedFile {
  std::string name;  // the multipart filename: the path inside the bundle
  std::string content;
};

struct BundleLimits {
  std::size_t max_files = 4096;
  std::size_t max_total_bytes = 256u << 20;  // agent.yaml max_request_bytes
  std::size_t max_file_bytes = 128u << 20;
  // The collectors cut longer lines at 1 MiB (and the engine reads no more
  // of a line), so a longer one means a client that is not ours.
  std::size_t max_line_bytes = 1u << 20;
  // A flight-recorder dump (nodes/<node>/flight_recorder/<rank>) is a
  // pickle, not lines: no line limit or count applies, this size does
  // (the collector's flight_recorder_max_bytes is at most this).
  std::size_t max_flight_recorder_file_bytes = 64u << 20;
  // Over every bundle stored for one job attempt, this one included.
  std::uint64_t max_lines_per_job = 50'000'000;
  // Bytes over every bundle stored for one job attempt, this one included.
  std::uint64_t max_job_bytes = 4ull << 30;
};

// What a bundle weighs, measured by bundle_over_limits.
struct BundleWeight {
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;  // newline-terminated lines, plus an unterminated last one (of
                            // text files: flight-recorder dumps are not counted)
};

// "" when `files` keep every per-bundle limit (all but max_lines_per_job
// and max_job_bytes, which need what is stored), else the first limit broken, naming the file
// and the agent.yaml setting. Fills `weight` in either case as far as it got.
std::string bundle_over_limits(const std::vector<UploadedFile>& files, const BundleLimits& limits,
                               BundleWeight& weight);

}  // namespace ff::agent
