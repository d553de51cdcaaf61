// Metric conditions (rules/metric_conditions.yaml): the metrics reader, each
// condition type on hand-written Prometheus replies, node mapping, and rule
// loading errors that name file and line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/extract/metric_extractor.h"
#include "engine/read/metrics_reader.h"
#include "engine/rules/builtin_rules.h"
#include "engine/rules/compiled_rules.h"
#include "engine/rules/rule_document.h"
#include "engine/rules/rule_set.h"

namespace ff {
namespace {

// 2026-11-02T10:00:00Z, the start of the test job.
constexpr long long kT0 = 1793613600;

std::shared_ptr<const CompiledRules> rules_with(const std::string& yaml,
                                                std::vector<RuleError>& errors,
                                                bool builtin = true) {
  RuleCollector c;
  if (builtin)
    for (const auto& f : builtin_rule_files())
      c.add(read_rule_text(std::string("builtin:") + f.name, f.text, errors));
  if (!yaml.empty()) c.add(read_rule_text("test.yaml", yaml, errors));
  return compile_rules(c.collected(), errors);
}

const CompiledRules& builtin() {
  static std::vector<RuleError> errors;
  static auto rules = rules_with("", errors);
  return *rules;
}

JobInfo job() {
  JobInfo j;
  j.job_id = "77";
  j.nodes = {"gpu-a01", "gpu-a02", "gpu-a03"};
  j.start_time = kT0 * kUsPerSecond;
  j.end_time = (kT0 + 3600) * kUsPerSecond;
  return j;
}

// One series as Prometheus writes it: values at kT0 + offsets[i].
std::string series(const std::string& labels, const std::vector<std::pair<int, std::string>>& v) {
  std::string s = "{\"metric\":{" + labels + "},\"values\":[";
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::string("[") + std::to_string(kT0 + v[i].first) + ",\"" +
         v[i].second + "\"]";
  return s + "]}";
}

std::string reply(const std::vector<std::string>& series_list) {
  std::string s = R"({"status":"success","data":{"resultType":"matrix","result":[)";
  for (std::size_t i = 0; i < series_list.size(); ++i) s += (i ? "," : "") + series_list[i];
  return s + "]}}";
}

std::vector<Event> events_of(const std::string& rel, const std::string& json,
                             const CompiledRules& rules = builtin(), JobInfo j = job()) {
  MetricsFile f = parse_metrics_json(json, rel);
  EXPECT_TRUE(f.ok) << f.error;
  std::vector<Event> out;
  std::uint64_t seq = 0;
  extract_metric_events(f, rules, j, seq, [&](Event&& e) { out.push_back(std::move(e)); });
  return out;
}

TEST(MetricsReader, ReadsAMatrixReply) {
  MetricsFile f = parse_metrics_json(reply({series(R"("__name__":"up","instance":"gpu-a01:9100")",
                                                   {{0, "1"}, {15, "NaN"}, {30, "0"}})}),
                                     "metrics/up.json");
  ASSERT_TRUE(f.ok) << f.error;
  EXPECT_EQ(f.query, "up");
  ASSERT_EQ(f.series.size(), 1u);
  EXPECT_EQ(f.series[0].metric(), "up");
  ASSERT_EQ(f.series[0].samples.size(), 2u);  // NaN dropped
  EXPECT_EQ(f.series[0].samples[1].time, (kT0 + 30) * kUsPerSecond);
  EXPECT_EQ(f.series[0].samples[1].value, 0);
  EXPECT_EQ(series_text(f.series[0]), "up{instance=\"gpu-a01:9100\"}");
}

TEST(MetricsReader, MalformedRepliesAreErrorsNotCrashes) {
  EXPECT_EQ(parse_metrics_json("<html>502 Bad Gateway</html>", "metrics/x.json").error, "not JSON");
  EXPECT_FALSE(parse_metrics_json("[1,2]", "metrics/x.json").ok);
  MetricsFile e = parse_metrics_json(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})",
      "metrics/x.json");
  EXPECT_FALSE(e.ok);
  EXPECT_NE(e.error.find("parse error at char 3"), std::string::npos);
  EXPECT_FALSE(parse_metrics_json(R"({"status":"success","data":{"resultType":"scalar",
      "result":[1,"2"]}})",
                                  "metrics/x.json")
                   .ok);
  MetricsFile bad_sample = parse_metrics_json(
      reply({R"({"metric":{"__name__":"up"},"values":[[1,"x"],["t","1"],[2,"1"]]})"}),
      "metrics/x.json");
  ASSERT_TRUE(bad_sample.ok);
  EXPECT_EQ(bad_sample.samples, 1u);
  ASSERT_FALSE(bad_sample.warnings.empty());
}

