#include "pipeline/analyze.h"

#include <algorithm>
#include <map>
#include <set>

#include "extract/event_extractor.h"
#include "extract/timestamp_parser.h"
#include "filter/event_store.h"
#include "filter/filter_rule.h"
#include "read/incident_layout.h"
#include "read/job_reader.h"
#include "refine/attribution.h"
#include "verdict/diagnosis_builder.h"

namespace ff {

// FF_PROJECT_VERSION comes from project(firstfault VERSION ...), the one place
// the version is written (the packages read it there too).
const char* const kEngineVersion = "firstfault-engine/" FF_PROJECT_VERSION;

namespace {

struct KindTally {
  std::uint64_t files = 0, lines = 0;
  std::vector<std::string> problems;
};

const std::vector<std::string> kNodeKinds = {"kernel", "syslog", "fabricmanager", "slurmd", "app"};

void build_coverage(const JobInfo& job, const IncidentLayout& layout,
                    const std::map<std::pair<std::string, std::string>, KindTally>& tally,
                    std::vector<CoverageItem>& out, std::set<std::string>& missing_kernel) {
  std::set<std::string> nodes(job.nodes.begin(), job.nodes.end());
  nodes.insert(layout.node_dirs.begin(), layout.node_dirs.end());
  std::set<std::string> kinds_seen;
  for (const auto& [key, t] : tally)
    if (!key.first.empty()) kinds_seen.insert(key.second);
  for (const auto& c : job.coverage) kinds_seen.insert(c.collector);
  auto reported = [&](const std::string& node,
                      const std::string& kind) -> const CollectorCoverage* {
    for (const auto& c : job.coverage)
      if (c.node == node && c.collector == kind) return &c;
    return nullptr;
  };
  for (const auto& node : nodes) {
    bool has_kernel_msgs = false;
    for (const auto& kind : kNodeKinds) {
      auto it = tally.find({node, kind});
      const CollectorCoverage* rep = reported(node, kind);
      if (it == tally.end()) {
        if (!kinds_seen.count(kind) && !rep) continue;
        std::string detail =
            rep && !rep->detail.empty() ? rep->detail : "no " + kind + " file in the incident";
        if (kind == "kernel" && !rep) {
          auto sys = tally.find({node, "syslog"});
          if (sys != tally.end() && sys->second.lines)
            detail = "no kernel log; kernel messages read from syslog";
        }
        out.push_back({kind, node,
                       rep && !rep->status.empty() && rep->status != "ok" ? rep->status : "missing",
                       0, detail});
        continue;
      }
      const KindTally& t = it->second;
      if ((kind == "kernel" || kind == "syslog") && t.lines) has_kernel_msgs = true;
      std::string status = t.lines ? "ok" : "empty";
      std::string detail = std::to_string(t.files) + " file" + (t.files > 1 ? "s" : "");
      if (!t.problems.empty()) {
        status = t.lines ? "partial" : "error";
        detail += "; " + t.problems.front();
      }
      if (rep && rep->status != "ok" && !rep->status.empty()) {
        if (status == "ok") status = "partial";
        detail +=
            "; collector reported " + rep->status + (rep->detail.empty() ? "" : ": " + rep->detail);
      }
      out.push_back({kind, node, status, t.lines, detail});
    }
    if (!has_kernel_msgs && job.has_node(node)) missing_kernel.insert(node);
  }
  for (const auto& [key, t] : tally) {
    if (!key.first.empty()) continue;
    std::string status = t.lines ? "ok" : "empty";
    std::string detail = std::to_string(t.files) + " file" + (t.files > 1 ? "s" : "");
    if (!t.problems.empty()) {
      status = t.lines ? "partial" : "error";
      detail += "; " + t.problems.front();
    }
    out.push_back({key.second, "", status, t.lines, detail});
  }
  if (!tally.count({"", "slurmctld"}))
    out.push_back({"slurmctld", "", "missing", 0, "no cluster/slurmctld log in the incident"});
  for (const auto& m : layout.metrics_files)
    out.push_back({"metrics", "", "not_analysed", 0,
                   m + ": metrics are not analysed by this engine version"});
}

}  // namespace

AnalyzeResult analyze_incident(const std::filesystem::path& dir, const CompiledRules& rules) {
  AnalyzeResult result;
  Diagnosis& d = result.diagnosis;
  d.engine_version = kEngineVersion;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    result.usable = false;
    result.problem = "not a directory: " + dir.string();
    return result;
  }

