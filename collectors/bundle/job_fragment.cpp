#include "collectors/bundle/job_fragment.h"

#include "incident/job_json.h"

namespace ff::collect {

JobInfo job_info_of(const JobFragment& job) {
  JobInfo info;
  info.schema = kIncidentSchema;
  info.job_id = job.job_id;
  info.attempt = job.attempt;
  info.nodes = job.nodes;
  info.start_time = job.start_time;
  info.end_time = job.end_time;
  info.exit_code = job.exit_code.value_or("");
  info.timezone = job.timezone;
  for (const auto& r : job.ranks) {
    RankInfo rank;
    rank.rank = r.rank;
    rank.node = r.node.empty() ? job.node : r.node;
    rank.local_rank = r.local_rank;
    // The PCI id names a GPU the same way Xid lines do; the index is a fallback.
    rank.gpus = !r.gpu_pci.empty() ? r.gpu_pci : r.gpus;
    rank.exit_code = r.exit_code;
    rank.pid = r.pid;
    info.ranks.push_back(std::move(rank));
  }
  NodeInfo& node = info.node_info[job.node];
  node.boot_time = job.boot_time;
  node.gpus = job.gpus;
  info.coverage = job.coverage;
  return info;
}

nlohmann::json to_json(const JobFragment& job) {
  return ff::to_json(job_info_of(job));
}

}  // namespace ff::collect
