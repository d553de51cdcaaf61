// firstfault rules check [DIR...] | rules literals | rules table
#include <algorithm>
#include <cstdio>
#include <tuple>

#include "agent/cli/commands.h"
#include "engine/rules/compiled_rules.h"

namespace ff::cli {
namespace {

std::string cell(std::string s, std::size_t max) {
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '`')
      out += '\'';
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

// The vocabulary as a Markdown table, one row per pattern that yields a
// fault or a symptom: the table in docs/rules.md is this output, so it cannot drift
// from the rule files.
void print_rules_table(const CompiledRules& rules) {
  std::vector<std::tuple<std::string, std::string, std::string, std::string, std::string>> rows;
  for (const auto& p : rules.patterns) {
    const KindInfo* ki = rules.kind(p.rule.kind);
    if (!ki || ki->role == Role::kInfo) continue;
    std::string domain, sub;
    if (p.rule.kind == "xid" || p.rule.kind == "sxid") {
      domain = "gpu, gpu_fabric, application";
      sub = p.rule.kind == "xid" ? "by Xid code (" + std::to_string(rules.xids.size()) +
                                       " codes, rules/xid_catalog.yaml)"
                                 : "by SXid code (" + std::to_string(rules.sxids.size()) +
                                       " codes, rules/xid_catalog.yaml)";
    } else if (ki->role == Role::kSymptom) {
      domain = "(symptom)";
      sub = p.rule.kind;
    } else {
      domain = ki->meaning.domain;
      sub = ki->meaning.sub_domain;
    }
    std::string example = p.rule.examples.empty() ? "" : "`" + cell(p.rule.examples[0], 110) + "`";
    rows.emplace_back(domain, sub, p.rule.name, example, cell(p.rule.source, 120));
  }
  std::stable_sort(rows.begin(), rows.end());
  std::printf("| domain | sub_domain | pattern | example phrase | source of knowledge |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const auto& [domain, sub, name, example, source] : rows)
    std::printf("| %s | %s | `%s` | %s | %s |\n", domain.c_str(), sub.c_str(), name.c_str(),
                example.c_str(), source.c_str());
}

}  // namespace

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

  auto tdirs = std::make_shared<std::vector<std::string>>();
  auto tno_builtin = std::make_shared<bool>(false);
  CLI::App* table = rules->add_subcommand(
      "table", "print what the engine recognises as a Markdown table (docs/rules.md)");
  table->add_option("--rules", *tdirs, "extra rule directories");
  table->add_flag("--no-builtin-rules", *tno_builtin, "only the given rule directories");
  table->callback([tdirs, tno_builtin, &exit_code]() {
    std::vector<RuleError> errors;
    auto compiled = load_rules(!*tno_builtin, *tdirs, errors);
    for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.to_string().c_str());
    print_rules_table(*compiled);
    exit_code = errors.empty() ? kExitDiagnosed : kExitBadRules;
  });
}

}  // namespace ff::cli
