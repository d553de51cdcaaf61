// Step 3 of 3 of rule loading: compile. Validates the collected set (every
// pattern's kind is declared, regexes compile, literals exist, values are
// from the allowed vocabularies) and builds what the engine runs: RE2
// objects, the per-source literal prefilter, and the kind/Xid tables.
#pragma once

#include <re2/re2.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/rules/rule_set.h"

namespace ff {

// File kinds, as a bit mask so that a pattern can name several.
enum SourceKind : unsigned {
  kSrcKernel = 1u << 0,
  kSrcSyslog = 1u << 1,
  kSrcFabricManager = 1u << 2,
  kSrcSlurmd = 1u << 3,
  kSrcApp = 1u << 4,
  kSrcSlurmctld = 1u << 5,
  kSrcCluster = 1u << 6,
  kSrcOther = 1u << 7,
  kSrcAny = 0xffu,
};
unsigned source_kind_bit(const std::string& name);  // 0 when unknown

enum class Role { kFault, kSymptom, kInfo };
enum class Strength { kWeak = 1, kMedium = 2, kStrong = 3 };

struct Meaning {  // what a fault means when it is the root cause
  std::string name;
  std::string cause;  // Xids: hardware/application/driver/consequence/informational/unknown
  Strength strength = Strength::kWeak;
  std::string domain, sub_domain, action;
};

struct KindInfo {
  std::string kind;
  Role role = Role::kInfo;
  bool job_scope = false;
  std::string label;
  std::string corroborates;  // domain this kind confirms when seen with a fault of it
  double detection_lag_s = 0;
  bool kernel_only = false;      // only the kernel writes it (see kinds.yaml)
  bool shared_cause = false;     // the same fault on several nodes is one cause
  bool kernel_confirms = false;  // the kernel logs it too: set aside without it
  bool blames_peer = false;      // the fault is the peer's (peer_node), not the reporter's
  Meaning meaning;
};

// One side of a chain rule: an event kind, optionally one Xid/SXid code.
struct ChainKind {
  std::string kind;
  int code = -1;  // -1: any
};

struct CompiledChain {
  std::string name;
  std::vector<ChainKind> upper, lower;
  bool same_device = false;
  double max_gap_s = 0;
  bool root_upper = false;  // the upper event names the fault
  std::string why;
  RuleLocation where;
};

struct CompiledPattern {
  PatternRule rule;
  std::unique_ptr<RE2> re;
  std::vector<std::pair<std::string, int>> captures;  // name → group index, sorted by index
  unsigned source_mask = kSrcAny;
  int group_id = -1;  // index into the group table, -1 = none
};

struct Settings {
  double window_before_start_s = 300;
  double window_after_end_s = 120;
  double same_fault_window_s = 120;
  double onset_tolerance_s = 60;
  double burst_gap_s = 60;
  double survived_fault_s = 1800;
  double recurring_xid_min = 2;
  double max_events_per_key = 32;
  double max_evidence = 200;
};

enum class MetricConditionType { kIncrease, kThreshold, kChange, kAbsent };

// A validated metric condition (see rules/metric_conditions.yaml).
struct MetricCondition {
  std::string name;
  MetricConditionType type = MetricConditionType::kIncrease;
  std::set<std::string> queries;  // empty: any file
  std::set<std::string> metrics;  // empty: any metric
  std::string kind;
  std::optional<double> above, below;
  double min_increase = 1;
  std::optional<double> for_s;
  std::map<std::string, std::string> fields;  // event field <- label
  bool code_from_value = false;
  RuleLocation where;

  bool applies_to(const std::string& query, const std::string& metric) const {
    return (queries.empty() || queries.count(query)) && (metrics.empty() || metrics.count(metric));
  }
  // threshold/change: does `v` satisfy above/below?
  bool holds(double v) const { return (!above || v > *above) && (!below || v < *below); }
};

class CompiledRules {
 public:
  std::vector<CompiledPattern> patterns;
  std::vector<std::string> groups;
  std::map<std::string, KindInfo> kinds;
  std::map<int, Meaning> xids;
  std::vector<std::pair<std::pair<int, int>, Meaning>> families;
  std::map<int, Meaning> sxids;
  Meaning sxid_default;
  Settings settings;
  std::vector<MetricCondition> metric_conditions;
  std::vector<CompiledChain> chains;  // in definition order
  // Labels that may name a series' node, in order of preference.
  std::vector<std::string> metric_node_labels;

  const KindInfo* kind(const std::string& k) const;
  // Meaning of an Xid; unknown codes take their family, else "unknown".
  Meaning xid(int code, bool* known = nullptr) const;
  Meaning sxid(int code) const;

  // Prefilter for one source kind: the alternation of the literals of every
  // pattern that applies to it (nullptr when no pattern applies).
  const RE2* prefilter(unsigned source_bit) const;
  std::vector<std::string> literals(unsigned source_mask = kSrcAny) const;

 private:
  friend std::shared_ptr<const CompiledRules> compile_rules(const RuleSet&,
                                                            std::vector<RuleError>&);
  std::map<unsigned, std::unique_ptr<RE2>> prefilters_;
};

// Never returns null; entries that do not compile are reported and skipped.
std::shared_ptr<const CompiledRules> compile_rules(const RuleSet& set,
                                                   std::vector<RuleError>& errors);

// Convenience: collect + compile.
std::shared_ptr<const CompiledRules> load_rules(bool include_builtin,
                                                const std::vector<std::string>& dirs,
                                                std::vector<RuleError>& errors);

}  // namespace ff
