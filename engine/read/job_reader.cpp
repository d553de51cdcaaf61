#include "engine/read/job_reader.h"

namespace ff {

JobInfo read_job_json(const IncidentRoot& incident, std::vector<ErrorItem>& errors) {
  std::string error, text;
  UniqueFd fd = incident.open_file("job.json", error);
  if (!fd || !read_bounded(fd.get(), kMaxJobJsonBytes, text, error)) {
    errors.push_back(
        {"job.json", 0, "job.json not read (" + error + "); job window, ranks and GPUs unknown"});
    return JobInfo();
  }
  return parse_job_json(text, errors);
}

JobInfo read_job_json(const std::filesystem::path& path, std::vector<ErrorItem>& errors) {
  std::string error;
  std::filesystem::path dir = path.parent_path();
  IncidentRoot incident = IncidentRoot::open(dir.empty() ? "." : dir, error);
  if (!incident.ok()) {
    errors.push_back(
        {"job.json", 0, "job.json not read (" + error + "); job window, ranks and GPUs unknown"});
    return JobInfo();
  }
  if (path.filename() != "job.json") {
    errors.push_back({"job.json", 0, "not named job.json: " + path.string()});
    return JobInfo();
  }
  return read_job_json(incident, errors);
}

}  // namespace ff
