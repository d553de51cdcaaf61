#include "agent/metrics/agent_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include <cctype>

namespace ff::agent {

namespace {

// The fast pass must answer within the client's deadline (10 s by default;
// fastpass_wait_s, 8 s, of it waiting for the other nodes): fine steps up to
// there, a few beyond to see how late the late ones are.
const prometheus::Histogram::BucketBoundaries kFastpassBuckets = {
    0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 30};
// The engine takes milliseconds on a small incident and seconds on a large one.
const prometheus::Histogram::BucketBoundaries kEngineBuckets = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
// A final pass may also ask Loki and Prometheus (each with its own timeout).
const prometheus::Histogram::BucketBoundaries kPassBuckets = {
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

// A label value the code did not choose (a verdict or a domain from the
// rules) stays one short word, so no value can make series without bound.
std::string bounded(const std::string& v) {
  if (v.empty()) return "none";
  if (v.size() > 48) return "other";
  for (unsigned char c : v)
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '-') return "other";
  return v;
}

std::string refusal_reason(int status) {
  switch (status) {
    case 401:
    case 403:
      return "auth";
    case 413:
      return "too_large";
    case 503:
      return "busy";
    case 507:
      return "disk_full";
    default:
      return status >= 500 ? "error" : "invalid";
  }
}

// Counting must never fail the request it counts.
template <typename F>
void counting(const char* what, F&& f) noexcept {
  try {
    f();
  } catch (const std::exception& e) {
    spdlog::warn("metrics: {}: {}", what, e.what());
  } catch (...) {
    spdlog::warn("metrics: {}: unknown exception", what);
  }
}

}  // namespace

AgentMetrics::AgentMetrics(const std::string& version, const std::string& engine_version)
    : registry_(std::make_shared<prometheus::Registry>()) {
  using namespace prometheus;
  diagnoses_ = &BuildCounter()
                    .Name("firstfault_diagnoses_total")
                    .Help(
                        "Engine passes stored, by trigger (fastpass, final, deadline), verdict "
                        "and domain")
                    .Register(*registry_);
  bundles_received_ = &BuildCounter()
                           .Name("firstfault_bundles_received_total")
                           .Help("Bundles stored (HTTP 201), by pass (step, epilog)")
                           .Register(*registry_);
  bundles_rejected_ = &BuildCounter()
                           .Name("firstfault_bundles_rejected_total")
                           .Help(
                               "Bundle uploads refused, by reason (auth, invalid, too_large, busy, "
                               "disk_full, error)")
                           .Register(*registry_);
  bundles_duplicate_ = &BuildCounter()
                            .Name("firstfault_bundles_duplicate_total")
                            .Help(
                                "Bundle uploads of a bundle_id already stored (HTTP 200, "
                                "nothing written): collector retries")
                            .Register(*registry_)
                            .Add({});
  drain_actions_ = &BuildCounter()
                        .Name("firstfault_drain_actions_total")
                        .Help("Drain policy decisions, by decision")
                        .Register(*registry_);
  fastpass_duration_ =
      &BuildHistogram()
           .Name("firstfault_fastpass_duration_seconds")
           .Help("Fast-pass requests that ran a pass: from the request to the answer")
           .Register(*registry_)
           .Add({}, kFastpassBuckets);
  engine_duration_ = &BuildHistogram()
                          .Name("firstfault_engine_duration_seconds")
                          .Help("The engine's analysis of a merged incident, by trigger")
                          .Register(*registry_);
  pass_duration_ = &BuildHistogram()
                        .Name("firstfault_pass_duration_seconds")
                        .Help(
                            "A whole stored pass (Slurm lookup, merge, engine, store, "
                            "Comment), by trigger")
                        .Register(*registry_);
  suspects_ = &BuildGauge()
                   .Name("firstfault_suspects")
                   .Help(
                       "Flagged suspects in the suspects window, by component kind "
                       "(computed from the database, cached 30 s)")
                   .Register(*registry_);
  jobs_deleted_ = &BuildCounter()
                       .Name("firstfault_job_attempts_deleted_total")
                       .Help(
                           "Job attempts the retention sweep deleted (files and rows), by "
                           "reason (retention, max_state_bytes)")
                       .Register(*registry_);
  entries_ = &BuildGauge()
                  .Name("firstfault_agent_tracked_entries")
                  .Help(
                      "Entries of the agent's per-job in-memory structures, by structure "
                      "(job_tracker, job_locks, scontrol_lookups)")
                  .Register(*registry_);
  free_bytes_ = &BuildGauge()
                     .Name("firstfault_state_free_bytes")
                     .Help(
                         "Bytes free on the state directory's filesystem (uploads are refused "
                         "below min_free_bytes/min_free_percent)")
                     .Register(*registry_)
                     .Add({});
  BuildGauge()
      .Name("firstfault_build_info")
      .Help("The agent's version and engine version; always 1")
      .Register(*registry_)
      .Add({{"version", version}, {"engine_version", engine_version}})
      .Set(1);
  BuildGauge()
      .Name("firstfault_agent_start_time_seconds")
      .Help("When the agent started, in unix seconds")
      .Register(*registry_)
      .Add({})
      .Set(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
               .count());
}

AgentMetrics::~AgentMetrics() = default;

void AgentMetrics::diagnosis_stored(const std::string& trigger, const std::string& verdict,
                                    const std::string& domain) {
  counting("diagnoses", [&] {
    diagnoses_
        ->Add({{"trigger", bounded(trigger)},
               {"verdict", bounded(verdict)},
               {"domain", bounded(domain)}})
        .Increment();
  });
}

void AgentMetrics::engine_ran(const std::string& trigger, Seconds took) {
  counting("engine duration", [&] {
    engine_duration_->Add({{"trigger", bounded(trigger)}}, kEngineBuckets).Observe(took.count());
  });
}

void AgentMetrics::pass_ran(const std::string& trigger, Seconds took) {
  counting("pass duration", [&] {
    pass_duration_->Add({{"trigger", bounded(trigger)}}, kPassBuckets).Observe(took.count());
  });
}

void AgentMetrics::fastpass_answered(Seconds took) {
  counting("fastpass duration", [&] { fastpass_duration_->Observe(took.count()); });
}

void AgentMetrics::bundle_received(const std::string& pass) {
  counting("bundles received", [&] {
    bundles_received_->Add({{"pass", bounded(pass)}}).Increment();
  });
}

void AgentMetrics::bundle_duplicate() {
  counting("bundles duplicate", [&] { bundles_duplicate_->Increment(); });
}

void AgentMetrics::bundle_refused(int http_status) {
  counting("bundles rejected", [&] {
    bundles_rejected_->Add({{"reason", refusal_reason(http_status)}}).Increment();
  });
}

void AgentMetrics::drain_action(const std::string& decision) {
  counting("drain actions", [&] {
    drain_actions_->Add({{"decision", bounded(decision)}}).Increment();
  });
}

void AgentMetrics::set_suspects_source(std::function<SuspectCounts()> source,
                                       std::chrono::seconds ttl) {
  std::lock_guard<std::mutex> lock(suspects_mutex_);
  suspects_source_ = std::move(source);
  suspects_ttl_ = ttl;
  suspects_until_ = {};
}

void AgentMetrics::refresh_suspects() {
  std::lock_guard<std::mutex> lock(suspects_mutex_);
  auto now = std::chrono::steady_clock::now();
  if (!suspects_source_ || now < suspects_until_) return;
  // Also after a failure: a database that cannot answer is not asked at every scrape.
  suspects_until_ = now + suspects_ttl_;
  counting("suspects", [&] {
    for (const auto& [kind, count] : suspects_source_())
      suspects_->Add({{"kind", bounded(kind)}}).Set(count);
  });
}

void AgentMetrics::job_attempts_deleted(const std::string& reason, std::size_t count) {
  counting("job attempts deleted", [&] {
    jobs_deleted_->Add({{"reason", bounded(reason)}}).Increment(static_cast<double>(count));
  });
}

void AgentMetrics::set_entries_source(std::function<EntryCounts()> source) {
  std::lock_guard<std::mutex> lock(entries_mutex_);
  entries_source_ = std::move(source);
}

void AgentMetrics::set_free_bytes_source(std::function<double()> source) {
  std::lock_guard<std::mutex> lock(entries_mutex_);
  free_bytes_source_ = std::move(source);
}

std::string AgentMetrics::scrape() {
  refresh_suspects();
  {
    std::lock_guard<std::mutex> lock(entries_mutex_);
    if (free_bytes_source_)
      counting("state free bytes", [&] { free_bytes_->Set(free_bytes_source_()); });
    if (entries_source_)
      counting("tracked entries", [&] {
        for (const auto& [structure, count] : entries_source_())
          entries_->Add({{"structure", bounded(structure)}}).Set(count);
      });
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace ff::agent