  // 1. Read: the job and the list of sources.
  std::vector<ErrorItem>& errors = d.errors;
  JobInfo job = read_job_json(dir / "job.json", errors);
  IncidentLayout layout = list_incident(dir, errors);
  if (job.nodes.empty()) job.nodes = layout.node_dirs;
  if (job.nodes.empty() && layout.files.empty()) {
    result.usable = false;
    result.problem =
        "no job.json nodes and no log files under nodes/, app/ or cluster/: nothing to analyse";
    return result;
  }
  d.cluster = job.cluster;
  d.job_id = job.job_id;
  d.attempt = job.attempt;
  d.terminal_state = job.state;
  for (const auto& n : job.nodes)
    if (std::find(layout.node_dirs.begin(), layout.node_dirs.end(), n) == layout.node_dirs.end())
      errors.push_back(
          {"nodes/" + n, 0, "node " + n + " is in the job but has no logs in the incident"});
  if (!job.start_time && !job.end_time)
    errors.push_back(
        {"job.json", 0,
         "no start_time/end_time: yearless timestamps assume 1970 and no job window is applied"});

  TimeContext base;
  try {
    base.zone = find_zone(job.timezone);
  } catch (const std::exception& ex) {
    errors.push_back(
        {"job.json", 0, std::string(ex.what()) + "; timestamps without zone read as UTC"});
  }
  base.reference = job.start_time ? job.start_time : job.end_time;

  // 2–3. Extract events, annotating each with the filter rules as it comes.
  auto filters = make_filter_rules();
  FilterContext ctx{job, rules, errors, {}};
  EventStore store(static_cast<std::size_t>(std::max(1.0, rules.settings.max_events_per_key)));
  EventExtractor extractor(rules);
  std::map<std::pair<std::string, std::string>, KindTally> tally;
  std::uint64_t seq = 0;
  for (const auto& file : layout.files) {
    TimeContext tc = base;
    if (auto ni = job.node_info.find(file.node); ni != job.node_info.end())
      tc.boot_time = ni->second.boot_time;
    ExtractStats st = extractor.scan_file(file, tc, seq, [&](Event&& e) {
      for (auto& f : filters) f->on_event(e, ctx);
      store.add(std::move(e));
    });
    auto& t = tally[{file.node, file.kind}];
    ++t.files;
    t.lines += st.read.lines;
    if (!st.read.error.empty()) {
      errors.push_back({file.rel, st.read.lines,
                        st.read.error + (st.read.lines ? " (lines before it were read)" : "")});
      t.problems.push_back(file.rel + ": " + st.read.error);
    }
    if (st.read.long_lines)
      errors.push_back(
          {file.rel, st.read.first_long_line,
           std::to_string(st.read.long_lines) + " line(s) longer than 1 MiB were cut"});
    if (st.read.nul_bytes)
      errors.push_back({file.rel, 0,
                        "binary data: " + std::to_string(st.read.nul_bytes) +
                            " NUL bytes; text around them was still read"});
    if (st.bad_times)
      errors.push_back({file.rel, st.first_bad_time_line,
                        std::to_string(st.bad_times) +
                            " matched line(s) with an invalid timestamp (kept without time)"});
  }

  std::vector<Event> events = store.take();
  for (auto& f : filters) f->on_stream(events, ctx);
  for (const auto& e : events)
    if (e.ignored) store.summarise_ignored(e);
  d.ignored = store.ignored();
  for (const auto& item : d.ignored) {
    const KindInfo* ki = rules.kind(item.kind);
    if (item.reason == "after the job ended" && ki && ki->role != Role::kInfo && item.count > 0)
      errors.push_back({item.example, 0,
                        std::to_string(item.count) + " " + item.kind + " event(s) on " +
                            (item.node.empty() ? std::string("the job") : item.node) +
                            " are dated after the job ended: clock skew or a wrong end_time?"});
  }

  // 4. Refine.
  Attribution a;
  a.events = std::move(events);
  a.overflow = store.overflow();
  build_coverage(job, layout, tally, d.coverage, a.nodes_missing_kernel);
  for (auto& rule : make_correlation_rules()) rule->apply(a, ctx);

  // 5. Map to the diagnosis.
  build_diagnosis(a, ctx, d);
  return result;
}

}  // namespace ff
