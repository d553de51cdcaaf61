// Bounds the state directory over time: at start and then every
// kSweepInterval, job attempts last heard of (newest bundle, pass or job
// row) more than retention_days ago are deleted, oldest first, files
// (jobs/<id>/<attempt>/) and rows (jobs, bundles, diagnoses with their
// child rows); then, when max_state_bytes is set, the least recently heard
// of (idle for kMinIdle at least) until jobs/ holds no more than that. A
// job attempt whose final or deadline pass has not run yet (none stored, or
// the tracker still has it to do) is never deleted. drain_actions stay: a
// drain is on record.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "agent/server/job_locks.h"
#include "agent/server/job_tracker.h"
#include "agent/server/state_layout.h"
#include "agent/store/diagnosis_store.h"

namespace ff::agent {

class AgentMetrics;

struct RetentionSettings {
  int retention_days = 90;
  std::uint64_t max_state_bytes = 0;  // 0: no bound
};

struct SweepResult {
  std::size_t expired = 0;        // older than retention_days
  std::size_t over_bytes = 0;     // deleted for max_state_bytes
  std::uint64_t state_bytes = 0;  // jobs/ after the sweep (when measured)
};

class RetentionSweep {
 public:
  static constexpr std::chrono::hours kSweepInterval{1};
  // max_state_bytes never deletes a job attempt heard of more recently: a
  // late bundle of it may be on its way in.
  static constexpr std::chrono::seconds kMinIdle{3600};

  RetentionSweep(RetentionSettings settings, StateLayout layout, DiagnosisStore& store,
                 JobTracker& tracker, JobLocks& locks);
  ~RetentionSweep();
  RetentionSweep(const RetentionSweep&) = delete;
  RetentionSweep& operator=(const RetentionSweep&) = delete;

  void set_metrics(AgentMetrics* metrics) { metrics_ = metrics; }
  // Sweeps now in a thread of its own, then every kSweepInterval.
  void start();
  void stop();
  // One sweep; `now` in unix seconds.
  SweepResult sweep(std::int64_t now);

 private:
  bool remove(const JobActivity& job);

  RetentionSettings settings_;
  StateLayout layout_;
  DiagnosisStore& store_;
  JobTracker& tracker_;
  JobLocks& locks_;
  AgentMetrics* metrics_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ff::agent
