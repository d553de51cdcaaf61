// The filter rules, one class each, registered in make_filter_rules().
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/filter/filter_rule.h"

namespace ff {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kEarly:
      return "EARLY";
    case Phase::kMain:
      return "MAIN";
    case Phase::kFinal:
      return "FINAL";
  }
  return "?";
}

namespace {

int to_int(const std::string& s, int fallback = -1) {
  if (s.empty()) return fallback;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  return (end && *end == '\0') ? static_cast<int>(v) : fallback;
}

// A node named in a message may be a short or a fully qualified name.
std::string match_job_node(const JobInfo& job, const std::string& name) {
  if (name.empty()) return "";
  if (job.has_node(name)) return name;
  std::string shortname = name.substr(0, name.find('.'));
  if (job.has_node(shortname)) return shortname;
  return "";
}

// EARLY 1: which node an event is about.
class ResolveNode : public FilterRule {
 public:
  const char* name() const override { return "resolve_node"; }
  Phase phase() const override { return Phase::kEarly; }
  void on_event(Event& e, FilterContext& ctx) override {
    if (auto it = e.fields.find("node"); it != e.fields.end()) {
      std::string n = match_job_node(ctx.job, it->second);
      e.node = n.empty() ? it->second : n;
      return;
    }
    if (!e.node.empty()) return;
    if (auto it = e.fields.find("host"); it != e.fields.end()) {
      std::string n = match_job_node(ctx.job, it->second);
      if (!n.empty()) {
        e.node = n;
        return;
      }
    }
    if (int r = to_int(e.field("rank")); r >= 0)
      if (const RankInfo* ri = ctx.job.rank_info(r)) e.node = ri->node;
  }
};

// EARLY 2: rank and device (PCI bus id) of an event.
class ResolveRankAndDevice : public FilterRule {
 public:
  const char* name() const override { return "resolve_rank_device"; }
  Phase phase() const override { return Phase::kEarly; }
  void on_event(Event& e, FilterContext& ctx) override {
    if (auto it = e.fields.find("pci"); it != e.fields.end()) e.device = canonical_pci(it->second);
    if (auto it = e.fields.find("source_pci");
        it != e.fields.end() && !canonical_pci(it->second).empty())
      e.device = canonical_pci(it->second);  // AER: the device the error came from
    // rank2 is PyTorch's "[Rank N]": the rank inside the event's process
    // group, the global rank only in the default group (or when no group
    // is named, as before process groups were printed).
    const std::string& pg = e.field("pg");
    if (int r = to_int(e.field("rank")); r >= 0)
      e.rank = r;
    else if (int r2 = to_int(e.field("rank2")); r2 >= 0 && (pg.empty() || pg == "0"))
      e.rank = r2;
    if (e.rank < 0 && !e.node.empty()) {
      if (int lr = to_int(e.field("local_rank")); lr >= 0)
        e.rank = ctx.job.rank_for_local(e.node, lr);
    }
    if (e.device.empty() && !e.node.empty()) {
      if (int dev = to_int(e.field("nccl_dev")); dev >= 0) e.device = ctx.job.gpu_pci(e.node, dev);
    }
    if (e.rank < 0 && !e.device.empty()) e.rank = ctx.job.rank_for_gpu(e.node, e.device);
    if (e.device.empty() && e.rank >= 0)
      if (const RankInfo* ri = ctx.job.rank_info(e.rank); ri && ri->gpus.size() == 1)
        e.device = ri->gpus[0];
    if (e.device.empty() && !e.field("hca").empty()) {
      e.device = e.field("hca");
      if (!e.field("port").empty()) e.device += ":" + e.field("port");
    }
  }
};

// EARLY 3: the process an Xid names ("pid=1234", "pid='<unknown>'"), so that
// an application-induced Xid can be linked to its rank. What the code means
// is looked up in the catalog when candidates are built, not stored here.
class XidPid : public FilterRule {
 public:
  const char* name() const override { return "xid_pid"; }
  Phase phase() const override { return Phase::kEarly; }
  void on_event(Event& e, FilterContext&) override {
    if (e.kind != "xid" && e.kind != "sxid") return;
    std::string pid = e.field("pid");
    pid.erase(std::remove(pid.begin(), pid.end(), '\''), pid.end());
    if (pid.empty() || pid == "<unknown>")
      e.fields.erase("pid");
    else
      e.fields["pid"] = pid;
  }
};

// EARLY 4: events about another job or a node outside the job.
class JobScope : public FilterRule {
 public:
  const char* name() const override { return "job_scope"; }
  Phase phase() const override { return Phase::kEarly; }
  void on_event(Event& e, FilterContext& ctx) override {
    const std::string& j = e.field("job");
    if (!j.empty() && !ctx.job.job_id.empty() && j != ctx.job.job_id) {
      ignore_event(e, "about job " + j + ", not this job");
      return;
    }
    if (!e.node.empty() && !ctx.job.nodes.empty() && !ctx.job.has_node(e.node))
      ignore_event(e, "node " + e.node + " is not in the job");
  }
};

// EARLY 5: NCCL bootstrap addresses, to name the peer of a communication error.
class CollectAddresses : public FilterRule {
 public:
  const char* name() const override { return "collect_addresses"; }
  Phase phase() const override { return Phase::kEarly; }
  void on_event(Event& e, FilterContext& ctx) override {
    if (e.kind != "net.address") return;
    if (!e.node.empty() && !e.field("ip").empty()) ctx.ip_to_node.emplace(e.field("ip"), e.node);
    ignore_event(e, "context: address of a node");
  }
  void on_stream(std::vector<Event>& events, FilterContext& ctx) override {
    for (auto& e : events) {
      const std::string& ip = e.field("peer_ip");
      if (ip.empty()) continue;
      if (auto it = ctx.ip_to_node.find(ip); it != ctx.ip_to_node.end())
        e.fields["peer_node"] = it->second;
    }
  }
};

// MAIN 1: kernel lines with only seconds-since-boot get a wall time from a
// boot time estimated on syslog lines of the same node that carry both.
class DmesgClock : public FilterRule {
 public:
  const char* name() const override { return "dmesg_clock"; }
  Phase phase() const override { return Phase::kMain; }
  void on_stream(std::vector<Event>& events, FilterContext&) override {
    std::map<std::string, TimeUs> boot;
    for (const auto& e : events) {
      if (!e.time || e.time_inferred || e.field("dmesg_seconds").empty() || boot.count(e.node))
        continue;
      double secs = std::strtod(e.field("dmesg_seconds").c_str(), nullptr);
      boot[e.node] = *e.time - static_cast<TimeUs>(std::llround(secs * 1e6));
    }
    for (auto& e : events) {
      if (e.time || e.field("dmesg_seconds").empty()) continue;
      auto it = boot.find(e.node);
      if (it == boot.end()) continue;
      double secs = std::strtod(e.field("dmesg_seconds").c_str(), nullptr);
      e.time = it->second + static_cast<TimeUs>(std::llround(secs * 1e6));
      e.time_inferred = true;
      e.fields["time_from"] = "boot time estimated from syslog";
    }
  }
};

// MAIN 2: when each event can have happened. A line with its own time is a
// point. A line without one (tracebacks, NCCL WARN, a watchdog line printed
// without a prefix) lies between the timestamped lines around it in its file:
// [previous timed line, next timed line], else the job's own bounds. Its
// point time, for display and tie-breaking only, is the next timed event of
// the file, else the closest timestamped line before it, else the previous
// timed event, kept inside the interval.
class InferTime : public FilterRule {
 public:
  const char* name() const override { return "infer_time"; }
  Phase phase() const override { return Phase::kMain; }
  void on_stream(std::vector<Event>& events, FilterContext& ctx) override {
    const Settings& s = ctx.rules.settings;
    MaybeTime job_lo, job_hi;
    if (auto start = ctx.job.window_start())
      job_lo = *start - static_cast<TimeUs>(s.window_before_start_s * 1e6);
    if (auto end = ctx.job.window_end())
      job_hi = *end + static_cast<TimeUs>(s.window_after_end_s * 1e6);
    std::map<std::string, std::vector<Event*>> by_file;
    for (auto& e : events) {
      if (e.time) e.earliest = e.latest = e.time;  // its own time (dmesg clock: estimated)
      by_file[e.source].push_back(&e);
    }
    for (auto& [file, list] : by_file) {
      std::sort(list.begin(), list.end(), [](const Event* a, const Event* b) {
        return a->line != b->line ? a->line < b->line : a->seq < b->seq;
      });
      // Bounds from the timed events of the file around each untimed one.
      std::vector<MaybeTime> lo(list.size()), hi(list.size());
      MaybeTime prev;
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i]->time)
          prev = list[i]->time;
        else
          lo[i] = prev;
      }
      MaybeTime next;
      for (std::size_t i = list.size(); i-- > 0;) {
        if (list[i]->time)
          next = list[i]->time;
        else
          hi[i] = next;
      }
      for (std::size_t i = 0; i < list.size(); ++i) {
        Event& e = *list[i];
        if (e.time) continue;
        MaybeTime l = lo[i], h = hi[i];
        if (!e.field("prev_line_time").empty()) {
          TimeUs t = std::stoll(e.field("prev_line_time"));
          if (!l || t > *l) l = t;
        }
        if (!e.field("next_line_time").empty()) {
          TimeUs t = std::stoll(e.field("next_line_time"));
          if (!h || t < *h) h = t;
        }
        if (!l) l = job_lo;
        if (!h) h = job_hi;
        if (l && h && *l > *h) std::swap(l, h);  // an unordered file: keep the span
        e.earliest = l;
        e.latest = h;
      }
      MaybeTime next_event;
      for (auto it = list.rbegin(); it != list.rend(); ++it) {
        if ((*it)->time && !(*it)->time_inferred)
          next_event = (*it)->time;
        else if (!(*it)->time && next_event) {
          (*it)->time = next_event;
          (*it)->time_inferred = true;
          (*it)->fields["time_from"] = "next timed line of the file";
        }
      }
      MaybeTime prev_event;
      for (auto* e : list) {
        if (!e->time && !e->field("prev_line_time").empty()) {
          e->time = std::stoll(e->field("prev_line_time"));
          e->time_inferred = true;
          e->fields["time_from"] = "previous timestamped line of the file";
        }
        if (e->time && !e->time_inferred)
          prev_event = e->time;
        else if (!e->time && prev_event) {
          e->time = prev_event;
          e->time_inferred = true;
          e->fields["time_from"] = "previous timed line of the file";
        }
        if (e->time_inferred && e->time) {
          if (e->earliest && *e->time < *e->earliest) e->time = e->earliest;
          if (e->latest && *e->time > *e->latest) e->time = e->latest;
        }
      }
    }
  }
};

