#include "engine/refine/collective_progress.h"

#include <algorithm>
#include <cctype>

namespace ff {

namespace {

// A job of 32,768 ranks with a handful of groups each stays far below
// these; a flood of forged lines cannot grow memory past them.
constexpr std::size_t kMaxReports = 1 << 20;
constexpr std::size_t kMaxStates = 1 << 21;
// Columns of the ranks × collectives view either side of the divergence,
// and rows at most: the lagging ranks always, then the others by rank.
constexpr std::int64_t kViewSpan = 4;
constexpr std::size_t kMaxViewRows = 256;
// Ranks listed per group: the diagnosis of a 32,768-rank job stays small.
constexpr std::size_t kMaxListedRanks = 4096;
constexpr std::size_t kMaxListedJoined = 64;
constexpr std::size_t kMaxListedSilent = 256;
// How much earlier than the others' timeout a rank's line elsewhere may be
// and still show it alive then: ranks' clocks and log flushes differ.
constexpr TimeUs kAliveTolerance = 60 * kUsPerSecond;

// One rank of one group, merged over every report about it.
struct Merged {
  int rank = -1, group_rank = -1;
  std::string node;
  std::optional<std::int64_t> timed_out_at, last_enqueued, last_completed;
  std::string op;
  std::set<std::string> sources;
  std::vector<std::size_t> events;
  bool behind = false;
  MaybeTime first_time;
};

void merge_into(Merged& m, const RankReport& r) {
  if (m.rank < 0) m.rank = r.rank;
  if (m.group_rank < 0) m.group_rank = r.group_rank;
  if (m.node.empty()) m.node = r.node;
  // The earliest collective it timed out in; the furthest it got.
  if (r.timed_out_at && (!m.timed_out_at || *r.timed_out_at < *m.timed_out_at)) {
    m.timed_out_at = r.timed_out_at;
    if (!r.op.empty()) m.op = r.op;
  }
  if (m.op.empty() && !r.op.empty()) m.op = r.op;
  if (r.last_enqueued && (!m.last_enqueued || *r.last_enqueued > *m.last_enqueued))
    m.last_enqueued = r.last_enqueued;
  if (r.last_completed && (!m.last_completed || *r.last_completed > *m.last_completed))
    m.last_completed = r.last_completed;
  if (!r.source.empty()) m.sources.insert(r.source);
  if (r.event != kNoEvent) m.events.push_back(r.event);
  m.behind = m.behind || r.behind;
  if (r.time && (!m.first_time || *r.time < *m.first_time)) m.first_time = r.time;
}

bool numeric_less(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

std::string rank_name(const Merged& m) {
  if (m.rank >= 0) return "rank " + std::to_string(m.rank);
  return "group rank " + std::to_string(m.group_rank);
}

}  // namespace

std::string CollectiveProgress::normalise_op(const std::string& op) {
  std::string s = op;
  if (auto colon = s.find(':'); colon != std::string::npos) s = s.substr(colon + 1);
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // "_ALLGATHER_BASE" / "all_gather_into_tensor" and friends are one collective.
  for (const char* suffix : {"BASE", "INTOTENSOR", "TENSOR"})
    if (out.size() > std::string(suffix).size() &&
        out.compare(out.size() - std::string(suffix).size(), std::string::npos, suffix) == 0)
      out.resize(out.size() - std::string(suffix).size());
  return out;
}

void CollectiveProgress::add(const RankReport& r) {
  if (reports_.size() >= kMaxReports) {
    ++dropped_;
    return;
  }
  reports_.push_back(r);
}

void CollectiveProgress::add_state(const CollectiveState& s) {
  if (states_.size() >= kMaxStates) {
    ++dropped_;
    return;
  }
  states_[{s.pg, s.rank, s.seq}] = s;
}

void CollectiveProgress::add_comm_member(const CommMember& m) {
  if (comm_members_.size() >= kMaxReports) {
    ++dropped_;
    return;
  }
  comm_members_.push_back(m);
}

std::vector<int> CollectiveProgress::members_from_communicators(
    const std::vector<RankReport>& reports, int world) const {
  if (world <= 0 || comm_members_.empty()) return {};
  // A process's global rank: its rank in a communicator of the job's size.
  std::map<std::pair<std::string, std::string>, int> global_of;
  std::set<std::pair<std::string, std::string>> conflicting;
  for (const auto& m : comm_members_) {
    if (m.nranks != world || m.node.empty()) continue;
    auto key = std::make_pair(m.node, m.pid);
    auto [it, inserted] = global_of.emplace(key, m.comm_rank);
    if (!inserted && it->second != m.comm_rank) conflicting.insert(key);
  }
  for (const auto& k : conflicting) global_of.erase(k);
  std::map<std::string, std::vector<int>> comms;  // comm id → global rank per comm rank
  for (const auto& m : comm_members_) {
    if (m.nranks <= 0 || m.nranks > world || m.comm_rank < 0 || m.comm_rank >= m.nranks) continue;
    auto& ranks = comms[m.comm_id];
    if (ranks.empty()) ranks.assign(static_cast<std::size_t>(m.nranks), -1);
    if (ranks.size() != static_cast<std::size_t>(m.nranks)) continue;
    auto g = global_of.find({m.node, m.pid});
    if (g != global_of.end()) ranks[static_cast<std::size_t>(m.comm_rank)] = g->second;
  }
  std::vector<std::pair<int, int>> pairs;  // (global, group) the reports give
  for (const auto& r : reports)
    if (r.rank >= 0 && r.group_rank >= 0) pairs.push_back({r.rank, r.group_rank});
  if (pairs.empty()) return {};
  const std::vector<int>* found = nullptr;
  for (const auto& [id, ranks] : comms) {
    if (std::find(ranks.begin(), ranks.end(), -1) != ranks.end()) continue;
    bool agrees = true;
    for (const auto& [g, l] : pairs)
      agrees = agrees && static_cast<std::size_t>(l) < ranks.size() &&
               ranks[static_cast<std::size_t>(l)] == g;
    if (!agrees) continue;
    if (found && *found != ranks) return {};  // two communicators fit: not known
    found = &ranks;
  }
  return found ? *found : std::vector<int>{};
}

void CollectiveProgress::add_flight_recorder(const FlightRecorderDump& dump,
                                             const std::string& node, std::size_t event) {
  std::map<std::string, std::string> id_of_name;  // pg_config is keyed by the group's name
  std::map<std::string, RankReport> per_group;
  for (const auto& e : dump.entries) {
    if (e.is_p2p || e.collective_seq_id < 0 || e.pg_id.empty()) continue;
    if (!e.pg_name.empty()) id_of_name.emplace(e.pg_name, e.pg_id);
    add_state({e.pg_id, dump.rank, e.collective_seq_id, e.profiling_name, e.state});
    RankReport& r = per_group[e.pg_id];
    r.pg = e.pg_id;
    r.rank = dump.rank;
    r.node = node;
    r.source = "flight_recorder";
    r.event = event;
    if (!r.last_enqueued || e.collective_seq_id > *r.last_enqueued)
      r.last_enqueued = e.collective_seq_id;
    if (e.state == "completed" && (!r.last_completed || e.collective_seq_id > *r.last_completed))
      r.last_completed = e.collective_seq_id;
  }
  for (const auto& [pg, r] : per_group) add(r);
  // Only groups whose entries tie their name to their id: a key alone may
  // be either, depending on the release.
  for (const auto& g : dump.pg_config)
    if (auto id = id_of_name.find(g.pg_id_or_name); id != id_of_name.end() && !g.ranks.empty())
      set_members(id->second, g.desc.empty() ? g.name : g.desc, g.ranks);
}

void CollectiveProgress::set_members(const std::string& pg, const std::string& name,
                                     const std::vector<int>& ranks) {
  Group& g = groups_[pg];
  if (g.name.empty()) g.name = name;
  if (g.members.empty()) g.members = ranks;
}

HangFinding CollectiveProgress::analyse(const JobInfo& job) const {
  HangFinding out;
  if (empty()) return out;

  // A watchdog line names no group in most releases: it belongs to the
  // group in which a progress line of the same rank timed out at the same
  // collective; without one, to the default group only when no other
  // group appears anywhere (otherwise its rank may be a group's own).
  std::set<std::string> named_groups;
  for (const auto& r : reports_)
    if (!r.pg.empty()) named_groups.insert(r.pg);
  for (const auto& [key, s] : states_) named_groups.insert(s.pg);
  bool only_default = named_groups.empty() || (named_groups.size() == 1 && named_groups.count("0"));

  bool any_timeout = false;
  for (const auto& r : reports_) any_timeout = any_timeout || r.timed_out_at.has_value();
  std::map<std::string, std::vector<RankReport>> by_group;
  // Collectives that watchdog lines naming no group timed out in, per the
  // group they were taken for.
  std::map<std::string, std::set<std::int64_t>> guessed_timeouts;
  // (global rank, collective) → the first group a report with a group
  // names for it: a lookup, not a scan, for a job of 32,768 ranks.
  std::map<std::pair<int, std::int64_t>, std::string> group_of_timeout;
  for (const auto& r : reports_)
    if (!r.pg.empty() && r.rank >= 0 && r.timed_out_at)
      group_of_timeout.emplace(std::make_pair(r.rank, *r.timed_out_at), r.pg);
  // Per global rank, its reports: who was alive when.
  std::map<int, std::vector<const RankReport*>> reports_of;
  for (const auto& r : reports_)
    if (r.rank >= 0) reports_of[r.rank].push_back(&r);
  for (const auto& r : reports_) {
    if (!r.pg.empty()) {
      by_group[r.pg].push_back(r);
      continue;
    }
    std::string pg;
    if (r.rank >= 0 && r.timed_out_at)
      if (auto it = group_of_timeout.find({r.rank, *r.timed_out_at}); it != group_of_timeout.end())
        pg = it->second;
    bool guessed = pg.empty() && only_default;
    if (guessed) pg = "0";
    if (pg.empty()) continue;
    RankReport copy = r;
    copy.pg = pg;
    if (guessed && r.timed_out_at) guessed_timeouts[pg].insert(*r.timed_out_at);
    if (pg == "0" && copy.rank < 0) copy.rank = copy.group_rank;
    by_group[pg].push_back(copy);
  }
  // Flight-recorder states give a rank's progress too.
  std::map<std::pair<std::string, int>, RankReport> from_states;
  for (const auto& [key, s] : states_) {
    RankReport& r = from_states[{s.pg, s.rank}];
    r.pg = s.pg;
    r.rank = s.rank;
    r.source = "flight_recorder";
    if (!r.last_enqueued || s.seq > *r.last_enqueued) r.last_enqueued = s.seq;
    if (s.state == "completed" && (!r.last_completed || s.seq > *r.last_completed))
      r.last_completed = s.seq;
  }
  for (const auto& [key, r] : from_states) {
    by_group[key.first].push_back(r);
    by_group[key.first].back().event = kNoEvent;
  }

  std::vector<std::string> pgs;
  for (const auto& [pg, list] : by_group) pgs.push_back(pg);
  std::sort(pgs.begin(), pgs.end(), numeric_less);

  std::vector<std::string> lines;
  for (const auto& pg : pgs) {
    const auto& list = by_group[pg];
    auto gi = groups_.find(pg);
    std::vector<int> members;
    if (gi != groups_.end()) members = gi->second.members;
    if (members.empty() && pg == "0" && job.ranks_known)
      for (const auto& ri : job.ranks) members.push_back(ri.rank);
    std::vector<int> inferred;  // group order, for group ranks without a global one
    if (members.empty() && pg != "0") {
      inferred = members_from_communicators(list, static_cast<int>(job.ranks.size()));
      members = inferred;
    }
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());

    // Merge per rank: by global rank when known, else by the group's rank.
    std::map<std::pair<int, int>, Merged> merged;  // (global, group) with one of them -1
    for (const auto& r : list) {
      int group_rank = r.group_rank;
      const std::vector<int>& order_of =
          gi != groups_.end() && !gi->second.members.empty() ? gi->second.members : inferred;
      if (r.rank < 0 && group_rank >= 0 && static_cast<std::size_t>(group_rank) < order_of.size()) {
        RankReport known = r;
        known.rank = order_of[static_cast<std::size_t>(group_rank)];
        merge_into(merged[{known.rank, -1}], known);
        continue;
      }
      if (r.rank >= 0)
        merge_into(merged[{r.rank, -1}], r);
      else if (group_rank >= 0)
        merge_into(merged[{-1, group_rank}], r);
    }
    // A report by group rank alone joins the global one that has that group rank.
    std::map<int, Merged*> by_group_rank;
    for (auto& [k, m] : merged)
      if (k.first >= 0 && m.group_rank >= 0) by_group_rank[m.group_rank] = &m;
    for (auto it = merged.begin(); it != merged.end();) {
      if (it->first.first >= 0) {
        ++it;
        continue;
      }
      auto found = by_group_rank.find(it->first.second);
      Merged* twin = found == by_group_rank.end() ? nullptr : found->second;
      if (!twin) {
        ++it;
        continue;
      }
      RankReport r;
      r.timed_out_at = it->second.timed_out_at;
      r.last_enqueued = it->second.last_enqueued;
      r.last_completed = it->second.last_completed;
      r.op = it->second.op;
      r.behind = it->second.behind;
      r.time = it->second.first_time;
      merge_into(*twin, r);
      twin->sources.insert(it->second.sources.begin(), it->second.sources.end());
      twin->events.insert(twin->events.end(), it->second.events.begin(), it->second.events.end());
      it = merged.erase(it);
    }

    // The collective the others timed out in: the furthest any rank timed
    // out in (a rank that timed out earlier is itself behind). Without a
    // timeout in this group, a flight recorder's first collective a rank
    // did not complete.
    std::optional<std::int64_t> hung;
    for (const auto& [k, m] : merged)
      if (m.timed_out_at && (!hung || *m.timed_out_at > *hung)) hung = m.timed_out_at;
    // Without a timeout anywhere, collectives in flight in a dump written
    // on another error (PyTorch dumps on any exception) are no hang.
    if (!hung && any_timeout)
      for (const auto& [k, m] : merged)
        if (m.last_enqueued && m.last_completed && *m.last_enqueued > *m.last_completed &&
            (!hung || *m.last_completed + 1 > *hung))
          hung = *m.last_completed + 1;
    if (!hung) continue;

    // Lines that name no group and disagree on the collective may come from
    // different groups (older releases print every group's rank the same
    // way): their numbers cannot be compared, so no rank is put behind.
    if (guessed_timeouts[pg].size() > 1) {
      HangGroup g;
      g.pg = pg;
      g.seq = hung;
      g.status = "undetermined";
      lines.push_back("watchdog lines that name no process group time out in " +
                      std::to_string(guessed_timeouts[pg].size()) +
                      " different collectives: they may come from different groups, so no "
                      "rank is compared with another");
      out.hang.groups.push_back(std::move(g));
      continue;
    }
    HangGroup g;
    g.pg = pg;
    g.name = gi != groups_.end() ? gi->second.name : (pg == "0" ? "default_pg" : "");
    g.seq = hung;
    g.size = members.empty() ? -1 : static_cast<int>(members.size());

    // The op each rank was in at the hung collective.
    std::map<std::string, int> op_count;
    auto op_at = [&](const Merged& m) -> std::string {
      if (m.rank >= 0)
        if (auto s = states_.find({pg, m.rank, *hung}); s != states_.end())
          return normalise_op(s->second.op);
      if (m.timed_out_at == hung && !m.op.empty()) return normalise_op(m.op);
      return "";
    };
    for (const auto& [k, m] : merged)
      if (std::string op = op_at(m); !op.empty()) ++op_count[op];
    std::string common;
    int common_n = 0;
    bool tie = false;
    for (const auto& [op, n] : op_count) {
      if (n > common_n) {
        common = op;
        common_n = n;
        tie = false;
      } else if (n == common_n) {
        tie = true;
      }
    }
    bool mismatch = op_count.size() > 1;
    g.op = mismatch ? "" : common;

    // When the others began to time out in it.
    MaybeTime timed_out;
    for (const auto& [k, m] : merged)
      if (m.timed_out_at == hung && m.first_time && (!timed_out || *m.first_time < *timed_out))
        timed_out = m.first_time;
    // A rank that said nothing in this group yet was alive when the others
    // timed out (it answered another group's dump signal, it reported that
    // group's progress without a timeout of its own) had nothing pending
    // here: it never reached the collective.
    auto alive_elsewhere = [&](int rank) -> const RankReport* {
      if (rank < 0 || !timed_out) return nullptr;
      auto of = reports_of.find(rank);
      if (of == reports_of.end()) return nullptr;
      for (const RankReport* r : of->second)
        if (!r->pg.empty() && r->pg != pg && !r->timed_out_at && r->time &&
            *r->time >= *timed_out - kAliveTolerance)
          return r;
      return nullptr;
    };
    std::vector<Merged> silent;  // members no report names, reserved so rows may point into it
    silent.reserve(members.size());
    std::set<int> reported;
    for (const auto& [k, m] : merged)
      if (m.rank >= 0) reported.insert(m.rank);
    for (int r : members)
      if (!reported.count(r)) {
        Merged m;
        m.rank = r;
        silent.push_back(m);
      }
    std::vector<std::pair<Merged*, std::string>> rows;
    auto judge = [&](Merged& m) {
      std::string state = "silent";
      std::string op = op_at(m);
      if (mismatch && !op.empty() && (tie || op != common))
        state = "mismatched";
      else if ((m.last_enqueued && *m.last_enqueued < *hung) ||
               (m.timed_out_at && *m.timed_out_at < *hung))
        state = "lagging";
      else if ((m.last_enqueued && *m.last_enqueued >= *hung) || m.timed_out_at == hung)
        state = "joined";
      else if (m.behind)
        state = "lagging";
      else if (const RankReport* r = alive_elsewhere(m.rank)) {
        state = "lagging";
        m.sources.insert(r->source);
        if (r->event != kNoEvent) m.events.push_back(r->event);
      }
      rows.push_back({&m, state});
    };
    for (auto& [k, m] : merged) judge(m);
    for (auto& m : silent) judge(m);

    int lagging = 0, joined = 0, silent_n = 0, mismatched = 0;
    for (const auto& [m, state] : rows) {
      lagging += state == "lagging";
      joined += state == "joined";
      silent_n += state == "silent";
      mismatched += state == "mismatched";
    }
    if (mismatch)
      g.status = "mismatch";
    else if (lagging)
      g.status = "lagging";
    else if (!members.empty() && silent_n == 0 && joined == static_cast<int>(rows.size()))
      g.status = "all_joined";
    else
      g.status = "undetermined";

    std::size_t gindex = out.hang.groups.size();
    const std::vector<int>& group_order =
        gi != groups_.end() && !gi->second.members.empty() ? gi->second.members : inferred;
    std::map<int, int> place_in_group;  // global rank → its rank in the group
    for (std::size_t i = 0; i < group_order.size(); ++i)
      place_in_group.emplace(group_order[i], static_cast<int>(i));
    for (const auto& [m, state] : rows) {
      HangRank hr;
      hr.rank = m->rank;
      hr.group_rank = m->group_rank;
      if (hr.group_rank < 0 && hr.rank >= 0)
        if (auto at = place_in_group.find(hr.rank); at != place_in_group.end())
          hr.group_rank = at->second;
      if (hr.group_rank < 0 && pg == "0") hr.group_rank = hr.rank;
      const RankInfo* ri = hr.rank >= 0 ? job.rank_info(hr.rank) : nullptr;
      hr.node = ri ? ri->node : m->node;
      if (ri && ri->gpus.size() == 1) hr.gpu = ri->gpus[0];
      hr.state = state;
      hr.last_enqueued = m->last_enqueued;
      hr.last_completed = m->last_completed;
      hr.timed_out_at = m->timed_out_at;
      hr.op = m->op;
      hr.sources.assign(m->sources.begin(), m->sources.end());
      std::vector<std::size_t> evs = m->events;
      std::sort(evs.begin(), evs.end());
      evs.erase(std::unique(evs.begin(), evs.end()), evs.end());
      out.rank_events[{gindex, g.ranks.size()}] = evs;
      g.ranks.push_back(std::move(hr));
    }
    // Ranks in a fixed order: by global rank, then group rank.
    std::vector<std::size_t> order(g.ranks.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const HangRank &x = g.ranks[a], &y = g.ranks[b];
      if ((x.rank < 0) != (y.rank < 0)) return x.rank >= 0;
      if (x.rank != y.rank) return x.rank < y.rank;
      return x.group_rank < y.group_rank;
    });
    // Bounded: every rank behind or apart, then the others up to a count.
    std::size_t joined_kept = 0, silent_kept = 0;
    std::vector<std::size_t> kept;
    for (std::size_t i : order) {
      const std::string& st = g.ranks[i].state;
      if (st == "joined" && joined_kept++ >= kMaxListedJoined) continue;
      if (st == "silent" && silent_kept++ >= kMaxListedSilent) continue;
      if ((st == "lagging" || st == "mismatched") && kept.size() >= kMaxListedRanks) continue;
      kept.push_back(i);
    }
    HangGroup sorted = g;
    sorted.ranks.clear();
    sorted.ranks_not_listed = static_cast<int>(order.size() - kept.size());
    std::map<std::pair<std::size_t, std::size_t>, std::vector<std::size_t>> events;
    for (std::size_t i = 0; i < kept.size(); ++i) {
      sorted.ranks.push_back(g.ranks[kept[i]]);
      events[{gindex, i}] = out.rank_events[{gindex, kept[i]}];
    }
    for (auto it = out.rank_events.begin(); it != out.rank_events.end();)
      it = it->first.first == gindex ? out.rank_events.erase(it) : std::next(it);
    for (auto& [k, v] : events) out.rank_events[k] = v;

