#include "agent/server/pass_runner.h"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>

#include "agent/metrics/agent_metrics.h"
#include "agent/server/durable_file.h"
#include "engine/pipeline/analyze.h"
#include "incident/diagnosis_json.h"

namespace ff::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr auto kLookupTtl = std::chrono::seconds(5);
constexpr auto kFailedLookupTtl = std::chrono::seconds(60);

// What is left until `answer_by`, at least 200 ms; 0 = no bound.
int ms_left(const std::optional<PassRunner::Clock::time_point>& answer_by) {
  if (!answer_by) return 0;
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(*answer_by - PassRunner::Clock::now())
          .count();
  return static_cast<int>(std::max<long long>(200, left));
}

JobRecord job_record(const JobKey& key, const json& job, const std::optional<SlurmJob>& slurm) {
  JobRecord r;
  r.job_id = key.job_id;
  r.attempt = key.attempt;
  r.cluster = job.value("cluster", "");
  r.user = slurm ? slurm->user : "";
  r.state = job.value("state", "");
  r.exit_code = job.value("exit_code", "");
  r.start_time = job.value("start_time", "");
  r.end_time = job.value("end_time", "");
  if (job.contains("nodes") && job["nodes"].is_array())
    for (const auto& n : job["nodes"])
      if (n.is_string()) r.nodes.push_back(n.get<std::string>());
  return r;
}

}  // namespace

PassRunner::PassRunner(StateLayout layout, DiagnosisStore& store, SlurmClient& slurm,
                       JobLocks& locks, std::shared_ptr<const CompiledRules> rules)
    : layout_(std::move(layout)),
      store_(store),
      slurm_(slurm),
      locks_(locks),
      rules_(std::move(rules)) {}

std::optional<SlurmJob> PassRunner::slurm_job(const JobKey& key, int timeout_ms, bool for_pass) {
  auto now = Clock::now();
  auto for_attempt = [&](const std::optional<SlurmJob>& job) -> std::optional<SlurmJob> {
    // Slurm's record is of the newest attempt; an older attempt's bundles get
    // nothing from it.
    if (job && job->restart_count != key.attempt) return std::nullopt;
    return job;
  };
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(key.job_id);
    // A pass decides on the Comment and the terminal state: a cached record
    // of a job that was still live may be stale by now, so a pass asks again.
    bool live = it != cache_.end() && it->second.job && it->second.job->running();
    if (it != cache_.end() && now < it->second.until && !(for_pass && live))
      return for_attempt(it->second.job);
  }
  JobLookup lookup = slurm_.show_job(key.job_id, timeout_ms);
  if (lookup.status == JobLookup::Status::error)
    spdlog::warn("slurm job {}: {}", key.job_id, lookup.error);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto ttl = lookup.status == JobLookup::Status::error ? kFailedLookupTtl : kLookupTtl;
    if (cache_.size() >= kMaxCachedLookups && !cache_.count(key.job_id)) {
      auto at = Clock::now();
      for (auto it = cache_.begin(); it != cache_.end();)
        it = it->second.until <= at ? cache_.erase(it) : std::next(it);
      while (cache_.size() >= kMaxCachedLookups)
        cache_.erase(std::min_element(
            cache_.begin(), cache_.end(),
            [](const auto& a, const auto& b) { return a.second.until < b.second.until; }));
    }
    cache_[key.job_id] = {Clock::now() + ttl, lookup.job};
  }
  return for_attempt(lookup.job);
}

std::optional<SlurmJob> PassRunner::newest_record(const std::string& job_id, bool fresh) {
  // slurm_job() keeps the record whatever its attempt; asked for attempt
  // -1 it returns none, so the cache is read here.
  if (fresh) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    cache_.erase(job_id);
  }
  slurm_job(JobKey{job_id, -1});
  std::lock_guard<std::mutex> lock(cache_mutex_);
  auto it = cache_.find(job_id);
  if (it == cache_.end()) return std::nullopt;
  return it->second.job;
}