// MAIN 3: a time daemon's correction of a node's clock ("System clock wrong
// by -241.18 seconds") says the node's earlier lines were that far off:
// they are shifted by it, so that a node whose clock ran ahead is not read
// as failing after the others (or after the job ended).
class ClockStep : public FilterRule {
 public:
  const char* name() const override { return "clock_step"; }
  Phase phase() const override { return Phase::kMain; }
  void on_stream(std::vector<Event>& events, FilterContext& ctx) override {
    std::map<std::string, std::vector<std::pair<TimeUs, TimeUs>>> steps;  // node → (when, by)
    for (const auto& e : events) {
      if (e.kind != "host.clock_step" || !e.time || e.node.empty()) continue;
      std::string v = e.field("offset_s").empty() ? e.field("offset_s2") : e.field("offset_s");
      double off = std::strtod(v.c_str(), nullptr);
      if (std::fabs(off) < 1.0) continue;  // a slew, not a wrong clock
      steps[e.node].push_back({*e.time, static_cast<TimeUs>(std::llround(off * 1e6))});
    }
    for (auto& [node, list] : steps) {
      std::sort(list.begin(), list.end());
      ctx.errors.push_back({"nodes/" + node, 0,
                            "clock of " + node + " corrected by " +
                                std::to_string(static_cast<double>(list.front().second) / 1e6) +
                                " s: its earlier times are shifted by it"});
    }
    if (steps.empty()) return;
    for (auto& e : events) {
      auto it = steps.find(e.node);
      if (it == steps.end() || !e.time || e.kind == "host.clock_step" ||
          (e.source_kind != "kernel" && e.source_kind != "syslog" && e.source_kind != "slurmd" &&
           e.source_kind != "fabricmanager" && e.source_kind != "app"))
        continue;
      // The first correction logged after the line applies to it.
      for (const auto& [when, by] : it->second) {
        if (when < *e.time) continue;
        e.time = *e.time + by;
        if (e.earliest) e.earliest = *e.earliest + by;
        if (e.latest) e.latest = *e.latest + by;
        e.fields["clock_corrected_us"] = std::to_string(by);
        break;
      }
    }
  }
};

