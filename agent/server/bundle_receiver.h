// POST /api/v1/bundles without the HTTP: checks that the sender's
// credential (decoded before the body was read) names this bundle and the
// digest of its bytes (common/content_digest.h), the meta part, every file
// name and the limits, writes the bundle durably to
// jobs/<job>/<attempt>/bundles/<bundle_id>/ and records it in the store
// before anything is acknowledged. A bundle_id already stored is
// acknowledged (200) without writing anything. An upload that would leave
// less free space than the floor on the state directory's filesystem is
// refused whole with 507 (free_space.h). While another process keeps
// the database locked the reply is 503; the files stay and the collector's
// next try only adds the row.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/server/bundle_limits.h"
#include "agent/server/free_space.h"
#include "agent/server/job_tracker.h"
#include "agent/server/request_auth.h"
#include "agent/server/state_layout.h"
#include "agent/store/diagnosis_store.h"

namespace ff::agent {

struct UploadMeta;  // upload_validation.h

class AgentMetrics;

struct Reply {
  int status = 200;
  nlohmann::json body;  // {"error": "..."} when status >= 400
};

class BundleReceiver {
 public:
  BundleReceiver(StateLayout layout, DiagnosisStore& store, JobTracker& tracker,
                 BundleLimits limits);

  // `writer`: RequestAuth::authenticate_writer of the request's credential.
  Reply receive(const AuthDecision& writer, const std::string& meta,
                const std::vector<UploadedFile>& files);

  // Which attempt a bundle is filed under (slurm_job.h resolve_attempt),
  // from its meta and its job.json start_time; none: the meta's.
  using AttemptResolver = std::function<int(const UploadMeta&, const std::string& start_time)>;
  void set_attempt_resolver(AttemptResolver resolver) { resolve_attempt_ = std::move(resolver); }

  // Counts stored and duplicate bundles; null: nothing is counted.
  void set_metrics(AgentMetrics* metrics) { metrics_ = metrics; }
  void set_free_space_floor(FreeSpaceFloor floor) { floor_ = floor; }

 private:
  StateLayout layout_;
  DiagnosisStore& store_;
  JobTracker& tracker_;
  BundleLimits limits_;
  FreeSpaceFloor floor_;
  std::atomic<unsigned long> tmp_counter_{0};
  AgentMetrics* metrics_ = nullptr;
  AttemptResolver resolve_attempt_;
};

}  // namespace ff::agent
