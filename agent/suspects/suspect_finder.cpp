// find_suspects: sightings -> components -> ranked suspects, with the
// systemic events (one broad outage blaming many nodes at once) set apart
// first. See suspect_report.h for the contract.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <re2/re2.h>

#include "agent/suspects/suspect_report.h"
#include "incident/job_info.h"

namespace ff::agent {
namespace {

using JobKey = std::pair<std::string, int>;  // job_id, attempt

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The engine's canonical PCI bus id "00000000:3B:00.0" (and the short
// "0000:3b:00.0" form of older diagnoses).
bool is_pci_bus_id(const std::string& device) {
  return !canonical_pci(device).empty();
}

// No rule of rules/*.yaml names a switch port as a device today (an NVSwitch
// SXid keeps its switch in a field of its own and has no device; InfiniBand
// events name the node's HCA port, "mlx5_2:1"). So a device is a switch
// when its name says so: "nvidia-nvswitch3", "ib-switch-07/17", "sw12:4",
// "ibsw3/17", "leaf-sw01/12", or when the sub_domain says so ("gpu_fabric.nvswitch_error").
// "gpu.context_switch_timeout" is a GPU fault: no bare "switch" match on
// the sub_domain.
bool names_switch(const std::string& device, const std::string& sub_domain) {
  static const RE2 switch_name("(^|.*[^a-z])((nv|ib[-_]?)?switch|(ib)?sw[-_.]?[0-9]).*");
  std::string d = lower(device);
  std::string s = lower(sub_domain);
  return RE2::FullMatch(d, switch_name) || s.find("nvswitch") != std::string::npos ||
         s.find("switch_port") != std::string::npos || s.find("ib_switch") != std::string::npos;
}

// An NVSwitch sits inside the node's chassis; a fabric switch is shared by
// many nodes, so it is one component whatever node saw it fail.
bool switch_inside_node(const std::string& device, const std::string& sub_domain) {
  return lower(device).find("nvswitch") != std::string::npos ||
         lower(sub_domain).find("nvswitch") != std::string::npos || is_pci_bus_id(device);
}

struct Component {
  ComponentKind kind;
  std::string id;
  std::string node;
  std::string device;
  auto key() const { return std::make_pair(static_cast<int>(kind), id); }
};

// The components one sighting counts for: always its node; a root cause's
// device too, when it is a GPU, an InfiniBand port or a switch port. Any
// other device (a disk, an Ethernet interface) counts for its node only.
std::vector<Component> components_of(const Sighting& s) {
  std::vector<Component> out;
  out.push_back({ComponentKind::node, s.node, s.node, ""});
  if (s.role != "root_cause" || s.device.empty()) return out;
  if (names_switch(s.device, s.sub_domain)) {
    if (switch_inside_node(s.device, s.sub_domain))
      out.push_back({ComponentKind::switch_port, s.node + "/" + s.device, s.node, s.device});
    else
      out.push_back({ComponentKind::switch_port, s.device, "", s.device});
  } else if (s.domain == "gpu" || s.domain == "gpu_fabric") {
    out.push_back({ComponentKind::gpu, s.node + "/" + s.device, s.node, s.device});
  } else if (s.domain == "network") {
    // Network before the PCI rule: an HCA named by its bus id is a port.
    out.push_back({ComponentKind::ib_port, s.node + "/" + s.device, s.node, s.device});
  } else if (is_pci_bus_id(s.device)) {
    out.push_back({ComponentKind::gpu, s.node + "/" + s.device, s.node, s.device});
  }
  return out;
}

auto sort_key(const Sighting& s) {
  return std::tie(s.seen_at, s.job_id, s.attempt, s.role, s.node, s.device, s.domain, s.sub_domain,
                  s.event, s.verdict, s.device_uuid, s.trusted, s.origin, s.diagnosis_id);
}

// How much one sighting says against its component: attributed root cause
// over candidate over symptom. An attributed root cause on evidence the
// job's user could have written (a syslog line, the job's output) is only a
// candidate: `logger -t kernel 'NVRM: Xid 79'` must not make a GPU the top
// suspect.
int strength(const Sighting& s) {
  if (s.role != "root_cause") return kSymptomWeight;
  return s.verdict == "attributed" && s.trusted ? kAttributedWeight : kCandidateWeight;
}

SuspectJob job_of(const Sighting& s, bool systemic) {
  SuspectJob j;
  j.job_id = s.job_id;
  j.attempt = s.attempt;
  j.role = s.role;
  j.verdict = s.verdict;
  j.sub_domain = s.sub_domain;
  j.event = s.event;
  j.seen_at = s.seen_at;
  j.systemic = systemic;
  j.trusted = s.role == "root_cause" && s.trusted;
  return j;
}

bool job_order(const SuspectJob& a, const SuspectJob& b) {
  return std::tie(a.seen_at, a.job_id, a.attempt) < std::tie(b.seen_at, b.job_id, b.attempt);
}

// Root causes of one domain that blame at least systemic_min_nodes nodes in
// as many jobs within one systemic_window_s: a broad event, not that many
// bad nodes. The window has a fixed length (not a chain of gaps): on a big
// cluster failures arrive every few minutes all day long, and a chain would
// join them into one endless "outage". Overlapping windows form one event.
// Marks its sightings (and the symptoms of its jobs) in `systemic`.
std::vector<SystemicEvent> find_systemic(const std::vector<Sighting>& sightings,
                                         const SuspectSettings& settings, std::int64_t since,
                                         std::int64_t until, std::vector<bool>& systemic) {
  std::vector<SystemicEvent> events;
  // A one-node "outage" is just a failure.
  if (settings.systemic_min_nodes < 2) return events;
  std::map<std::string, std::vector<std::size_t>> by_domain;  // sorted by seen_at already
  for (std::size_t i = 0; i < sightings.size(); ++i)
    if (sightings[i].role == "root_cause") by_domain[sightings[i].domain].push_back(i);

  std::set<JobKey> systemic_jobs;
  auto close_group = [&](const std::string& domain, const std::vector<std::size_t>& group) {
    std::set<std::string> nodes;
    std::set<JobKey> jobs;
    for (std::size_t i : group) {
      nodes.insert(sightings[i].node);
      jobs.insert({sightings[i].job_id, sightings[i].attempt});
    }
    auto min_nodes = static_cast<std::size_t>(settings.systemic_min_nodes);
    if (nodes.size() < min_nodes || jobs.size() < min_nodes) return;
    SystemicEvent e;
    e.domain = domain.empty() ? "unknown" : domain;
    e.first_seen = sightings[group.front()].seen_at;
    e.last_seen = sightings[group.back()].seen_at;
    e.nodes.assign(nodes.begin(), nodes.end());
    std::set<JobKey> listed;
    for (std::size_t i : group) {
      systemic[i] = true;
      JobKey key{sightings[i].job_id, sightings[i].attempt};
      systemic_jobs.insert(key);
      // The group is in time order: each job's first root cause.
      if (listed.insert(key).second) e.jobs.push_back(job_of(sightings[i], true));
    }
    std::sort(e.jobs.begin(), e.jobs.end(), job_order);
    events.push_back(std::move(e));
  };
  for (const auto& [domain, indexes] : by_domain) {
    // Enough nodes, and well above what this domain shows in any window of
    // that length on average (integer arithmetic: the same on every host).
    std::int64_t span = std::max(until - since, settings.systemic_window_s);
    std::int64_t usual = static_cast<std::int64_t>(indexes.size()) * settings.systemic_window_s *
                         settings.systemic_rate_factor;
    auto min_nodes = static_cast<std::size_t>(
        std::max<std::int64_t>(settings.systemic_min_nodes, (usual + span - 1) / span));
    // in_event[k]: indexes[k] lies in a window that blames enough nodes.
    std::vector<bool> in_event(indexes.size(), false);
    for (std::size_t first = 0, last = 0; first < indexes.size(); ++first) {
      if (last < first) last = first;
      while (last + 1 < indexes.size() &&
             sightings[indexes[last + 1]].seen_at - sightings[indexes[first]].seen_at <=
                 settings.systemic_window_s)
        ++last;
      if (last + 1 - first < min_nodes) continue;
      std::set<std::string> nodes;
      std::set<JobKey> jobs;
      for (std::size_t k = first; k <= last; ++k) {
        nodes.insert(sightings[indexes[k]].node);
        jobs.insert({sightings[indexes[k]].job_id, sightings[indexes[k]].attempt});
      }
      if (nodes.size() < min_nodes || jobs.size() < min_nodes) continue;
      for (std::size_t k = first; k <= last; ++k) in_event[k] = true;
    }
    // Runs of marked sightings, in time order and no further apart than a
    // window, are the events (two outages a day apart are two events).
    std::vector<std::size_t> group;
    for (std::size_t k = 0; k <= indexes.size(); ++k) {
      bool joins =
          k < indexes.size() && in_event[k] &&
          (group.empty() || sightings[indexes[k]].seen_at - sightings[group.back()].seen_at <=
                                settings.systemic_window_s);
      if (!joins && !group.empty()) {
        close_group(domain, group);
        group.clear();
      }
      if (k < indexes.size() && in_event[k]) group.push_back(indexes[k]);
    }
  }
  // The symptoms of those jobs are the outage's too.
  for (std::size_t i = 0; i < sightings.size(); ++i)
    if (sightings[i].role == "symptom" &&
        systemic_jobs.count({sightings[i].job_id, sightings[i].attempt}))
      systemic[i] = true;
  std::sort(events.begin(), events.end(), [](const SystemicEvent& a, const SystemicEvent& b) {
    return std::tie(a.first_seen, a.domain, a.nodes) < std::tie(b.first_seen, b.domain, b.nodes);
  });
  return events;
}

// What one component collected.
struct Tally {
  Component component;
  // Per job attempt: its strongest counted sighting and (if any) its first
  // systemic one. std::map: job_list comes out in key order, then sorted.
  std::map<JobKey, const Sighting*> counted;
  std::map<JobKey, const Sighting*> systemic;
  std::string device_uuid;
  std::int64_t uuid_seen = 0;
};

// `explained`: for a node, the jobs one of its flagged devices accounts for.
Suspect make_suspect(const Tally& t, const SuspectSettings& settings,
                     const std::set<JobKey>& explained = {}) {
  Suspect s;
  s.kind = t.component.kind;
  s.id = t.component.id;
  s.node = t.component.node;
  s.device = t.component.device;
  s.device_uuid = t.device_uuid;
  std::map<std::string, int> domains;
  bool any = false;
  auto seen = [&](std::int64_t at) {
    s.first_seen = any ? std::min(s.first_seen, at) : at;
    s.last_seen = any ? std::max(s.last_seen, at) : at;
    any = true;
  };
  for (const auto& [key, sighting] : t.counted) {
    ++s.jobs;
    int w = strength(*sighting);
    if (w == kSymptomWeight) {
      ++s.symptom_jobs;
    } else {
      ++s.root_cause_jobs;
      if (w == kAttributedWeight) ++s.attributed_jobs;
    }
    if (explained.count(key))
      ++s.device_jobs;
    else
      s.score += w;
    ++domains[sighting->domain.empty() ? "unknown" : sighting->domain];
    seen(sighting->seen_at);
    s.job_list.push_back(job_of(*sighting, false));
  }
  for (const auto& [key, sighting] : t.systemic) {
    ++s.systemic_jobs;
    if (!t.counted.count(key)) s.job_list.push_back(job_of(*sighting, true));
  }
  // Only set apart: its times are the outage's.
  if (!any)
    for (const auto& [key, sighting] : t.systemic) seen(sighting->seen_at);
  std::sort(s.job_list.begin(), s.job_list.end(), job_order);
  std::vector<std::pair<std::string, int>> ordered(domains.begin(), domains.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [domain, n] : ordered) s.domains.push_back(domain + "=" + std::to_string(n));
  s.flagged = s.jobs >= settings.min_jobs;
  return s;
}

bool rank_order(const Suspect& a, const Suspect& b) {
  // A device before its node on a tie: the GPU is the more precise answer.
  auto node_last = [](const Suspect& s) { return s.kind == ComponentKind::node ? 1 : 0; };
  return std::make_tuple(-a.score, -a.root_cause_jobs, -a.last_seen, node_last(a),
                         static_cast<int>(a.kind), std::cref(a.id)) <
         std::make_tuple(-b.score, -b.root_cause_jobs, -b.last_seen, node_last(b),
                         static_cast<int>(b.kind), std::cref(b.id));
}

}  // namespace

const char* to_string(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::node:
      return "node";
    case ComponentKind::gpu:
      return "gpu";
    case ComponentKind::ib_port:
      return "ib_port";
    case ComponentKind::switch_port:
      return "switch_port";
  }
  return "node";
}