// MAIN 4: events before the node's last boot or outside the job window
// (with margins) are stale for this job: only when their whole interval is.
class JobWindow : public FilterRule {
 public:
  const char* name() const override { return "job_window"; }
  Phase phase() const override { return Phase::kMain; }
  // Older than the job: decided as lines are read (the bounded store never
  // holds them). After the job: decided on the whole stream, once clock_step
  // has corrected a node whose clock ran ahead.
  void on_event(Event& e, FilterContext& ctx) override {
    if (e.time) check(e, e.time, e.time, ctx, false);
  }
  void on_stream(std::vector<Event>& events, FilterContext& ctx) override {
    for (auto& e : events) {
      if (e.time_inferred || (!e.time && (e.earliest || e.latest)))
        check(e, e.earliest, e.latest, ctx, true);
      else if (e.time)
        check(e, e.time, e.time, ctx, true);
    }
  }

 private:
  static void check(Event& e, const MaybeTime& earliest, const MaybeTime& latest,
                    FilterContext& ctx, bool after_end) {
    if (e.ignored) return;
    const auto& s = ctx.rules.settings;
    // A GPU's earlier Xids are its history (see recurring_xid).
    auto history = [&] {
      if (e.kind == "xid" && !e.device.empty() && !e.node.empty() && latest)
        ctx.prior_faults[{e.node, e.device, "xid:" + e.field("code")}].insert(*latest /
                                                                              kUsPerSecond);
    };
    if (auto ni = ctx.job.node_info.find(e.node); ni != ctx.job.node_info.end() &&
                                                  ni->second.boot_time && latest &&
                                                  *latest < *ni->second.boot_time) {
      history();
      ignore_event(e, "before the node's last boot (" + format_time(*ni->second.boot_time) + ")");
      return;
    }
    const MaybeTime start = ctx.job.window_start(), end = ctx.job.window_end();
    // A requeued job's output and slurmd log still say how the attempt
    // before this one ended (CANCELLED ... DUE TO JOB REQUEUE, a time limit,
    // a preemption), often seconds before this attempt began. The scheduler
    // ending a job is about the attempt it ended: before this attempt's
    // start, it is an earlier attempt's.
    if (ctx.job.attempt > 0 && start && latest && *latest < *start) {
      if (const KindInfo* ki = ctx.rules.kind(e.kind); ki && ki->job_scope) {
        ignore_event(e, "an earlier attempt's end (before this attempt started)");
        return;
      }
    }
    if (start && latest && *latest < *start - static_cast<TimeUs>(s.window_before_start_s * 1e6)) {
      history();
      ignore_event(e, "before the job started");
      return;
    }
    if (after_end && end && earliest &&
        *earliest > *end + static_cast<TimeUs>(s.window_after_end_s * 1e6))
      ignore_event(e, "after the job ended");
  }
};

