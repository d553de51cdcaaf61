// Metrics through the firstfault binary: an IB counter that rose before the
// NCCL errors names its node and port; metrics that could not be fetched or
// read are coverage gaps (never health) and never stop the engine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/behaviour/incident_builder.h"

namespace {

using fftest::job_json;
using fftest::run_firstfault;
using fftest::TempIncident;
using fftest::watchdog_line;
using nlohmann::json;

// 2026-11-02T10:00:00Z
constexpr long long kT0 = 1793613600;

std::string ib_counter(const std::string& node, int rise_at_s) {
  std::string values;
  for (int t = 0; t <= 3600; t += 60)
    values += std::string(values.empty() ? "" : ",") + "[" + std::to_string(kT0 + t) + ",\"" +
              (t >= rise_at_s ? "412" : "0") + "\"]";
  return R"({"metric":{"__name__":"node_infiniband_symbol_error_total","device":"mlx5_3","instance":")" +
         node + R"(:9100","job":"node","port":"1"},"values":[)" + values + "]}";
}

json coverage_of(const json& d, const std::string& needle) {
  for (const auto& c : d["coverage"])
    if (c["source"] == "metrics" &&
        c["detail"].get<std::string>().find(needle) != std::string::npos)
      return c;
  return json();
}

void write_failure_logs(const TempIncident& inc) {
  // Both nodes' ranks time out at 10:40:00 after 600 s: the failure began at 10:30.
  inc.write("nodes/n1/app.log", watchdog_line(0, "10:40:00") + watchdog_line(1, "10:40:01"));
  inc.write("nodes/n2/app.log", watchdog_line(2, "10:40:00") + watchdog_line(3, "10:40:01"));
  inc.write("nodes/n1/kernel.log", "[    1.000000] Linux version 6.8.0\n");
  inc.write("nodes/n2/kernel.log", "[    1.000000] Linux version 6.8.0\n");
}

TEST(Metrics, CounterThatRoseBeforeTheOnsetIsTheRootCause) {
  TempIncident inc;
  inc.write("job.json", job_json());
  write_failure_logs(inc);
  inc.write("metrics/ib_port_errors.json",
            R"({"status":"success","data":{"resultType":"matrix","result":[)" +
                ib_counter("n1", 99999) + "," + ib_counter("n2", 1740) + "]}}");
  auto r = run_firstfault("analyze " + inc.arg() + " --format json");
  ASSERT_EQ(r.exit_code, 0);
  json d = json::parse(r.out);
  EXPECT_EQ(d["verdict"], "attributed") << r.out;
  EXPECT_EQ(d["sub_domain"], "network.ib_port_errors");
  ASSERT_EQ(d["root_causes"].size(), 1u);
  EXPECT_EQ(d["root_causes"][0]["node"], "n2");
  EXPECT_EQ(d["root_causes"][0]["device"], "mlx5_3:1");
  EXPECT_EQ(d["root_causes"][0]["time"], "2026-11-02T10:29:00Z");
  int id = d["root_causes"][0]["evidence"][0];
  for (const auto& e : d["evidence"])
    if (e["id"] == id) {
      EXPECT_EQ(e["source"], "metrics/ib_port_errors.json");
      EXPECT_EQ(e["line"], 2);  // the second series of the reply
      EXPECT_NE(e["text"].get<std::string>().find("rose from 0 to 412"), std::string::npos);
    }
  EXPECT_EQ(coverage_of(d, "metrics/ib_port_errors.json")["status"], "ok");
}

TEST(Metrics, CounterThatRoseAfterTheOnsetIsNotTheCause) {
  TempIncident inc;
  inc.write("job.json", job_json());
  write_failure_logs(inc);
  inc.write("metrics/ib_port_errors.json",
            R"({"status":"success","data":{"resultType":"matrix","result":[)" +
                ib_counter("n2", 2700) + "]}}");  // 10:45, after everything failed
  json d = json::parse(run_firstfault("analyze " + inc.arg() + " --format json").out);
  EXPECT_NE(d["verdict"], "attributed") << d.dump();
  bool late = false;
  for (const auto& c : d["candidates"])
    if (c["event"] == "ib.port_errors") late = c["status"] == "late";
  EXPECT_TRUE(late) << d["candidates"].dump();
}

TEST(Metrics, UnreachablePrometheusIsACoverageGapNotHealth) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED", R"(,"coverage":[{"collector":"prometheus:ib_port_errors",
              "status":"unreachable","detail":"no reply: Couldn't connect to server"}])"));
  write_failure_logs(inc);
  auto r = run_firstfault("analyze " + inc.arg() + " --format json");
  ASSERT_EQ(r.exit_code, 0);
  json d = json::parse(r.out);
  json c = coverage_of(d, "prometheus:ib_port_errors");
  EXPECT_EQ(c["status"], "unreachable") << d["coverage"].dump();
  EXPECT_NE(d["verdict"], "attributed");
  bool said = false;
  for (const auto& step : d["reasoning"])
    said = said || step.get<std::string>().find("metrics incomplete") != std::string::npos;
  EXPECT_TRUE(said) << d["reasoning"].dump();
}

TEST(Metrics, MalformedMetricsFileIsAnErrorAndTheLogsStillCount) {
  TempIncident inc;
  inc.write("job.json", job_json());
  write_failure_logs(inc);
  inc.write("metrics/up.json", "<html>502 Bad Gateway</html>");
  inc.write("metrics/notes.txt", "not a reply");
  auto r = run_firstfault("analyze " + inc.arg() + " --format json");
  ASSERT_EQ(r.exit_code, 0);
  json d = json::parse(r.out);
  EXPECT_EQ(coverage_of(d, "metrics/up.json")["status"], "error");
  std::string errors = d["errors"].dump();
  EXPECT_NE(errors.find("metrics/up.json"), std::string::npos) << errors;
  EXPECT_NE(errors.find("metrics/notes.txt"), std::string::npos) << errors;
  EXPECT_EQ(d["symptoms"].size(), 2u);
}

}  // namespace
