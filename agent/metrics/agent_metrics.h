// The agent's own metrics, served as GET /metrics in the Prometheus text
// format (prometheus-cpp's registry and serializer; the route is ours).
// One object, owned by run_agent; the parts that count get a pointer, which
// is null when a test builds them without metrics. Every method is
// thread-safe and never throws (a metric must not fail a request).
//
// Counters start at zero when the agent starts, as Prometheus expects
// (rate() and increase() handle the reset). Label values are bounded: the
// code passes fixed words (trigger, reason, pass) or the engine's verdict and
// domain, and anything else becomes "other".
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace ff::agent {

class AgentMetrics {
 public:
  AgentMetrics(const std::string& version, const std::string& engine_version);
  ~AgentMetrics();
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  using Seconds = std::chrono::duration<double>;

  // A pass stored in the database (any trigger: fastpass, final, deadline).
  void diagnosis_stored(const std::string& trigger, const std::string& verdict,
                        const std::string& domain);
  // The engine's analyze call alone, and the whole PassRunner::run (Slurm
  // lookup, merge, engine, store, Comment) of a stored pass.
  void engine_ran(const std::string& trigger, Seconds took);
  void pass_ran(const std::string& trigger, Seconds took);
  // A fast-pass request that ran a pass: from the handler's start to the answer.
  void fastpass_answered(Seconds took);

  // A bundle stored (201), by its pass ("step", "epilog").
  void bundle_received(const std::string& pass);
  // A bundle_id already stored, acknowledged (200) without writing.
  void bundle_duplicate();
  // POST /api/v1/bundles answered with `http_status` >= 400, httplib's own
  // refusals (413 before the handler runs) included.
  void bundle_refused(int http_status);

  // The drain policy's decisions (agent/drain): drained, would_drain,
  // declined, failed.
  void drain_action(const std::string& decision);

  // Flagged suspects by component kind, read from the database: called from
  // a scrape at most once per `ttl`, so scrapes stay cheap. When it throws,
  // the last values stay and the error is logged.
  using SuspectCounts = std::map<std::string, double>;
  void set_suspects_source(std::function<SuspectCounts()> source,
                           std::chrono::seconds ttl = std::chrono::seconds(30));

  // Job attempts the retention sweep deleted, by reason ("retention":
  // older than retention_days; "max_state_bytes").
  void job_attempts_deleted(const std::string& reason, std::size_t count);

  // Entries of the agent's in-memory per-job structures (tracker, job
  // locks, scontrol lookups), read at every scrape: they must stay bounded.
  using EntryCounts = std::map<std::string, double>;
  void set_entries_source(std::function<EntryCounts()> source);

  // Bytes free on the state directory's filesystem, read at every scrape:
  // uploads are refused (507) below min_free_bytes/min_free_percent.
  void set_free_bytes_source(std::function<double()> source);

  // The text exposition format (version 0.0.4).
  std::string scrape();
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  void refresh_suspects();

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* diagnoses_ = nullptr;
  prometheus::Family<prometheus::Counter>* bundles_received_ = nullptr;
  prometheus::Family<prometheus::Counter>* bundles_rejected_ = nullptr;
  prometheus::Counter* bundles_duplicate_ = nullptr;
  prometheus::Family<prometheus::Counter>* drain_actions_ = nullptr;
  prometheus::Histogram* fastpass_duration_ = nullptr;
  prometheus::Family<prometheus::Histogram>* engine_duration_ = nullptr;
  prometheus::Family<prometheus::Histogram>* pass_duration_ = nullptr;
  prometheus::Family<prometheus::Gauge>* suspects_ = nullptr;
  prometheus::Family<prometheus::Counter>* jobs_deleted_ = nullptr;
  prometheus::Family<prometheus::Gauge>* entries_ = nullptr;
  std::mutex entries_mutex_;
  std::function<EntryCounts()> entries_source_;
  prometheus::Gauge* free_bytes_ = nullptr;
  std::function<double()> free_bytes_source_;

  std::mutex suspects_mutex_;  // one refresh at a time; scrapes meanwhile wait for it
  std::function<SuspectCounts()> suspects_source_;
  std::chrono::seconds suspects_ttl_{30};
  std::chrono::steady_clock::time_point suspects_until_{};
};

}  // namespace ff::agent
