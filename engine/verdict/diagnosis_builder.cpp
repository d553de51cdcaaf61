#include "engine/verdict/diagnosis_builder.h"

#include <algorithm>
#include <map>
#include <set>

#include "incident/slurm_text.h"

namespace ff {
namespace {

const char* strength_name(Strength s) {
  switch (s) {
    case Strength::kStrong:
      return "strong";
    case Strength::kMedium:
      return "medium";
    case Strength::kWeak:
      return "weak";
  }
  return "?";
}

std::string short_sub(const std::string& sub) {
  auto dot = sub.find('.');
  return dot == std::string::npos ? sub : sub.substr(0, dot) + "/" + sub.substr(dot + 1);
}

// "Xid 79, 00000000:5D:00.0, rank 11"
std::string detail_of(const Candidate& c, const Event* head) {
  std::vector<std::string> parts;
  if (c.kind == "xid")
    parts.push_back("Xid " + c.code);
  else if (c.kind == "sxid")
    parts.push_back("SXid " + c.code);
  else if (head && !head->field("exception").empty())
    parts.push_back(head->field("exception"));
  if (!c.device.empty()) parts.push_back(c.device);
  if (c.rank >= 0) parts.push_back("rank " + std::to_string(c.rank));
  if (!c.detail.empty()) parts.push_back(c.detail);
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::string root_summary(const Candidate& c, const Event* head) {
  std::string s = c.meaning.name;
  if (head) {
    if (!head->field("message").empty())
      s += ": " + head->field("message");
    else if (!head->field("detail").empty() && c.kind != "xid")
      s += ": " + head->field("detail");
  }
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s;
}

}  // namespace

void build_diagnosis(const Attribution& a, const FilterContext& ctx, Diagnosis& d) {
  const Settings& s = ctx.rules.settings;
  d.verdict = a.verdict;
  d.failure_onset = a.onset;
  d.failure_onset_earliest = a.onset_earliest;
  d.failure_onset_latest = a.onset_latest;
  d.reasoning = a.reasoning;

  // --- evidence: events cited by root causes, candidates and symptoms -----
  std::vector<std::size_t> cited;
  auto cite = [&](std::size_t i) { cited.push_back(i); };
  std::vector<const Candidate*> roots;
  for (int id : a.roots) roots.push_back(find_candidate(a, id));
  for (const Candidate* c : roots) {
    std::size_t n = 0;
    for (std::size_t i : c->events)
      if (n++ < 12) cite(i);
  }
  for (const auto& c : a.candidates)
    if (!c.events.empty()) cite(c.head);
  for (const auto& g : a.symptoms)
    for (std::size_t k = 0; k < g.events.size() && k < 3; ++k) cite(g.events[k]);
  // A hang's ranks other than the joined ones: what says they were behind.
  for (const auto& [key, evs] : a.hang.rank_events) {
    const HangRank& r = a.hang.hang.groups[key.first].ranks[key.second];
    if (r.state == "joined") continue;
    for (std::size_t k = 0; k < evs.size() && k < 2; ++k) cite(evs[k]);
  }
  std::sort(cited.begin(), cited.end());
  cited.erase(std::unique(cited.begin(), cited.end()), cited.end());
  std::sort(cited.begin(), cited.end(), [&](std::size_t x, std::size_t y) {
    return event_time_less(a.events[x], a.events[y]);
  });
  if (cited.size() > static_cast<std::size_t>(s.max_evidence)) {
    // keep root-cause events first, then the earliest of the rest
    std::set<std::size_t> must;
    for (const Candidate* c : roots)
      for (std::size_t i : c->events) must.insert(i);
    std::vector<std::size_t> kept;
    for (std::size_t i : cited)
      if (must.count(i)) kept.push_back(i);
    for (std::size_t i : cited)
      if (!must.count(i) && kept.size() < static_cast<std::size_t>(s.max_evidence))
        kept.push_back(i);
    std::sort(kept.begin(), kept.end(), [&](std::size_t x, std::size_t y) {
      return event_time_less(a.events[x], a.events[y]);
    });
    cited = kept;
  }
  std::map<std::size_t, int> id_of;
  for (std::size_t k = 0; k < cited.size(); ++k) {
    const Event& e = a.events[cited[k]];
    int id = static_cast<int>(k) + 1;
    id_of[cited[k]] = id;
    EvidenceItem item;
    item.id = id;
    item.time = e.time;
    item.time_inferred = e.time_inferred;
    if (e.time_inferred || !e.time) {
      item.earliest = e.earliest;
      item.latest = e.latest;
    }
    item.trusted = e.trusted;
    item.node = e.node;
    item.source = e.source;
    item.line = e.line;
    item.text = e.text;
    item.event = e.kind;
    item.also_in = e.also_in;
    d.evidence.push_back(std::move(item));
  }
  auto ids = [&](const std::vector<std::size_t>& evs, std::size_t limit) {
    std::vector<int> out;
    for (std::size_t i : evs)
      if (auto it = id_of.find(i); it != id_of.end() && out.size() < limit)
        out.push_back(it->second);
    std::sort(out.begin(), out.end());
    return out;
  };

  if (a.hang.shown()) {
    d.hang = a.hang.hang;
    for (const auto& [key, evs] : a.hang.rank_events)
      d.hang.groups[key.first].ranks[key.second].evidence = ids(evs, 4);
  }

  // --- root causes and the verdict's domain -------------------------------
  for (const Candidate* c : roots) {
    const Event* head = c->events.empty() ? nullptr : &a.events[c->head];
    RootCause rc;
    rc.node = c->node;
    rc.device = c->device;
    rc.device_uuid = ctx.job.gpu_uuid(c->node, canonical_pci(c->device));
    rc.event = c->kind;
    rc.code = c->code;
    rc.time = c->time;
    rc.earliest = c->earliest ? c->earliest : c->time;
    rc.latest = c->latest ? c->latest : c->time;
    rc.related_devices = c->related_devices;
    if (head) {
      rc.origin = head->source_kind;
      rc.trusted = head->trusted;
      if (!head->field("provenance").empty())
        rc.provenance = head->field("provenance");
      else if (!head->trusted)
        rc.provenance =
            "from " +
            (head->source_kind == "app" ? std::string("the job's output") : head->source_kind) +
            ", which the job's user can write";
    } else if (c->from_state) {
      rc.origin = "job_state";
      rc.trusted = true;
    }
    rc.summary = root_summary(*c, head);
    rc.domain = c->meaning.domain;
    rc.sub_domain = c->meaning.sub_domain;
    rc.rank = c->rank;
    rc.evidence = ids(c->events, 12);
    d.root_causes.push_back(rc);
  }
  for (const auto& c : a.candidates) {
    CandidateItem ci{c.id,
                     c.node,
                     c.device,
                     c.kind,
                     c.code,
                     c.time,
                     c.meaning.sub_domain,
                     strength_name(c.meaning.strength),
                     candidate_status_name(c.status),
                     c.note,
                     ids(c.events, 12)};
    d.candidates.push_back(ci);
  }
  if (a.verdict == "attributed") {
    d.domain = roots[0]->meaning.domain;
    d.sub_domain = roots[0]->meaning.sub_domain;
    d.recommended_action = roots[0]->meaning.action;
  } else if (a.verdict == "ambiguous") {
    std::set<std::string> domains;
    for (const Candidate* c : roots) domains.insert(c->meaning.domain);
    d.domain = domains.size() == 1 ? *domains.begin() : "unknown";
    d.sub_domain = "ambiguous";
    d.recommended_action = "investigate";
  } else if (a.verdict == "unattributed") {
    d.domain = "unknown";
    d.sub_domain = "unknown.unexplained";
    d.recommended_action = "investigate";
  } else {
    d.recommended_action = "none";
  }

  // --- symptoms and affected nodes -----------------------------------------
  std::set<std::string> affected;
  for (const auto& g : a.symptoms) {
    Symptom sy;
    sy.node = g.node;
    sy.kind = g.kind;
    sy.status = g.demoted ? "demoted" : "active";
    sy.count = g.count;
    sy.first_time = a.events[g.events.front()].time;
    sy.evidence = ids(g.events, 3);
    sy.explained_by = g.explained_by;
    d.symptoms.push_back(sy);
    if (!g.node.empty() && a.verdict != "no_failure") affected.insert(g.node);
  }
  for (const Candidate* c : roots)
    if (!c->node.empty() && c->kind != "missing_logs") affected.insert(c->node);
  d.affected_nodes.assign(affected.begin(), affected.end());

  // --- summary ---------------------------------------------------------------
  std::string summary;
  if (a.verdict == "no_failure") {
    summary =
        "no failure: job " + (ctx.job.state.empty() ? std::string("completed") : ctx.job.state);
    std::size_t findings = 0;
    for (const auto& c : a.candidates)
      if (c.meaning.strength != Strength::kWeak || c.kind == "xid") ++findings;
    if (findings)
      summary += "; " + std::to_string(findings) + " fault(s) seen that did not stop it";
  } else if (a.verdict == "attributed") {
    const Candidate& c = *roots[0];
    const Event* head = c.events.empty() ? nullptr : &a.events[c.head];
    std::string det = detail_of(c, head);
    summary = short_sub(c.meaning.sub_domain) + (c.node.empty() ? "" : " on " + c.node) +
              (det.empty() ? "" : " (" + det + ")");
  } else if (a.verdict == "ambiguous") {
    summary = "ambiguous: " + std::to_string(roots.size()) + " candidate causes:";
    for (const Candidate* c : roots) {
      const Event* head = c->events.empty() ? nullptr : &a.events[c->head];
      std::string det = detail_of(*c, head);
      summary += " " + short_sub(c->meaning.sub_domain) +
                 (c->node.empty() ? "" : " on " + c->node) + (det.empty() ? "" : " (" + det + ")") +
                 ";";
    }
    summary.pop_back();
  } else {
    summary = "unattributed: job " +
              (ctx.job.state.empty() ? std::string("failed") : ctx.job.state) +
              "; no fault found in the evidence";
  }
  if (a.verdict != "no_failure") {
    // the most widespread symptom, by node count
    std::map<std::string, std::set<std::string>> by_kind;
    for (const auto& g : a.symptoms)
      if (!g.node.empty()) by_kind[g.kind].insert(g.node);
    std::string top;
    std::size_t top_n = 0;
    for (const auto& [kind, nodes] : by_kind)
      if (nodes.size() > top_n) top = kind, top_n = nodes.size();
    if (top_n) {
      std::set<std::string> others = by_kind[top];
      for (const Candidate* c : roots) others.erase(c->node);
      const KindInfo* ki = ctx.rules.kind(top);
      std::string label = ki ? ki->label : top;
      if (!others.empty() && a.verdict == "attributed")
        summary += "; " + std::to_string(others.size()) + " other node" +
                   (others.size() > 1 ? "s" : "") + " saw " + label + "s";
      else if (a.verdict != "attributed")
        summary +=
            "; " + std::to_string(top_n) + " node" + (top_n > 1 ? "s" : "") + " saw " + label + "s";
    }
  }
  // The summary becomes the job's Comment: it obeys Slurm's text rules here already.
  d.summary = slurm_safe_text(summary, kMaxCommentBytes);
}

}  // namespace ff