SuspectReport find_suspects(std::vector<Sighting> sightings, const SuspectSettings& settings,
                            std::int64_t since, std::int64_t until) {
  SuspectReport report;
  report.since = since;
  report.until = until;
  report.settings = settings;

  const std::set<std::string> ignored(settings.ignored_domains.begin(),
                                      settings.ignored_domains.end());
  sightings.erase(std::remove_if(sightings.begin(), sightings.end(),
                                 [&](const Sighting& s) {
                                   return s.node.empty() || ignored.count(s.domain) > 0;
                                 }),
                  sightings.end());
  // Everything below depends on this order only, never on the caller's.
  std::sort(sightings.begin(), sightings.end(),
            [](const Sighting& a, const Sighting& b) { return sort_key(a) < sort_key(b); });

  std::vector<bool> systemic(sightings.size(), false);
  report.systemic_events = find_systemic(sightings, settings, since, until, systemic);

  std::map<std::pair<int, std::string>, Tally> tallies;
  for (std::size_t i = 0; i < sightings.size(); ++i) {
    const Sighting& s = sightings[i];
    for (const auto& c : components_of(s)) {
      auto [it, inserted] = tallies.try_emplace(c.key());
      Tally& t = it->second;
      if (inserted) t.component = c;
      JobKey job{s.job_id, s.attempt};
      auto& slot = systemic[i] ? t.systemic[job] : t.counted[job];
      // Keep the strongest; on a tie the earliest (sightings are in time order).
      if (!slot || strength(s) > strength(*slot)) slot = &s;
      if (!s.device_uuid.empty() && c.kind != ComponentKind::node && s.seen_at >= t.uuid_seen) {
        t.device_uuid = s.device_uuid;
        t.uuid_seen = s.seen_at;
      }
    }
  }
  // Devices first: a node's jobs caused by one of its flagged devices do
  // not raise the node's own score (the device is the better answer).
  std::map<std::string, std::set<JobKey>> explained;  // node -> job attempts
  for (const auto& [key, tally] : tallies) {
    if (tally.component.kind == ComponentKind::node || tally.component.node.empty()) continue;
    if (static_cast<int>(tally.counted.size()) < settings.min_jobs) continue;
    for (const auto& [job, sighting] : tally.counted) explained[tally.component.node].insert(job);
  }
  for (const auto& [key, tally] : tallies) {
    bool node = tally.component.kind == ComponentKind::node;
    report.suspects.push_back(node ? make_suspect(tally, settings, explained[tally.component.node])
                                   : make_suspect(tally, settings));
  }
  std::sort(report.suspects.begin(), report.suspects.end(), rank_order);
  return report;
}

}  // namespace ff::agent
