// The central sources of one job attempt, gathered once: for the nodes and
// window of an incident's job.json, each configured source (Loki; the
// metrics of Prometheus) writes its files into a directory of their own with
// a coverage.json, which is then laid over the incident the engine reads —
// the same files and coverage whether the agent or `firstfault gather` ran it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "central/loki/loki_config.h"
#include "central/prometheus/prometheus_config.h"
#include "incident/coverage.h"

namespace ff::sources {

struct CentralConfig {
  std::optional<LokiConfig> loki;
  std::optional<PrometheusConfig> prometheus;  // widens the window by its own margins
  // Loki's window: the job's, widened as the node collector widens it.
  int margin_before_s = 300;
  int margin_after_s = 60;
  bool any() const { return loki.has_value() || prometheus.has_value(); }
};

struct CentralGather {
  std::vector<Coverage> coverage;  // one entry per source, node and kind
  std::string problem;             // why nothing was asked ("" when something was)
};

// Reads `incident_dir`/job.json (nodes, start_time, end_time) and writes what
// the sources return under `out_dir` (nodes/<node>/<kind>.loki, metrics/…)
// plus out_dir/coverage.json. A job.json without nodes or times asks nothing
// and says so in `problem` (and in coverage.json).
CentralGather gather_central(const CentralConfig& config, const std::filesystem::path& incident_dir,
                             const std::filesystem::path& out_dir);

// Copies `central_dir`'s files (nodes/, metrics/, cluster/) into `incident_dir` and puts its
// coverage into incident_dir/job.json, replacing entries of the same collector and node. Returns ""
// or what went wrong.
std::string overlay_central(const std::filesystem::path& central_dir,
                            const std::filesystem::path& incident_dir);

}  // namespace ff::sources
