// Which bundles each job attempt has received, and what follows from that:
// the incident is rebuilt after arrivals, the `final` pass runs once every
// node of the job sent its Epilog bundle, the `deadline` pass when
// final_pass_deadline_s passed after the first Epilog bundle without that.
// One background thread does this work; stop() ends it cleanly.
//
// The job's nodes are scontrol's NodeList when Slurm still knows the job,
// else the union of the `nodes` the bundles' job.json fragments name.
//
// When every Epilog bundle is in but scontrol still shows the job live
// (COMPLETING: slurmctld has not yet heard every node's Epilog end), the final
// pass waits for the terminal state, re-asking every second for at most
// kTerminalStateWait: FAILED, TIMEOUT or NODE_FAIL decides the scheduler
// domain, and a pass without it would guess.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/pass_runner.h"
#include "server/state_layout.h"

namespace ff::agent {

class JobTracker {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kTerminalStateWait{30};
  static constexpr std::chrono::seconds kTerminalStateRetry{1};
  // A pass that failed on an error (the database locked by another process
  // past every retry, a full disk) is tried again, the wait doubling from
  // 2 s to 64 s, kErrorRetries times in all; a new bundle starts over.
  static constexpr int kErrorRetries = 10;

  JobTracker(PassRunner& runner, std::chrono::seconds final_pass_deadline);
  ~JobTracker();
  JobTracker(const JobTracker&) = delete;
  JobTracker& operator=(const JobTracker&) = delete;

  void start();
  void stop();

  // A new bundle was stored (not a duplicate).
  void bundle_stored(const JobKey& key, const std::string& node, const std::string& pass,
                     const std::vector<std::string>& fragment_nodes);

  // Fast pass: waits until every node of the job sent a step or Epilog
  // bundle, or `until`. True when all arrived.
  bool wait_for_all_nodes(const JobKey& key, Clock::time_point until);

 private:
  struct Progress {
    std::set<std::string> fragment_nodes;
    std::set<std::string> any_nodes;  // sent a step or Epilog bundle
    std::set<std::string> epilog_nodes;
    std::size_t epilog_bundles = 0;
    std::size_t epilog_bundles_at_final = 0;  // 0: no final pass yet
    bool deadline_armed = false;
    bool deadline_done = false;
    Clock::time_point deadline{};
    // Waiting for the terminal state before the final pass.
    bool final_waiting = false;
    Clock::time_point final_wait_limit{};
    Clock::time_point retry_at{};
    int errors = 0;  // failed tries in a row (kErrorRetries)
  };

  void work();
  bool stopping();
  void process(const JobKey& key);
  // Queues another try of a job whose processing threw `what`.
  void retry_after_error(const JobKey& key, const std::string& what);
  // False (and a retry queued) while scontrol shows the job live and the
  // wait is not over; the tracker lock must not be held.
  bool terminal_state_known(const JobKey& key);
  // Nodes of the job; the tracker lock must not be held (may run scontrol).
  std::vector<std::string> job_nodes(const JobKey& key);

  PassRunner& runner_;
  std::chrono::seconds final_pass_deadline_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<JobKey, Progress> jobs_;
  std::set<JobKey> queued_;
  std::set<JobKey> retries_;  // final passes waiting for the terminal state
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace ff::agent
