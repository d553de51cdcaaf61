// Step 2 of 3 of rule loading: collect. Documents are added in order (the
// built-in files first, then --rules directories); a later entry with the same
// name (pattern name, kind, Xid code) replaces the earlier one, anything new
// extends the set. The collected set is still uncompiled data.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/rules/rule_document.h"

namespace ff {

struct RuleSet {
  std::vector<PatternRule> patterns;  // in first-definition order
  std::map<std::string, KindRule> kinds;
  std::map<int, XidRule> xids;
  std::vector<XidFamilyRule> families;  // later documents' families first
  std::map<int, XidRule> sxids;
  std::optional<XidRule> sxid_default;
  std::map<std::string, std::pair<double, RuleLocation>> settings;
  std::vector<MetricConditionRule> metric_conditions;  // in first-definition order
  std::vector<std::string> metric_node_labels;         // the last document's list wins
  std::vector<ChainRule> chains;                       // in first-definition order
};

class RuleCollector {
 public:
  void add(const RuleDocument& doc);
  const RuleSet& collected() const { return set_; }

 private:
  RuleSet set_;
};

// Adds the built-in files, then every *.yaml / *.yml file of each directory
// (sorted by name). Unreadable directories are errors.
RuleSet collect_rules(bool include_builtin, const std::vector<std::string>& dirs,
                      std::vector<RuleError>& errors);

}  // namespace ff
