// firstfault gather [--config agent.yaml] DIR
// Adds what the central sources of agent.yaml (loki:, prometheus:) hold for
// the job of an incident directory: the nodes and window come from
// DIR/job.json; files go under DIR (nodes/<node>/<kind>.loki,
// metrics/<query>.json) and every source's coverage into DIR/job.json. The agent does the same once
// per job attempt before its final pass; this is for incidents gathered elsewhere.
#include <cstdio>
#include <filesystem>
#include <string>

#include "agent/cli/commands.h"
#include "agent/server/agent_config.h"
#include "central/gather/central_gather.h"

namespace ff::cli {

namespace {

int run_gather(const std::string& config_path, const std::string& dir) {
  namespace fs = std::filesystem;
  agent::AgentConfig config;
  try {
    config = agent::load_agent_config(config_path);
  } catch (const agent::ConfigError& e) {
    std::fprintf(stderr, "firstfault gather: %s\n", e.what());
    return kExitUsage;
  }
  if (!config.central.any()) {
    std::fprintf(stderr,
                 "firstfault gather: %s configures no central source (loki:, prometheus:)\n",
                 config_path.c_str());
    return kExitUsage;
  }
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(dir) / "job.json", ec)) {
    std::fprintf(stderr, "firstfault gather: %s/job.json: no such file\n", dir.c_str());
    return kExitUnusableInput;
  }
  // Gathered beside, then laid over: the same two steps as in the agent.
  fs::path scratch = fs::path(dir) / ".firstfault-gather";
  fs::remove_all(scratch, ec);
  auto gathered = sources::gather_central(config.central, dir, scratch);
  std::string problem = sources::overlay_central(scratch, dir);
  fs::remove_all(scratch, ec);
  for (const auto& c : gathered.coverage)
    std::printf("%-20s %-12s %-12s %s\n", c.collector.c_str(),
                c.node.empty() ? "-" : c.node.c_str(), c.status_text().c_str(), c.detail.c_str());
  if (!problem.empty()) {
    std::fprintf(stderr, "firstfault gather: %s\n", problem.c_str());
    return kExitInternal;
  }
  if (!gathered.problem.empty()) {
    std::fprintf(stderr, "firstfault gather: %s\n", gathered.problem.c_str());
    return kExitUnusableInput;
  }
  return kExitDiagnosed;
}

}  // namespace

void add_gather_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "gather",
      "add what Loki and Prometheus hold for an incident's nodes and window (agent.yaml)");
  auto config = std::make_shared<std::string>("/etc/firstfault/agent.yaml");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("--config", *config, "agent configuration with the central sources")
      ->capture_default_str();
  cmd->add_option("dir", *dir, "incident directory (its job.json gives nodes and window)")
      ->required();
  cmd->callback([config, dir, &exit_code] { exit_code = run_gather(*config, *dir); });
}

}  // namespace ff::cli