int PassRunner::attempt_of_bundle(const std::string& job_id, int claimed,
                                  const std::string& start_time) {
  auto newest = newest_record(job_id);
  // A record cached from before the requeue the node already counts.
  if (newest && newest->restart_count < claimed) newest = newest_record(job_id, /*fresh=*/true);
  if (!newest) return claimed;
  // Never requeued: attempt 0, as every node says.
  if (claimed == 0 && newest->restart_count == 0) return 0;
  // Requeued: slurmctld's record alone cannot tell (right after a requeue
  // it shows the next attempt's count with the old attempt's start), while
  // accounting has every attempt's start.
  AccountingLookup acct = slurm_.accounting(job_id);
  return resolve_attempt(claimed, start_time, &*newest, acct.record ? &*acct.record : nullptr);
}

int PassRunner::attempt_of_fastpass(const std::string& job_id, int claimed) {
  auto newest = newest_record(job_id);
  if (newest && newest->running()) return newest->restart_count;
  return claimed;
}

std::size_t PassRunner::cached_lookups() {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return cache_.size();
}

void PassRunner::rebuild(const JobKey& key) {
  auto slurm = slurm_job(key);
  auto mutex = locks_.of(key);
  std::lock_guard<std::mutex> lock(*mutex);
  auto bundles = store_.bundles(key.job_id, key.attempt);
  if (bundles.empty()) return;
  MergeFacts facts;
  facts.slurm = slurm;
  auto start = std::chrono::steady_clock::now();
  MergeResult merged = rebuild_incident(layout_, key, bundles, facts);
  for (const auto& p : merged.problems) spdlog::warn("job {}: {}", key.str(), p);
  add_central(key);
  spdlog::debug("job {}: incident rebuilt from {} bundles in {} ms", key.str(), bundles.size(),
                std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count());
}

void PassRunner::gather_central(const JobKey& key) {
  if (!central_.any()) return;
  fs::path dir = layout_.central(key);
  std::error_code ec;
  if (fs::exists(dir, ec)) return;
  // The sources want the job's nodes and times: a copy of the merged
  // job.json, taken under the lock, is all they read.
  static std::atomic<unsigned long> counter{0};
  std::string tag = std::to_string(::getpid()) + "." + std::to_string(counter++);
  fs::path input = layout_.job(key) / ("central.input." + tag);
  fs::path scratch = layout_.job(key) / ("central.tmp." + tag);
  {
    auto slurm = slurm_job(key);
    auto mutex = locks_.of(key);
    std::lock_guard<std::mutex> lock(*mutex);
    if (fs::exists(dir, ec)) return;
    auto bundles = store_.bundles(key.job_id, key.attempt);
    if (bundles.empty()) return;
    MergeFacts facts;
    facts.slurm = slurm;
    MergeResult merged = rebuild_incident(layout_, key, bundles, facts);
    for (const auto& p : merged.problems) spdlog::warn("job {}: {}", key.str(), p);
    fs::create_directories(input);
    fs::copy_file(layout_.incident(key) / "job.json", input / "job.json",
                  fs::copy_options::overwrite_existing, ec);
    if (ec) {
      spdlog::warn("job {}: central sources not asked: {}", key.str(), ec.message());
      fs::remove_all(input, ec);
      return;
    }
  }
  auto start = std::chrono::steady_clock::now();
  ff::sources::CentralGather gathered;
  try {
    gathered = ff::sources::gather_central(central_, input, scratch);
  } catch (...) {
    fs::remove_all(input, ec);
    fs::remove_all(scratch, ec);
    throw;
  }
  fs::remove_all(input, ec);
  {
    // Renamed whole under the lock: a pass sees no central/ or all of it,
    // and a crash mid-way leaves only a scratch name no pass reads.
    auto mutex = locks_.of(key);
    std::lock_guard<std::mutex> lock(*mutex);
    std::error_code exists_ec;
    if (fs::exists(dir, exists_ec)) {
      fs::remove_all(scratch, ec);
      return;
    }
    fs::rename(scratch, dir, ec);
  }
  if (ec) {
    spdlog::warn("job {}: central sources not kept: {}", key.str(), ec.message());
    fs::remove_all(scratch, ec);
    return;
  }
  std::size_t ok = 0;
  for (const auto& c : gathered.coverage) ok += c.status == CoverageStatus::kOk;
  spdlog::info("job {}: central sources: {} of {} ok in {} ms{}", key.str(), ok,
               gathered.coverage.size(),
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count(),
               gathered.problem.empty() ? "" : " (" + gathered.problem + ")");
}

