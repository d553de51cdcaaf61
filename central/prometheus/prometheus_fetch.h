// Range queries against Prometheus's HTTP API for one job: each configured
// query runs over the job's window (widened by the config's margins) and its
// reply is stored as Prometheus sent it in <dir>/metrics/<name>.json, the
// format the engine reads. Every query reports its coverage: a query that
// could not run is evidence missing, never a node without faults.
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "central/prometheus/prometheus_config.h"
#include "incident/coverage.h"

namespace ff::sources {

using Clock = std::chrono::system_clock;

// Prometheus refuses a range query of more than 11,000 points per series:
// the step is raised for long windows so a query stays under 10,000.
double prometheus_step_s(double wanted_step_s, Clock::time_point start, Clock::time_point end);

// Runs every query of `config` for `nodes` over [window_start - margin_before,
// window_end + margin_after]; writes <incident_dir>/metrics/<name>.json for
// every success reply (an empty one too) and returns one entry per query, in
// the config's order.
std::vector<Coverage> fetch_metrics(const PrometheusConfig& config,
                                    const std::vector<std::string>& nodes,
                                    Clock::time_point window_start, Clock::time_point window_end,
                                    const std::filesystem::path& incident_dir);

// The coverage of one reply (status, body), judged as fetch_metrics judges
// it; `nodes` without any series make it `partial`.
Coverage judge_prometheus_reply(const std::string& name, long http_status, const std::string& body,
                                const PrometheusConfig& config,
                                const std::vector<std::string>& nodes,
                                const std::string& node_label);

}  // namespace ff::sources
