// Step 1 of the pipeline, part 4: metrics/<query>.json, the reply of
// Prometheus's /api/v1/query_range (or /api/v1/query) exactly as the server
// sent it: {"status":"success","data":{"resultType":"matrix","result":[
// {"metric":{labels},"values":[[unix_seconds,"value"],...]}]}}.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/read/incident_file.h"
#include "incident/time/time.h"

namespace ff {

struct MetricSample {
  TimeUs time = 0;
  double value = 0;
};

struct MetricSeries {
  std::map<std::string, std::string> labels;  // __name__ included when Prometheus sent it
  std::vector<MetricSample> samples;          // in time order, NaN samples dropped

  const std::string& metric() const;  // __name__, or "" after a PromQL function
};

struct MetricsFile {
  std::string rel;                    // incident-relative path ("metrics/ib_port_errors.json")
  std::string query;                  // the file's stem: the collector's query name
  bool ok = false;                    // a success reply that parsed
  std::string error;                  // why not, when !ok
  std::vector<std::string> warnings;  // the reply's own "warnings" (partial data)
  std::vector<MetricSeries> series;
  std::uint64_t samples = 0;
};

// Largest metrics file read; a larger one is an error, not a silent cut.
// The JSON is parsed whole: a 25 MB reply (1.5 million samples) takes about
// 0.6 s and 330 MB, so 64 MiB stays under a gigabyte.
constexpr std::uintmax_t kMaxMetricsFileBytes = 64u << 20;

MetricsFile parse_metrics_json(const std::string& text, const std::string& rel);
// The metrics file at `rel` in the incident, opened by the incident's rule
// (read/incident_file.h); what cannot be opened or read is the file's error.
MetricsFile read_metrics_file(const IncidentRoot& incident, const std::string& rel);
// The same, for `path` = the incident directory joined with `rel`.
MetricsFile read_metrics_file(const std::filesystem::path& path, const std::string& rel);

// "metric_name{a="1",b="x"}": the series as PromQL would print it.
std::string series_text(const MetricSeries& s);

}  // namespace ff
