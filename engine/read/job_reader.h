// Reads job.json into a JobInfo. Never throws: what cannot be read is
// reported in `errors` and the rest is kept (see "Bad input" in docs/operations.md).
// What cannot all be right (an empty 'nodes', a rank listed twice, a rank on a
// node outside 'nodes', start_time after end_time) is reported too, and
// resolved as docs/spec/incident.md says, so the evidence is still judged.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "engine/read/incident_file.h"
#include "incident/diagnosis.h"
#include "incident/job_info.h"

namespace ff {

// Largest job.json read; a larger one is an error, not a silent cut. A job of
// 4,096 nodes with 8 ranks each, their GPUs and five coverage entries per node
// is 10 MiB (14 MiB indented).
constexpr std::uint64_t kMaxJobJsonBytes = 64u << 20;

// The incident's job.json, opened by the incident's rule (read/incident_file.h).
JobInfo read_job_json(const IncidentRoot& incident, std::vector<ErrorItem>& errors);
// The same, for `path` naming the job.json of the incident directory that holds it.
JobInfo read_job_json(const std::filesystem::path& path, std::vector<ErrorItem>& errors);

}  // namespace ff
