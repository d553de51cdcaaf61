// Fuzzes the rule pipeline on one user rule file: parse the YAML text,
// collect it after the built-in files (overrides, conflicts), compile the
// regexes and tables. Errors are expected; crashes and leaks are not.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/rules/builtin_rules.h"
#include "engine/rules/compiled_rules.h"
#include "engine/rules/rule_document.h"
#include "engine/rules/rule_set.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<ff::RuleDocument> builtin = [] {
    std::vector<ff::RuleDocument> docs;
    std::vector<ff::RuleError> errors;
    for (const auto& f : ff::builtin_rule_files())
      docs.push_back(ff::read_rule_text(f.name, f.text, errors));
    return docs;
  }();
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<ff::RuleError> errors;
  ff::RuleDocument doc = ff::read_rule_text("fuzz.yaml", text, errors);
  for (const auto& e : errors) (void)e.to_string();

  // Alone, then on top of the built-in rules (the way `--rules DIR` is used).
  for (bool with_builtin : {false, true}) {
    ff::RuleCollector collector;
    if (with_builtin)
      for (const auto& d : builtin) collector.add(d);
    collector.add(doc);
    std::vector<ff::RuleError> cerrors;
    auto compiled = ff::compile_rules(collector.collected(), cerrors);
    if (compiled) (void)compiled->literals();
  }
  return 0;
}
