// The records the SPANK plugin leaves in spool/jobs/<id>/ (docs/slurm-path.md
// §1): one alloc record per step started on this node, one rank record per
// task. They give the job's start, its nodes, its attempt and its ranks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectors/spool/spool_layout.h"
#include "incident/time/time.h"

namespace ff::collect {

struct AllocRecord {
  std::string step;
  std::string node;
  std::string nodelist;
  std::string cuda_visible_devices;
  int restart_count = 0;
  MaybeTime start_time;
};

struct RankRecord {
  std::string step;
  std::string node;
  int rank = -1;
  int local_rank = -1;
  std::vector<std::string> gpus;     // indices as the plugin saw them
  std::vector<std::string> gpu_pci;  // "00000000:3B:00.0", when known
  std::optional<int> exit_status;    // raw wait status; absent while running
  std::string exit_code;             // "exit:signal"
  std::int64_t pid = 0;              // the task's process, as slurmstepd started it; 0 unknown

  bool failed() const { return exit_status && *exit_status != 0; }
};

struct JobRecords {
  std::vector<AllocRecord> allocs;
  std::vector<RankRecord> ranks;
  std::vector<std::string> problems;  // unreadable records, one line each
};

JobRecords read_job_records(const SpoolLayout& spool, const std::string& job_id);

// One record per rank: the newest step in which it failed, else its newest
// step. Sorted by rank.
std::vector<RankRecord> select_rank_records(const std::vector<RankRecord>& records);

// Steps in the order they start: batch, extern, interactive, then 0, 1, 2...
int step_order(const std::string& step);

}  // namespace ff::collect
