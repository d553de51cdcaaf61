// firstfault analyze DIR [--format text|json] [--rules DIR]... [--out FILE]
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "pipeline/analyze.h"
#include "rules/compiled_rules.h"
#include "verdict/diagnosis_json.h"
#include "verdict/text_report.h"

namespace ff::cli {

namespace {
struct AnalyzeOptions {
  std::string dir;
  std::string format = "text";
  std::vector<std::string> rules_dirs;
  bool no_builtin = false;
  std::string out;
  std::string colour = "auto";
};
}  // namespace

void add_analyze_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<AnalyzeOptions>();
  CLI::App* sub = app.add_subcommand("analyze", "diagnose one incident directory (static input)");
  sub->add_option("dir", opt->dir, "incident directory (job.json, nodes/, app/, cluster/)")
      ->required();
  sub->add_option("--format", opt->format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_option(
      "--rules", opt->rules_dirs,
      "rule directory or file: extends, or by name replaces, the built-in rules (repeatable)");
  sub->add_flag("--no-builtin-rules", opt->no_builtin, "use only the --rules files");
  sub->add_option("--out", opt->out, "write the report to FILE instead of stdout");
  sub->add_option("--color", opt->colour, "auto, always or never (text format)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  sub->callback([opt, &exit_code]() {
    std::vector<RuleError> rule_errors;
    auto rules = load_rules(!opt->no_builtin, opt->rules_dirs, rule_errors);
    if (!rule_errors.empty()) {
      for (const auto& e : rule_errors)
        std::fprintf(stderr, "firstfault: %s\n", e.to_string().c_str());
      std::fprintf(stderr, "firstfault: rule files have errors; run `firstfault rules check`\n");
      exit_code = kExitBadRules;
      return;
    }
    AnalyzeResult r = analyze_incident(opt->dir, *rules);
    if (!r.usable) {
      std::fprintf(stderr, "firstfault: %s\n", r.problem.c_str());
      exit_code = kExitUnusableInput;
      return;
    }
    bool to_file = !opt->out.empty();
    bool colour =
        opt->colour == "always" || (opt->colour == "auto" && !to_file && isatty(STDOUT_FILENO));
    std::string text = opt->format == "json" ? diagnosis_to_json(r.diagnosis) + "\n"
                                             : diagnosis_to_text(r.diagnosis, colour);
    if (to_file) {
      std::ofstream out(opt->out, std::ios::binary | std::ios::trunc);
      out << text;
      if (!out) {
        std::fprintf(stderr, "firstfault: cannot write %s\n", opt->out.c_str());
        exit_code = kExitUnusableInput;
        return;
      }
    } else {
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
    exit_code = kExitDiagnosed;
  });
}

}  // namespace ff::cli
