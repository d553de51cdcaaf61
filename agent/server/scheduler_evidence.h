// The scheduler's own account of one job attempt, gathered by the agent on
// the head node for the incident's `cluster/` (docs/spec/incident.md):
//   cluster/slurmctld.log    slurmctld's lines of the attempt's window that
//                            name the job or one of its nodes
//                            (slurmctld_excerpt.h)
//   cluster/slurm_nodes.log  each node of the job that Slurm holds DOWN,
//                            DRAIN, FAIL or NOT_RESPONDING with a reason set
//                            while the attempt ran, one line per node:
//                            "2026-12-02T15:40:01Z node n2 state DOWN* reason Not responding"
//                            (the reason's own time; `scontrol show node`)
// and coverage.json, one entry per source, in the layout overlay_central
// lays over the incident. The engine sees it as any other cluster-side log.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/slurm/slurm_client.h"

namespace ff::agent {

struct SchedulerEvidenceConfig {
  // SlurmctldLogFile as the agent reads it: "auto" asks `scontrol show
  // config`, "" (or off) reads none, else a path.
  std::string slurmctld_log = "auto";
  bool node_states = true;  // `scontrol show node` for the job's nodes
  // Around the attempt's start and end: slurmctld notices a dead node only
  // after SlurmdTimeout, and logs the requeue and the epilogs after the end.
  std::chrono::seconds before{120};
  std::chrono::seconds after{300};
};

struct SchedulerEvidence {
  std::size_t slurmctld_lines = 0;
  std::size_t node_lines = 0;
  std::string problem;  // why nothing was asked (no times in job.json, ...)
};

// `job` is the merged job.json (nodes, start_time, end_time, timezone).
// Writes out_dir/cluster/* and out_dir/coverage.json; out_dir is replaced.
SchedulerEvidence gather_scheduler_evidence(const SchedulerEvidenceConfig& config,
                                            SlurmClient& slurm, const nlohmann::json& job,
                                            const std::filesystem::path& out_dir);

}  // namespace ff::agent