void PassRunner::add_central(const JobKey& key) {
  for (const fs::path& dir : {layout_.central(key), layout_.scheduler(key)}) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) continue;
    if (std::string problem = ff::sources::overlay_central(dir, layout_.incident(key));
        !problem.empty())
      spdlog::warn("job {}: {}: {}", key.str(), dir.filename().string(), problem);
  }
}

PassOutcome PassRunner::run(const JobKey& key, const std::string& trigger,
                            std::optional<int> batch_exit_status,
                            std::optional<Clock::time_point> answer_by) {
  PassOutcome out;
  auto pass_start = std::chrono::steady_clock::now();
  // Not the fast pass: it must answer in seconds.
  if (trigger != "fastpass") gather_central(key);
  auto slurm = slurm_job(key, ms_left(answer_by) / 4, /*for_pass=*/true);
  auto mutex = locks_.of(key);
  std::lock_guard<std::mutex> lock(*mutex);

  auto bundles = store_.bundles(key.job_id, key.attempt);
  if (bundles.empty()) {
    out.http_status = 404;
    out.error = "no bundle of job " + key.str() + " has arrived";
    return out;
  }
  MergeFacts facts;
  facts.slurm = slurm;
  // Accounting knows every attempt, slurmctld only the newest: an older
  // attempt's terminal state (NODE_FAIL, PREEMPTED, REQUEUED) and which
  // accounting record is whose come from here.
  int newest_attempt = slurm ? slurm->restart_count : -1;
  if (trigger != "fastpass" && scheduler_) {
    AccountingLookup acct = slurm_.accounting(key.job_id);
    if (acct.record) {
      if (const AccountingAttempt* a = acct.record->of(key.attempt)) facts.accounting = *a;
      newest_attempt = std::max(newest_attempt, static_cast<int>(acct.record->attempts.size()) - 1);
    } else if (acct.status == AccountingLookup::Status::error) {
      spdlog::warn("job {}: accounting: {}", key.str(), acct.error);
    }
  }
  if (batch_exit_status) {
    facts.state_override = "FAILED";
    facts.exit_code_override = exit_code_from_wait_status(*batch_exit_status);
  }
  auto merge_start = std::chrono::steady_clock::now();
  MergeResult merged = rebuild_incident(layout_, key, bundles, facts);
  for (const auto& p : merged.problems) spdlog::warn("job {}: {}", key.str(), p);
  if (trigger != "fastpass" && scheduler_) {
    SchedulerEvidence evidence =
        gather_scheduler_evidence(*scheduler_, slurm_, merged.job, layout_.scheduler(key));
    if (!evidence.problem.empty())
      spdlog::warn("job {}: scheduler: {}", key.str(), evidence.problem);
  }
  add_central(key);
  auto engine_start = std::chrono::steady_clock::now();

  AnalyzeResult result = analyze_incident(layout_.incident(key), *rules_, analyze_options_);
  if (metrics_) metrics_->engine_ran(trigger, std::chrono::steady_clock::now() - engine_start);
  if (!result.usable) {
    out.http_status = 422;
    out.error = "incident of job " + key.str() + " is unusable: " + result.problem;
    return out;
  }
  // Stored as the engine wrote it, so `firstfault show --format json` gives
  // the same bytes as `firstfault analyze` on the merged incident.
  std::string text = diagnosis_to_json(result.diagnosis);
  out.record = store_.add_pass_text(key.job_id, key.attempt, trigger, text,
                                    static_cast<std::int64_t>(std::time(nullptr)));
  // The reply uses these; they are ours whatever the store filled in.
  out.record.trigger = trigger;
  out.record.verdict = result.diagnosis.verdict;
  out.record.domain = result.diagnosis.domain;
  out.record.summary = result.diagnosis.summary;
  if (metrics_) metrics_->diagnosis_stored(trigger, out.record.verdict, out.record.domain);
  fs::create_directories(layout_.passes(key));
  replace_file_synced(layout_.passes(key) / (std::to_string(out.record.pass_no) + ".json"),
                      text + "\n");

  std::string status =
      apply_comment_rules(key, trigger, slurm, result.diagnosis.verdict, result.diagnosis.summary,
                          ms_left(answer_by), out.comment_written, newest_attempt);
  store_.set_comment_status(out.record.id, status);
  out.record.comment_status = status;
  store_.upsert_job(job_record(key, merged.job, slurm));
  out.ok = true;
  if (metrics_) metrics_->pass_ran(trigger, std::chrono::steady_clock::now() - pass_start);
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  spdlog::info("job {} pass {} ({}): {} — {} [comment: {}; merge {} ms, engine {} ms, {} bundles]",
               key.str(), out.record.pass_no, trigger, result.diagnosis.verdict,
               result.diagnosis.summary, status, ms(engine_start - merge_start),
               ms(std::chrono::steady_clock::now() - engine_start), bundles.size());
  if (after_final_pass_ && trigger != "fastpass") {
    try {
      after_final_pass_(out.record);
    } catch (const std::exception& e) {
      spdlog::error("job {}: after the pass: {}", key.str(), e.what());
    }
  }
  return out;
}

