// Reads job.json into a JobInfo. Never throws: what cannot be read is
// reported in `errors` and the rest is kept (see "Bad input" in the README).
#pragma once

#include <filesystem>
#include <vector>

#include "model/diagnosis.h"
#include "model/job_info.h"

namespace ff {

JobInfo read_job_json(const std::filesystem::path& path, std::vector<ErrorItem>& errors);

}  // namespace ff
