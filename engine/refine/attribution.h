// Step 4 of the pipeline: refinement. Where events become symptoms and
// root-cause candidates, and where the first fault is chosen.
//
//   fault events ──(group per node and time)──► candidates
//   symptom events ──(per node and kind)──────► symptoms
//   candidates + failure onset ──(correlation rules, in order)──► roots
//
// The correlation rules are C++ classes registered in make_correlation_rules();
// their order is fixed and documented in docs/architecture.md.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/filter/filter_context.h"
#include "engine/model/event.h"
#include "engine/refine/collective_progress.h"
#include "engine/rules/compiled_rules.h"

namespace ff {

enum class CandidateStatus {
  kRoot,       // the verdict rests on it
  kCandidate,  // one of several plausible causes (ambiguous)
  kExplained,  // follows from a root on the same node or from the failure
  kLate,       // after the failure had begun: not its cause
  kWeak,       // too weak to carry a verdict alone
};
const char* candidate_status_name(CandidateStatus s);

struct Candidate {
  int id = 0;
  std::string node;  // "" = job-wide
  std::string device;
  std::vector<std::string> related_devices;  // devices of chained events (the GPU's PCIe port)
  int rank = -1;
  std::vector<std::size_t> events;  // indexes into Attribution::events, time order
  std::size_t head = 0;             // the event that gives the meaning
  Meaning meaning;
  std::string kind, code;
  MaybeTime time;               // earliest event time (point estimate)
  MaybeTime earliest, latest;   // when it began: bounds from its events' intervals
  MaybeTime earliest_possible;  // earliest minus the kind's detection lag
  int score = 0;                // strength*10 + cause bonus, decides the meaning within a group
  bool corroborated = false;
  bool from_state = false;  // implied by the scheduler state alone, no log line
  int alternative_of = 0;   // another reading of that candidate's fault (0: none)
  CandidateStatus status = CandidateStatus::kCandidate;
  std::string note;
  std::string detail;  // what the summary adds after the device and rank ("process group 2,
                       // collective 2214")
};

struct SymptomGroup {
  std::string node, kind;
  std::vector<std::size_t> events;  // time order
  std::uint64_t count = 0;          // includes events counted but not kept
  bool demoted = false;
  std::string explained_by;
};

struct Attribution {
  std::vector<Event> events;  // retained, non-ignored and ignored alike
  std::vector<Candidate> candidates;
  std::vector<SymptomGroup> symptoms;
  MaybeTime onset;  // when the failure began, from the symptoms (point estimate)
  // Bounds of the onset: the failure began no later than onset_latest (the
  // first symptom's latest possible time, minus how long a watchdog says its
  // collective hung); a fault is late only when it began after that.
  MaybeTime onset_earliest, onset_latest;
  MaybeTime first_symptom;  // first symptom actually logged
  std::string verdict;      // attributed | ambiguous | unattributed | no_failure
  std::vector<int> roots;   // candidate ids the verdict names, in order
  std::vector<std::string> reasoning;
  std::set<std::string> nodes_missing_kernel;  // job nodes with no kernel messages at all
  // Prometheus was configured and could not be read (unreachable,
  // unauthorised, a broken reply): not "metrics show nothing".
  std::string metrics_failed;  // what failed, "" when nothing did
  // events counted but not kept by the bounded store, per (node, kind)
  std::map<std::pair<std::string, std::string>, std::uint64_t> overflow;
  std::string state_note;
  // Events explained by a chain rule (index → the index of the event that
  // explains it, and the chain's name): they join the explaining event's
  // candidate as evidence and never name a cause of their own.
  std::map<std::size_t, std::pair<std::size_t, std::string>> chained;
  // The ranks' progress through their collectives: flight-recorder dumps
  // are added before refinement, the watchdog's lines by the hang rule,
  // which leaves its finding in `hang`.
  CollectiveProgress progress;
  HangFinding hang;
};

class CorrelationRule {
 public:
  virtual ~CorrelationRule() = default;
  virtual const char* name() const = 0;
  virtual void apply(Attribution&, FilterContext&) = 0;
};

std::vector<std::unique_ptr<CorrelationRule>> make_correlation_rules();

const Candidate* find_candidate(const Attribution& a, int id);
Candidate* find_candidate(Attribution& a, int id);

}  // namespace ff