    std::string what = "collective " + std::to_string(*hung) +
                       (g.op.empty() ? "" : " (" + g.op + ")") + " of process group " + pg;
    std::vector<std::string> names;
    for (const auto& [m, state] : rows)
      if (state == "lagging" || state == "mismatched") names.push_back(rank_name(*m));
    std::sort(names.begin(), names.end());
    std::string list_text;
    for (const auto& n : names) list_text += (list_text.empty() ? "" : ", ") + n;
    if (g.status == "mismatch")
      lines.push_back("ranks are in different collectives at " + what + ": " + list_text);
    else if (g.status == "lagging")
      lines.push_back(list_text + " never reached " + what);
    else if (g.status == "all_joined")
      lines.push_back(
          "every rank reached " + what +
          ": the collective itself stalled (a GPU, NVLink or the network inside it); no rank is "
          "behind");
    else
      lines.push_back(what + " timed out; " + std::to_string(silent_n) +
                      " rank(s) reported nothing, so the rank behind it is not known");
    out.hang.groups.push_back(std::move(sorted));
  }
  if (out.hang.groups.empty()) return out;

  // The hang's status: the first group that names ranks behind or apart,
  // else what the groups say together.
  const HangGroup* primary = nullptr;
  for (const auto& g : out.hang.groups)
    if (!primary && (g.status == "mismatch" || g.status == "lagging")) primary = &g;
  if (!primary)
    for (const auto& g : out.hang.groups)
      if (!primary && g.status == "all_joined") primary = &g;
  if (!primary) primary = &out.hang.groups.front();
  out.hang.status = primary->status;
  for (const auto& l : lines) out.hang.summary += (out.hang.summary.empty() ? "" : "; ") + l;
  if (out.hang.summary.size() > 1000) out.hang.summary = out.hang.summary.substr(0, 997) + "...";

