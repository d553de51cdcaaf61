// POST /api/v1/bundles without the HTTP: checks the credential, the meta
// part and every file name, writes the bundle durably to
// jobs/<job>/<attempt>/bundles/<bundle_id>/ and records it in the store
// before anything is acknowledged. A bundle_id already stored is
// acknowledged (200) without writing anything.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/job_tracker.h"
#include "server/request_auth.h"
#include "server/state_layout.h"
#include "store/diagnosis_store.h"

namespace ff::agent {

struct UploadedFile {
  std::string name;  // the multipart filename: the path inside the bundle
  std::string content;
};

struct Reply {
  int status = 200;
  nlohmann::json body;  // {"error": "..."} when status >= 400
};

struct BundleLimits {
  std::size_t max_files = 4096;
  std::size_t max_total_bytes = 268435456;
};

class BundleReceiver {
 public:
  BundleReceiver(StateLayout layout, DiagnosisStore& store, RequestAuth& auth, JobTracker& tracker,
                 BundleLimits limits);

  Reply receive(const std::string& credential, const std::string& meta,
                const std::vector<UploadedFile>& files);

 private:
  StateLayout layout_;
  DiagnosisStore& store_;
  RequestAuth& auth_;
  JobTracker& tracker_;
  BundleLimits limits_;
  std::atomic<unsigned long> tmp_counter_{0};
};

}  // namespace ff::agent
