#include "engine/pipeline/analyze.h"

#include <sched.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "engine/extract/event_extractor.h"
#include "engine/extract/metric_extractor.h"
#include "engine/extract/parallel_scan.h"
#include "engine/filter/event_store.h"
#include "engine/filter/filter_rule.h"
#include "engine/read/flight_recorder.h"
#include "engine/read/incident_file.h"
#include "engine/read/incident_layout.h"
#include "engine/read/job_reader.h"
#include "engine/read/metrics_reader.h"
#include "engine/refine/attribution.h"
#include "engine/verdict/diagnosis_builder.h"
#include "incident/time/timestamp_parser.h"

namespace ff {

// FF_PROJECT_VERSION comes from project(firstfault VERSION ...), the one place
// the version is written (the packages read it there too).
const char* const kEngineVersion = "firstfault-engine/" FF_PROJECT_VERSION;

namespace {

struct KindTally {
  std::uint64_t files = 0, lines = 0;
  std::vector<std::string> problems;
};

// What one metrics file held, for its coverage entry.
struct MetricsTally {
  std::string rel, query;
  bool ok = false;
  std::string error;
  std::vector<std::string> warnings;
  std::uint64_t samples = 0;
  MetricExtractStats stats;
};

constexpr const char* kPrometheusCollector = "prometheus:";

// A status that reports something short of everything read.
bool reported_short(const Coverage& c) {
  return c.status != CoverageStatus::kUnstated && c.status != CoverageStatus::kOk;
}

// One coverage entry per metrics file, and one per query the collector
// reported without a file: a query that failed is evidence missing, never
// a node without faults.
void metrics_coverage(const JobInfo& job, const std::vector<MetricsTally>& metrics,
                      std::vector<CoverageItem>& out, std::vector<std::string>& gaps,
                      std::string& failed) {
  auto failure = [&](const std::string& status, const std::string& what) {
    if (status == "error" || status == "unreachable" || status == "unauthorised" ||
        status == "missing")
      failed += (failed.empty() ? "" : ", ") + what + " " + status;
  };
  std::map<std::string, const Coverage*> reported;
  for (const auto& c : job.coverage)
    if (c.collector.rfind(kPrometheusCollector, 0) == 0)
      reported[c.collector.substr(std::strlen(kPrometheusCollector))] = &c;
  std::set<std::string> with_file;
  for (const auto& m : metrics) {
    with_file.insert(m.query);
    const Coverage* rep = reported.count(m.query) ? reported.at(m.query) : nullptr;
    std::string status, detail = m.rel + ": ";
    if (!m.ok) {
      status = "error";
      detail += m.error;
    } else {
      const auto& st = m.stats;
      detail += std::to_string(st.series) + " series, " + std::to_string(m.samples) + " samples, " +
                std::to_string(st.nodes.size()) + " job node(s), " + std::to_string(st.events) +
                " event(s)";
      status = st.series ? "ok" : "empty";
      if (st.outside_job)
        detail += "; " + std::to_string(st.outside_job) + " series of other nodes";
      if (st.series) {
        std::string silent;
        for (const auto& n : job.nodes)
          if (!st.nodes.count(n)) silent += (silent.empty() ? "" : ", ") + n;
        if (!silent.empty()) {
          status = "partial";
          detail += "; no series for " + silent;
        }
      }
      if (!m.warnings.empty()) {
        if (status == "ok") status = "partial";
        detail += "; " + m.warnings.front();
      }
    }
    if (rep && reported_short(*rep)) {
      if (status == "ok") status = "partial";
      detail += "; collector reported " + rep->status_text() +
                (rep->detail.empty() ? "" : ": " + rep->detail);
    }
    if (status != "ok") gaps.push_back(m.rel + " " + status);
    failure(rep && reported_short(*rep) ? rep->status_text() : status, m.rel);
    out.push_back({"metrics", "", status, m.samples, detail});
  }
  for (const auto& [query, rep] : reported) {
    if (with_file.count(query)) continue;
    std::string status = reported_short(*rep) ? rep->status_text() : "missing";
    std::string detail =
        rep->collector + ": " +
        (rep->detail.empty() ? "no metrics/" + query + ".json in the incident" : rep->detail);
    gaps.push_back(rep->collector + " " + status);
    failure(status, rep->collector);
    out.push_back({"metrics", "", status, 0, detail});
  }
}

const std::vector<std::string> kNodeKinds = {"kernel", "syslog", "fabricmanager", "slurmd", "app"};

void build_coverage(const JobInfo& job, const IncidentLayout& layout,
                    const std::map<std::pair<std::string, std::string>, KindTally>& tally,
                    std::vector<CoverageItem>& out, std::set<std::string>& missing_kernel) {
  std::set<std::string> nodes(job.nodes.begin(), job.nodes.end());
  nodes.insert(layout.node_dirs.begin(), layout.node_dirs.end());
  std::set<std::string> kinds_seen;
  for (const auto& [key, t] : tally)
    if (!key.first.empty()) kinds_seen.insert(key.second);
  // A collector reports for a kind under the kind's name ("kernel") or as
  // "<source>:<kind>" ("loki:kernel"); a kind fed by several sources shows
  // the first that did not deliver, so a failed one is never hidden by one
  // that did.
  auto kind_of = [](const std::string& collector) {
    auto colon = collector.rfind(':');
    return colon == std::string::npos ? collector : collector.substr(colon + 1);
  };
  for (const auto& c : job.coverage) kinds_seen.insert(kind_of(c.collector));
  // Per (node, kind): the first entry that did not deliver, else the first.
  // Indexed once: a job of thousands of nodes has thousands of entries.
  auto failed = [](const Coverage& c) { return !c.delivered(); };
  std::map<std::pair<std::string, std::string>, const Coverage*> by_node_kind;
  for (const auto& c : job.coverage) {
    auto [it, inserted] = by_node_kind.emplace(std::make_pair(c.node, kind_of(c.collector)), &c);
    if (!inserted && !failed(*it->second) && failed(c)) it->second = &c;
  }
  auto reported = [&](const std::string& node, const std::string& kind) -> const Coverage* {
    auto it = by_node_kind.find({node, kind});
    return it == by_node_kind.end() ? nullptr : it->second;
  };
  for (const auto& node : nodes) {
    bool has_kernel_msgs = false;
    for (const auto& kind : kNodeKinds) {
      auto it = tally.find({node, kind});
      const Coverage* rep = reported(node, kind);
      if (it == tally.end()) {
        if (!kinds_seen.count(kind) && !rep) continue;
        std::string detail =
            rep && !rep->detail.empty() ? rep->detail : "no " + kind + " file in the incident";
        if (kind == "kernel" && !rep) {
          auto sys = tally.find({node, "syslog"});
          if (sys != tally.end() && sys->second.lines)
            detail = "no kernel log; kernel messages read from syslog";
        }
        out.push_back(
            {kind, node, rep && reported_short(*rep) ? rep->status_text() : "missing", 0, detail});
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
      if (rep && !rep->delivered()) {
        if (status == "ok") status = "partial";
        detail += "; " + (rep->collector == kind ? std::string("collector") : rep->collector) +
                  " reported " + rep->status_text() +
                  (rep->detail.empty() ? "" : ": " + rep->detail);
      }
      out.push_back({kind, node, status, t.lines, detail});
    }
    // Kernel messages that a collector failed to fetch (Loki unreachable, a
    // journal it could not read) may be the ones that matter, even when the
    // node's syslog has other lines: the node is a coverage gap, not healthy.
    const Coverage* kernel_rep = reported(node, "kernel");
    bool kernel_failed = kernel_rep && (kernel_rep->status == CoverageStatus::kUnreachable ||
                                        kernel_rep->status == CoverageStatus::kUnauthorised ||
                                        kernel_rep->status == CoverageStatus::kError ||
                                        kernel_rep->status == CoverageStatus::kPartial);
    if ((!has_kernel_msgs || kernel_failed) && job.has_node(node)) missing_kernel.insert(node);
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
  // What other collectors said about themselves (kubernetes:pods, …) is
  // shown as they said it; node kinds and metrics files are shown above.
  bool kubernetes = false;
  for (const auto& c : job.coverage) {
    kubernetes |= c.collector.rfind("kubernetes:", 0) == 0;
    std::string kind = kind_of(c.collector);
    if (std::find(kNodeKinds.begin(), kNodeKinds.end(), kind) != kNodeKinds.end()) continue;
    if (c.collector.rfind("prometheus", 0) == 0) continue;
    out.push_back({c.collector, c.node,
                   c.status == CoverageStatus::kUnstated ? "ok" : c.status_text(), 0, c.detail});
  }
  // A job Kubernetes ran has no slurmctld log to miss.
  if (!tally.count({"", "slurmctld"}) && !kubernetes)
    out.push_back({"slurmctld", "", "missing", 0, "no cluster/slurmctld log in the incident"});
}

// One dump, bounded: a file larger than the reader takes is not read (a
// pickle cut at a limit says less than nothing about its last entries).
void read_flight_recorder_file(const IncidentRoot& root, const FlightRecorderFile& f,
                               std::vector<Event>& events, CollectiveProgress& progress,
                               std::vector<ErrorItem>& errors, std::uint64_t& seq) {
  std::string error;
  UniqueFd fd = root.open_file(f.rel, error);
  if (!fd) {
    errors.push_back({f.rel, 0, "flight-recorder dump not read: " + error});
    return;
  }
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
    if (bytes.size() > kMaxFlightRecorderBytes) {
      errors.push_back({f.rel, 0,
                        "flight-recorder dump larger than " +
                            std::to_string(kMaxFlightRecorderBytes >> 20) + " MiB: not read"});
      return;
    }
  }
  FlightRecorderDump dump = read_flight_recorder(bytes, f.rank);
  for (const auto& e : dump.errors) errors.push_back({f.rel, 0, "flight-recorder dump: " + e});
  if (dump.truncated)
    errors.push_back({f.rel, 0,
                      "flight-recorder dump ends early (cut short?): the " +
                          std::to_string(dump.entries.size()) +
                          " entries before the cut were read"});
  // What the dump says, per group, as the evidence's text.
  std::map<std::string, const FlightRecorderEntry*> last;
  for (const auto& e : dump.entries)
    if (!e.is_p2p && e.collective_seq_id >= 0 &&
        (!last.count(e.pg_id) || e.collective_seq_id > last[e.pg_id]->collective_seq_id))
      last[e.pg_id] = &e;
  Event ev;
  ev.seq = ++seq;
  ev.kind = "flight_recorder.dump";
  ev.pattern = "flight_recorder";
  ev.node = f.node;
  ev.source = f.rel;
  ev.source_kind = "flight_recorder";
  ev.rank = f.rank;
  ev.text = "flight recorder of rank " + std::to_string(f.rank) + " (PyTorch layout " +
            (dump.version.empty() ? std::string("?") : dump.version) + ", " +
            std::to_string(dump.entries.size()) + " entries" +
            (dump.truncated ? ", cut short" : "") + ")";
  for (const auto& [pg, e] : last)
    ev.text += "; process group " + pg + ": last collective " +
               std::to_string(e->collective_seq_id) + " " + e->profiling_name + " " + e->state;
  if (ev.text.size() > kMaxEventText) ev.text.resize(kMaxEventText);
  progress.add_flight_recorder(dump, f.node, events.size());
  events.push_back(std::move(ev));
}

}  // namespace

unsigned available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

AnalyzeResult analyze_incident(const std::filesystem::path& dir, const CompiledRules& rules,
                               const AnalyzeOptions& options) {
  AnalyzeResult result;
  Diagnosis& d = result.diagnosis;
  d.engine_version = kEngineVersion;
  // Every file is opened through the root, never by a path: nothing
  // outside the incident directory is reached (read/incident_file.h).
  std::string root_error;
  IncidentRoot root = IncidentRoot::open(dir, root_error);
  if (!root.ok()) {
    result.usable = false;
    result.problem = root_error;
    return result;
  }

  // 1. Read: the job and the list of sources.
  std::vector<ErrorItem>& errors = d.errors;
  JobInfo job = read_job_json(root, errors);
  IncidentLayout layout = list_incident(root, errors);
  if (job.nodes.empty()) job.nodes = layout.node_dirs;
  job.build_index();
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

  // 2–3. Extract events on `jobs` threads; each event meets the filter
  // rules and the store on this thread, in read order.
  auto filters = make_filter_rules();
  FilterContext ctx{job, rules, errors, {}};
  EventStore store(static_cast<std::size_t>(std::max(1.0, rules.settings.max_events_per_key)));
  EventExtractor extractor(rules);
  std::map<std::pair<std::string, std::string>, KindTally> tally;
  std::uint64_t seq = 0;
  std::vector<ScanFile> scan;
  scan.reserve(layout.files.size());
  for (const auto& file : layout.files) {
    TimeContext tc = base;
    if (auto ni = job.node_info.find(file.node); ni != job.node_info.end())
      tc.boot_time = ni->second.boot_time;
    scan.push_back({file, tc});
  }
  auto on_event = [&](std::size_t, Event&& e) {
    e.seq = ++seq;
    for (auto& f : filters) f->on_event(e, ctx);
    store.add(std::move(e));
  };
  auto on_file = [&](std::size_t i, const ExtractStats& st) {
    const SourceFile& file = layout.files[i];
    if (file.kind == "kernel" && !file.node.empty() && st.read.lines) {
      SourceSpan& span = ctx.kernel_spans[file.node];
      span.lines += st.read.lines;
      if (st.first_time && (!span.first || *st.first_time < *span.first))
        span.first = st.first_time;
      if (st.last_time && (!span.last || *st.last_time > *span.last)) span.last = st.last_time;
    }
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
  };
  auto open_log = [&root](const SourceFile& file, std::string& error) {
    return root.open_file(file.rel, error);
  };
  scan_files(scan, extractor, open_log, {options.jobs, options.split_bytes}, on_event, on_file);

  // A live kernel source the collector read over a span vouches for that
  // span even where it holds no line: a kernel that logged nothing in the
  // job's window is what makes a copy of a kernel message in syslog a copy.
  for (const auto& c : job.coverage) {
    if (c.collector != "kernel" || c.node.empty() || !c.covers_from || !c.covers_until) continue;
    if (c.status != CoverageStatus::kOk && c.status != CoverageStatus::kEmpty) continue;
    SourceSpan& span = ctx.kernel_spans[c.node];
    span.read_whole = true;
    if (!span.first || *c.covers_from < *span.first) span.first = c.covers_from;
    if (!span.last || *c.covers_until > *span.last) span.last = c.covers_until;
  }

  // 2–3, metrics: series become events through the metric conditions and
  // meet the same filter rules as log events.
  std::vector<MetricsTally> metrics;
  for (const auto& rel : layout.metrics_files) {
    MetricsFile mf = read_metrics_file(root, rel);
    MetricsTally t;
    t.rel = rel;
    t.query = mf.query;
    t.ok = mf.ok;
    t.error = mf.error;
    t.warnings = mf.warnings;
    t.samples = mf.samples;
    if (!mf.ok) errors.push_back({rel, 0, "metrics file not used: " + mf.error});
    t.stats = extract_metric_events(mf, rules, job, seq, [&](Event&& e) {
      for (auto& f : filters) f->on_event(e, ctx);
      store.add(std::move(e));
    });
    metrics.push_back(std::move(t));
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

  // 4. Refine. Flight-recorder dumps first: each is one event (what the
  // diagnosis cites) and its collectives go into the progress model.
  Attribution a;
  for (const auto& f : layout.flight_recorder_files)
    read_flight_recorder_file(root, f, events, a.progress, errors, seq);
  a.events = std::move(events);
  a.overflow = store.overflow();
  build_coverage(job, layout, tally, d.coverage, a.nodes_missing_kernel);
  std::vector<std::string> metric_gaps;
  metrics_coverage(job, metrics, d.coverage, metric_gaps, a.metrics_failed);
  a.reasoning = ctx.reasoning;  // what the filter rules set aside, and why
  for (auto& rule : make_correlation_rules()) rule->apply(a, ctx);
  if (!metric_gaps.empty() && a.verdict != "attributed" && a.verdict != "no_failure") {
    std::string list;
    for (const auto& g : metric_gaps) list += (list.empty() ? "" : ", ") + g;
    a.reasoning.push_back("metrics incomplete (" + list +
                          "): faults they would show cannot be excluded");
  }

  // 5. Map to the diagnosis.
  build_diagnosis(a, ctx, d);
  return result;
}

}  // namespace ff