// MAIN 4: GPU faults on a GPU the job did not use.
class GpuScope : public FilterRule {
 public:
  const char* name() const override { return "gpu_scope"; }
  Phase phase() const override { return Phase::kMain; }
  void on_event(Event& e, FilterContext& ctx) override {
    if (e.kind != "xid" && e.kind != "gpu.fallen_off_bus") return;
    if (e.device.empty() || e.node.empty() || !ctx.job.knows_gpus_of(e.node)) return;
    if (!ctx.job.job_uses_gpu(e.node, e.device))
      ignore_event(e, "GPU " + e.device + " was not used by the job");
  }
};

// MAIN 5: the same message in two files of one node (kernel.log and syslog)
// is one event, kept once with the other place in also_in.
class Dedupe : public FilterRule {
 public:
  const char* name() const override { return "dedupe"; }
  Phase phase() const override { return Phase::kMain; }
  void on_stream(std::vector<Event>& events, FilterContext&) override {
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::size_t>> seen;
    std::vector<bool> drop(events.size(), false);
    for (std::size_t i = 0; i < events.size(); ++i) {
      Event& e = events[i];
      if (e.source_kind == "app") continue;  // repeated app lines are separate ranks
      auto key = std::make_tuple(e.node, e.kind, std::string(e.body()));
      auto& prior = seen[key];
      bool dup = false;
      for (std::size_t j : prior) {
        Event& f = events[j];
        if (f.source == e.source) continue;
        bool close = !e.time || !f.time || std::llabs(*e.time - *f.time) <= 2 * kUsPerSecond;
        if (close) {
          if (e.trusted && !f.trusted) {
            // The kernel's own copy is the evidence; the syslog copy is where else it was.
            f.also_in.push_back(f.source + ":" + std::to_string(f.line));
            f.source = e.source;
            f.source_kind = e.source_kind;
            f.line = e.line;
            f.text = e.text;
            f.trusted = true;
          } else {
            f.also_in.push_back(e.source + ":" + std::to_string(e.line));
          }
          if (!e.time_inferred && f.time_inferred) {
            f.time = e.time;
            f.earliest = e.earliest;
            f.latest = e.latest;
            f.time_inferred = false;
          }
          dup = true;
          break;
        }
      }
      if (dup)
        drop[i] = true;
      else
        prior.push_back(i);
    }
    std::size_t w = 0;
    for (std::size_t i = 0; i < events.size(); ++i)
      if (!drop[i]) {
        if (w != i) events[w] = std::move(events[i]);  // never self-move
        ++w;
      }
    events.resize(w);
  }
};