std::string PassRunner::finish_comment(const PassRecord& pass) {
  JobKey key{pass.job_id, pass.attempt};
  auto slurm = slurm_job(key, 0, /*for_pass=*/true);
  auto mutex = locks_.of(key);
  std::lock_guard<std::mutex> lock(*mutex);
  auto newest = store_.latest_pass(key.job_id, key.attempt);
  // A newer pass wrote its own Comment; a pass still under way when the
  // listing was made has settled its own since.
  if (!newest || newest->id != pass.id || !newest->comment_status.empty()) return "";
  bool written = false;
  int newest_attempt = slurm ? slurm->restart_count : -1;
  if (pass.trigger != "fastpass" && scheduler_) {
    AccountingLookup acct = slurm_.accounting(key.job_id);
    if (acct.record)
      newest_attempt = std::max(newest_attempt, static_cast<int>(acct.record->attempts.size()) - 1);
  }
  std::string status = apply_comment_rules(key, pass.trigger, slurm, pass.verdict, pass.summary, 0,
                                           written, newest_attempt);
  store_.set_comment_status(pass.id, status);
  return status;
}

std::string PassRunner::apply_comment_rules(const JobKey& key, const std::string& trigger,
                                            const std::optional<SlurmJob>& slurm,
                                            const std::string& verdict, const std::string& summary,
                                            int timeout_ms, bool& written, int newest_attempt) {
  written = false;
  if (verdict == "no_failure" || verdict.empty() || summary.empty()) return "not_needed";
  // The fast pass runs while the batch step exits: the job still runs unless
  // scontrol says otherwise. Once the job ended (COMPLETING included) slurmctld
  // refuses the update, so only the accounting copy is left.
  bool accepts = slurm ? slurm->accepts_comment() : trigger == "fastpass";
  if (!accepts) {
    std::string status =
        slurm_.set_comment_after_end(key.job_id, summary, key.attempt, newest_attempt);
    written = status.rfind("written", 0) == 0;
    return status;
  }
  std::string status = slurm_.set_comment(key.job_id, summary, timeout_ms);
  written = status == "written";
  return status;
}

}  // namespace ff::agent
