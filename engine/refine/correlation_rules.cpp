// The correlation rules, one class each, in their fixed order (see
// make_correlation_rules() at the end and "Correlation rules" in
// docs/architecture.md).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "engine/refine/attribution.h"

namespace ff {

const char* candidate_status_name(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::kRoot:
      return "root";
    case CandidateStatus::kCandidate:
      return "candidate";
    case CandidateStatus::kExplained:
      return "explained";
    case CandidateStatus::kLate:
      return "late";
    case CandidateStatus::kWeak:
      return "weak";
  }
  return "?";
}

const Candidate* find_candidate(const Attribution& a, int id) {
  for (const auto& c : a.candidates)
    if (c.id == id) return &c;
  return nullptr;
}

Candidate* find_candidate(Attribution& a, int id) {
  for (auto& c : a.candidates)
    if (c.id == id) return &c;
  return nullptr;
}

namespace {

TimeUs secs(double s) {
  return static_cast<TimeUs>(s * 1e6);
}

std::string when(const MaybeTime& t) {
  return t ? format_time(*t) : "an unknown time";
}

std::string where(const Candidate& c) {
  std::string s = c.node.empty() ? "the job" : c.node;
  if (!c.device.empty()) s += " " + c.device;
  if (c.rank >= 0) s += " (rank " + std::to_string(c.rank) + ")";
  return s;
}

int cause_bonus(const std::string& cause) {
  if (cause == "hardware") return 2;
  if (cause == "application" || cause == "scheduler") return 1;
  return 0;
}

// Meaning of one fault event.
Meaning meaning_of(const Event& e, const CompiledRules& rules, const KindInfo& ki) {
  if (e.kind == "xid") return rules.xid(std::atoi(e.field("code").c_str()));
  if (e.kind == "sxid") return rules.sxid(std::atoi(e.field("code").c_str()));
  return ki.meaning;
}

int score_of(const Meaning& m) {
  if (m.cause == "consequence" || m.cause == "informational") return 5;
  return static_cast<int>(m.strength) * 10 + cause_bonus(m.cause);
}

int code_of(const Event& e) {
  const std::string& c = e.field("code");
  return c.empty() ? -1 : std::atoi(c.c_str());
}

bool chain_side_matches(const Event& e, const std::vector<ChainKind>& side) {
  for (const auto& k : side)
    if (e.kind == k.kind && (k.code < 0 || code_of(e) == k.code)) return true;
  return false;
}

// 0. Causal chains on one node (rules/chains.yaml): a lower cause explains
//    an upper event on the same node (and device) that came at most
//    max_gap_s after it. The explained event joins its cause's candidate as
//    evidence instead of becoming a cause of its own. An upper event that
//    names no node (slurmstepd's oom-kill line in the job's output) is
//    placed on the node of its lower cause when exactly one node has one.
class ApplyChains : public CorrelationRule {
 public:
  const char* name() const override { return "apply_chains"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    TimeUs tol = secs(ctx.rules.settings.onset_tolerance_s);
    for (const auto& chain : ctx.rules.chains) {
      // Only the events of the chain's kinds take part: the pairs are few
      // even when the incident has many events.
      std::vector<std::size_t> uppers, lowers;
      for (std::size_t i = 0; i < a.events.size(); ++i) {
        const Event& e = a.events[i];
        if (e.ignored) continue;
        if (chain_side_matches(e, chain.upper)) uppers.push_back(i);
        if (!e.node.empty() && chain_side_matches(e, chain.lower)) lowers.push_back(i);
      }
      if (uppers.empty() || lowers.empty()) continue;
      std::set<std::tuple<std::string, std::string, std::string>>
          told;  // one line per node and kinds
      for (std::size_t i : uppers) {
        Event& up = a.events[i];
        if (a.chained.count(i)) continue;
        std::vector<std::size_t> lows;
        std::set<std::string> nodes;
        for (std::size_t j : lowers) {
          const Event& lo = a.events[j];
          if (j == i || a.chained.count(j)) continue;
          if (chain_side_matches(lo, chain.upper) && event_time_less(up, lo))
            continue;  // a kind on both sides: only the earlier explains the later
          if (!up.node.empty() && lo.node != up.node) continue;
          if (chain.same_device && !up.device.empty() && !lo.device.empty() &&
              canonical_pci(up.device) != canonical_pci(lo.device))
            continue;
          // The lower cause began no later than the upper event (within the
          // clock tolerance) and at most max_gap_s before it.
          if (lo.earliest && up.latest && *lo.earliest > *up.latest + tol) continue;
          if (up.earliest && lo.latest && *up.earliest - *lo.latest > secs(chain.max_gap_s))
            continue;
          lows.push_back(j);
          nodes.insert(lo.node);
        }
        if (lows.empty() || nodes.size() != 1) continue;
        std::sort(lows.begin(), lows.end(), [&](std::size_t x, std::size_t y) {
          return event_time_less(a.events[x], a.events[y]);
        });
        const Event& lo = a.events[lows.front()];
        if (up.node.empty()) {
          up.node = *nodes.begin();
          a.reasoning.push_back("chain " + chain.name + ": " + up.kind + " (" + up.source + ":" +
                                std::to_string(up.line) + ") names no node: placed on " + up.node +
                                ", the only node with " + lo.kind);
        }
        bool first = told.insert({up.node, up.kind, lo.kind}).second;
        if (chain.root_upper) {
          for (std::size_t j : lows) a.chained[j] = {i, chain.name};
          if (first)
            a.reasoning.push_back("chain " + chain.name + ": " + lo.kind + " on " + lo.node +
                                  " and " + up.kind + " are one fault, named by " + up.kind +
                                  (chain.why.empty() ? "" : " (" + chain.why + ")"));
        } else {
          a.chained[i] = {lows.front(), chain.name};
          if (first)
            a.reasoning.push_back("chain " + chain.name + ": " + up.kind + " on " + up.node +
                                  " explained by " + lo.kind + " at " + when(lo.time) +
                                  (chain.why.empty() ? "" : " (" + chain.why + ")"));
        }
      }
    }
  }
};

// The event that finally explains a chained event (chains may stack).
std::size_t chain_root(const Attribution& a, std::size_t i) {
  for (int depth = 0; depth < 16; ++depth) {
    auto it = a.chained.find(i);
    if (it == a.chained.end()) break;
    i = it->second.first;
  }
  return i;
}

// 1. Fault events → candidates: one per node (or one per job-wide kind),
//    events of one node within same_fault_window_s forming one cause. The
//    meaning comes from the strongest event of the group (hardware before
//    application before driver; the earliest on a tie), so that an
//    application-induced Xid next to the rank's own error is `application`,
//    and a CUDA ECC error next to an Xid 48 only corroborates it.
class BuildCandidates : public CorrelationRule {
 public:
  const char* name() const override { return "build_candidates"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    std::vector<std::size_t> faults;
    for (std::size_t i = 0; i < a.events.size(); ++i) {
      const Event& e = a.events[i];
      const KindInfo* ki = ctx.rules.kind(e.kind);
      if (e.ignored || !ki || ki->role != Role::kFault || a.chained.count(i)) continue;
      // A fault about a peer is the peer's; unresolved, it names nobody.
      if (ki->blames_peer && e.field("peer_node").empty()) continue;
      faults.push_back(i);
    }
    std::sort(faults.begin(), faults.end(), [&](std::size_t x, std::size_t y) {
      return event_time_less(a.events[x], a.events[y]);
    });
    TimeUs window = secs(ctx.rules.settings.same_fault_window_s);
    for (std::size_t i : faults) {
      const Event& e = a.events[i];
      const KindInfo* ki = ctx.rules.kind(e.kind);
      std::string node = ki->job_scope ? "" : ki->blames_peer ? e.field("peer_node") : e.node;
      Candidate* target = nullptr;
      for (auto& c : a.candidates) {
        if (c.node != node) continue;
        const Event& first = a.events[c.events.front()];
        if (node.empty() && first.kind != e.kind) continue;  // job-wide: one per kind
        bool close = !e.time || !first.time || *e.time - *first.time <= window || node.empty();
        if (close) target = &c;
      }
      if (!target) {
        Candidate c;
        c.id = static_cast<int>(a.candidates.size()) + 1;
        c.node = node;
        a.candidates.push_back(c);
        target = &a.candidates.back();
      }
      target->events.push_back(i);
    }
    for (auto& c : a.candidates) {
      int best = -1;
      for (std::size_t i : c.events) {
        const Event& e = a.events[i];
        Meaning m = meaning_of(e, ctx.rules, *ctx.rules.kind(e.kind));
        int s = score_of(m);
        // On a tie the kernel's own account (a trusted source) names the
        // fault rather than a user-level echo of it; then the earliest.
        bool better = s > best || (s == best && e.trusted && !a.events[c.head].trusted);
        if (better) {
          best = s;
          c.head = i;
          c.meaning = m;
        }
        if (e.time && (!c.time || *e.time < *c.time)) c.time = e.time;
        if (e.earliest && (!c.earliest || *e.earliest < *c.earliest)) c.earliest = e.earliest;
        if (e.latest && (!c.latest || *e.latest < *c.latest)) c.latest = e.latest;
      }
      c.score = best;
      const Event& h = a.events[c.head];
      c.kind = h.kind;
      c.code = h.field("code");
      const KindInfo* hk = ctx.rules.kind(h.kind);
      bool about_peer = hk && hk->blames_peer;  // the reporter's rank and GPU are not the peer's
      c.device = about_peer ? "" : h.device;
      c.rank = about_peer ? -1 : h.rank;
      for (std::size_t i : c.events) {
        const Event& e = a.events[i];
        if (c.rank < 0 && e.rank >= 0 && !about_peer) c.rank = e.rank;
        if (c.device.empty() && !e.device.empty() && e.kind != "xid" && !about_peer)
          c.device = e.device;
        const KindInfo* ki = ctx.rules.kind(e.kind);
        if (i != c.head && ki && !ki->corroborates.empty() && ki->corroborates == c.meaning.domain)
          c.corroborated = true;
      }
      if (c.meaning.cause == "consequence" || c.meaning.cause == "informational")
        c.meaning.strength = Strength::kWeak;
      double lag = ctx.rules.kind(c.kind) ? ctx.rules.kind(c.kind)->detection_lag_s : 0;
      MaybeTime began = c.earliest ? c.earliest : c.time;
      if (began) c.earliest_possible = *began - secs(lag);
    }
    // Chained events are evidence of the candidate of the event that explains them.
    for (const auto& [i, link] : a.chained) {
      std::size_t root = chain_root(a, i);
      for (auto& c : a.candidates) {
        if (std::find(c.events.begin(), c.events.end(), root) == c.events.end()) continue;
        c.events.push_back(i);
        const Event& e = a.events[i];
        if (!e.device.empty() && e.device != c.device &&
            std::find(c.related_devices.begin(), c.related_devices.end(), e.device) ==
                c.related_devices.end())
          c.related_devices.push_back(e.device);
        if (e.trusted && !a.events[c.head].trusted && e.kind == a.events[c.head].kind) c.head = i;
        break;
      }
    }
    if (!a.chained.empty())
      for (auto& c : a.candidates)
        std::sort(c.events.begin(), c.events.end(), [&](std::size_t x, std::size_t y) {
          return event_time_less(a.events[x], a.events[y]);
        });
  }
};

// 1b. An application-induced Xid (an MMU fault, a graphics exception) that
//     the same GPU logged for other programs before this job began (events
//     set aside as stale, counted by the job_window filter) may be the GPU's
//     own fault: the same fault read as the GPU's is an alternative
//     candidate, so the verdict cannot blame the application alone.
class RecurringXid : public CorrelationRule {
 public:
  const char* name() const override { return "recurring_xid"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    const double min = ctx.rules.settings.recurring_xid_min;
    if (min <= 0) return;
    std::size_t n = a.candidates.size();
    for (std::size_t k = 0; k < n; ++k) {
      const Candidate& c = a.candidates[k];
      if (c.meaning.domain != "application") continue;
      // The application-induced Xid among the candidate's events, if any.
      const Event* x = nullptr;
      for (std::size_t i : c.events) {
        const Event& e = a.events[i];
        if (e.kind == "xid" && !e.device.empty() &&
            ctx.rules.xid(std::atoi(e.field("code").c_str())).cause == "application") {
          x = &e;
          break;
        }
      }
      if (!x) continue;
      auto it = ctx.prior_faults.find({c.node, x->device, "xid:" + x->field("code")});
      if (it == ctx.prior_faults.end() || static_cast<double>(it->second.size()) < min) continue;
      const std::string code = x->field("code");
      Candidate alt = c;
      alt.device = x->device;
      alt.id = static_cast<int>(a.candidates.size()) + 1;
      alt.alternative_of = c.id;
      alt.kind = "xid_history";
      alt.meaning = {"Xid " + code + " on this GPU " + std::to_string(it->second.size()) +
                         " time(s) before this job",
                     "hardware",
                     Strength::kMedium,
                     "gpu",
                     "gpu.recurring_xid",
                     "investigate"};
      alt.score = score_of(alt.meaning);
      a.reasoning.push_back("Xid " + code + " on " + where(alt) + " was logged " +
                            std::to_string(it->second.size()) +
                            " time(s) before this job began: the GPU may be at fault, not the job");
      a.candidates.push_back(alt);
    }
  }
};

// 2. The scheduler's terminal state implies a cause even when no log line
//    says so (TIMEOUT, CANCELLED, PREEMPTED, NODE_FAIL, OUT_OF_MEMORY, ...).
class StateImpliedCause : public CorrelationRule {
 public:
  const char* name() const override { return "state_implied_cause"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    static const std::map<std::string, Meaning> implied = {
        {"TIMEOUT",
         {"time limit reached (job state TIMEOUT)", "scheduler", Strength::kStrong, "scheduler",
          "scheduler.time_limit", "increase_time_limit"}},
        {"DEADLINE",
         {"deadline reached (job state DEADLINE)", "scheduler", Strength::kStrong, "scheduler",
          "scheduler.deadline", "none"}},
        {"CANCELLED",
         {"job cancelled (job state CANCELLED)", "scheduler", Strength::kStrong, "scheduler",
          "scheduler.cancelled", "none"}},
        {"PREEMPTED",
         {"job preempted (job state PREEMPTED)", "scheduler", Strength::kStrong, "scheduler",
          "scheduler.preempted", "restart_job"}},
        {"NODE_FAIL",
         {"node failure (job state NODE_FAIL)", "scheduler", Strength::kMedium, "scheduler",
          "scheduler.node_failure", "investigate"}},
        {"BOOT_FAIL",
         {"node boot failure (job state BOOT_FAIL)", "scheduler", Strength::kMedium, "scheduler",
          "scheduler.boot_failure", "investigate"}},
        {"OUT_OF_MEMORY",
         {"job hit its memory limit (job state OUT_OF_MEMORY)", "application", Strength::kStrong,
          "host", "host.cgroup_oom", "fix_application"}},
    };
    auto it = implied.find(ctx.job.state);
    if (it == implied.end()) return;
    for (const auto& c : a.candidates)
      if (c.meaning.sub_domain == it->second.sub_domain) return;  // a log line already says it
    Candidate c;
    c.id = static_cast<int>(a.candidates.size()) + 1;
    c.meaning = it->second;
    c.kind = "job.state";
    c.code = ctx.job.state;
    c.time = ctx.job.end_time;
    c.earliest_possible = c.time;
    c.from_state = true;
    c.score = score_of(c.meaning);
    // The node of a node failure is only known from a log line.
    a.candidates.push_back(c);
    a.reasoning.push_back("job state " + ctx.job.state + " implies " + c.meaning.sub_domain +
                          " (no log line of it was found)");
  }
};

// 3. When the failure began: the first symptom logged, or earlier when a
//    watchdog timeout says how long its collective had been hanging.
class FailureOnset : public CorrelationRule {
 public:
  const char* name() const override { return "failure_onset"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    for (std::size_t i = 0; i < a.events.size(); ++i) {
      const Event& e = a.events[i];
      const KindInfo* ki = ctx.rules.kind(e.kind);
      if (e.ignored || !ki || ki->role != Role::kSymptom || !e.time) continue;
      if (!a.first_symptom || *e.time < *a.first_symptom) a.first_symptom = e.time;
      // A watchdog says how long its collective had hung: the failure began
      // that much before the line.
      TimeUs hung = 0;
      if (!e.field("ran_for_ms").empty()) hung = std::atoll(e.field("ran_for_ms").c_str()) * 1000;
      TimeUs start = *e.time - hung;
      if (!a.onset || start < *a.onset) a.onset = start;
      if (e.earliest && (!a.onset_earliest || *e.earliest - hung < *a.onset_earliest))
        a.onset_earliest = *e.earliest - hung;
      if (e.latest && (!a.onset_latest || *e.latest - hung < *a.onset_latest))
        a.onset_latest = *e.latest - hung;
    }
    if (a.onset && !a.onset_latest) a.onset_latest = a.onset;
    if (a.onset && !a.onset_earliest) a.onset_earliest = a.onset;
    if (a.onset) {
      std::string span = *a.onset_earliest == *a.onset_latest
                             ? format_time(*a.onset_latest)
                             : "between " + format_time(*a.onset_earliest) + " and " +
                                   format_time(*a.onset_latest);
      a.reasoning.push_back("failure onset " + span + " (first symptom logged " +
                            format_time(*a.first_symptom) + ")");
    }
  }
};

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

int to_number(const std::string& s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("-0123456789") != std::string::npos)
    return -1;
  return std::atoi(s.c_str());
}

