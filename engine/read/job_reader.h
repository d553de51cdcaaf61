// Opens an incident's job.json by the incident's rule (read/incident_file.h:
// a regular file inside the incident, read up to kMaxJobJsonBytes) and reads
// it with the incident library's reader (incident/job_json.h). Never throws:
// what cannot be read is reported in `errors` and the rest is kept (see "Bad
// input" in docs/operations.md).
#pragma once

#include <filesystem>
#include <vector>

#include "engine/read/incident_file.h"
#include "incident/diagnosis.h"
#include "incident/job_info.h"
#include "incident/job_json.h"

namespace ff {

// The incident's job.json.
JobInfo read_job_json(const IncidentRoot& incident, std::vector<ErrorItem>& errors);
// The same, for `path` naming the job.json of the incident directory that holds it.
JobInfo read_job_json(const std::filesystem::path& path, std::vector<ErrorItem>& errors);

}  // namespace ff
