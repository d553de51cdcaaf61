#include "agent/server/job_tracker.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ff::agent {

JobTracker::JobTracker(PassRunner& runner, std::chrono::seconds final_pass_deadline, int workers,
                       std::size_t max_tracked_jobs)
    : runner_(runner),
      final_pass_deadline_(final_pass_deadline),
      worker_count_(std::max(1, workers)),
      max_tracked_jobs_(std::max<std::size_t>(1, max_tracked_jobs)) {}

JobTracker::~JobTracker() {
  stop();
}

void JobTracker::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!workers_.empty()) return;
  stopping_ = false;
  for (int i = 0; i < worker_count_; ++i) workers_.emplace_back([this] { work(); });
}

void JobTracker::stop() {
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    workers = std::move(workers_);
    workers_.clear();
  }
  changed_.notify_all();
  for (auto& w : workers)
    if (w.joinable()) w.join();
}

bool JobTracker::busy(const JobKey& key) const {
  return queued_.count(key) || retries_.count(key) || deadline_due_.count(key) ||
         forced_deadline_.count(key) || running_.count(key);
}

void JobTracker::make_room() {
  if (jobs_.size() < max_tracked_jobs_) return;
  // Finished attempts first, the longest finished first: what they still
  // hold only matters for a bundle that comes after their pass.
  std::vector<std::pair<Clock::time_point, JobKey>> finished;
  for (const auto& [key, p] : jobs_)
    if (p.finished() && !busy(key)) finished.emplace_back(p.finished_at, key);
  std::sort(finished.begin(), finished.end());
  std::size_t over = jobs_.size() - max_tracked_jobs_ + 1;
  for (std::size_t i = 0; i < finished.size() && i < over; ++i) jobs_.erase(finished[i].second);
  if (jobs_.size() < max_tracked_jobs_) return;
  // None finished: the attempt that sent nothing for longest is forgotten
  // and gets its deadline pass (over what has arrived) as soon as a worker
  // is free. Only its key waits for that, not what the tracker knew of it.
  auto oldest = jobs_.end();
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
    if (!running_.count(it->first) &&
        (oldest == jobs_.end() || it->second.last_bundle < oldest->second.last_bundle))
      oldest = it;
  if (oldest == jobs_.end()) return;
  spdlog::warn("job {}: {} job attempts tracked (max_tracked_jobs): deadline pass now",
               oldest->first.str(), jobs_.size());
  if (oldest->second.epilog_bundles_at_final == 0) forced_deadline_.insert(oldest->first);
  queued_.erase(oldest->first);
  retries_.erase(oldest->first);
  jobs_.erase(oldest);
}

void JobTracker::bundle_stored(const JobKey& key, const std::string& node, const std::string& pass,
                               const std::vector<std::string>& fragment_nodes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!jobs_.count(key)) make_room();
    Progress& p = jobs_[key];
    p.fragment_nodes.insert(fragment_nodes.begin(), fragment_nodes.end());
    p.fragment_nodes.insert(node);
    p.any_nodes.insert(node);
    p.errors = 0;
    p.last_bundle = Clock::now();
    if (pass == "epilog") {
      p.epilog_nodes.insert(node);
      ++p.epilog_bundles;
      if (!p.deadline_armed) {
        p.deadline_armed = true;
        p.deadline = Clock::now() + final_pass_deadline_;
      }
    }
    queued_.insert(key);
  }
  changed_.notify_all();
}

std::size_t JobTracker::tracked_jobs() {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size();
}

bool JobTracker::pending(const JobKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(key);
  return busy(key) || (it != jobs_.end() && !it->second.finished());
}

std::vector<std::string> JobTracker::job_nodes(const JobKey& key) {
  auto slurm = runner_.slurm_job(key);
  if (slurm && !slurm->nodes.empty()) return slurm->nodes;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return {};
  return {it->second.fragment_nodes.begin(), it->second.fragment_nodes.end()};
}

bool JobTracker::wait_for_all_nodes(const JobKey& key, Clock::time_point until) {
  std::vector<std::string> slurm_nodes;
  auto budget = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  if (auto slurm =
          runner_.slurm_job(key, static_cast<int>(std::max<long long>(200, budget.count() / 4))))
    slurm_nodes = slurm->nodes;
  std::unique_lock<std::mutex> lock(mutex_);
  auto complete = [&] {
    auto it = jobs_.find(key);
    if (it == jobs_.end()) return false;
    const Progress& p = it->second;
    const std::set<std::string>& wanted =
        slurm_nodes.empty() ? p.fragment_nodes
                            : std::set<std::string>(slurm_nodes.begin(), slurm_nodes.end());
    if (wanted.empty()) return false;
    return std::all_of(wanted.begin(), wanted.end(),
                       [&](const std::string& n) { return p.any_nodes.count(n) > 0; });
  };
  return changed_.wait_until(lock, until, [&] { return stopping_ || complete(); }) && complete();
}

