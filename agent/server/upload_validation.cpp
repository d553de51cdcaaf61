#include "agent/server/upload_validation.h"

#include <nlohmann/json.hpp>

#include <set>

#include "agent/server/bundle_rules.h"

namespace ff::agent {

using nlohmann::json;

std::string parse_upload_meta(const std::string& text, UploadMeta& m) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "meta: not a JSON object";
  auto text_field = [&](const char* key, std::string& to) -> bool {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    to = it->get<std::string>();
    return true;
  };
  if (!text_field("bundle_id", m.bundle_id) || !valid_bundle_id(m.bundle_id))
    return "meta: bundle_id missing or not allowed";
  if (!text_field("job_id", m.job_id) || !valid_job_id(m.job_id))
    return "meta: job_id missing or not a Slurm job id";
  if (!text_field("node", m.node) || !valid_node_name(m.node))
    return "meta: node missing or not a node name";
  if (!text_field("pass", m.pass) || (m.pass != "step" && m.pass != "epilog"))
    return "meta: pass must be \"step\" or \"epilog\"";
  auto attempt = j.find("attempt");
  if (attempt != j.end()) {
    if (!attempt->is_number_integer() || attempt->get<long long>() < 0 ||
        attempt->get<long long>() > 1000000)
      return "meta: attempt must be a non-negative integer";
    m.attempt = attempt->get<int>();
  }
  return "";
}

UploadCheck check_upload_files(const UploadMeta& meta, const std::vector<UploadedFile>& files,
                               const BundleLimits& limits) {
  UploadCheck c;
  auto refuse = [&c](int status, std::string message) {
    c.status = status;
    c.error = std::move(message);
    return c;
  };
  if (std::string over = bundle_over_limits(files, limits, c.weight); !over.empty())
    return refuse(413, over);
  c.total_bytes = static_cast<std::size_t>(c.weight.bytes);
  std::set<std::string> names;
  const UploadedFile* job_json = nullptr;
  for (const auto& f : files) {
    if (std::string problem = bundle_path_problem(f.name, meta.node); !problem.empty())
      return refuse(400, "file '" + f.name + "': " + problem);
    if (!names.insert(f.name).second) return refuse(400, "file '" + f.name + "' sent twice");
    if (f.name == "job.json") job_json = &f;
  }
  if (job_json == nullptr) return refuse(400, "file 'job.json' missing");
  json fragment = json::parse(job_json->content, nullptr, false);
  if (fragment.is_discarded() || !fragment.is_object())
    return refuse(400, "file 'job.json': not a JSON object");
  if (fragment.contains("job_id") &&
      (!fragment["job_id"].is_string() || fragment["job_id"].get<std::string>() != meta.job_id))
    return refuse(400, "file 'job.json': job_id differs from meta");
  if (fragment.contains("start_time") && fragment["start_time"].is_string())
    c.fragment_start_time = fragment["start_time"].get<std::string>();
  if (fragment.contains("nodes") && fragment["nodes"].is_array())
    for (const auto& n : fragment["nodes"])
      if (n.is_string() && valid_node_name(n.get<std::string>()))
        c.fragment_nodes.push_back(n.get<std::string>());
  return c;
}

UploadCheck validate_upload(const std::string& meta_text, const std::vector<UploadedFile>& files,
                            const BundleLimits& limits, UploadMeta& meta) {
  meta = UploadMeta{};
  if (std::string problem = parse_upload_meta(meta_text, meta); !problem.empty()) {
    UploadCheck c;
    c.status = 400;
    c.error = std::move(problem);
    return c;
  }
  return check_upload_files(meta, files, limits);
}

}  // namespace ff::agent
