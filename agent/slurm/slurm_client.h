// The agent's only way to Slurm: scontrol and firstfault-slurm-job
// run by exec with an argument vector (common/run_process), each with a time
// bound. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/slurm/slurm_job.h"
#include "common/run_process.h"

namespace ff::agent {

struct SlurmPaths {
  std::string scontrol = "/usr/bin/scontrol";
  // Prints one job's record as JSON (slurm_job.h), read with libslurm.
  std::string slurm_job_helper = "/usr/libexec/firstfault/firstfault-slurm-job";
  // Whether an ended job's Comment goes to accounting: "auto" (or any
  // path, as older configurations name sacctmgr) when AccountingStorageType
  // is not none; "" (or off/none): never. The record is written through
  // slurm_job_helper (set_comment_after_end), never sacctmgr itself.
  std::string sacctmgr = "auto";
  // Which of the job's fields holds the diagnosis: "Comment" (its user
  // reads it, and may overwrite it) or "AdminComment" (only root, SlurmUser
  // and Slurm administrators may write it: what a user sets can never pass
  // for firstfault's word). Both while the job runs and in accounting.
  std::string comment_field = "Comment";
  int timeout_s = 10;
};

struct AccountingLookup {
  enum class Status { found, not_found, error, off } status = Status::error;
  std::optional<AccountingRecord> record;
  std::string error;  // why, when status is error or off
};

struct JobLookup {
  enum class Status { found, not_found, error } status = Status::error;
  std::optional<SlurmJob> job;
  std::string error;  // why, when status is error
};

// What `scontrol show node -o <node>` says of a node's state.
struct NodeStateLookup {
  bool known = false;
  std::string node;
  std::string state;             // State=..., e.g. "IDLE+DRAIN", "DOWN*", "MIXED"
  std::string reason;            // Reason=..., without its "[user@time]" suffix; "" when none
  std::int64_t reason_time = 0;  // when the reason was set (epoch seconds); 0 when none
  std::string error;             // why, when not known
  // DRAIN (draining or drained), DRAINED or DOWN: takes no new jobs already.
  bool unavailable() const;
};

// What `scontrol show config` says that the agent needs; read once.
struct ClusterFacts {
  bool known = false;              // false: scontrol show config failed
  int slurm_user_uid = -1;         // SlurmUser=slurm(64030) → 64030
  bool accounting = false;         // AccountingStorageType != accounting_storage/none
  std::string slurmctld_log_file;  // SlurmctldLogFile; "" when slurmctld logs to syslog
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
  // After the job ended, when accounting is configured (and `sacctmgr` is
  // not off): the Comment of the attempt's own accounting record, through
  // `firstfault-slurm-job --set-comment` (slurmdbd's job modify, as sacctmgr
  // uses it, but for one record: sacctmgr changes the newest record of an
  // id and every task of an array whose id is the array's, and lower-cases
  // the text). `newest_attempt` < 0: not known. Returns "written: slurmdbd",
  // "skipped: no accounting", "skipped: sacctmgr off", "failed: ...".
  std::string set_comment_after_end(const std::string& job_id, const std::string& summary,
                                    int attempt = 0, int newest_attempt = -1);

  // Every attempt's accounting record (firstfault-slurm-job --accounting);
  // status off when accounting is not configured or sacctmgr is off.
  AccountingLookup accounting(const std::string& job_id, int timeout_ms = 0);

  // `scontrol show node -o <node>`.
  NodeStateLookup node_state(const std::string& node) const;
  // `scontrol show node -o <n1,n2,...>` in one call, times as epoch seconds:
  // one entry per node asked for, in that order (known = false for a node
  // scontrol did not show).
  std::vector<NodeStateLookup> node_states(const std::vector<std::string>& nodes) const;
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
