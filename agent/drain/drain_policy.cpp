#include "agent/drain/drain_policy.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "agent/slurm/comment_text.h"

namespace ff::agent {

using nlohmann::json;

namespace {

constexpr std::int64_t kHour = 3600;
// More jobs than this and the Reason names the newest ones only: it must
// stay short enough for `sinfo -R`.
constexpr std::size_t kReasonJobs = 6;

std::string text_of(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

bool is_drain(const std::string& decision) {
  return decision == "drained" || decision == "would_drain";
}

// "firstfault: gpu.fallen_off_bus 00000000:3B:00.0 in jobs 12,13,14"
std::string slurm_reason(const std::string& what, const std::string& device,
                         const std::vector<std::string>& jobs) {
  std::string reason = "firstfault: " + what;
  if (!device.empty()) reason += " " + device;
  std::size_t first = jobs.size() > kReasonJobs ? jobs.size() - kReasonJobs : 0;
  reason += jobs.size() > kReasonJobs ? " in " + std::to_string(jobs.size()) + " jobs, last "
                                      : " in jobs ";
  for (std::size_t i = first; i < jobs.size(); ++i) reason += (i > first ? "," : "") + jobs[i];
  return slurm_safe_text(reason, kMaxDrainReasonBytes);
}

// One root-cause node of the diagnosis: its first cause on that node.
struct Candidate {
  std::string node;
  std::string device;
  std::string domain;
  std::string sub_domain;
  std::string origin;    // the source kind of the cause's event, "" unknown
  bool trusted = false;  // "trusted": true, never assumed when absent
};

std::vector<Candidate> candidates(const json& diagnosis) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  auto roots = diagnosis.find("root_causes");
  if (roots == diagnosis.end() || !roots->is_array()) return out;
  std::string domain = text_of(diagnosis, "domain");
  std::string sub_domain = text_of(diagnosis, "sub_domain");
  for (const auto& rc : *roots) {
    Candidate c;
    c.node = text_of(rc, "node");
    if (c.node.empty() || !seen.insert(c.node).second) continue;
    c.device = text_of(rc, "device");
    c.domain = text_of(rc, "domain");
    if (c.domain.empty()) c.domain = domain.empty() ? "unknown" : domain;
    c.sub_domain = text_of(rc, "sub_domain");
    if (c.sub_domain.empty()) c.sub_domain = sub_domain.empty() ? c.domain : sub_domain;
    c.origin = text_of(rc, "origin");
    auto trusted = rc.find("trusted");
    c.trusted = trusted != rc.end() && trusted->is_boolean() && trusted->get<bool>();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::int64_t drain_window_s(const DrainSettings& settings, const SuspectSettings& suspects) {
  return settings.window_days > 0 ? std::int64_t{settings.window_days} * 86400 : suspects.window_s;
}

std::vector<DrainDecision> decide_drains(const DrainInput& in, const DrainSettings& settings,
                                         const SuspectSettings& suspects) {
  std::vector<DrainDecision> out;
  std::string verdict = text_of(in.diagnosis, "verdict");
  if (verdict == "no_failure" || verdict.empty()) return out;
  std::vector<Candidate> nodes = candidates(in.diagnosis);
  if (nodes.empty()) return out;

  std::int64_t window = drain_window_s(settings, suspects);
  std::int64_t since = in.now - window;
  const std::vector<Sighting>& recent = in.sightings;  // the caller chose the window
  // The systemic events of the window (one broad outage blaming many nodes
  // at once): its sightings blame no node.
  SuspectReport report = find_suspects(recent, suspects, since, in.now);
  using JobKey = std::pair<std::string, int>;
  std::set<std::pair<JobKey, std::string>> systemic;  // (job attempt, node)
  for (const auto& e : report.systemic_events)
    for (const auto& j : e.jobs)
      for (const auto& n : e.nodes) systemic.insert({{j.job_id, j.attempt}, n});

  std::set<std::string> domains(settings.domains.begin(), settings.domains.end());
  std::set<std::string> ignored(settings.ignore_sub_domains.begin(),
                                settings.ignore_sub_domains.end());
  const JobKey self{in.job_id, in.attempt};
  // Drains (and dry-run drains) of the last hour, this call's included.
  int drained_last_hour = 0;
  for (const auto& a : in.recent)
    if (is_drain(a.decision) && a.created_at > in.now - kHour) ++drained_last_hour;
  std::string days = std::to_string(window / 86400) + (window / 86400 == 1 ? " day" : " days");

  for (const auto& c : nodes) {
    DrainDecision d;
    d.node = c.node;
    d.device = c.device;
    d.decision = "declined";
    auto decline = [&](std::string why) {
      d.reason = std::move(why);
      out.push_back(d);
    };
    if (verdict != "attributed") {
      decline("verdict " + verdict);
      continue;
    }
    if (!domains.count(c.domain)) {
      auto hardware = drainable_domains();
      bool is_hardware = std::find(hardware.begin(), hardware.end(), c.domain) != hardware.end();
      decline("domain " + c.domain +
              (is_hardware ? " is not in drain.domains" : " is not hardware"));
      continue;
    }
    if (ignored.count(c.sub_domain)) {
      decline("sub_domain " + c.sub_domain +
              " is in drain.ignore_sub_domains (the job's own doing)");
      continue;
    }
    // Evidence the job's user could have written (`logger -t kernel 'NVRM:
    // Xid 79 ...'` lands in syslog; a job prints what it likes) must not
    // take a node away: only the kernel's own records, root daemons' logs,
    // slurmctld and metrics drain. A diagnosis without the field (an older
    // engine) is untrusted.
    if (!c.trusted) {
      decline("evidence not from a trusted source (" +
              (c.origin.empty() ? std::string("origin unknown") : c.origin) + "): not drained");
      continue;
    }
    if (systemic.count({self, c.node})) {
      decline("part of a systemic event");
      continue;
    }
    // Blames: distinct failed job attempts with an attributed root cause on
    // this node in a drain domain, from a trusted source, systemic ones set
    // apart. This pass is one of them even if the store's view has not
    // caught up.
    std::map<JobKey, std::int64_t> blamed;  // job attempt -> first seen
    blamed[self] = in.now;
    for (const auto& s : recent) {
      if (s.node != c.node || s.role != "root_cause" || s.verdict != "attributed") continue;
      if (!s.trusted) continue;
      if (!domains.count(s.domain.empty() ? "unknown" : s.domain)) continue;
      if (ignored.count(s.sub_domain)) continue;
      JobKey key{s.job_id, s.attempt};
      if (systemic.count({key, c.node})) continue;
      auto [it, fresh] = blamed.emplace(key, s.seen_at);
      if (!fresh) it->second = std::min(it->second, s.seen_at);
    }
    std::vector<std::pair<std::int64_t, JobKey>> ordered;
    for (const auto& [key, at] : blamed) ordered.push_back({at, key});
    std::sort(ordered.begin(), ordered.end());
    for (const auto& [at, key] : ordered) d.jobs.push_back(job_label(key.first, key.second));
    d.blames = static_cast<int>(d.jobs.size());
    if (d.blames < settings.min_blames) {
      decline("blamed " + std::to_string(d.blames) + " of " + std::to_string(settings.min_blames) +
              " times in " + days);
      continue;
    }
    bool decided_for_this_job = false;
    for (const auto& a : in.recent)
      if (is_drain(a.decision) && a.node == c.node && a.job_id == in.job_id &&
          a.attempt == in.attempt)
        decided_for_this_job = true;
    if (decided_for_this_job) {
      decline("already drained for this job");
      continue;
    }
    if (in.node_state) {
      NodeStateLookup state = in.node_state(c.node);
      d.detail = state.known ? "State=" + state.state : "state unknown: " + state.error;
      if (state.known && state.unavailable()) {
        decline("already drained");
        continue;
      }
    }
    if (drained_last_hour >= settings.max_per_hour) {
      decline("limit: " + std::to_string(drained_last_hour) +
              (drained_last_hour == 1 ? " node" : " nodes") + " drained in the last hour");
      continue;
    }
    ++drained_last_hour;
    d.decision = settings.dry_run ? "would_drain" : "drain";
    if (settings.dry_run) d.detail = "dry run" + (d.detail.empty() ? "" : "; " + d.detail);
    d.reason = slurm_reason(c.sub_domain, c.device, d.jobs);
    out.push_back(d);
  }
  return out;
}

DrainPolicy::DrainPolicy(DrainSettings settings, SuspectSettings suspects, DiagnosisStore& store,
                         SlurmClient& slurm)
    : settings_(std::move(settings)), suspects_(suspects), store_(store), slurm_(slurm) {}

void DrainPolicy::after_pass(const PassRecord& pass) {
  if (!settings_.enabled || pass.trigger == "fastpass") return;
  try {
    run(pass);
  } catch (const std::exception& e) {
    spdlog::error("job {}: drain policy failed: {}", job_label(pass.job_id, pass.attempt),
                  e.what());
    DrainAction a;
    a.node = pass.root_node;
    a.decision = "failed";
    a.reason = std::string("failed: ") + e.what();
    try {
      record(pass, a);
    } catch (const std::exception& again) {
      spdlog::error("job {}: drain failure not recorded: {}", job_label(pass.job_id, pass.attempt),
                    again.what());
    }
  }
}

void DrainPolicy::run(const PassRecord& pass) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string label = job_label(pass.job_id, pass.attempt);
  const json& diagnosis = pass.diagnosis;
  std::string verdict = text_of(diagnosis, "verdict");
  if (verdict == "no_failure" || verdict.empty()) return;
  DrainInput in;
  in.job_id = pass.job_id;
  in.attempt = pass.attempt;
  in.diagnosis = diagnosis;
  in.now = static_cast<std::int64_t>(std::time(nullptr));
  in.sightings = store_.sightings(in.now - drain_window_s(settings_, suspects_));
  in.recent = store_.drain_actions(in.now - kHour);
  in.node_state = [this](const std::string& node) { return slurm_.node_state(node); };
  for (auto& d : decide_drains(in, settings_, suspects_)) {
    DrainAction a;
    a.node = d.node;
    a.device = d.device;
    a.reason = d.reason;
    a.blames = d.blames;
    a.detail = d.detail;
    a.decision = d.decision;
    if (d.decision == "drain") {
      std::string result = slurm_.drain_node(d.node, d.reason);
      a.decision = result == "drained" ? "drained" : "failed";
      a.detail = result == "drained" ? d.detail : result;
    }
    if (a.decision == "drained" || a.decision == "would_drain")
      spdlog::warn("job {}: drain policy: {} {} (blamed {} times): {}", label, a.decision, a.node,
                   a.blames, a.reason);
    else if (a.decision == "failed")
      spdlog::error("job {}: drain policy: draining {} failed: {}", label, a.node, a.detail);
    else
      spdlog::info("job {}: drain policy: {} not drained: {}", label, a.node, a.reason);
    record(pass, std::move(a));
  }
}

void DrainPolicy::record(const PassRecord& pass, DrainAction action) {
  action.created_at = static_cast<std::int64_t>(std::time(nullptr));
  action.job_id = pass.job_id;
  action.attempt = pass.attempt;
  action.diagnosis_id = pass.id;
  store_.add_drain_action(action);
  if (on_decision_) on_decision_(action);
}

}  // namespace ff::agent