// NCCL RAS's report, one communicator's block at a time (its lines in file
// order): the ranks whose operation count is below the others', or whose
// data RAS could not get, are behind. A rank is named by its GPU and the
// address of its node, which the job's records and NCCL's bootstrap lines
// turn into a global rank; the communicator rank is not the global one
// outside the default group.
class RasReader {
 public:
  RasReader(Attribution& a, FilterContext& ctx) : a_(a), ctx_(ctx) {}

  void line(std::size_t i) {
    const Event& e = a_.events[i];
    if (e.source != source_ || e.line > last_line_ + kMaxGap) flush();
    source_ = e.source;
    last_line_ = e.line;
    if (!e.field("ras_status").empty()) {
      flush();
      source_ = e.source;
      last_line_ = e.line;
      status_ = e.field("ras_status");
      return;
    }
    if (status_.empty()) return;
    if (!e.field("ras_ranks").empty()) {
      groups_.push_back({std::atoll(e.field("ras_ops").c_str()), {}});
      return;
    }
    if (e.field("comm_rank").empty()) return;
    if (!e.field("ras_ops").empty() || !e.field("ras_none").empty())
      groups_.push_back(
          {e.field("ras_none").empty() ? std::atoll(e.field("ras_ops").c_str()) : -1, {i}});
    else if (!groups_.empty() && status_ == "MISMATCH")
      groups_.back().second.push_back(i);
    else
      groups_.push_back({-1, {i}});
  }

