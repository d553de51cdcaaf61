// Where things live in the node spool (docs/slurm-path.md §1). The plugin,
// the Epilog and the collector agree on these names.
#pragma once

#include <filesystem>
#include <string>

namespace ff::collect {

struct SpoolLayout {
  std::filesystem::path root;

  std::filesystem::path jobs() const { return root / "jobs"; }
  std::filesystem::path job(const std::string& job_id) const { return jobs() / job_id; }
  std::filesystem::path outbox() const { return root / "outbox"; }
  std::filesystem::path pending() const { return root / "pending"; }
  std::filesystem::path pending_record(const std::string& job_id) const {
    return pending() / (job_id + ".json");
  }
  std::filesystem::path log() const { return root / "log"; }
  // Bundles the agent refused for good (400, 413), with its reason.
  std::filesystem::path rejected() const { return root / "rejected"; }
};

}  // namespace ff::collect