// MAIN 6: provenance. A kernel-only message (Xid, AER, MCE, mlx5 port
// events) is kernel evidence only from the kernel's own log: anyone on the
// node can put the same text into syslog (`logger -t kernel ...`) and a job
// can print it. When the node's kernel log covers the message's time and
// does not have it, the copy is set aside. With no kernel log to compare
// with (an incident of syslog files only) it still counts, marked
// unverified, so that nothing acts on it without saying so. A fault the
// kernel logs too (a CUDA ECC error comes with an Xid) that only the job's
// output reports is set aside when the node's kernel log covers its time and
// shows no such fault: the text is someone's copy (a replayed error file, a
// forged line), not this node's fault.
class Provenance : public FilterRule {
 public:
  const char* name() const override { return "provenance"; }
  Phase phase() const override { return Phase::kMain; }
  void on_stream(std::vector<Event>& events, FilterContext& ctx) override {
    TimeUs window = static_cast<TimeUs>(ctx.rules.settings.same_fault_window_s * 1e6);
    // The trusted faults of each node, to compare the untrusted ones with.
    std::map<std::string, std::vector<const Event*>> trusted_faults;
    for (const auto& k : events) {
      const KindInfo* kk = ctx.rules.kind(k.kind);
      if (!k.ignored && k.trusted && kk && kk->role == Role::kFault)
        trusted_faults[k.node].push_back(&k);
    }
    static const std::vector<const Event*> none;
    for (auto& e : events) {
      if (e.ignored || e.trusted) continue;
      const KindInfo* ki = ctx.rules.kind(e.kind);
      if (!ki || ki->role == Role::kInfo) continue;
      if (!ki->kernel_only && !ki->kernel_confirms) continue;
      bool covered = kernel_covers(e, ctx);
      auto it = trusted_faults.find(e.node);
      const auto& node_faults = it == trusted_faults.end() ? none : it->second;
      if (ki->kernel_only) {
        if (covered && has_trusted_twin(e, node_faults)) continue;  // a copy of a kernel-log line
        if (covered) {
          ignore_event(e, "kernel message found only in " + origin_name(e.source_kind) +
                              ", not in the node's kernel log, which covers its time: not kernel "
                              "evidence (anyone on the node can write " +
                              origin_name(e.source_kind) + ")");
          told(ctx, e, "is not in " + e.node + "'s kernel log, which covers its time: set aside");
        } else
          e.fields["provenance"] =
              "unverified " + origin_name(e.source_kind) + " copy (no kernel log covers it)";
        continue;
      }
      // A kind the kernel logs too (`kernel_confirms` in kinds.yaml: a CUDA
      // ECC error comes with an Xid 48/94/95), confirmed by a trusted fault
      // of the same domain on that node at about that time. NVLS set-up or
      // /dev/shm failures never reach the kernel log and are not checked.
      if (!covered) continue;
      bool confirmed = false;
      for (const Event* k : node_faults) {
        const KindInfo* kk = ctx.rules.kind(k->kind);
        bool same_domain = k->kind == "xid" || k->kind == "sxid"
                               ? ki->meaning.domain == "gpu" || ki->meaning.domain == "gpu_fabric"
                               : kk->meaning.domain == ki->meaning.domain;
        if (same_domain && (!k->time || !e.time || std::llabs(*k->time - *e.time) <= window))
          confirmed = true;
      }
      if (!confirmed) {
        ignore_event(e, "reported only by " + origin_name(e.source_kind) +
                            "; the node's kernel log covers its time and shows no such fault");
        told(ctx, e,
             "has no counterpart in " + e.node + "'s kernel log, which covers its time: set aside");
      }
    }
  }