  void flush() {
    if (!status_.empty()) {
      long long most = -1;
      for (const auto& [ops, lines] : groups_) most = std::max(most, ops);
      for (const auto& [ops, lines] : groups_) {
        bool behind = status_ == "MISMATCH" ? ops < most : true;
        if (!behind) continue;
        for (std::size_t i : lines) report(i);
      }
    }
    status_.clear();
    groups_.clear();
  }

 private:
  static constexpr std::uint64_t kMaxGap = 8;  // lines between two lines of one block

  void report(std::size_t i) {
    const Event& e = a_.events[i];
    auto node = ctx_.ip_to_node.find(e.field("ras_addr"));
    if (node == ctx_.ip_to_node.end()) return;
    std::string pci = ctx_.job.gpu_pci(node->second, to_number(e.field("ras_gpu")));
    int rank = pci.empty() ? -1 : ctx_.job.rank_for_gpu(node->second, pci);
    if (rank < 0) return;
    RankReport r;
    r.rank = rank;
    r.node = node->second;
    r.behind = true;
    r.source = "nccl_ras";
    r.time = e.time;
    r.event = i;
    a_.progress.add(r);
  }

  Attribution& a_;
  FilterContext& ctx_;
  std::string source_, status_;
  std::uint64_t last_line_ = 0;
  std::vector<std::pair<long long, std::vector<std::size_t>>> groups_;
};

