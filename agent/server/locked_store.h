// The store as the agent's threads share it: every call under one mutex.
// diagnosis_store.h promises nothing about concurrent use, and the agent's
// HTTP threads and pass worker all write; SQLite serialises writes anyway.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "store/diagnosis_store.h"

namespace ff::agent {

class LockedStore final : public DiagnosisStore {
  template <typename F>
  auto call(F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    return f();
  }

 public:
  explicit LockedStore(std::unique_ptr<DiagnosisStore> inner) : inner_(std::move(inner)) {}

  int schema_version() override {
    return call([&] { return inner_->schema_version(); });
  }
  void upsert_job(const JobRecord& job) override {
    call([&] { inner_->upsert_job(job); });
  }
  std::optional<JobRecord> job(const std::string& job_id, int attempt) override {
    return call([&] { return inner_->job(job_id, attempt); });
  }
  bool add_bundle(const BundleRecord& bundle) override {
    return call([&] { return inner_->add_bundle(bundle); });
  }
  std::vector<BundleRecord> bundles(const std::string& job_id, int attempt) override {
    return call([&] { return inner_->bundles(job_id, attempt); });
  }
  PassRecord add_pass(const std::string& job_id, int attempt, const std::string& trigger,
                      const nlohmann::json& diagnosis, std::int64_t created_at) override {
    return call([&] { return inner_->add_pass(job_id, attempt, trigger, diagnosis, created_at); });
  }
  void set_comment_status(std::int64_t pass_id, const std::string& status) override {
    call([&] { inner_->set_comment_status(pass_id, status); });
  }
  std::optional<PassRecord> latest_pass(const std::string& job_id, int attempt) override {
    return call([&] { return inner_->latest_pass(job_id, attempt); });
  }
  std::vector<PassRecord> passes(const std::string& job_id) override {
    return call([&] { return inner_->passes(job_id); });
  }
  std::vector<PassRecord> list(const ListFilter& filter) override {
    return call([&] { return inner_->list(filter); });
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<DiagnosisStore> inner_;
};

}  // namespace ff::agent
