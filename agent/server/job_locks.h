// One mutex per job attempt: merges and passes of a job never interleave, so
// each pass sees one consistent incident; different jobs run in parallel.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "server/state_layout.h"

namespace ff::agent {

class JobLocks {
 public:
  std::shared_ptr<std::mutex> of(const JobKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& m = locks_[key];
    if (!m) m = std::make_shared<std::mutex>();
    return m;
  }

 private:
  std::mutex mutex_;
  std::map<JobKey, std::shared_ptr<std::mutex>> locks_;
};

}  // namespace ff::agent
