// Subcommands of the `firstfault` command line, one file each.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ff::cli {

// Exit codes (documented in the README):
constexpr int kExitDiagnosed = 0;      // a diagnosis was produced
constexpr int kExitInternal = 1;       // a bug: an exception escaped
constexpr int kExitUnusableInput = 2;  // the incident could not be analysed at all
constexpr int kExitBadRules = 3;       // rule files have errors
constexpr int kExitUsage = 64;         // bad command line
constexpr int kExitNotFound = 2;       // show/history: no such job, no database

// The agent's database for `show`, `history` and `suspects`: --db when given, else
// $FIRSTFAULT_DB, else /var/lib/firstfault/firstfault.db.
std::string database_path(const std::string& db_option);

void add_analyze_command(CLI::App& app, int& exit_code);
void add_rules_command(CLI::App& app, int& exit_code);
void add_show_command(CLI::App& app, int& exit_code);
void add_history_command(CLI::App& app, int& exit_code);
void add_drains_command(CLI::App& app, int& exit_code);
void add_suspects_command(CLI::App& app, int& exit_code);
void add_agent_command(CLI::App& app, int& exit_code);
void add_gather_command(CLI::App& app, int& exit_code);

}  // namespace ff::cli
