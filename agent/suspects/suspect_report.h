// Cross-job attribution: which nodes, GPUs, InfiniBand ports and switch
// ports keep appearing in failed jobs. Input is one Sighting per component
// per failed job attempt (from the store's `suspect_sightings` view); output
// is a ranked list of suspects and the systemic events that were set apart.
// Pure and deterministic: the same sightings and settings give the same
// report, whatever their order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ff::agent {

// One component seen in one failed job attempt's current diagnosis.
struct Sighting {
  std::string job_id;
  int attempt = 0;
  std::int64_t diagnosis_id = 0;
  std::int64_t seen_at = 0;  // unix seconds: the root cause's time, else the pass's created_at
  std::string verdict;       // attributed | ambiguous | unattributed
  std::string role;          // "root_cause" | "symptom" (an active symptom)
  std::string domain;        // the cause's domain, else the diagnosis'; "" unknown
  std::string sub_domain;
  std::string node;
  std::string device;       // "" for the node itself
  std::string device_uuid;  // GPU UUID when job.json knew it, else ""
  std::string event;        // root cause event (xid, ib.link_down) or symptom kind
  // A root cause's provenance (diagnosis root_causes[].origin/trusted): the
  // source kind of its event, and whether the job's user could not have
  // written it (kernel ring buffer, root daemons, slurmctld, metrics). False
  // for syslog files and the job's output, for symptoms, and for a
  // diagnosis without the field (an older engine).
  std::string origin;
  bool trusted = false;
};

struct SuspectSettings {
  std::int64_t window_s = 14 * 86400;  // agent.yaml suspects.window_days
  int min_jobs = 2;                    // fewer distinct failed jobs: a one-off, not flagged
  // Systemic: within systemic_window_s, root causes on at least
  // systemic_min_nodes distinct nodes in as many distinct jobs are one
  // broad event (a fabric outage), not that many bad nodes.
  std::int64_t systemic_window_s = 300;
  int systemic_min_nodes = 4;
  // ... and at least this many times the domain's usual number of root
  // causes per systemic_window_s over the report's window: where jobs fail
  // every minute anyway, four in five minutes is the background rate.
  int systemic_rate_factor = 10;
  // Root causes in these domains blame the job's code, not the component
  // it ran on (CUDA out of memory, an application-induced Xid): left out,
  // with the symptoms of the same diagnoses.
  std::vector<std::string> ignored_domains = {"application"};
};

enum class ComponentKind { node, gpu, ib_port, switch_port };
const char* to_string(ComponentKind kind);

struct SuspectJob {
  std::string job_id;
  int attempt = 0;
  std::string role;     // root_cause | symptom
  std::string verdict;  // attributed | ambiguous | unattributed
  std::string sub_domain;
  std::string event;
  std::int64_t seen_at = 0;
  bool systemic = false;  // part of a SystemicEvent: not counted in jobs or score
  bool trusted = false;   // a root cause from a source the job's user cannot write
};

// Score of one suspect: per distinct job attempt (systemic ones excepted),
// 4 when it was an attributed root cause from a trusted source, 2 an
// ambiguous (or unattributed) candidate or an attributed root cause whose
// evidence the job's user could have written (syslog, the job's output),
// 1 when it only had active symptoms.
constexpr int kAttributedWeight = 4;
constexpr int kCandidateWeight = 2;
constexpr int kSymptomWeight = 1;

struct Suspect {
  ComponentKind kind = ComponentKind::node;
  std::string id;  // "n2", "n2/00000000:3B:00.0", "n2/mlx5_1:1", switch name/port
  std::string node;
  std::string device;
  std::string device_uuid;
  int jobs = 0;             // distinct failed job attempts
  int root_cause_jobs = 0;  // ... in which it was a root cause
  int attributed_jobs = 0;  // ... of those, attributed (certain) on trusted evidence
  int symptom_jobs = 0;     // ... in which it only had active symptoms
  // A node only: jobs whose cause on this node was one of its devices that
  // is a flagged suspect of its own. They count in `jobs` but not in the
  // node's score, so a bad GPU ranks above the node that houses it.
  int device_jobs = 0;
  int systemic_jobs = 0;             // sightings set apart as part of a systemic event
  std::int64_t score = 0;            // ranking key, larger first
  bool flagged = false;              // jobs >= min_jobs
  std::vector<std::string> domains;  // "gpu=3", "network=1": largest first
  std::int64_t first_seen = 0;
  std::int64_t last_seen = 0;
  std::vector<SuspectJob> job_list;  // oldest first
};

struct SystemicEvent {
  std::string domain;
  std::int64_t first_seen = 0;
  std::int64_t last_seen = 0;
  std::vector<std::string> nodes;  // sorted
  std::vector<SuspectJob> jobs;
};

struct SuspectReport {
  std::int64_t since = 0;  // unix seconds
  std::int64_t until = 0;
  SuspectSettings settings;
  // Ranked: score, root_cause_jobs, last_seen (newest first), then a device
  // before its node (the more precise answer when they tie), then id.
  std::vector<Suspect> suspects;
  std::vector<SystemicEvent> systemic_events;
};

// `since`/`until` only label the report: the caller chose the sightings.
SuspectReport find_suspects(std::vector<Sighting> sightings, const SuspectSettings& settings,
                            std::int64_t since, std::int64_t until);

// The JSON of `firstfault suspects --json` and GET /api/v1/suspects.
// include_unflagged: also the one-offs (flagged false).
nlohmann::json suspects_to_json(const SuspectReport& report, bool include_unflagged);

}  // namespace ff::agent