TEST(MetricConditions, BuiltinConditionsCompile) {
  std::vector<RuleError> errors;
  auto rules = rules_with("", errors);
  ASSERT_TRUE(errors.empty()) << errors.front().to_string();
  EXPECT_GE(rules->metric_conditions.size(), 6u);
  EXPECT_EQ(rules->metric_node_labels.front(), "node");
}

TEST(MetricConditions, IncreaseNamesNodeAndPortAtTheFirstRisingSample) {
  std::string labels =
      R"("__name__":"node_infiniband_port_errors_received_total","device":"mlx5_2","instance":"gpu-a02:9100","port":"1")";
  auto ev = events_of("metrics/ib_port_errors.json",
                      reply({series(labels, {{0, "4"}, {15, "4"}, {30, "41"}, {45, "90"}})}));
  ASSERT_EQ(ev.size(), 1u);
  const Event& e = ev[0];
  EXPECT_EQ(e.kind, "ib.port_errors");
  EXPECT_EQ(e.node, "gpu-a02");
  EXPECT_EQ(e.time, (kT0 + 30) * kUsPerSecond);
  EXPECT_EQ(e.source, "metrics/ib_port_errors.json");
  EXPECT_EQ(e.source_kind, "metrics");
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(e.field("hca"), "mlx5_2");
  EXPECT_EQ(e.field("port"), "1");
  EXPECT_EQ(e.field("metric"), "node_infiniband_port_errors_received_total");
  EXPECT_EQ(e.field("value"), "41");
  EXPECT_EQ(e.field("increase"), "86");
  EXPECT_NE(e.text.find("node_infiniband_port_errors_received_total{device=\"mlx5_2\""),
            std::string::npos);
  EXPECT_NE(e.text.find("rose from 4 to 41"), std::string::npos) << e.text;
}

TEST(MetricConditions, FlatCounterAndCounterResetWithoutRiseMakeNoEvent) {
  std::string labels =
      R"("__name__":"node_infiniband_symbol_error_total","device":"mlx5_0","instance":"gpu-a01:9100","port":"1")";
  EXPECT_TRUE(
      events_of("metrics/ib.json", reply({series(labels, {{0, "7"}, {15, "7"}, {30, "7"}})}))
          .empty());
  // A reset to 0 (exporter restart) is no error; counting from 0 again is.
  EXPECT_TRUE(
      events_of("metrics/ib.json", reply({series(labels, {{0, "7"}, {15, "0"}, {30, "0"}})}))
          .empty());
  auto ev = events_of("metrics/ib.json", reply({series(labels, {{0, "7"}, {15, "0"}, {30, "3"}})}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].time, (kT0 + 30) * kUsPerSecond);
}

TEST(MetricConditions, MinIncreaseIsRespected) {
  std::vector<RuleError> errors;
  auto rules = rules_with(R"(
metric_conditions:
  - {name: ib.port_error_counters, condition: increase, kind: ib.port_errors,
     metrics: [node_infiniband_symbol_error_total], min_increase: 100}
)",
                          errors);
  ASSERT_TRUE(errors.empty()) << errors.front().to_string();
  std::string labels = R"("__name__":"node_infiniband_symbol_error_total","instance":"gpu-a01")";
  auto ev =
      events_of("metrics/ib.json",
                reply({series(labels, {{0, "0"}, {15, "60"}, {30, "99"}, {45, "101"}})}), *rules);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].time, (kT0 + 45) * kUsPerSecond);
}

