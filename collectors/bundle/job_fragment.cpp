#include "collectors/bundle/job_fragment.h"

namespace ff::collect {

nlohmann::json to_json(const JobFragment& job) {
  nlohmann::json j;
  j["schema"] = kIncidentSchema;
  j["job_id"] = job.job_id;
  j["attempt"] = job.attempt;
  j["nodes"] = job.nodes;
  if (job.start_time) j["start_time"] = format_time(*job.start_time);
  if (job.end_time) j["end_time"] = format_time(*job.end_time);
  if (job.exit_code) j["exit_code"] = *job.exit_code;
  if (!job.timezone.empty()) j["timezone"] = job.timezone;

  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : job.ranks) {
    nlohmann::json rank = {{"rank", r.rank}, {"node", r.node.empty() ? job.node : r.node}};
    if (r.local_rank >= 0) rank["local_rank"] = r.local_rank;
    // The PCI id names a GPU the same way Xid lines do; the index is a fallback.
    rank["gpus"] = !r.gpu_pci.empty() ? r.gpu_pci : r.gpus;
    if (!r.exit_code.empty()) rank["exit_code"] = r.exit_code;
    ranks.push_back(std::move(rank));
  }
  j["ranks"] = std::move(ranks);

  nlohmann::json info = nlohmann::json::object();
  if (job.boot_time) info["boot_time"] = format_time(*job.boot_time);
  if (!job.gpus.empty()) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : job.gpus) {
      nlohmann::json gpu = {{"index", g.index}};
      if (!g.pci.empty()) gpu["pci"] = g.pci;
      if (!g.uuid.empty()) gpu["uuid"] = g.uuid;
      gpus.push_back(std::move(gpu));
    }
    info["gpus"] = std::move(gpus);
  }
  j["node_info"] = {{job.node, std::move(info)}};

  nlohmann::json coverage = nlohmann::json::array();
  for (const auto& c : job.coverage) coverage.push_back(to_json(c));
  j["coverage"] = std::move(coverage);
  return j;
}

}  // namespace ff::collect
