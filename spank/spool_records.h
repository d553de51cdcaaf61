// The two records the plugin keeps in <spool>/jobs/<job_id>/ (docs/slurm-path.md 1):
// alloc-<step>.json for each step started on the node, rank-<step>-<rank>.json for
// each task, rewritten with its exit status when it ends.
#ifndef FIRSTFAULT_SPANK_SPOOL_RECORDS_H_
#define FIRSTFAULT_SPANK_SPOOL_RECORDS_H_

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace firstfault::spank {

struct AllocRecord {
  std::string job_id;
  std::string step;  // StepName()
  std::string node;
  uint32_t node_index = 0;
  uint32_t node_count = 0;
  uint32_t local_task_count = 0;
  uint32_t total_task_count = 0;
  uint32_t restart_count = 0;
  std::time_t start_time = 0;
  uint32_t uid = 0;
  std::string cuda_visible_devices;
  std::string slurm_job_gpus;
  std::string nodelist;
};

struct RankRecord {
  std::string job_id;
  std::string step;
  std::string node;
  uint32_t rank = 0;
  int local_rank = 0;
  int64_t pid = 0;
  std::vector<std::string> gpus;
  std::vector<std::string> gpu_pci;
  std::optional<int> exit_status;  // raw wait(2) status, once the task ended
};

// Paths relative to the spool root.
std::string AllocRecordPath(const std::string& job_id, const std::string& step);
std::string RankRecordPath(const std::string& job_id, const std::string& step, uint32_t rank);

// One line of JSON with a trailing newline. Bytes that are not UTF-8 (environment
// values can hold anything) are replaced, never thrown about.
std::string AllocRecordJson(const AllocRecord& record);
std::string RankRecordJson(const RankRecord& record);

// "2026-11-30T05:01:02Z".
std::string FormatRfc3339Utc(std::time_t time);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_SPOOL_RECORDS_H_
