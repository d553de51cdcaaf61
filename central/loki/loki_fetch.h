// A job's node logs pulled from Loki's query_range API
// (https://grafana.com/docs/loki/latest/reference/loki-http-api/): one LogQL
// selector per node and kind, paged forward through the window until Loki
// has no more, written as nodes/<node>/<kind>.loki in time order, which the
// engine reads as that kind's log. Each (node, kind) reports in coverage what
// it got or why not.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "central/loki/loki_config.h"
#include "incident/coverage.h"

namespace ff::sources {

struct LokiFetch {
  std::vector<Coverage> coverage;  // "loki:<kind>", one per node and kind
  std::uint64_t lines = 0;         // written over all files
  int requests = 0;
};

// [start_ns, end_ns) in unix nanoseconds, as Loki counts.
LokiFetch fetch_loki_logs(const LokiConfig& config, const std::vector<std::string>& nodes,
                          std::int64_t start_ns, std::int64_t end_ns,
                          const std::filesystem::path& incident_dir);

// The selector for one node: %n replaced, the name escaped for a LogQL string.
std::string loki_selector(const std::string& pattern, const std::string& node);

}  // namespace ff::sources
