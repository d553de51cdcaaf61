// firstfault agent --config /etc/firstfault/agent.yaml [--foreground]
#include <cstdio>

#include "agent/cli/commands.h"
#include "agent/server/agent_daemon.h"

namespace ff::cli {

void add_agent_command(CLI::App& app, int& exit_code) {
  auto config_path = std::make_shared<std::string>("/etc/firstfault/agent.yaml");
  auto foreground = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand(
      "agent", "run the head-node agent: receives bundles, runs passes, writes the Comment");
  sub->add_option("--config", *config_path, "agent configuration (YAML)");
  // The agent never forks into the background (systemd and tests want the
  // foreground); the flag exists so unit files can say what they expect.
  sub->add_flag("--foreground", *foreground, "stay in the foreground (always the case)");
  // `foreground` is captured so it outlives this function: CLI11 writes it
  // while parsing (ASan saw the write after free).
  sub->callback([config_path, foreground, &exit_code]() {
    (void)foreground;
    ff::agent::AgentConfig config;
    try {
      config = ff::agent::load_agent_config(*config_path);
    } catch (const ff::agent::ConfigError& e) {
      std::fprintf(stderr, "firstfault: %s\n", e.what());
      exit_code = kExitUsage;
      return;
    }
    exit_code = ff::agent::run_agent(config);
  });
}

}  // namespace ff::cli