// 3b. A hang: from each rank's watchdog and progress lines (and the flight
//     recorders), the ranks that never reached the collective the others
//     timed out in (engine/refine/collective_progress.h). Such a rank is a
//     candidate on its node, from when the others began to wait: a fault
//     on that node before it (an Xid, a GSP timeout) comes first and
//     explains it. Ranks in different collectives at the same point are
//     one job-wide cause. Every rank there: no rank is picked.
class CollectiveHang : public CorrelationRule {
 public:
  const char* name() const override { return "collective_hang"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    RasReader ras(a, ctx);
    for (std::size_t i = 0; i < a.events.size(); ++i) {
      const Event& e = a.events[i];
      if (e.ignored) continue;
      if (e.kind == "nccl.comm_init") {
        a.progress.add_comm_member({e.field("comm_id"), to_number(e.field("comm_rank")),
                                    to_number(e.field("nranks")), e.node, e.field("pid")});
        continue;
      }
      if (e.kind == "torch.desync_report") {
        // "[1, 3]": ranks of the reporting rank's group, which the line does not name.
        std::string list = e.field("group_ranks");
        for (std::size_t at = 0; at < list.size();) {
          std::size_t end = list.find(',', at);
          if (end == std::string::npos) end = list.size();
          RankReport r;
          r.group_rank = to_number(trim(list.substr(at, end - at)));
          r.behind = true;
          r.source = "desync_report";
          r.time = e.time;
          r.event = i;
          if (r.group_rank >= 0) a.progress.add(r);
          at = end + 1;
        }
        continue;
      }
      if (e.kind == "nccl.ras_report") {
        ras.line(i);
        continue;
      }
      if (e.kind != "nccl.timeout" && e.kind != "nccl.work_progress") continue;
      if (e.kind == "nccl.timeout" && e.field("seq").empty()) continue;
      RankReport r;
      r.pg = e.field("pg");
      r.rank = to_number(e.field("rank"));
      r.group_rank = to_number(e.field("rank2"));
      if (r.rank < 0 && r.pg == "0") r.rank = r.group_rank;
      r.node = e.node;
      r.op = e.field("op");
      r.source = "watchdog";
      r.time = e.time;
      r.event = i;
      if (!e.field("seq").empty()) r.timed_out_at = to_number(e.field("seq"));
      if (e.kind == "nccl.work_progress") {
        r.last_enqueued = to_number(e.field("last_enqueued"));
        r.last_completed = to_number(e.field("last_completed"));
      }
      a.progress.add(r);
    }
    ras.flush();
    a.hang = a.progress.analyse(ctx.job);
    if (!a.hang.shown()) return;
    a.reasoning.push_back("hang: " + a.hang.hang.summary);
    MaybeTime began = a.onset;
    for (std::size_t gi = 0; gi < a.hang.hang.groups.size(); ++gi) {
      const HangGroup& g = a.hang.hang.groups[gi];
      std::string at = "collective " + std::to_string(g.seq.value_or(-1)) +
                       (g.op.empty() ? "" : " (" + g.op + ")") + " of process group " + g.pg;
      if (g.status == "mismatch") {
        std::vector<std::size_t> evs;
        for (std::size_t ri = 0; ri < g.ranks.size(); ++ri)
          for (std::size_t k : a.hang.rank_events[{gi, ri}]) evs.push_back(k);
        Candidate* c = add(a, ctx, "", "", -1, "collective.mismatch",
                           "ranks in different collectives at " + at, evs, began);
        if (c)
          c->detail =
              "process group " + g.pg + ", collective " + std::to_string(g.seq.value_or(-1));
        continue;
      }
      if (g.status != "lagging") continue;
      // One candidate per node: its lagging ranks, named one by one.
      std::map<std::string, std::vector<std::size_t>> by_node;
      for (std::size_t ri = 0; ri < g.ranks.size(); ++ri)
        if (g.ranks[ri].state == "lagging") by_node[g.ranks[ri].node].push_back(ri);
      for (const auto& [node, ranks] : by_node) {
        if (node.empty()) {
          a.reasoning.push_back("a rank behind " + at +
                                " is on a node the job's records do not name: not a candidate");
          continue;
        }
        std::vector<std::size_t> evs;
        std::string who;
        for (std::size_t ri : ranks) {
          const HangRank& r = g.ranks[ri];
          who += (who.empty() ? "" : ", ") + (r.rank >= 0
                                                  ? "rank " + std::to_string(r.rank)
                                                  : "group rank " + std::to_string(r.group_rank));
          for (std::size_t k : a.hang.rank_events[{gi, ri}]) evs.push_back(k);
        }
        const HangRank& first = g.ranks[ranks.front()];
        bool one = ranks.size() == 1;
        Candidate* c = add(a, ctx, node, one ? first.gpu : "", one ? first.rank : -1,
                           "collective.lagging_rank", who + " never reached " + at, evs, began);
        if (c)
          c->detail = (one ? "" : who + ", ") + "process group " + g.pg + ", collective " +
                      std::to_string(g.seq.value_or(-1));
        // Its own node's kernel log would show the GPU or host fault that
        // held it back: without one, that cannot be excluded.
        if (c && a.nodes_missing_kernel.count(node)) {
          c->meaning.strength = Strength::kWeak;
          c->note = "no kernel messages from " + node + ": a fault there cannot be excluded";
        }
      }
    }
  }