 private:
  // One reasoning line per node, kind and source kind.
  void told(FilterContext& ctx, const Event& e, const std::string& what) {
    if (!said_.insert({e.node, e.kind, e.source_kind}).second) return;
    ctx.reasoning.push_back(e.kind + " text in " + origin_name(e.source_kind) + " (" + e.source +
                            ":" + std::to_string(e.line) + ") " + what);
  }
  std::set<std::tuple<std::string, std::string, std::string>> said_;

  static std::string origin_name(const std::string& kind) {
    if (kind == "app") return "the job's output";
    if (kind == "syslog") return "syslog";
    return kind;
  }
  // The kernel log has the same kind of message on that node at about that
  // time: this copy is syslog's echo of it (formats differ, so Dedupe may
  // not have merged them).
  static bool has_trusted_twin(const Event& e, const std::vector<const Event*>& node_faults) {
    for (const Event* k : node_faults) {
      if (k->kind != e.kind || k->field("code") != e.field("code")) continue;
      if (!k->time || !e.time || std::llabs(*k->time - *e.time) <= 5 * kUsPerSecond) return true;
    }
    return false;
  }
  static bool kernel_covers(const Event& e, const FilterContext& ctx) {
    if (e.node.empty()) return false;
    auto it = ctx.kernel_spans.find(e.node);
    if (it == ctx.kernel_spans.end() || (!it->second.lines && !it->second.read_whole)) return false;
    // Only a span known at both ends can vouch for a missing line: a kernel
    // log without readable times (raw dmesg seconds and no boot time) or an
    // event without bounds says nothing either way.
    const SourceSpan& span = it->second;
    if (!span.first || !span.last || !e.earliest || !e.latest) return false;
    return *span.first <= *e.latest && *e.earliest <= *span.last;
  }
};

