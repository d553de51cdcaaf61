// The diagnosis: what the engine concludes about one job attempt.
// Written and read by incident/diagnosis_json.h exactly as docs/spec/diagnosis.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "incident/time/time.h"

namespace ff {

struct RootCause {
  std::string node;         // "" for a job-wide cause (time limit, cancel)
  std::string device;       // PCI bus id, IB device/port, ...
  std::string device_uuid;  // the GPU's UUID when job.json names it, else ""
  std::string event;        // event kind
  std::string code;         // Xid/SXid number, signal, ...
  MaybeTime time;
  MaybeTime earliest, latest;  // when it can have begun
  std::string summary;
  std::string domain;
  std::string sub_domain;
  int rank = -1;
  std::vector<int> evidence;                 // evidence ids
  std::vector<std::string> related_devices;  // devices of the same fault (the GPU's PCIe port)
  // Provenance of the evidence the cause rests on: the source kind of its
  // head event ("kernel", "syslog", "app", "fabricmanager", "slurmd",
  // "slurmctld", "cluster", "metrics", "job_state"), and whether the job's
  // user could have written it. Nothing should act on an untrusted cause
  // (the drain policy does not).
  std::string origin;
  bool trusted = false;
  std::string provenance;  // why it is not trusted, "" when it is
};

struct Symptom {
  std::string node;
  std::string kind;
  std::string status;  // "active" | "demoted"
  std::uint64_t count = 0;
  MaybeTime first_time;
  std::vector<int> evidence;
  std::string explained_by;  // why it was demoted
};

struct EvidenceItem {
  int id = 0;
  MaybeTime time;
  bool time_inferred = false;
  MaybeTime earliest, latest;  // the interval of a line without its own time
  bool trusted = false;
  std::string node;
  std::string source;
  std::uint64_t line = 0;
  std::string text;
  std::string event;
  std::vector<std::string> also_in;
};

struct CoverageItem {
  std::string source;  // kernel, syslog, fabricmanager, slurmd, app, slurmctld, metrics
  std::string node;
  std::string status;  // ok | empty | missing | error | partial | not_analysed
  std::uint64_t lines = 0;
  std::string detail;
};

struct ErrorItem {
  std::string source;
  std::uint64_t line = 0;
  std::string message;
};

struct IgnoredItem {
  std::string node;
  std::string kind;
  std::string reason;
  std::uint64_t count = 0;
  std::string example;  // "source:line"
};

struct CandidateItem {  // every candidate cause considered, with what became of it
  int id = 0;
  std::string node;
  std::string device;
  std::string event;
  std::string code;
  MaybeTime time;
  std::string sub_domain;
  std::string strength;
  std::string status;  // root | candidate | explained | late | weak
  std::string note;
  std::vector<int> evidence;
};

// A collective hang across ranks: which rank did not reach the collective
// the others timed out in, per process group. Only when the incident shows
// one (docs/spec/diagnosis.md, `hang`).
struct HangRank {
  int rank = -1;        // global rank, -1 unknown
  int group_rank = -1;  // rank inside the process group, -1 unknown
  std::string node, gpu;
  std::string state;  // joined | lagging | mismatched | silent
  // As PyTorch counts them: -1 for "none yet"; nullopt when unknown.
  std::optional<std::int64_t> last_enqueued, last_completed, timed_out_at;
  std::string op;
  std::vector<std::string> sources;  // watchdog, flight_recorder, desync_report, nccl_ras
  std::vector<int> evidence;
};

struct HangGroup {
  std::string pg, name;
  std::optional<std::int64_t> seq;  // the collective the others timed out in
  std::string op;
  std::string status;  // lagging | all_joined | mismatch | undetermined
  int size = -1;       // ranks in the group, -1 unknown
  std::vector<HangRank> ranks;
  // Joined and silent ranks left out of `ranks` beyond a bound (a job of
  // thousands of ranks): every rank behind or apart is always listed.
  int ranks_not_listed = 0;
};

struct HangViewRow {
  int rank = -1;
  std::string node;
  std::vector<std::string>
      cells;  // per seq: completed, started, scheduled, enqueued, not_reached, "" unknown
};

struct HangView {
  std::string pg;
  std::vector<std::int64_t> seqs;
  std::vector<HangViewRow> rows;
};

struct Hang {
  std::string status;  // "" = no hang shown; lagging | all_joined | mismatch | undetermined
  std::string summary;
  std::vector<HangGroup> groups;
  HangView view;
};

struct Diagnosis {
  std::string schema = "firstfault.diagnosis/v1";
  std::string cluster;
  std::string job_id;
  int attempt = 0;
  std::string terminal_state;
  std::string verdict;     // attributed | ambiguous | unattributed | no_failure
  std::string domain;      // "" serialises as null
  std::string sub_domain;  // "" serialises as null
  std::vector<RootCause> root_causes;
  std::vector<std::string> affected_nodes;
  std::vector<Symptom> symptoms;
  std::vector<EvidenceItem> evidence;
  std::vector<CoverageItem> coverage;
  std::vector<ErrorItem> errors;
  std::vector<IgnoredItem> ignored;
  std::vector<CandidateItem> candidates;
  std::string recommended_action;
  std::string summary;
  std::vector<std::string> reasoning;  // the decision steps, in order, for humans
  MaybeTime failure_onset;
  MaybeTime failure_onset_earliest, failure_onset_latest;
  Hang hang;
  std::string engine_version;
};

}  // namespace ff