 private:
  Candidate* add(Attribution& a, FilterContext& ctx, const std::string& node,
                 const std::string& device, int rank, const std::string& kind,
                 const std::string& label, std::vector<std::size_t> evs, MaybeTime began) {
    const KindInfo* ki = ctx.rules.kind(kind);
    if (!ki) return nullptr;
    std::sort(evs.begin(), evs.end(), [&](std::size_t x, std::size_t y) {
      return event_time_less(a.events[x], a.events[y]);
    });
    evs.erase(std::unique(evs.begin(), evs.end()), evs.end());
    Candidate c;
    c.id = static_cast<int>(a.candidates.size()) + 1;
    c.node = node;
    c.device = device;
    c.rank = rank;
    c.events = evs;
    c.head = evs.empty() ? 0 : evs.front();
    c.kind = kind;
    c.meaning = ki->meaning;
    c.meaning.name = label;
    c.score = score_of(c.meaning);
    // It began when the others started to wait for it.
    c.time = began;
    c.earliest = a.onset_earliest ? a.onset_earliest : began;
    c.latest = a.onset_latest ? a.onset_latest : began;
    c.earliest_possible = c.earliest;
    a.candidates.push_back(c);
    a.reasoning.push_back("candidate " + std::to_string(c.id) + ": " + label +
                          (node.empty() ? "" : " (on " + node + ")"));
    return &a.candidates.back();
  }
};

