// suspects_to_json: the report as `firstfault suspects --json` and
// GET /api/v1/suspects print it. Times are unix seconds, like created_at
// of GET /api/v1/diagnoses; absent values are null, never "".
#include "agent/suspects/suspect_report.h"

namespace ff::agent {
namespace {

using nlohmann::json;

json null_if_empty(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

json job_json(const SuspectJob& j) {
  return {{"job_id", j.job_id},
          {"attempt", j.attempt},
          {"role", j.role},
          {"verdict", j.verdict},
          {"sub_domain", null_if_empty(j.sub_domain)},
          {"event", null_if_empty(j.event)},
          {"seen_at", j.seen_at},
          {"systemic", j.systemic},
          {"trusted", j.trusted}};
}

// A node of a busy cluster appears in hundreds of jobs: the newest
// kMaxListedJobs are listed (oldest first), the counts cover them all.
constexpr std::size_t kMaxListedJobs = 50;

json jobs_json(const std::vector<SuspectJob>& jobs) {
  json out = json::array();
  std::size_t first = jobs.size() > kMaxListedJobs ? jobs.size() - kMaxListedJobs : 0;
  for (std::size_t i = first; i < jobs.size(); ++i) out.push_back(job_json(jobs[i]));
  return out;
}

}  // namespace

json suspects_to_json(const SuspectReport& report, bool include_unflagged) {
  json suspects = json::array();
  int rank = 0;
  int unflagged = 0;
  for (const auto& s : report.suspects) {
    if (!s.flagged) ++unflagged;
    if (!s.flagged && !include_unflagged) continue;
    suspects.push_back({{"rank", ++rank},
                        {"kind", to_string(s.kind)},
                        {"id", s.id},
                        {"node", null_if_empty(s.node)},
                        {"device", null_if_empty(s.device)},
                        {"device_uuid", null_if_empty(s.device_uuid)},
                        {"flagged", s.flagged},
                        {"score", s.score},
                        {"jobs", s.jobs},
                        {"root_cause_jobs", s.root_cause_jobs},
                        {"attributed_jobs", s.attributed_jobs},
                        {"ambiguous_jobs", s.root_cause_jobs - s.attributed_jobs},
                        {"symptom_jobs", s.symptom_jobs},
                        {"device_jobs", s.device_jobs},
                        {"systemic_jobs", s.systemic_jobs},
                        {"domains", s.domains},
                        {"first_seen", s.first_seen},
                        {"last_seen", s.last_seen},
                        {"job_list", jobs_json(s.job_list)},
                        {"job_list_complete", s.job_list.size() <= kMaxListedJobs}});
  }
  json events = json::array();
  for (const auto& e : report.systemic_events)
    events.push_back({{"domain", e.domain},
                      {"first_seen", e.first_seen},
                      {"last_seen", e.last_seen},
                      {"nodes", e.nodes},
                      {"job_count", e.jobs.size()},
                      {"jobs", jobs_json(e.jobs)}});
  const SuspectSettings& st = report.settings;
  return {{"since", report.since},
          {"until", report.until},
          {"settings",
           {{"min_jobs", st.min_jobs},
            {"systemic_window_s", st.systemic_window_s},
            {"systemic_min_nodes", st.systemic_min_nodes},
            {"systemic_rate_factor", st.systemic_rate_factor},
            {"ignored_domains", st.ignored_domains}}},
          {"suspects", std::move(suspects)},
          {"unflagged", unflagged},
          {"unflagged_shown", include_unflagged},
          {"systemic_events", std::move(events)}};
}

}  // namespace ff::agent
