// The agent's configuration file (/etc/firstfault/agent.yaml,
// docs/slurm-path.md section 5). Every error names the file and line.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "slurm/slurm_client.h"

namespace ff::agent {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct AgentConfig {
  std::string listen_host = "127.0.0.1";
  int listen_port = 7421;  // 0: any free port (printed at start)
  std::string state_dir = "/var/lib/firstfault";
  std::string database;           // default: <state_dir>/firstfault.db
  std::vector<int> allowed_uids;  // besides root and SlurmUser
  std::string slurm_user;         // SlurmUser by name when scontrol cannot say
  int fastpass_wait_s = 8;
  int final_pass_deadline_s = 300;
  std::size_t max_request_bytes = 268435456;
  SlurmPaths slurm;                // scontrol, sacctmgr
  std::vector<std::string> rules;  // extra rule directories (as `analyze --rules`)
};

// Throws ConfigError "<file>:<line>: <what>".
AgentConfig load_agent_config(const std::string& path);
// The same from text; `name` is used in messages.
AgentConfig parse_agent_config(const std::string& text, const std::string& name);

}  // namespace ff::agent