// 4. The first fault: the earliest candidate strong enough to carry a
//    verdict that began no later than the failure onset (plus a clock
//    tolerance). Later faults on the same node, job-wide outcomes after it,
//    and faults after the onset are explained by it; another such fault on
//    a different node is an independent cause (→ ambiguous).
class ChooseFirstFault : public CorrelationRule {
 public:
  const char* name() const override { return "choose_first_fault"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    const Settings& s = ctx.rules.settings;
    std::vector<Candidate*> order;
    for (auto& c : a.candidates) order.push_back(&c);
    std::stable_sort(order.begin(), order.end(), [](const Candidate* x, const Candidate* y) {
      if (x->time.has_value() != y->time.has_value()) return x->time.has_value();
      if (x->time && *x->time != *y->time) return *x->time < *y->time;
      return x->score > y->score;
    });
    // Late only when provably after the failure began: after the latest
    // time the failure can have begun, not after an uncertain symptom's
    // lower bound.
    auto before_onset = [&](const Candidate& c) {
      if (!a.onset_latest || !c.earliest_possible) return true;
      return *c.earliest_possible <= *a.onset_latest + secs(s.onset_tolerance_s);
    };
    // A fault the job provably outlived by survived_fault_s did not cause
    // this failure when another qualifying fault can have: those set aside
    // first, so that what they would have explained is judged again.
    auto outlived = [&](const Candidate& c) {
      MaybeTime latest = c.latest ? c.latest : c.time;
      return a.onset_earliest && latest && *a.onset_earliest - *latest > secs(s.survived_fault_s);
    };
    auto qualifies = [&](const Candidate& c) {
      return c.meaning.strength != Strength::kWeak && before_onset(c);
    };
    // Only a fault of a node can take over: a job-wide outcome (the time
    // limit that ended a job hung since the fault) or a scheduler reaction
    // says nothing about whether the job kept working after it.
    bool some_not_outlived = false;
    for (Candidate* c : order)
      some_not_outlived |=
          qualifies(*c) && !outlived(*c) && !c->node.empty() && c->meaning.domain != "scheduler";
    Candidate* head = nullptr;
    for (Candidate* c : order) {
      if (c->alternative_of) continue;  // judged with the candidate it reads differently
      if (c->meaning.strength == Strength::kWeak) {
        c->status = CandidateStatus::kWeak;
        continue;
      }
      if (!before_onset(*c)) {
        c->status = CandidateStatus::kLate;
        c->note = "began after the failure onset";
        continue;
      }
      if (some_not_outlived && outlived(*c)) {
        MaybeTime latest = c->latest ? c->latest : c->time;
        c->status = CandidateStatus::kExplained;
        c->note = "the job kept running long after it";
        a.reasoning.push_back(
            "candidate " + std::to_string(c->id) + " ignored: the job ran on for " +
            std::to_string((*a.onset_earliest - *latest) / kUsPerSecond) + " s after it");
        continue;
      }
      if (!head) {
        head = c;
        c->status = CandidateStatus::kRoot;
        continue;
      }
      if (c->node == head->node && !c->node.empty()) {
        c->status = CandidateStatus::kExplained;
        c->note = "later fault on the root-cause node";
      } else if (c->node.empty() && head->time && c->time && *c->time > *head->time) {
        c->status = CandidateStatus::kExplained;
        c->note = "job-wide outcome after the root cause";
      } else if (c->meaning.domain == "scheduler" && head->meaning.domain != "scheduler") {
        c->status = CandidateStatus::kExplained;
        c->note = "scheduler reaction after a lower-level fault";
      } else {
        c->status = CandidateStatus::kCandidate;
        c->note = "independent fault on another node before the failure onset";
      }
    }
    // Another reading of a fault stands or falls with it.
    for (Candidate* c : order) {
      if (!c->alternative_of) continue;
      const Candidate* o = find_candidate(a, c->alternative_of);
      bool open =
          o && (o->status == CandidateStatus::kRoot || o->status == CandidateStatus::kCandidate);
      c->status = open ? CandidateStatus::kCandidate : o ? o->status : CandidateStatus::kExplained;
      c->note = "another reading of candidate " + std::to_string(c->alternative_of);
    }
    // Nothing strong enough: the weak candidates from before the onset are
    // all listed, and the verdict cannot be more certain than they are.
    if (!head)
      for (Candidate* c : order)
        if (c->status == CandidateStatus::kWeak && before_onset(*c)) {
          c->status = CandidateStatus::kCandidate;
          c->note = "weak evidence only";
        }
    for (Candidate* c : order) {
      if (c->status == CandidateStatus::kRoot || c->status == CandidateStatus::kCandidate)
        a.roots.push_back(c->id);
    }
    if (head)
      a.reasoning.push_back("first fault: " + head->meaning.sub_domain + " on " + where(*head) +
                            " at " + when(head->time));
  }
};

