// Step 2 of the pipeline, for metrics: where a series becomes an event.
//
// Each series of a metrics file is matched against the metric conditions of
// rules/metric_conditions.yaml (by query name and metric name) and, when it
// belongs to a job node, checked sample by sample:
//   increase   a counter rose by at least min_increase (resets counted as
//              Prometheus's increase() does)
//   threshold  a value above/below a bound (first such sample)
//   change     a gauge changed to a value above/below a bound (DCGM's "last
//              Xid": a value already there when the range began is old news)
//   absent     the series stopped while the file's other series went on
// Events carry their provenance: metric, labels, value, time, file, and the
// series' position in the file as `line`.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "engine/extract/event_extractor.h"
#include "engine/read/metrics_reader.h"
#include "engine/rules/compiled_rules.h"
#include "incident/job_info.h"

namespace ff {

struct MetricExtractStats {
  std::uint64_t series = 0;
  std::uint64_t outside_job = 0;  // series whose labels name no job node
  std::uint64_t events = 0;
  std::set<std::string> nodes;  // job nodes with at least one series
};

// Events of one file, in series order, then condition order, then time.
MetricExtractStats extract_metric_events(const MetricsFile& file, const CompiledRules& rules,
                                         const JobInfo& job, std::uint64_t& seq,
                                         const EventSink& sink);

// The job node a series is about: the first of `labels` whose value is a job
// node, also without a ":port" and as a short host name ("gpu-a01.x:9100").
// Without job nodes, the first such label's value without its port.
std::string metric_series_node(const MetricSeries& s, const std::vector<std::string>& labels,
                               const JobInfo& job);

// 37 → "37", 1.5 → "1.5": how values appear in evidence text.
std::string format_metric_value(double v);

}  // namespace ff
