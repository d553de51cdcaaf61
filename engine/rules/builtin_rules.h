// The rule files shipped with firstfault (rules/*.yaml), compiled in.
#pragma once

#include <string>
#include <vector>

namespace ff {

struct BuiltinRuleFile {
  const char* name;
  const char* text;
};

const std::vector<BuiltinRuleFile>& builtin_rule_files();

}  // namespace ff