  // The ranks × collectives view of that group around its hung collective.
  HangView& v = out.hang.view;
  v.pg = primary->pg;
  std::int64_t from = std::max<std::int64_t>(0, *primary->seq - kViewSpan);
  for (std::int64_t s = from; s <= *primary->seq + kViewSpan; ++s) v.seqs.push_back(s);
  std::vector<const HangRank*> picked;
  for (const auto& r : primary->ranks)
    if (r.state != "joined" && r.state != "silent") picked.push_back(&r);
  for (const auto& r : primary->ranks)
    if ((r.state == "joined" || r.state == "silent") && picked.size() < kMaxViewRows)
      picked.push_back(&r);
  std::stable_sort(picked.begin(), picked.end(), [](const HangRank* a, const HangRank* b) {
    if ((a->rank < 0) != (b->rank < 0)) return a->rank >= 0;
    return a->rank != b->rank ? a->rank < b->rank : a->group_rank < b->group_rank;
  });
  for (const HangRank* r : picked) {
    HangViewRow row;
    row.rank = r->rank;
    row.node = r->node;
    for (std::int64_t s : v.seqs) {
      std::string cell;
      if (r->rank >= 0)
        if (auto st = states_.find({v.pg, r->rank, s}); st != states_.end())
          cell = st->second.state;
      if (cell.empty()) {
        if (r->last_completed && s <= *r->last_completed)
          cell = "completed";
        else if (r->last_enqueued && s <= *r->last_enqueued)
          cell = "enqueued";
        else if (r->last_enqueued && s > *r->last_enqueued)
          cell = "not_reached";
        else if (r->timed_out_at && s == *r->timed_out_at)
          cell = "enqueued";
      }
      row.cells.push_back(cell);
    }
    v.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace ff