// 5. With no fault found, communication errors that name one peer point at
//    it: a weak candidate, never a certain verdict.
class PeerBlame : public CorrelationRule {
 public:
  const char* name() const override { return "peer_blame"; }
  void apply(Attribution& a, FilterContext&) override {
    if (!a.roots.empty()) return;
    std::map<std::string, std::set<std::string>> reporters;
    std::map<std::string, std::vector<std::size_t>> evidence;
    for (std::size_t i = 0; i < a.events.size(); ++i) {
      const Event& e = a.events[i];
      const std::string& peer = e.field("peer_node");
      if (e.ignored || peer.empty() || peer == e.node) continue;
      reporters[peer].insert(e.node);
      evidence[peer].push_back(i);
    }
    std::size_t best = 0;
    for (const auto& [peer, from] : reporters) best = std::max(best, from.size());
    if (best == 0) return;
    for (const auto& [peer, from] : reporters) {
      if (from.size() != best) continue;
      Candidate c;
      c.id = static_cast<int>(a.candidates.size()) + 1;
      c.node = peer;
      c.events = evidence[peer];
      c.head = c.events.front();
      c.kind = "peer_blame";
      c.meaning = {"named as the failing peer by " + std::to_string(from.size()) + " node(s)",
                   "unknown",
                   Strength::kWeak,
                   "unknown",
                   "unknown.peer_failure",
                   "investigate"};
      c.time = a.events[c.head].time;
      c.status = CandidateStatus::kCandidate;
      c.note = "communication errors on other nodes name this node";
      a.candidates.push_back(c);
      a.roots.push_back(c.id);
      a.reasoning.push_back("no fault found; peers name " + peer +
                            " in their communication errors");
    }
  }
};

// 6. A node with no kernel messages at all may hide the fault: when nothing
//    certain was found, such nodes are candidates too.
class CoverageGaps : public CorrelationRule {
 public:
  const char* name() const override { return "coverage_gaps"; }
  void apply(Attribution& a, FilterContext&) override {
    bool certain = false;
    for (int id : a.roots) {
      const Candidate* c = find_candidate(a, id);
      if (c && c->meaning.strength != Strength::kWeak) certain = true;
    }
    if (certain) return;
    if (!a.metrics_failed.empty() && a.roots.empty()) {
      // Metrics were asked for and could not be read: a fault only they
      // would show (an IB port counter) cannot be excluded.
      Candidate c;
      c.id = static_cast<int>(a.candidates.size()) + 1;
      c.kind = "missing_metrics";
      c.meaning = {"metrics could not be read", "unknown",    Strength::kWeak, "unknown",
                   "unknown.missing_metrics",   "investigate"};
      c.status = CandidateStatus::kCandidate;
      c.note = "decisive source missing: " + a.metrics_failed;
      a.candidates.push_back(c);
      a.roots.push_back(c.id);
      a.reasoning.push_back("metrics could not be read (" + a.metrics_failed +
                            "): a fault they would show cannot be excluded");
    }
    for (const auto& node : a.nodes_missing_kernel) {
      bool listed = false;
      for (const auto& c : a.candidates)
        if (c.node == node &&
            (c.status == CandidateStatus::kCandidate || c.status == CandidateStatus::kRoot))
          listed = true;
      if (listed) continue;
      Candidate c;
      c.id = static_cast<int>(a.candidates.size()) + 1;
      c.node = node;
      c.kind = "missing_logs";
      c.meaning = {"no kernel or syslog messages from this node",
                   "unknown",
                   Strength::kWeak,
                   "unknown",
                   "unknown.missing_logs",
                   "investigate"};
      c.status = CandidateStatus::kCandidate;
      c.note = "decisive source missing";
      a.candidates.push_back(c);
      a.roots.push_back(c.id);
      a.reasoning.push_back("no kernel messages from " + node +
                            ": a fault there cannot be excluded");
    }
  }
};