JobTracker::Clock::time_point JobTracker::promote_due(Clock::time_point now) {
  auto next = Clock::time_point::max();
  for (auto it = retries_.begin(); it != retries_.end();) {
    auto job = jobs_.find(*it);
    if (job == jobs_.end() || job->second.retry_at <= now) {
      if (job != jobs_.end()) queued_.insert(*it);
      it = retries_.erase(it);
    } else {
      next = std::min(next, job->second.retry_at);
      ++it;
    }
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const JobKey& key = it->first;
    Progress& p = it->second;
    if (p.deadline_armed && !p.deadline_done && p.epilog_bundles_at_final == 0) {
      if (p.deadline <= now) {
        p.deadline_done = true;
        deadline_due_.insert(key);
      } else {
        next = std::min(next, p.deadline);
      }
    }
    if (p.finished() && !busy(key)) {
      if (p.finished_at + kFinishedGrace <= now) {
        it = jobs_.erase(it);
        continue;
      }
      next = std::min(next, p.finished_at + kFinishedGrace);
    }
    ++it;
  }
  return next;
}

void JobTracker::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    auto next = promote_due(Clock::now());
    // Deadline passes first: they are due already. A job attempt another
    // worker is at waits in its queue until that worker is done.
    bool deadline = false, forced = false;
    std::optional<JobKey> key;
    for (const auto& k : forced_deadline_)
      if (!running_.count(k)) {
        key = k;
        deadline = forced = true;
        forced_deadline_.erase(k);
        break;
      }
    if (!key)
      for (const auto& k : deadline_due_)
        if (!running_.count(k)) {
          key = k;
          deadline = true;
          deadline_due_.erase(k);
          break;
        }
    if (!key)
      for (const auto& k : queued_)
        if (!running_.count(k)) {
          key = k;
          queued_.erase(k);
          break;
        }
    if (!key) {
      if (next == Clock::time_point::max())
        changed_.wait(lock);
      else
        changed_.wait_until(lock, next);
      continue;
    }
    running_.insert(*key);
    lock.unlock();
    if (deadline) {
      deadline_pass(*key, forced);
    } else {
      try {
        process(*key);
      } catch (const std::exception& e) {
        retry_after_error(*key, e.what());
      }
    }
    lock.lock();
    running_.erase(*key);
    changed_.notify_all();
  }
}

void JobTracker::deadline_pass(const JobKey& key, bool forced) {
  if (!forced) {
    std::lock_guard<std::mutex> check(mutex_);
    auto it = jobs_.find(key);
    if (it == jobs_.end() || it->second.epilog_bundles_at_final != 0) return;  // final ran
  }
  try {
    spdlog::info("job {}: not every node sent its Epilog bundle in time: deadline pass", key.str());
    PassOutcome out = runner_.run(key, "deadline");
    if (!out.ok) spdlog::warn("job {}: deadline pass: {}", key.str(), out.error);
  } catch (const std::exception& e) {
    spdlog::error("job {}: deadline pass: {}", key.str(), e.what());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = jobs_.find(key); it != jobs_.end()) it->second.finished_at = Clock::now();
}

void JobTracker::retry_after_error(const JobKey& key, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  Progress& p = it->second;
  if (++p.errors > kErrorRetries) {
    spdlog::error("job {}: {}; gave up after {} tries (the next bundle tries again)", key.str(),
                  what, kErrorRetries);
    p.errors = 0;
    return;
  }
  auto wait = std::chrono::seconds(1 << std::min(p.errors, 6));
  spdlog::error("job {}: {}; trying again in {} s", key.str(), what, wait.count());
  p.retry_at = Clock::now() + wait;
  retries_.insert(key);
}

void JobTracker::process(const JobKey& key) {
  std::size_t epilog_bundles = 0;
  std::set<std::string> epilog_nodes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = jobs_.find(key);
    if (it == jobs_.end()) return;
    const Progress& p = it->second;
    epilog_bundles = p.epilog_bundles;
    epilog_nodes = p.epilog_nodes;
    // No Epilog bundle since the final pass (a late step bundle): the
    // incident is rebuilt, but no second pass over the same Epilog bundles.
    if (epilog_bundles != 0 && p.epilog_bundles_at_final == epilog_bundles) epilog_bundles = 0;
  }
  std::vector<std::string> nodes = epilog_bundles ? job_nodes(key) : std::vector<std::string>{};
  bool complete = !nodes.empty() && std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) {
    return epilog_nodes.count(n) > 0;
  });
  if (!complete) {
    spdlog::debug("job {}: {} of {} nodes sent their Epilog bundle", key.str(), epilog_nodes.size(),
                  nodes.size());
    runner_.rebuild(key);
    return;
  }
  if (!terminal_state_known(key)) return;  // asked again in a second
  PassOutcome out = runner_.run(key, "final");
  if (!out.ok) {
    spdlog::warn("job {}: final pass: {}", key.str(), out.error);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  it->second.epilog_bundles_at_final = epilog_bundles;
  it->second.errors = 0;
  it->second.finished_at = Clock::now();
}

bool JobTracker::terminal_state_known(const JobKey& key) {
  auto slurm = runner_.slurm_job(key, 0, /*for_pass=*/true);
  auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return true;
  Progress& p = it->second;
  if (!slurm || !slurm->running()) {
    p.final_waiting = false;
    return true;
  }
  if (!p.final_waiting) {
    p.final_waiting = true;
    p.final_wait_limit = now + kTerminalStateWait;
  }
  if (now >= p.final_wait_limit) {
    spdlog::info("job {}: still {} {} s after its last Epilog bundle: final pass without it",
                 key.str(), slurm->state, kTerminalStateWait.count());
    p.final_waiting = false;
    return true;
  }
  spdlog::debug("job {}: every Epilog bundle is in, the job is still {}: waiting", key.str(),
                slurm->state);
  p.retry_at = now + kTerminalStateRetry;
  retries_.insert(key);
  return false;
}

}  // namespace ff::agent
