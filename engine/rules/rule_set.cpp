#include "engine/rules/rule_set.h"

#include <algorithm>
#include <filesystem>

#include "engine/rules/builtin_rules.h"

namespace ff {

void RuleCollector::add(const RuleDocument& doc) {
  for (const auto& p : doc.patterns) {
    auto it = std::find_if(set_.patterns.begin(), set_.patterns.end(),
                           [&](const PatternRule& q) { return q.name == p.name; });
    if (it != set_.patterns.end())
      *it = p;
    else
      set_.patterns.push_back(p);
  }
  for (const auto& k : doc.kinds) set_.kinds[k.kind] = k;
  for (const auto& x : doc.xids) set_.xids[x.code] = x;
  for (const auto& x : doc.sxids) set_.sxids[x.code] = x;
  // A document's families take precedence over earlier ones.
  set_.families.insert(set_.families.begin(), doc.families.begin(), doc.families.end());
  if (doc.sxid_default) set_.sxid_default = doc.sxid_default;
  for (const auto& [k, v] : doc.settings) set_.settings[k] = v;
  for (const auto& m : doc.metric_conditions) {
    auto it = std::find_if(set_.metric_conditions.begin(), set_.metric_conditions.end(),
                           [&](const MetricConditionRule& q) { return q.name == m.name; });
    if (it != set_.metric_conditions.end())
      *it = m;
    else
      set_.metric_conditions.push_back(m);
  }
  if (doc.metric_node_labels) set_.metric_node_labels = *doc.metric_node_labels;
  for (const auto& ch : doc.chains) {
    auto it = std::find_if(set_.chains.begin(), set_.chains.end(),
                           [&](const ChainRule& q) { return q.name == ch.name; });
    if (it != set_.chains.end())
      *it = ch;
    else
      set_.chains.push_back(ch);
  }
}

RuleSet collect_rules(bool include_builtin, const std::vector<std::string>& dirs,
                      std::vector<RuleError>& errors) {
  RuleCollector c;
  if (include_builtin)
    for (const auto& f : builtin_rule_files())
      c.add(read_rule_text(std::string("builtin:") + f.name, f.text, errors));
  namespace fs = std::filesystem;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (fs::is_regular_file(dir, ec)) {
      c.add(read_rule_file(dir, errors));
      continue;
    }
    std::vector<std::string> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      auto ext = it->path().extension().string();
      if (it->is_regular_file() && (ext == ".yaml" || ext == ".yml"))
        files.push_back(it->path().string());
    }
    if (ec) {
      errors.push_back(make_rule_error(dir, 0, "", "cannot read rules directory: " + ec.message()));
      continue;
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) c.add(read_rule_file(f, errors));
  }
  return c.collected();
}

}  // namespace ff
