#include "agent/server/retention_sweep.h"

#include <spdlog/spdlog.h>

#include <ctime>
#include <map>

#include "agent/metrics/agent_metrics.h"
#include "agent/server/bundle_rules.h"

namespace ff::agent {

namespace fs = std::filesystem;

namespace {

std::uint64_t bytes_under(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2)) total += it->file_size(ec2);
  }
  return total;
}

}  // namespace

RetentionSweep::RetentionSweep(RetentionSettings settings, StateLayout layout,
                               DiagnosisStore& store, JobTracker& tracker, JobLocks& locks)
    : settings_(settings),
      layout_(std::move(layout)),
      store_(store),
      tracker_(tracker),
      locks_(locks) {}

RetentionSweep::~RetentionSweep() {
  stop();
}

void RetentionSweep::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> held(mutex_);
    while (!stopping_) {
      held.unlock();
      try {
        sweep(static_cast<std::int64_t>(std::time(nullptr)));
      } catch (const std::exception& e) {
        spdlog::error("retention sweep: {}", e.what());
      }
      held.lock();
      wake_.wait_for(held, kSweepInterval, [this] { return stopping_; });
    }
  });
}

void RetentionSweep::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool RetentionSweep::remove(const JobActivity& job) {
  JobKey key{job.job_id, job.attempt};
  // Under the job's lock no pass or rebuild of it runs; the tracker is
  // asked again under it (a bundle may have come since the listing).
  auto mutex = locks_.of(key);
  std::lock_guard<std::mutex> lock(*mutex);
  if (tracker_.pending(key)) return false;
  // Files first: a crash between the two leaves rows the next sweep finds
  // again, never files no row points to.
  std::error_code ec;
  fs::remove_all(layout_.job(key), ec);
  if (ec) {
    spdlog::warn("job {}: not deleted: {}", key.str(), ec.message());
    return false;
  }
  std::error_code ignored;
  fs::remove(layout_.root() / "jobs" / key.job_id, ignored);  // only when no attempt is left
  store_.delete_job_attempt(key.job_id, key.attempt);
  return true;
}

SweepResult RetentionSweep::sweep(std::int64_t now) {
  SweepResult result;
  std::int64_t cutoff = now - static_cast<std::int64_t>(settings_.retention_days) * 86400;
  std::vector<JobActivity> jobs = store_.job_activity();  // least recently heard of first
  std::vector<JobActivity> kept;
  for (const auto& job : jobs) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return result;
    }
    // A job id the upload checks would refuse has no directory of ours.
    bool deletable = job.closing_pass && valid_job_id(job.job_id) && job.attempt >= 0 &&
                     !tracker_.pending({job.job_id, job.attempt});
    if (job.last_at < cutoff && deletable && remove(job)) {
      ++result.expired;
      continue;
    }
    if (deletable) kept.push_back(job);
  }
  if (result.expired)
    spdlog::info("retention: {} job attempt(s) older than {} days deleted", result.expired,
                 settings_.retention_days);
  if (metrics_ && result.expired) metrics_->job_attempts_deleted("retention", result.expired);
  if (settings_.max_state_bytes == 0) return result;

  std::map<JobKey, std::uint64_t> sizes;
  std::error_code ec;
  for (fs::directory_iterator job(layout_.root() / "jobs", ec), end; !ec && job != end;
       job.increment(ec)) {
    std::error_code ec2;
    for (fs::directory_iterator att(job->path(), ec2); !ec2 && att != end; att.increment(ec2)) {
      JobKey key{job->path().filename().string(), -1};
      try {
        key.attempt = std::stoi(att->path().filename().string());
      } catch (const std::exception&) {
      }
      std::uint64_t bytes = bytes_under(att->path());
      result.state_bytes += bytes;
      if (key.attempt >= 0) sizes[key] += bytes;
    }
  }
  for (const auto& job : kept) {
    if (result.state_bytes <= settings_.max_state_bytes) break;
    // Least recently heard of first: the rest are younger still.
    if (job.last_at > now - kMinIdle.count()) break;
    JobKey key{job.job_id, job.attempt};
    std::uint64_t bytes = sizes.count(key) ? sizes[key] : 0;
    if (remove(job)) {
      ++result.over_bytes;
      result.state_bytes -= std::min(bytes, result.state_bytes);
    }
  }
  if (result.over_bytes) {
    spdlog::warn("retention: {} job attempt(s) deleted to keep jobs/ under max_state_bytes ({})",
                 result.over_bytes, settings_.max_state_bytes);
    if (metrics_) metrics_->job_attempts_deleted("max_state_bytes", result.over_bytes);
  }
  if (result.state_bytes > settings_.max_state_bytes)
    spdlog::warn(
        "retention: jobs/ holds {} bytes, more than max_state_bytes ({}), in job "
        "attempts whose passes have not all run",
        result.state_bytes, settings_.max_state_bytes);
  return result;
}

}  // namespace ff::agent
