// Step 1 of 3 of rule loading (read → collect → compile), as in Falco:
// a RuleDocument is what one YAML file says, unvalidated beyond its shape,
// with the file and line of every entry so that errors can name them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ff {

struct RuleLocation {
  std::string file;
  int line = 0;  // 1-based
};

struct RuleError {
  RuleLocation where;
  std::string rule;  // name of the rule, "" when the error is about the file
  std::string message;
  std::string to_string() const;
};

// Builds a RuleError member by member (GCC 12 misreads nested brace
// initialisation of the strings here as use of uninitialised memory).
inline RuleError make_rule_error(const std::string& file, int line, const std::string& rule,
                                 const std::string& message) {
  RuleError e;
  e.where.file = file;
  e.where.line = line;
  e.rule = rule;
  e.message = message;
  return e;
}

struct PatternRule {
  std::string name;
  std::string kind;
  std::vector<std::string> sources;
  std::vector<std::string> literals;
  std::string regex;
  std::string group;
  bool enabled = true;
  // Real log lines this pattern must match (checked when rules compile), and
  // where the knowledge comes from: a pattern is only as good as the
  // phrasings it was written against.
  std::vector<std::string> examples;
  std::string source;
  RuleLocation where;
};

struct KindRule {
  std::string kind;
  std::string role;            // fault | symptom | info
  std::string strength;        // strong | medium | weak
  std::string scope = "node";  // node | job
  std::string domain, sub_domain, action, label, corroborates;
  double detection_lag_s = 0;
  // The message comes only from the kernel (Xid, AER, MCE, mlx5 port
  // events): a copy in a syslog file or the job's output is not kernel
  // evidence unless the node's kernel log has it too.
  bool kernel_only = false;
  // The same fault on several nodes at once is one cause, not independent
  // ones: a configuration or software fault common to them (a Fabric
  // Manager that does not match the driver on every node of an image).
  bool shared_cause = false;
  // The kernel logs this fault too (a CUDA ECC error comes with an Xid
  // 48/94/95): reported only by a user-writable source while the node's
  // kernel log covers its time and shows no such fault, it is set aside.
  bool kernel_confirms = false;
  // node (default) | peer: a fault reported about another node (a connect
  // that found no route to it) is that node's, resolved from the peer's
  // address; without a resolved peer it names no cause.
  std::string blames = "node";
  RuleLocation where;
};

// A causal chain on one node (rules/chains.yaml): an event of an `upper` kind
// is explained by an event of a `lower` kind on the same node (and device,
// when `same` is device) that began at most `max_gap_s` before it. The
// `root` side names the fault: `lower` (the usual case: the lower cause is
// the root, the upper event its consequence) or `upper` (one fault seen at
// two layers, named by the upper event: a fatal AER and the Xid 79 of the
// GPU behind that port).
struct ChainRule {
  std::string name;
  std::vector<std::string> upper, lower;  // kinds; "xid:79" names one Xid code
  std::string same = "node";              // node | device
  double max_gap_s = 0;
  std::string root = "lower";  // lower | upper
  std::string why;             // one line for the reasoning
  std::string source;          // where the knowledge comes from
  RuleLocation where;
};

struct XidRule {
  int code = 0;
  std::string name, cause, strength, domain, sub_domain, action;
  // NVIDIA's Xid catalog resolution buckets, verbatim (RESET_GPU,
  // RESTART_APP, WORKFLOW_XID_48, ...): what NVIDIA recommends, kept next to
  // the engine's own `action` (see docs/reference/nvidia-xid-catalog.csv).
  std::string immediate_action, investigatory_action;
  RuleLocation where;
};

struct XidFamilyRule {
  int from = 0, to = 0;
  XidRule meaning;  // code unused
};

// A metric condition (rules/metric_conditions.yaml): which series of which
// metrics files become events, and how. See the file's header for the
// meaning of each condition.
struct MetricConditionRule {
  std::string name;
  std::string condition;             // increase | threshold | change | absent
  std::vector<std::string> queries;  // metrics/<query>.json file stems ("" = any)
  std::vector<std::string> metrics;  // __name__ values ("" = any)
  std::string kind;
  std::optional<double> above, below;
  std::optional<double> min_increase;  // increase: default 1
  std::optional<double> for_s;         // absent: silence that counts (default 3 sample steps)
  std::map<std::string, std::string> fields;  // event field <- series label
  bool code_from_value = false;               // the value is a code (DCGM's last Xid)
  bool enabled = true;
  RuleLocation where;
};

struct RuleDocument {
  std::string file;
  std::vector<PatternRule> patterns;
  std::vector<KindRule> kinds;
  std::vector<XidRule> xids;
  std::vector<XidFamilyRule> families;
  std::vector<XidRule> sxids;
  std::optional<XidRule> sxid_default;
  std::map<std::string, std::pair<double, RuleLocation>> settings;
  std::vector<MetricConditionRule> metric_conditions;
  std::optional<std::vector<std::string>> metric_node_labels;
  std::vector<ChainRule> chains;
};

// Parses one YAML rule file. `display_name` is used in error messages.
RuleDocument read_rule_text(const std::string& display_name, const std::string& text,
                            std::vector<RuleError>& errors);
RuleDocument read_rule_file(const std::string& path, std::vector<RuleError>& errors);

}  // namespace ff