// 7. The verdict from the state and the roots.
class DecideVerdict : public CorrelationRule {
 public:
  const char* name() const override { return "decide_verdict"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    const std::string& st = ctx.job.state;
    bool completed = st == "COMPLETED" && (ctx.job.exit_code.empty() || ctx.job.exit_code == "0:0");
    if (completed) {
      a.verdict = "no_failure";
      for (auto& c : a.candidates)
        if (c.status == CandidateStatus::kRoot || c.status == CandidateStatus::kCandidate) {
          c.status = CandidateStatus::kWeak;
          c.note = "the job completed anyway";
        }
      a.roots.clear();
      a.reasoning.push_back("job state COMPLETED: no failure");
      return;
    }
    int strong = 0;
    for (int id : a.roots)
      if (find_candidate(a, id)->meaning.strength != Strength::kWeak) ++strong;
    // The same configuration fault on several nodes (a kind marked
    // shared_cause, one sub_domain, every one strong enough) is one cause.
    bool shared = a.roots.size() > 1 && strong == static_cast<int>(a.roots.size());
    for (int id : a.roots) {
      const Candidate* c = find_candidate(a, id);
      const KindInfo* ki = ctx.rules.kind(c->kind);
      shared = shared && ki && ki->shared_cause && !c->node.empty() &&
               c->meaning.sub_domain == find_candidate(a, a.roots.front())->meaning.sub_domain;
    }
    if (a.roots.empty())
      a.verdict = "unattributed";
    else if ((a.roots.size() == 1 && strong == 1) || shared)
      a.verdict = "attributed";
    else
      a.verdict = "ambiguous";
    if (shared)
      a.reasoning.push_back("the same " + find_candidate(a, a.roots.front())->meaning.sub_domain +
                            " on " + std::to_string(a.roots.size()) +
                            " nodes: one cause common to them, not independent faults");
    if (a.verdict == "attributed")
      for (int id : a.roots) find_candidate(a, id)->status = CandidateStatus::kRoot;
    if (a.verdict == "ambiguous") {
      for (int id : a.roots) {
        find_candidate(a, id)->status = CandidateStatus::kCandidate;
      }
    }
    a.reasoning.push_back("verdict " + a.verdict + " with " + std::to_string(a.roots.size()) +
                          " root candidate(s)");
  }
};

// 8. Symptoms per node and kind; those after the root cause are demoted.
class GroupSymptoms : public CorrelationRule {
 public:
  const char* name() const override { return "group_symptoms"; }
  void apply(Attribution& a, FilterContext& ctx) override {
    std::map<std::pair<std::string, std::string>, SymptomGroup> groups;
    for (std::size_t i = 0; i < a.events.size(); ++i) {
      const Event& e = a.events[i];
      const KindInfo* ki = ctx.rules.kind(e.kind);
      if (e.ignored || !ki || ki->role != Role::kSymptom) continue;
      auto& g = groups[{e.node, e.kind}];
      g.node = e.node;
      g.kind = e.kind;
      g.events.push_back(i);
    }
    MaybeTime root_time;
    std::set<std::string> root_nodes;
    std::string root_label;
    for (int id : a.roots) {
      const Candidate* c = find_candidate(a, id);
      MaybeTime began = c->earliest ? c->earliest : c->time;
      if (began && (!root_time || *began < *root_time)) root_time = began;
      if (!c->node.empty()) root_nodes.insert(c->node);
      if (root_label.empty())
        root_label = c->meaning.sub_domain + (c->node.empty() ? "" : " on " + c->node);
    }
    TimeUs tol = secs(ctx.rules.settings.onset_tolerance_s);
    for (auto& [key, g] : groups) {
      std::sort(g.events.begin(), g.events.end(), [&](std::size_t x, std::size_t y) {
        return event_time_less(a.events[x], a.events[y]);
      });
      g.count = g.events.size();
      for (const auto& [k, n] : a.overflow)
        if (k.first == g.node && k.second == g.kind) g.count += n;
      const Event& first = a.events[g.events.front()];
      if (a.verdict == "no_failure") {
        g.demoted = true;
        g.explained_by = "the job completed";
      } else if (!a.roots.empty()) {
        MaybeTime first_latest = first.latest ? first.latest : first.time;
        bool after = !root_time || !first_latest || *first_latest >= *root_time - tol;
        if (after || root_nodes.count(g.node)) {
          g.demoted = true;
          g.explained_by = a.verdict == "attributed" ? root_label : "one of the candidate causes";
        }
      }
      a.symptoms.push_back(std::move(g));
    }
  }
};

}  // namespace

std::vector<std::unique_ptr<CorrelationRule>> make_correlation_rules() {
  std::vector<std::unique_ptr<CorrelationRule>> rules;
  rules.push_back(std::make_unique<ApplyChains>());
  rules.push_back(std::make_unique<BuildCandidates>());
  rules.push_back(std::make_unique<RecurringXid>());
  rules.push_back(std::make_unique<StateImpliedCause>());
  rules.push_back(std::make_unique<FailureOnset>());
  rules.push_back(std::make_unique<CollectiveHang>());
  rules.push_back(std::make_unique<ChooseFirstFault>());
  rules.push_back(std::make_unique<PeerBlame>());
  rules.push_back(std::make_unique<CoverageGaps>());
  rules.push_back(std::make_unique<DecideVerdict>());
  rules.push_back(std::make_unique<GroupSymptoms>());
  return rules;
}

}  // namespace ff
