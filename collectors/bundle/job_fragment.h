// job.json of a bundle: what this node knows of the job attempt
// (docs/spec/incident.md). The agent merges the fragments of all nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/sources/node_facts.h"
#include "collectors/spool/job_records.h"
#include "incident/coverage.h"
#include "incident/job_info.h"
#include "incident/time/time.h"

namespace ff::collect {

struct JobFragment {
  std::string job_id;
  int attempt = 0;
  std::vector<std::string> nodes;
  MaybeTime start_time;
  MaybeTime end_time;                    // Epilog only: the job has ended
  std::optional<std::string> exit_code;  // "exit:signal"
  std::string timezone;
  std::vector<RankRecord> ranks;  // already one per rank
  std::string node;               // this node, for node_info
  MaybeTime boot_time;
  std::vector<GpuInfo> gpus;
  std::vector<Coverage> coverage;
};

// The fragment as the job model: this node's node_info, its ranks placed on
// it when they name no node, each rank's GPUs by PCI id where known (else by
// the indices the plugin saw).
JobInfo job_info_of(const JobFragment& job);

// The bundle's job.json (incident/job_json.h's writer, on job_info_of).
nlohmann::json to_json(const JobFragment& job);

}  // namespace ff::collect
