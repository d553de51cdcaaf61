// Subcommands of the `firstfault` command line, one file each.
#pragma once

#include <CLI/CLI.hpp>

namespace ff::cli {

// Exit codes (documented in the README):
constexpr int kExitDiagnosed = 0;      // a diagnosis was produced
constexpr int kExitInternal = 1;       // a bug: an exception escaped
constexpr int kExitUnusableInput = 2;  // the incident could not be analysed at all
constexpr int kExitBadRules = 3;       // rule files have errors
constexpr int kExitUsage = 64;         // bad command line

void add_analyze_command(CLI::App& app, int& exit_code);
void add_rules_command(CLI::App& app, int& exit_code);

}  // namespace ff::cli
