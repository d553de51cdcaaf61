// job.json of a bundle: what this node knows of the job attempt
// (docs/spec/incident.md). The agent merges the fragments of all nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "incident/coverage.h"
#include "collectors/sources/node_facts.h"
#include "collectors/spool/job_records.h"
#include "incident/time/time.h"

namespace ff::collect {

constexpr const char* kIncidentSchema = "firstfault.incident/v1";

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

nlohmann::json to_json(const JobFragment& job);

}  // namespace ff::collect
