// One mutex per job attempt: merges and passes of a job never interleave, so
// each pass sees one consistent incident; different jobs run in parallel.
//
// A mutex nobody holds or waits for is forgotten (the next caller gets a new
// one, which is the same to it): the map holds about as many entries as
// there are job attempts being worked on, not one per job ever seen.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "agent/server/state_layout.h"

namespace ff::agent {

class JobLocks {
 public:
  std::shared_ptr<std::mutex> of(const JobKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Swept when the map doubled since the last sweep: amortised O(1).
    if (locks_.size() >= 2 * after_sweep_ + 64) {
      for (auto it = locks_.begin(); it != locks_.end();)
        it = it->second.use_count() == 1 ? locks_.erase(it) : std::next(it);
      after_sweep_ = locks_.size();
    }
    auto& m = locks_[key];
    if (!m) m = std::make_shared<std::mutex>();
    return m;
  }

  // Entries held now (the agent's /metrics).
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return locks_.size();
  }

 private:
  std::mutex mutex_;
  std::map<JobKey, std::shared_ptr<std::mutex>> locks_;
  std::size_t after_sweep_ = 0;
};

}  // namespace ff::agent
