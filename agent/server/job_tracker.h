// Which bundles each job attempt has received, and what follows from that:
// the incident is rebuilt after arrivals, the `final` pass runs once every
// node of the job sent its Epilog bundle, the `deadline` pass when
// final_pass_deadline_s passed after the first Epilog bundle without that.
// A small pool of threads (final_pass_workers) does this work, never two
// at once on one job attempt, so a slow pass of one job (a large incident,
// a slow scontrol) does not hold up the others and the result of every pass
// is the same whatever the number of threads; stop() ends them cleanly.
//
// Memory: a job attempt is forgotten kFinishedGrace after its final or
// deadline pass ran (a bundle that comes later starts a new entry: a step
// bundle rebuilds the incident, an Epilog bundle arms a new deadline). At
// most max_tracked_jobs attempts are held: when a new one would pass that,
// the finished ones are forgotten first, the longest finished first; when
// none is finished, the attempt least recently sent a bundle is forgotten
// and its deadline pass (over what has arrived) runs as soon as a worker is
// free: only its key waits for that.
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
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/server/pass_runner.h"
#include "agent/server/state_layout.h"

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
  static constexpr std::chrono::minutes kFinishedGrace{10};

  JobTracker(PassRunner& runner, std::chrono::seconds final_pass_deadline, int workers = 2,
             std::size_t max_tracked_jobs = 20000);
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

  // Job attempts held in memory now (the agent's /metrics).
  std::size_t tracked_jobs();
  // The final or deadline pass of `key` may still run: the retention sweep
  // leaves it alone.
  bool pending(const JobKey& key);

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
    Clock::time_point last_bundle{};
    Clock::time_point finished_at{};  // the final or deadline pass ran; {}: not yet
    bool finished() const { return finished_at != Clock::time_point{}; }
  };

  void work();
  // With the lock held: moves due retries and expired deadlines to the
  // queues, forgets finished attempts past the grace. Returns when to look
  // again (max: when something changes).
  Clock::time_point promote_due(Clock::time_point now);
  // With the lock held: makes room for one more attempt (max_tracked_jobs).
  void make_room();
  bool busy(const JobKey& key) const;
  // `forced`: the attempt was forgotten to make room (make_room).
  void deadline_pass(const JobKey& key, bool forced);
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
  int worker_count_;
  std::size_t max_tracked_jobs_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<JobKey, Progress> jobs_;
  std::set<JobKey> queued_;
  std::set<JobKey> retries_;       // final passes waiting for the terminal state
  std::set<JobKey> deadline_due_;  // deadline passes to run now
  // Deadline passes of attempts forgotten to make room: keys only.
  std::set<JobKey> forced_deadline_;
  std::set<JobKey> running_;  // a worker is at it
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ff::agent
