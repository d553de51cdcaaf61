// Where a cluster keeps its metrics in Prometheus, and which range queries
// to run for a job: GPU Xid/ECC counters, temperature, power and NVLink
// errors (DCGM exporter), InfiniBand port error counters (node_exporter) and
// `up`, by default. Read from a `prometheus:` section (agent.yaml or
// `firstfault gather metrics`'s config); every error names the file and line.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ff::sources {

struct PrometheusQuery {
  std::string name;              // metrics/<name>.json; [A-Za-z0-9_.-], not starting with '.'
  std::string query;             // PromQL with {{nodes}}, {{node_label}}, {{node_selector}}
  std::optional<double> step_s;  // overrides the config's step_s
  std::optional<std::string> node_label;  // overrides the config's node_label
};

struct PrometheusConfig {
  std::string url;                // http://prometheus:9090 (the API is under /api/v1/)
  double timeout_s = 30;          // per query
  std::string bearer_token_file;  // "" = no Authorization header
  std::string ca_file;            // PEM bundle for https; "" = the system's
  double step_s = 15;             // query_range resolution (raised for long jobs)
  double margin_before_s = 300;   // the window asked for: the job's, widened
  double margin_after_s = 120;
  // The label that names a series' node, and how to get the node's name out
  // of its value (capture group 1; "gpu-a01:9100" → "gpu-a01").
  std::string node_label = "instance";
  std::string node_label_regex = "^([^:]+)(:[0-9]+)?$";
  std::vector<PrometheusQuery> queries;  // the defaults, changed by `queries:`
};

struct PrometheusConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The default query set. Metric names as the exporters publish them:
// DCGM_FI_DEV_* (NVIDIA dcgm-exporter; the ECC and NVLink error counters are
// commented out of its default-counters.csv and must be enabled there) and
// node_infiniband_* (node_exporter's infiniband collector).
std::vector<PrometheusQuery> default_prometheus_queries();

// Throws PrometheusConfigError "<file>:<line>: <what>". `queries:` entries
// replace a default of the same name or add one; `default_queries: false`
// starts from none.
PrometheusConfig parse_prometheus_config(const YAML::Node& node, const std::string& file);

// The `prometheus:` section of a YAML file.
PrometheusConfig load_prometheus_config_file(const std::string& path);

// The job's nodes as one RE2 alternation inside a PromQL string literal:
// metacharacters escaped for RE2, then backslashes and quotes for PromQL.
std::string promql_node_alternation(const std::vector<std::string>& nodes);

// The query text with {{nodes}}, {{node_label}} and {{node_selector}}
// (= <node_label>=~"(<nodes>)([.:].*)?", which matches "gpu-a01",
// "gpu-a01:9100" and "gpu-a01.cluster:9100") replaced.
std::string expand_prometheus_query(const PrometheusQuery& q, const PrometheusConfig& config,
                                    const std::vector<std::string>& nodes);

}  // namespace ff::sources
