// One engine pass over a job attempt: merge the bundles into the incident,
// run the engine, store the diagnosis (passes/<n>.json and a `diagnoses`
// row), then apply the Comment rules of docs/slurm-path.md section 5.
// Passes of one job attempt are serialised by its lock in JobLocks.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/server/incident_merger.h"
#include "agent/server/job_locks.h"
#include "agent/server/scheduler_evidence.h"
#include "agent/server/state_layout.h"
#include "agent/slurm/slurm_client.h"
#include "agent/store/diagnosis_store.h"
#include "central/gather/central_gather.h"
#include "engine/pipeline/analyze.h"
#include "engine/rules/compiled_rules.h"

namespace ff::agent {

class AgentMetrics;

struct PassOutcome {
  bool ok = false;
  int http_status = 200;  // for the fast pass reply when !ok
  std::string error;
  PassRecord record;  // the stored pass (with comment_status)
  bool comment_written = false;
};

class PassRunner {
 public:
  PassRunner(StateLayout layout, DiagnosisStore& store, SlurmClient& slurm, JobLocks& locks,
             std::shared_ptr<const CompiledRules> rules);

  // Rebuilds the incident after a bundle arrived (no engine run).
  void rebuild(const JobKey& key);

  // Loki/Prometheus, asked once per job attempt before its first final or
  // deadline pass (not the fast pass: it must answer in seconds).
  void set_central_sources(ff::sources::CentralConfig config) { central_ = std::move(config); }
  // The scheduler's account of the attempt (slurmctld's log, node states,
  // accounting), asked by every final and deadline pass; nullopt: never.
  void set_scheduler_evidence(std::optional<SchedulerEvidenceConfig> config) {
    scheduler_ = std::move(config);
  }

  // Called with every stored final or deadline pass (not the fast pass),
  // under the job's lock, after the Comment: the drain policy. Its
  // exceptions are logged, never fail the pass.
  using AfterPass = std::function<void(const PassRecord&)>;
  void set_after_final_pass(AfterPass hook) { after_final_pass_ = std::move(hook); }
  // How the engine runs (threads); never changes what it concludes.
  void set_analyze_options(AnalyzeOptions options) { analyze_options_ = options; }
  // Counts stored passes and times them; null: nothing is counted.
  void set_metrics(AgentMetrics* metrics) { metrics_ = metrics; }

  using Clock = std::chrono::steady_clock;

  // trigger: "fastpass", "final" or "deadline". For the fast pass,
  // `batch_exit_status` is the batch script's raw wait status and `answer_by`
  // bounds the scontrol calls (the client stops waiting then).
  PassOutcome run(const JobKey& key, const std::string& trigger,
                  std::optional<int> batch_exit_status = std::nullopt,
                  std::optional<Clock::time_point> answer_by = std::nullopt);

  // scontrol's view of the job when it is about this attempt; cached for a
  // few seconds so a burst of bundles costs one scontrol call, and for a
  // minute after scontrol failed (a controller that is down answers slowly).
  // At most kMaxCachedLookups jobs are cached: past that, the expired
  // lookups are dropped, then those that expire soonest.
  std::optional<SlurmJob> slurm_job(const JobKey& key, int timeout_ms = 0, bool for_pass = false);
  static constexpr std::size_t kMaxCachedLookups = 1024;
  // slurmctld's record of the job's newest attempt, whichever it is (cached
  // as slurm_job's; `fresh`: asked again).
  std::optional<SlurmJob> newest_record(const std::string& job_id, bool fresh = false);
  // The attempt a bundle (resolve_attempt in slurm_job.h) or a fast pass is
  // of. Accounting is asked only for a job that was requeued.
  int attempt_of_bundle(const std::string& job_id, int claimed, const std::string& start_time);
  // A fast pass is about the attempt that runs now: slurmctld's newest
  // while the job is live, else `claimed`.
  int attempt_of_fastpass(const std::string& job_id, int claimed);
  std::size_t cached_lookups();

  // Writes the Comment of a stored pass whose Comment was not written (the
  // agent stopped between storing the pass and scontrol's answer): the same
  // rules as the pass, for its stored summary. Setting a Comment to the
  // same text twice changes nothing, so trying again is safe. Skipped (and
  // "" returned) when a newer pass of the job attempt exists or the status
  // is set by now. Returns the status stored with the pass.
  std::string finish_comment(const PassRecord& pass);

 private:
  std::string apply_comment_rules(const JobKey& key, const std::string& trigger,
                                  const std::optional<SlurmJob>& slurm, const std::string& verdict,
                                  const std::string& summary, int timeout_ms, bool& written,
                                  int newest_attempt = -1);

  // Asks the central sources for the job attempt when central/ is not there
  // yet. Loki or Prometheus may take their whole timeout: the job's lock is
  // held only to copy the incident's job.json and to put central/ in place,
  // never while they are asked, so the job's bundles, rebuilds and fast
  // pass go on meanwhile.
  void gather_central(const JobKey& key);
  // Lays central/ and scheduler/ over the rebuilt incident. The caller
  // holds the job's lock.
  void add_central(const JobKey& key);

  StateLayout layout_;
  ff::sources::CentralConfig central_;
  std::optional<SchedulerEvidenceConfig> scheduler_;
  AfterPass after_final_pass_;
  DiagnosisStore& store_;
  SlurmClient& slurm_;
  JobLocks& locks_;
  std::shared_ptr<const CompiledRules> rules_;
  AnalyzeOptions analyze_options_;
  AgentMetrics* metrics_ = nullptr;

  struct CachedLookup {
    Clock::time_point until;
    std::optional<SlurmJob> job;
  };
  std::mutex cache_mutex_;
  std::map<std::string, CachedLookup> cache_;
};

}  // namespace ff::agent
