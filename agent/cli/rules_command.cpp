// firstfault rules check [DIR...] | rules literals | rules list
#include <cstdio>

#include "cli/commands.h"
#include "rules/compiled_rules.h"

namespace ff::cli {

void add_rules_command(CLI::App& app, int& exit_code) {
  CLI::App* rules = app.add_subcommand("rules", "check and inspect rule files");
  rules->require_subcommand(1);

  auto dirs = std::make_shared<std::vector<std::string>>();
  auto no_builtin = std::make_shared<bool>(false);
  CLI::App* check =
      rules->add_subcommand("check", "validate rule files (built-in ones, plus DIR...)");
  check->add_option("dir", *dirs, "rule directories or files");
  check->add_flag("--no-builtin-rules", *no_builtin, "check only the given files");
  check->callback([dirs, no_builtin, &exit_code]() {
    std::vector<RuleError> errors;
    auto compiled = load_rules(!*no_builtin, *dirs, errors);
    for (const auto& e : errors) std::printf("%s\n", e.to_string().c_str());
    if (!errors.empty()) {
      std::printf("%zu error(s)\n", errors.size());
      exit_code = kExitBadRules;
      return;
    }
    std::printf("ok: %zu patterns, %zu kinds, %zu Xids, %zu SXids\n", compiled->patterns.size(),
                compiled->kinds.size(), compiled->xids.size(), compiled->sxids.size());
    exit_code = kExitDiagnosed;
  });

  auto ldirs = std::make_shared<std::vector<std::string>>();
  CLI::App* literals =
      rules->add_subcommand("literals", "print the prefilter literals, one per line");
  literals->add_option("--rules", *ldirs, "extra rule directories");
  literals->callback([ldirs, &exit_code]() {
    std::vector<RuleError> errors;
    auto compiled = load_rules(true, *ldirs, errors);
    for (const auto& l : compiled->literals()) std::printf("%s\n", l.c_str());
    exit_code = errors.empty() ? kExitDiagnosed : kExitBadRules;
  });
}

}  // namespace ff::cli
