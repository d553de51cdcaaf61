#include "server/job_tracker.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ff::agent {

JobTracker::JobTracker(PassRunner& runner, std::chrono::seconds final_pass_deadline)
    : runner_(runner), final_pass_deadline_(final_pass_deadline) {}

JobTracker::~JobTracker() {
  stop();
}

void JobTracker::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (worker_.joinable()) return;
  stopping_ = false;
  worker_ = std::thread([this] { work(); });
}

void JobTracker::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void JobTracker::bundle_stored(const JobKey& key, const std::string& node, const std::string& pass,
                               const std::vector<std::string>& fragment_nodes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Progress& p = jobs_[key];
    p.fragment_nodes.insert(fragment_nodes.begin(), fragment_nodes.end());
    p.fragment_nodes.insert(node);
    p.any_nodes.insert(node);
    p.errors = 0;
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

std::vector<std::string> JobTracker::job_nodes(const JobKey& key) {
  auto slurm = runner_.slurm_job(key);
  if (slurm && !slurm->nodes.empty()) return slurm->nodes;
  std::lock_guard<std::mutex> lock(mutex_);
  const Progress& p = jobs_[key];
  return {p.fragment_nodes.begin(), p.fragment_nodes.end()};
}

bool JobTracker::wait_for_all_nodes(const JobKey& key, Clock::time_point until) {
  std::vector<std::string> slurm_nodes;
  auto budget = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  if (auto slurm =
          runner_.slurm_job(key, static_cast<int>(std::max<long long>(200, budget.count() / 4))))
    slurm_nodes = slurm->nodes;
  std::unique_lock<std::mutex> lock(mutex_);
  auto complete = [&] {
    const Progress& p = jobs_[key];
    const std::set<std::string>& wanted =
        slurm_nodes.empty() ? p.fragment_nodes
                            : std::set<std::string>(slurm_nodes.begin(), slurm_nodes.end());
    if (wanted.empty()) return false;
    return std::all_of(wanted.begin(), wanted.end(),
                       [&](const std::string& n) { return p.any_nodes.count(n) > 0; });
  };
  return changed_.wait_until(lock, until, [&] { return stopping_ || complete(); }) && complete();
}

bool JobTracker::stopping() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_;
}

void JobTracker::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    // The earliest deadline still to run decides how long to sleep.
    auto next = Clock::time_point::max();
    for (const auto& [key, p] : jobs_)
      if (p.deadline_armed && !p.deadline_done && p.epilog_bundles_at_final == 0)
        next = std::min(next, p.deadline);
    for (const auto& key : retries_) next = std::min(next, jobs_[key].retry_at);
    if (queued_.empty()) {
      if (next == Clock::time_point::max())
        changed_.wait(lock);
      else
        changed_.wait_until(lock, next);
    }
    if (stopping_) break;

    std::set<JobKey> work = std::move(queued_);
    queued_.clear();
    auto now = Clock::now();
    for (auto it = retries_.begin(); it != retries_.end();) {
      if (jobs_[*it].retry_at <= now) {
        work.insert(*it);
        it = retries_.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<JobKey> expired;
    for (auto& [key, p] : jobs_)
      if (p.deadline_armed && !p.deadline_done && p.epilog_bundles_at_final == 0 &&
          p.deadline <= now) {
        p.deadline_done = true;
        expired.push_back(key);
      }
    lock.unlock();
    for (const auto& key : work) {
      if (stopping()) break;
      try {
        process(key);
      } catch (const std::exception& e) {
        retry_after_error(key, e.what());
      }
    }
    for (const auto& key : expired) {
      if (stopping()) break;
      {
        std::lock_guard<std::mutex> check(mutex_);
        if (jobs_[key].epilog_bundles_at_final != 0) continue;  // final ran meanwhile
      }
      try {
        spdlog::info("job {}: not every node sent its Epilog bundle in time: deadline pass",
                     key.str());
        PassOutcome out = runner_.run(key, "deadline");
        if (!out.ok) spdlog::warn("job {}: deadline pass: {}", key.str(), out.error);
      } catch (const std::exception& e) {
        spdlog::error("job {}: deadline pass: {}", key.str(), e.what());
      }
    }
    lock.lock();
  }
}

void JobTracker::retry_after_error(const JobKey& key, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  Progress& p = jobs_[key];
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
    const Progress& p = jobs_[key];
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
  jobs_[key].epilog_bundles_at_final = epilog_bundles;
  jobs_[key].errors = 0;
}

bool JobTracker::terminal_state_known(const JobKey& key) {
  auto slurm = runner_.slurm_job(key, 0, /*for_pass=*/true);
  auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  Progress& p = jobs_[key];
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
