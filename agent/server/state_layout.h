// Where the agent keeps things under state_dir (docs/slurm-path.md section 5):
//   jobs/<job_id>/<attempt>/{bundles/<bundle_id>/, incident/, passes/<n>.json, central/,
//                           scheduler/}
//   tmp/   uploads being written; emptied at start
#pragma once

#include <filesystem>
#include <string>

namespace ff::agent {

// One job attempt: the unit of bundles, incidents, passes and locking.
struct JobKey {
  std::string job_id;
  int attempt = 0;
  auto operator<=>(const JobKey&) const = default;
  std::string str() const { return job_id + "/" + std::to_string(attempt); }
};

class StateLayout {
 public:
  explicit StateLayout(std::filesystem::path state_dir) : root_(std::move(state_dir)) {}
  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path tmp() const { return root_ / "tmp"; }
  std::filesystem::path job(const JobKey& k) const {
    return root_ / "jobs" / k.job_id / std::to_string(k.attempt);
  }
  std::filesystem::path bundles(const JobKey& k) const { return job(k) / "bundles"; }
  std::filesystem::path incident(const JobKey& k) const { return job(k) / "incident"; }
  std::filesystem::path passes(const JobKey& k) const { return job(k) / "passes"; }
  // What the central sources (Loki, Prometheus) returned, gathered once.
  std::filesystem::path central(const JobKey& k) const { return job(k) / "central"; }
  // The scheduler's account of the attempt, asked again by each final pass.
  std::filesystem::path scheduler(const JobKey& k) const { return job(k) / "scheduler"; }
  // The bundle's directory relative to state_dir, as the store records it.
  static std::string bundle_rel(const JobKey& k, const std::string& bundle_id) {
    return "jobs/" + k.job_id + "/" + std::to_string(k.attempt) + "/bundles/" + bundle_id;
  }

 private:
  std::filesystem::path root_;
};

}  // namespace ff::agent
