// The job's PyTorch flight-recorder dumps, when node.yaml says where they are
// (`flight_recorder`): with TORCH_NCCL_TRACE_BUFFER_SIZE set and
// TORCH_NCCL_DUMP_ON_TIMEOUT=1, each rank writes its ring buffer of
// collectives, a pickle, to `${TORCH_NCCL_DEBUG_INFO_TEMP_FILE}${rank}`
// (default prefix /tmp/nccl_trace_rank_; TORCH_FR_DUMP_TEMP_FILE in newer
// releases), the rank being the global one
// (https://pytorch.org/docs/stable/torch_nccl_environment_variables.html,
// https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/FlightRecorder.hpp).
// Each dump goes into the bundle whole as
// nodes/<node>/flight_recorder/<global-rank> (docs/spec/incident.md), with a
// coverage entry `flight_recorder`.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collectors/bundle/bundle_file.h"
#include "incident/coverage.h"

namespace ff::collect {

// The coverage entry's collector name.
constexpr const char* kFlightRecorderCollector = "flight_recorder";

// node.yaml's `flight_recorder` pattern, split where the rank goes: an
// absolute path whose last component holds `%r` (the global rank) once; the
// rest may hold what the job's output path may (%j/%J job id, %N/%n node,
// %u the job's user name, %% a percent: app_output.h expand_output_path).
struct FlightRecorderPattern {
  std::string directory;  // every component but the last, unexpanded
  std::string before;     // the last component before %r, unexpanded
  std::string after;      // the last component after %r, unexpanded
};

// nullopt, with `error` saying why, for a pattern that is not absolute, has
// no %r, has it twice or in a directory, or an escape other than those above.
std::optional<FlightRecorderPattern> parse_flight_recorder_pattern(const std::string& pattern,
                                                                   std::string& error);

struct FlightRecorderSettings {
  std::string pattern;                          // "" = not gathered
  std::uint64_t max_bytes = 16ull << 20;        // per dump; a larger one is skipped, not cut
  std::size_t max_files = 64;                   // the lowest ranks kept
  std::uint64_t max_total_bytes = 32ull << 20;  // all dumps of the bundle together
};

struct FlightRecorderGather {
  std::optional<Coverage> coverage;  // absent when no pattern is set
  std::vector<BundleFile> files;     // not cuttable: a cut pickle loses its newest entries
};

// Lists the pattern's directory once, as the job's user's: the directory by
// common/user_file.h's open_user_directory (owned by the user or root, not
// writable by others without the sticky bit), each dump by open_user_file_at
// relative to it (a regular file of the user, a symbolic link never
// followed). `ranks` are this node's global ranks when the spool records
// name them: a dump of another rank is another node's (a shared file system)
// and left to it; nullopt takes every rank. Files are written to
// `bundle_root`/nodes/<node>/flight_recorder/<rank>. Coverage: ok (every
// dump of this node's ranks taken), partial (some skipped: over max_files,
// over max_bytes or max_total_bytes, refused, unreadable; the detail says
// which and why), missing (no directory or no dump: the job did not time
// out, or wrote elsewhere), error (the directory refused or unreadable).
FlightRecorderGather gather_flight_recorder(const FlightRecorderSettings& settings,
                                            const std::string& job_id, const std::string& node,
                                            std::optional<uid_t> owner,
                                            const std::optional<std::set<int>>& ranks,
                                            const std::filesystem::path& bundle_root);

}  // namespace ff::collect