// FINAL 1: repeated events of one kind on one node form bursts.
class Bursts : public FilterRule {
 public:
  const char* name() const override { return "bursts"; }
  Phase phase() const override { return Phase::kFinal; }
  void on_stream(std::vector<Event>& events, FilterContext& ctx) override {
    std::map<std::pair<std::string, std::string>, std::vector<Event*>> groups;
    for (auto& e : events)
      if (!e.ignored) groups[{e.node, e.kind}].push_back(&e);
    std::uint64_t id = 0;
    TimeUs gap = static_cast<TimeUs>(ctx.rules.settings.burst_gap_s * 1e6);
    for (auto& [key, list] : groups) {
      std::sort(list.begin(), list.end(),
                [](const Event* a, const Event* b) { return event_time_less(*a, *b); });
      MaybeTime last;
      for (Event* e : list) {
        if (!last || !e->time || *e->time - *last > gap) ++id;
        e->burst = id;
        if (e->time) last = e->time;
      }
    }
  }
};

// FINAL 2: a process id links kernel events (OOM kill, Xid with pid, a soft
// lockup's task) to a rank: the task the plugin recorded (job.json
// ranks[].pid, a rank srun started itself), the torchrun worker of that
// pid, or the process NCCL set up a rank's GPU in. A pid two ranks claim
// links neither.
class LinkPids : public FilterRule {
 public:
  const char* name() const override { return "link_pids"; }
  Phase phase() const override { return Phase::kFinal; }
  void on_stream(std::vector<Event>& events, FilterContext& ctx) override {
    std::map<std::pair<std::string, std::string>, int> pid_rank;
    std::set<std::pair<std::string, std::string>> conflicting;
    auto claim = [&](const std::string& node, const std::string& pid, int rank) {
      auto [it, inserted] = pid_rank.emplace(std::make_pair(node, pid), rank);
      if (!inserted && it->second != rank) conflicting.insert(it->first);
    };
    for (const auto& r : ctx.job.ranks)
      if (r.pid > 0 && r.rank >= 0) claim(r.node, std::to_string(r.pid), r.rank);
    for (const auto& e : events)
      if ((e.kind == "torch.child_failed" || e.kind == "nccl.comm_init") && e.rank >= 0 &&
          !e.field("pid").empty())
        claim(e.node, e.field("pid"), e.rank);
    for (const auto& k : conflicting) pid_rank.erase(k);
    for (auto& e : events) {
      if (e.rank >= 0 || e.field("pid").empty()) continue;
      if (auto it = pid_rank.find({e.node, e.field("pid")}); it != pid_rank.end())
        e.rank = it->second;
    }
  }
};

}  // namespace

std::vector<std::unique_ptr<FilterRule>> make_filter_rules() {
  std::vector<std::unique_ptr<FilterRule>> rules;
  rules.push_back(std::make_unique<ResolveNode>());
  rules.push_back(std::make_unique<ResolveRankAndDevice>());
  rules.push_back(std::make_unique<XidPid>());
  rules.push_back(std::make_unique<JobScope>());
  rules.push_back(std::make_unique<CollectAddresses>());
  rules.push_back(std::make_unique<DmesgClock>());
  rules.push_back(std::make_unique<InferTime>());
  rules.push_back(std::make_unique<ClockStep>());
  rules.push_back(std::make_unique<JobWindow>());
  rules.push_back(std::make_unique<GpuScope>());
  rules.push_back(std::make_unique<Dedupe>());
  rules.push_back(std::make_unique<Provenance>());
  rules.push_back(std::make_unique<Bursts>());
  rules.push_back(std::make_unique<LinkPids>());
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& a, const auto& b) { return a->phase() < b->phase(); });
  return rules;
}

}  // namespace ff
