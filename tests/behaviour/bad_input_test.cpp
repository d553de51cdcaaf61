// Bad input gets a clear message in errors/coverage, the rest is still
// analysed, and nothing crashes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include "tests/behaviour/incident_builder.h"

using nlohmann::json;
using namespace fftest;

namespace {

bool errors_mention(const json& d, const std::string& needle) {
  for (const auto& e : d["errors"])
    if (e.dump().find(needle) != std::string::npos) return true;
  return false;
}

std::string root_node(const json& d) {
  return d["root_causes"].empty() || !d["root_causes"][0]["node"].is_string()
             ? ""
             : d["root_causes"][0]["node"].get<std::string>();
}

const std::string kXid79 = xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus.");

TEST(BadInput, MissingJobJsonStillAnalysesTheLogs) {
  TempIncident inc;
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "job.json"));
  EXPECT_EQ(root_node(d), "n2");
}

TEST(BadInput, MalformedJobJsonIsReportedAndLogsAreStillRead) {
  TempIncident inc;
  inc.write("job.json", "{\"job_id\": \"77\", \"nodes\": [\"n1\", ");
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "malformed job.json"));
  EXPECT_EQ(root_node(d), "n2");
}

TEST(BadInput, UnknownJobJsonFieldsAreKeptAndIgnored) {
  TempIncident inc;
  inc.write("job.json", job_json("FAILED", R"(,"x_site":{"rack":"r12"},"priority":5)"));
  inc.write("nodes/n1/syslog", noise(3));
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(d["errors"].empty()) << d["errors"];
  EXPECT_EQ(d["verdict"], "attributed");
}

TEST(BadInput, ReferencedNodeWithoutLogsIsACoverageGap) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "node n1 is in the job but has no logs"));
  bool gap = false;
  for (const auto& c : d["coverage"])
    if (c["node"] == "n1" && c["status"] == "missing") gap = true;
  EXPECT_TRUE(gap) << d["coverage"];
}

TEST(BadInput, TruncatedGzipKeepsTheLinesBeforeTheDamage) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/syslog", noise(3));
  std::filesystem::create_directories(inc.dir() / "nodes/n2");
  std::string path = (inc.dir() / "nodes/n2/syslog.1.gz").string();
  gzFile gz = gzopen(path.c_str(), "wb");
  std::string text = kXid79;
  for (int i = 0; i < 20000; ++i)
    text += "Nov  2 10:50:00 n2 CRON[1]: (root) CMD (run-parts " + std::to_string(i) + ")\n";
  gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
  gzclose(gz);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "syslog.1.gz")) << d["errors"];
  EXPECT_EQ(root_node(d), "n2");
  bool partial = false;
  for (const auto& c : d["coverage"])
    if (c["node"] == "n2" && c["source"] == "syslog" && c["status"] == "partial") partial = true;
  EXPECT_TRUE(partial) << d["coverage"];
}

TEST(BadInput, BinaryGarbageIsReportedAndSkippedOver) {
  TempIncident inc;
  inc.write("job.json", job_json());
  std::string garbage;
  for (int i = 0; i < 200000; ++i) garbage.push_back(static_cast<char>((i * 7919) % 256));
  inc.write("nodes/n1/syslog", garbage);
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "binary data"));
  EXPECT_EQ(root_node(d), "n2");
}

TEST(BadInput, InvalidUtf8InEvidenceStillGivesValidJson) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog",
            xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus \xff\xfe\xc3."));
  auto r = run_firstfault("analyze " + inc.arg() + " --format json");
  ASSERT_EQ(r.exit_code, 0);
  json d = json::parse(r.out);  // throws on invalid UTF-8
  EXPECT_EQ(root_node(d), "n2");
}

TEST(BadInput, TenMegabyteLineIsCutAndLaterLinesKeepTheirNumbers) {
  TempIncident inc;
  inc.write("job.json", job_json());
  std::string text =
      "Nov  2 10:00:01 n2 app: " + std::string(10 << 20, 'x') + "\n" + noise(2) + kXid79;
  inc.write("nodes/n2/syslog", text);
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "longer than 1 MiB"));
  ASSERT_EQ(root_node(d), "n2");
  EXPECT_EQ(d["evidence"][0]["line"], 4);
}

TEST(BadInput, UnknownXidIsAnEventButNeverACertainVerdict) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog", xid_line("10:41:07", "n2", "2a", 999, "SOMETHING_NEW happened"));
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "ambiguous");
  EXPECT_EQ(root_node(d), "n2");
  EXPECT_EQ(d["root_causes"][0]["code"], "999");
}

TEST(BadInput, InvalidTimestampIsReportedAndTheLineKept) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write(
      "nodes/n2/syslog",
      "Feb 30 10:41:07 n2 kernel: NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.\n");
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "invalid timestamp"));
  EXPECT_EQ(root_node(d), "n2");
}

TEST(BadInput, ClockSkewIsReported) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/app.log", watchdog_line(0, "13:30:00") + watchdog_line(1, "13:30:01"));
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "clock skew"));
}

TEST(BadInput, NonRegularFilesAreSkippedWithAMessage) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog", kXid79);
  std::filesystem::create_directory_symlink("/nonexistent/target",
                                            inc.dir() / "nodes/n2/kernel.log");
  std::filesystem::create_directories(inc.dir() / "nodes/n1");
  ASSERT_EQ(mkfifo((inc.dir() / "nodes/n1/syslog").c_str(), 0600), 0);  // reading it would block
  json d = analyze(inc);
  EXPECT_TRUE(errors_mention(d, "not a regular file"));
  EXPECT_EQ(root_node(d), "n2");
}

TEST(BadInput, NotADirectoryExitsTwo) {
  auto r = run_firstfault("analyze /nonexistent/incident --format json");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(BadInput, EmptyDirectoryExitsTwo) {
  TempIncident inc;
  auto r = run_firstfault("analyze " + inc.arg() + " --format json");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(BadInput, BadRuleFileExitsThreeAndNamesFileAndLine) {
  TempIncident rules;
  rules.write("bad.yaml",
              "patterns:\n  - name: broken\n    kind: xid\n    literals: [\"x\"]\n    regex: "
              "'(unclosed'\n");
  auto r = run_firstfault("rules check " + rules.arg());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("bad.yaml:2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("broken"), std::string::npos) << r.out;
}

}  // namespace
