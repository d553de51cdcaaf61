// pending/<job_id>.json: the Epilog's hand-off (docs/slurm-path.md §1),
// written before it starts the collector and removed once the collector has
// put the Epilog bundle in the outbox. One left behind (the node rebooted
// first) is collected by the next flush.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ff::collect {

struct PendingRecord {
  std::string job_id;
  std::string node;
  std::string nodelist;
  std::string exit_code;   // "exit:signal", "" when Slurm gave none
  std::string derived_ec;  // raw wait status text, "" when none
  std::string restart_count;
  std::string stdout_path;
  std::string stderr_path;
  std::string uid;  // SLURM_JOB_UID: the owner the job's output must have
};

std::optional<PendingRecord> read_pending_record(const std::filesystem::path& path);

}  // namespace ff::collect
