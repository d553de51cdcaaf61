// Where a cluster keeps its node logs in Loki, and how to ask for one node's
// kind of log: a LogQL stream selector per kind with %n for the node name.
// Read from the `loki:` section of agent.yaml (or `firstfault gather`'s
// config); every error names the file and line.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <map>
#include <string>

namespace ff::sources {

struct LokiConfig {
  std::string url;                  // http://loki:3100 (no trailing /loki/...)
  std::string org_id;               // X-Scope-OrgID for a multi-tenant Loki; "" = none
  std::string bearer_token_file;    // "" = no Authorization header
  std::string ca_file;              // PEM bundle for https; "" = the system's
  double timeout_s = 30;            // per request
  std::size_t limit = 5000;         // entries per request (Loki's max_entries_limit_per_query)
  std::size_t max_lines = 1000000;  // per node and kind; more is `partial`
  bool prefix_time = false;         // write Loki's entry time before each line
  // kind (kernel, syslog, fabricmanager, slurmd) → LogQL selector, %n = node.
  std::map<std::string, std::string> selectors;
};

struct LokiConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws LokiConfigError "<file>:<line>: <what>".
LokiConfig parse_loki_config(const YAML::Node& node, const std::string& file);

}  // namespace ff::sources
