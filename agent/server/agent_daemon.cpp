#include "agent/server/agent_daemon.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "agent/drain/drain_policy.h"
#include "agent/metrics/agent_metrics.h"
#include "agent/metrics/suspect_counts.h"
#include "agent/server/bundle_receiver.h"
#include "agent/server/free_space.h"
#include "agent/server/http_api.h"
#include "agent/server/job_locks.h"
#include "agent/server/job_tracker.h"
#include "agent/server/pass_runner.h"
#include "agent/server/read_token.h"
#include "agent/server/request_auth.h"
#include "agent/server/retention_sweep.h"
#include "agent/server/startup_recovery.h"
#include "agent/server/upload_validation.h"
#include "agent/slurm/slurm_client.h"
#include "engine/pipeline/analyze.h"
#include "engine/rules/compiled_rules.h"

namespace ff::agent {

namespace fs = std::filesystem;

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

// Waits for SIGTERM/SIGINT in a thread of its own (the signals are blocked
// everywhere else, so no handler runs in a random thread), stops the server
// and wakes fast-pass requests that wait for bundles.
class StopOnSignal {
 public:
  StopOnSignal(HttpApi& api, JobTracker& tracker) {
    thread_ = std::thread([this, &api, &tracker] {
      sigset_t set = stop_signals();
      timespec tick{0, 200 * 1000 * 1000};
      while (!done_) {
        int sig = sigtimedwait(&set, nullptr, &tick);
        if (sig > 0) {
          spdlog::info("signal {}: stopping", sig);
          signalled_ = true;
          api.stop();
          tracker.stop();
          return;
        }
      }
    });
  }
  ~StopOnSignal() {
    done_ = true;
    thread_.join();
  }
  bool signalled() const { return signalled_; }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::atomic<bool> signalled_{false};
  std::thread thread_;
};

}  // namespace

