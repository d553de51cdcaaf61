// The agent's only way to Slurm: scontrol, sacctmgr and firstfault-slurm-job
// run by exec with an argument vector (common/run_process), each with a time
// bound. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "agent/slurm/slurm_job.h"
#include "common/run_process.h"

namespace ff::agent {

struct SlurmPaths {
  std::string scontrol = "/usr/bin/scontrol";
  // Prints one job's record as JSON (slurm_job.h), read with libslurm.
  std::string slurm_job_helper = "/usr/libexec/firstfault/firstfault-slurm-job";
  // "auto": /usr/bin/sacctmgr when AccountingStorageType is not none;
  // a path: that program, under the same condition; "" (or off/none): never.
  std::string sacctmgr = "auto";
  int timeout_s = 10;
};

struct JobLookup {
  enum class Status { found, not_found, error } status = Status::error;
  std::optional<SlurmJob> job;
  std::string error;  // why, when status is error
};

// What `scontrol show node -o <node>` says of a node's state.
struct NodeStateLookup {
  bool known = false;
  std::string state;  // State=..., e.g. "IDLE+DRAIN", "DOWN*", "MIXED"
  std::string error;  // why, when not known
  // DRAIN (draining or drained), DRAINED or DOWN: takes no new jobs already.
  bool unavailable() const;
};

// What `scontrol show config` says that the agent needs; read once.
struct ClusterFacts {
  bool known = false;       // false: scontrol show config failed
  int slurm_user_uid = -1;  // SlurmUser=slurm(64030) → 64030
  bool accounting = false;  // AccountingStorageType != accounting_storage/none
  std::string error;
};

class SlurmClient {
 public:
  explicit SlurmClient(SlurmPaths paths);

  // The job's record from firstfault-slurm-job. `timeout_ms` > 0 bounds this
  // call below paths().timeout_s (a fast pass must answer within the
  // client's deadline).
  JobLookup show_job(const std::string& job_id, int timeout_ms = 0) const;
  // Cached after the first successful read; a failure is remembered for a
  // minute (a controller that is down answers only after the time bound).
  ClusterFacts cluster_facts();

  // `scontrol update JobId=<id> Comment=<text>` for a job that still runs.
  // Returns the status recorded with the pass: "written", "failed: ...".
  std::string set_comment(const std::string& job_id, const std::string& summary,
                          int timeout_ms = 0) const;
  // After the job ended: sacctmgr when accounting is configured. Returns
  // "written: sacctmgr", "skipped: no accounting", "failed: ...".
  std::string set_comment_after_end(const std::string& job_id, const std::string& summary);

  // `scontrol show node -o <node>`.
  NodeStateLookup node_state(const std::string& node) const;
  // `scontrol update NodeName=<node> State=DRAIN Reason=<reason>`, the
  // reason made safe by slurm_safe_text (kMaxDrainReasonBytes). Returns
  // "drained" or "failed: ...".
  std::string drain_node(const std::string& node, const std::string& reason) const;

  const SlurmPaths& paths() const { return paths_; }

 private:
  ProcessOptions bounded(int timeout_ms) const;

  SlurmPaths paths_;
  std::mutex facts_mutex_;
  std::optional<ClusterFacts> facts_;
  std::chrono::steady_clock::time_point facts_failed_at_{};  // a failure is retried after a minute
  std::optional<ClusterFacts> failed_facts_;
};

}  // namespace ff::agent