TEST(MetricConditions, ThresholdBelowOneIsUpEqualsZero) {
  auto ev = events_of("metrics/up.json",
                      reply({series(R"("__name__":"up","instance":"gpu-a03:9100","job":"node")",
                                    {{0, "1"}, {15, "1"}, {30, "0"}, {45, "0"}}),
                             series(R"("__name__":"up","instance":"gpu-a01:9100","job":"node")",
                                    {{0, "1"}, {15, "1"}, {30, "1"}, {45, "1"}})}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "node.stopped_reporting");
  EXPECT_EQ(ev[0].node, "gpu-a03");
  EXPECT_EQ(ev[0].time, (kT0 + 30) * kUsPerSecond);
  EXPECT_EQ(ev[0].field("condition"), "node.up_zero");
}

TEST(MetricConditions, ThresholdAboveFiresOnceAtTheFirstHotSample) {
  std::string labels =
      R"("Hostname":"gpu-a01","__name__":"DCGM_FI_DEV_GPU_TEMP","gpu":"3","instance":"10.0.0.9:9400","pci_bus_id":"00000000:5D:00.0")";
  auto ev = events_of("metrics/gpu_temperature.json",
                      reply({series(labels, {{0, "71"}, {15, "93"}, {30, "95"}})}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "gpu.overheat");
  EXPECT_EQ(ev[0].node, "gpu-a01");  // from Hostname: the instance is an address
  EXPECT_EQ(ev[0].field("pci"), "00000000:5D:00.0");
  EXPECT_EQ(ev[0].time, (kT0 + 15) * kUsPerSecond);
}

TEST(MetricConditions, ChangeIgnoresAnOldXidAndReportsANewOneWithItsCode) {
  std::string stale =
      R"("Hostname":"gpu-a01","__name__":"DCGM_FI_DEV_XID_ERRORS","gpu":"0","pci_bus_id":"00000000:18:00.0")";
  std::string fresh =
      R"("Hostname":"gpu-a02","__name__":"DCGM_FI_DEV_XID_ERRORS","gpu":"1","pci_bus_id":"00000000:2A:00.0")";
  auto ev = events_of("metrics/gpu_xid.json",
                      reply({series(stale, {{0, "63"}, {15, "63"}, {30, "63"}}),
                             series(fresh, {{0, "0"}, {15, "79"}, {30, "79"}, {45, "0"}})}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "xid");
  EXPECT_EQ(ev[0].node, "gpu-a02");
  EXPECT_EQ(ev[0].field("code"), "79");
  EXPECT_EQ(ev[0].field("pci"), "00000000:2A:00.0");
  EXPECT_EQ(ev[0].line, 2u);
  EXPECT_EQ(ev[0].time, (kT0 + 15) * kUsPerSecond);
}

TEST(MetricConditions, AbsentSeriesStoppedWhileOthersWentOn) {
  std::vector<std::pair<int, std::string>> full, cut, late_gap;
  for (int t = 0; t <= 300; t += 15) full.push_back({t, "1"});
  for (int t = 0; t <= 120; t += 15) cut.push_back({t, "1"});
  for (int t = 0; t <= 270; t += 15) late_gap.push_back({t, "1"});  // one missed step: no event
  auto ev = events_of("metrics/up.json",
                      reply({series(R"("__name__":"up","instance":"gpu-a01:9100")", full),
                             series(R"("__name__":"up","instance":"gpu-a02:9100")", cut),
                             series(R"("__name__":"up","instance":"gpu-a03:9100")", late_gap)}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].node, "gpu-a02");
  EXPECT_EQ(ev[0].field("condition"), "node.up_absent");
  EXPECT_EQ(ev[0].time, (kT0 + 120) * kUsPerSecond);
  EXPECT_NE(ev[0].text.find("stopped reporting"), std::string::npos);
}

TEST(MetricConditions, AbsentIsJudgedAtTheEndOfTheJobWindowNotLater) {
  // Everyone stopped after the job: nothing is absent within the job's window.
  JobInfo j = job();
  j.end_time = (kT0 + 120) * kUsPerSecond;
  std::vector<std::pair<int, std::string>> full, cut;
  for (int t = 0; t <= 900; t += 15) full.push_back({t, "1"});
  for (int t = 0; t <= 215; t += 15) cut.push_back({t, "1"});
  auto ev = events_of("metrics/up.json",
                      reply({series(R"("__name__":"up","instance":"gpu-a01:9100")", full),
                             series(R"("__name__":"up","instance":"gpu-a02:9100")", cut)}),
                      builtin(), j);
  EXPECT_TRUE(ev.empty());
}

TEST(MetricConditions, SeriesOfOtherNodesAreSkipped) {
  MetricsFile f = parse_metrics_json(
      reply({series(R"("__name__":"up","instance":"cpu-07:9100")", {{0, "1"}, {15, "0"}})}),
      "metrics/up.json");
  std::uint64_t seq = 0;
  int n = 0;
  auto st = extract_metric_events(f, builtin(), job(), seq, [&](Event&&) { ++n; });
  EXPECT_EQ(n, 0);
  EXPECT_EQ(st.outside_job, 1u);
}

TEST(MetricConditions, NodeFromLabelValueWithPortOrDomain) {
  MetricSeries s;
  JobInfo j = job();
  s.labels = {{"instance", "gpu-a01.cluster.example:9100"}};
  EXPECT_EQ(metric_series_node(s, {"node", "instance"}, j), "gpu-a01");
  s.labels = {{"instance", "10.1.2.3:9400"}, {"node", "gpu-a03"}};
  EXPECT_EQ(metric_series_node(s, {"node", "instance"}, j), "gpu-a03");
  s.labels = {{"instance", "10.1.2.3:9400"}};
  EXPECT_EQ(metric_series_node(s, {"node", "instance"}, j), "");
}

TEST(MetricConditions, QueryNameSelectsTheFile) {
  std::vector<RuleError> errors;
  auto rules = rules_with(R"(
metric_conditions:
  - {name: site.fan, condition: threshold, queries: [fans], below: 1000, kind: gpu.overheat}
)",
                          errors);
  ASSERT_TRUE(errors.empty()) << errors.front().to_string();
  std::string s = series(R"("__name__":"ipmi_fan_speed_rpm","instance":"gpu-a01")", {{0, "400"}});
  EXPECT_EQ(events_of("metrics/fans.json", reply({s}), *rules).size(), 1u);
  EXPECT_TRUE(events_of("metrics/other.json", reply({s}), *rules).empty());
}

TEST(MetricConditions, DisabledConditionMakesNoEvent) {
  std::vector<RuleError> errors;
  auto rules = rules_with(
      "metric_conditions:\n  - {name: node.up_zero, enabled: false,"
      " condition: threshold, metrics: [up], below: 1, kind: node.stopped_reporting}\n",
      errors);
  ASSERT_TRUE(errors.empty());
  EXPECT_TRUE(events_of("metrics/up.json",
                        reply({series(R"("__name__":"up","instance":"gpu-a01")", {{0, "0"}})}),
                        *rules)
                  .empty());
}

struct BadCondition {
  std::string yaml;
  int line;
  std::string message;
};

class MetricConditionErrors : public ::testing::TestWithParam<BadCondition> {};

TEST_P(MetricConditionErrors, NameFileLineAndCondition) {
  std::vector<RuleError> errors;
  rules_with(GetParam().yaml, errors);
  ASSERT_FALSE(errors.empty());
  std::string all;
  for (const auto& e : errors) all += e.to_string() + "\n";
  EXPECT_NE(all.find("test.yaml:" + std::to_string(GetParam().line) + ":"), std::string::npos)
      << all;
  EXPECT_NE(all.find(GetParam().message), std::string::npos) << all;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, MetricConditionErrors,
    ::testing::Values(
        BadCondition{"metric_conditions:\n  - name: c1\n    condition: rises\n    metrics: [up]\n"
                     "    kind: ib.port_errors\n",
                     2, "condition must be increase, threshold, change or absent"},
        BadCondition{"metric_conditions:\n  - {name: c2, condition: increase, metrics: [up], kind: "
                     "no.such.kind}\n",
                     2, "kind 'no.such.kind' is not declared"},
        BadCondition{"metric_conditions:\n\n  - {name: c3, condition: threshold, metrics: [up], "
                     "kind: ib.port_errors}\n",
                     3, "a threshold needs 'above' or 'below'"},
        BadCondition{
            "metric_conditions:\n  - {name: c4, condition: increase, kind: ib.port_errors}\n", 2,
            "needs 'queries' or 'metrics'"},
        BadCondition{"metric_conditions:\n  - {name: c5, condition: absent, metrics: [up], kind: "
                     "ib.port_errors, above: 3}\n",
                     2, "apply to threshold and change conditions only"},
        BadCondition{"metric_conditions:\n  - {name: c6, condition: increase, metrics: [up], kind: "
                     "ib.port_errors, treshold: 3}\n",
                     2, "unknown key 'treshold'"},
        BadCondition{
            "metric_conditions:\n  - {name: c7, condition: threshold, metrics: [up], kind: "
            "ib.port_errors, above: hot}\n",
            2, "'above' must be a number"},
        BadCondition{"metric_conditions:\n  - {name: c8, condition: increase, metrics: [up], kind: "
                     "ib.port_errors, fields: [hca]}\n",
                     2, "'fields' maps event fields to series labels"}));

}  // namespace
}  // namespace ff