int run_agent(const AgentConfig& config) {
  // Before any thread exists, so every thread inherits the mask.
  sigset_t stops = stop_signals();
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Bundles hold the jobs' output and the nodes' logs: nothing the agent
  // creates (directories, bundle files, passes, the database) is readable
  // by other users or writable by its group.
  ::umask(027);
  spdlog::set_default_logger(spdlog::stderr_color_mt("firstfault-agent"));
  spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL=debug shows rebuild timings

  std::vector<RuleError> rule_errors;
  auto rules = load_rules(true, config.rules, rule_errors);
  if (!rule_errors.empty()) {
    for (const auto& e : rule_errors) spdlog::error("{}", e.to_string());
    return 3;
  }

  StateLayout layout(config.state_dir);
  std::unique_ptr<DiagnosisStore> store;
  try {
    fs::create_directories(layout.root() / "jobs");
    // A state directory made before (by hand, or by an older version) is
    // closed to other users too; the umask only covers what is new.
    fs::permissions(layout.root(), fs::perms::others_all | fs::perms::group_write,
                    fs::perm_options::remove);
    fs::remove_all(layout.tmp());  // uploads cut short by a crash; never acknowledged
    fs::create_directories(layout.tmp());
    if (fs::path(config.database).has_parent_path())
      fs::create_directories(fs::path(config.database).parent_path());
    store = DiagnosisStore::open(config.database);  // thread-safe: one connection behind a mutex
  } catch (const std::exception& e) {
    spdlog::error("cannot open the state: {}", e.what());
    return 1;
  }

  SlurmClient slurm(config.slurm);
  std::set<uid_t> allowed, readers;
  for (int uid : config.allowed_uids) allowed.insert(static_cast<uid_t>(uid));
  for (int uid : config.read_uids) readers.insert(static_cast<uid_t>(uid));
  RequestAuth auth(allowed, config.slurm_user, &slurm, readers);
  JobLocks locks;
  AgentMetrics metrics(FF_PROJECT_VERSION, ff::kEngineVersion);
  metrics.set_suspects_source(
      [&store = *store, &config] { return flagged_suspect_counts(store, config.suspects); });
  PassRunner runner(layout, *store, slurm, locks, rules);
  runner.set_metrics(&metrics);
  AnalyzeOptions engine;
  engine.jobs = static_cast<unsigned>(config.jobs);
  runner.set_analyze_options(engine);
  runner.set_central_sources(config.central);
  runner.set_scheduler_evidence(config.scheduler);
  // Declared after the runner's store and Slurm client, before the tracker
  // whose thread calls it: it outlives every pass.
  std::optional<DrainPolicy> drain;
  if (config.drain.enabled) {
    drain.emplace(config.drain, config.suspects, *store, slurm);
    runner.set_after_final_pass([&drain](const PassRecord& pass) { drain->after_pass(pass); });
    drain->set_on_decision(
        [&metrics](const DrainAction& action) { metrics.drain_action(action.decision); });
    spdlog::info("drain policy on{}: {} blames in {} days, at most {} per hour",
                 config.drain.dry_run ? " (dry run)" : "", config.drain.min_blames,
                 drain_window_s(config.drain, config.suspects) / 86400, config.drain.max_per_hour);
  }
  JobTracker tracker(runner, std::chrono::seconds(config.final_pass_deadline_s),
                     config.final_pass_workers, config.max_tracked_jobs);
  metrics.set_entries_source([&tracker, &locks, &runner] {
    return AgentMetrics::EntryCounts{
        {"job_tracker", static_cast<double>(tracker.tracked_jobs())},
        {"job_locks", static_cast<double>(locks.size())},
        {"scontrol_lookups", static_cast<double>(runner.cached_lookups())}};
  });
  BundleLimits limits;
  limits.max_total_bytes = config.max_request_bytes;
  limits.max_files = config.max_files_per_bundle;
  limits.max_file_bytes = config.max_file_bytes;
  limits.max_line_bytes = config.max_line_bytes;
  limits.max_lines_per_job = config.max_lines_per_job;
  limits.max_job_bytes = config.max_job_bytes;
  BundleReceiver receiver(layout, *store, tracker, limits);
  receiver.set_metrics(&metrics);
  receiver.set_attempt_resolver([&runner](const UploadMeta& meta, const std::string& start) {
    return runner.attempt_of_bundle(meta.job_id, meta.attempt, start);
  });
  receiver.set_free_space_floor({config.min_free_bytes, config.min_free_percent});
  metrics.set_free_bytes_source(
      [root = layout.root()] { return static_cast<double>(free_space(root).free_bytes); });
  ApiSettings settings;
  settings.max_request_bytes = config.max_request_bytes;
  settings.fastpass_wait = std::chrono::seconds(config.fastpass_wait_s);
  settings.read_open = config.read_access == "open";
  settings.suspects = config.suspects;
  settings.connections.max_connections = static_cast<std::size_t>(config.http_max_connections);
  settings.connections.max_connections_per_peer =
      static_cast<std::size_t>(config.http_max_connections_per_peer);
  settings.connections.header_timeout = std::chrono::seconds(config.http_header_timeout_s);
  settings.connections.request_timeout = std::chrono::seconds(config.http_request_timeout_s);
  settings.upload_workers = static_cast<std::size_t>(config.http_upload_workers);
  settings.fastpass_workers = static_cast<std::size_t>(config.http_fastpass_workers);
  settings.read_workers = static_cast<std::size_t>(config.http_read_workers);
  if (!config.read_token_file.empty()) {
    try {
      settings.read_token = load_read_token(config.read_token_file);
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
      return 1;
    }
  }
  HttpApi api(settings, layout, *store, auth, receiver, tracker, runner);
  api.set_metrics(&metrics);

  int port = api.bind(config.listen_host, config.listen_port);
  if (port < 0) {
    spdlog::error("cannot listen on {}:{}", config.listen_host, config.listen_port);
    return 1;
  }
  tracker.start();
  recover_unfinished_jobs(layout, *store, tracker);
  // After the recovery, so the job attempts it handed back count as pending.
  RetentionSweep sweep({config.retention_days, config.max_state_bytes}, layout, *store, tracker,
                       locks);
  sweep.set_metrics(&metrics);
  sweep.start();
  // scontrol may take its whole time bound per Comment: not in the way of
  // the start.
  std::atomic<bool> stopping{false};
  std::thread comment_recovery([&] {
    try {
      recover_pending_comments(*store, runner, stopping);
    } catch (const std::exception& e) {
      spdlog::error("Comment recovery: {}", e.what());
    }
  });
  std::printf("listening on %s:%d\n", config.listen_host.c_str(), port);
  std::fflush(stdout);
  spdlog::info("listening on {}:{}, state {}, database {}", config.listen_host, port,
               config.state_dir, config.database);
  bool served;
  {
    StopOnSignal stop_on_signal(api, tracker);
    served = api.listen() || stop_on_signal.signalled();
  }
  stopping = true;
  comment_recovery.join();
  sweep.stop();
  tracker.stop();
  spdlog::info("stopped");
  return served ? 0 : 1;
}

}  // namespace ff::agent
