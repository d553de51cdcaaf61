// firstfault: tells why a distributed training job failed.
#include <cstdio>
#include <exception>

#include "agent/cli/commands.h"
#include "agent/cli/k8s_command.h"
#include "engine/pipeline/analyze.h"

int main(int argc, char** argv) {
  CLI::App app{"firstfault: finds the first fault of a failed GPU training job"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", std::string("firstfault " FF_PROJECT_VERSION " (") + ff::kEngineVersion + ")");
  int exit_code = ff::cli::kExitDiagnosed;
  ff::cli::add_analyze_command(app, exit_code);
  ff::cli::add_rules_command(app, exit_code);
  ff::cli::add_show_command(app, exit_code);
  ff::cli::add_history_command(app, exit_code);
  ff::cli::add_drains_command(app, exit_code);
  ff::cli::add_suspects_command(app, exit_code);
  ff::cli::add_agent_command(app, exit_code);
  ff::cli::add_gather_command(app, exit_code);
  ff::cli::add_k8s_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : ff::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "firstfault: internal error: %s\n", e.what());
    return ff::cli::kExitInternal;
  }
  return exit_code;
}
