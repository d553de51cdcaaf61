// incident/job_json and incident/coverage: the one reader and the one writer
// of job.json. What the writer writes the reader reads back as the same
// model, for every example incident and for the partial job.json a node's
// collector or a Kubernetes pod list gives.
#include "incident/job_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "incident/coverage.h"

namespace {

namespace fs = std::filesystem;
using ff::CoverageStatus;
using nlohmann::json;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ff::JobInfo parse(const std::string& text) {
  std::vector<ff::ErrorItem> errors;
  return ff::parse_job_json(text, errors);
}

// Field by field, so that a field the writer leaves out fails here rather
// than agreeing with itself.
void expect_same(const ff::JobInfo& a, const ff::JobInfo& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.schema, b.schema);
  EXPECT_EQ(a.cluster, b.cluster);
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.attempt, b.attempt);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.exit_code, b.exit_code);
  EXPECT_EQ(a.start_time, b.start_time);
  EXPECT_EQ(a.end_time, b.end_time);
  EXPECT_EQ(a.timezone, b.timezone);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.ranks_known, b.ranks_known);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (std::size_t i = 0; i < a.ranks.size(); ++i) {
    EXPECT_EQ(a.ranks[i].rank, b.ranks[i].rank) << i;
    EXPECT_EQ(a.ranks[i].node, b.ranks[i].node) << i;
    EXPECT_EQ(a.ranks[i].local_rank, b.ranks[i].local_rank) << i;
    EXPECT_EQ(a.ranks[i].gpus, b.ranks[i].gpus) << i;
    EXPECT_EQ(a.ranks[i].gpus_known, b.ranks[i].gpus_known) << i;
    EXPECT_EQ(a.ranks[i].exit_code, b.ranks[i].exit_code) << i;
  }
  ASSERT_EQ(a.node_info.size(), b.node_info.size());
  for (const auto& [node, info] : a.node_info) {
    ASSERT_TRUE(b.node_info.count(node)) << node;
    const ff::NodeInfo& other = b.node_info.at(node);
    EXPECT_EQ(info.boot_time, other.boot_time) << node;
    ASSERT_EQ(info.gpus.size(), other.gpus.size()) << node;
    for (std::size_t i = 0; i < info.gpus.size(); ++i) {
      EXPECT_EQ(info.gpus[i].index, other.gpus[i].index) << node;
      EXPECT_EQ(info.gpus[i].pci, other.gpus[i].pci) << node;
      EXPECT_EQ(info.gpus[i].uuid, other.gpus[i].uuid) << node;
    }
  }
  ASSERT_EQ(a.coverage.size(), b.coverage.size());
  for (std::size_t i = 0; i < a.coverage.size(); ++i) {
    const ff::Coverage &x = a.coverage[i], &y = b.coverage[i];
    EXPECT_EQ(x.collector, y.collector) << i;
    EXPECT_EQ(x.node, y.node) << i;
    EXPECT_EQ(x.status, y.status) << i;
    EXPECT_EQ(x.unrecognised_status, y.unrecognised_status) << i;
    EXPECT_EQ(x.lines, y.lines) << i;
    EXPECT_EQ(x.detail, y.detail) << i;
    EXPECT_EQ(x.covers_from, y.covers_from) << i;
    EXPECT_EQ(x.covers_until, y.covers_until) << i;
  }
}

TEST(JobJson, EveryExampleReadsBackAsTheSameModel) {
  int examples = 0;
  for (const auto& e : fs::directory_iterator(fs::path(FF_SOURCE_DIR) / "examples/incidents")) {
    fs::path file = e.path() / "job.json";
    if (!fs::is_regular_file(file)) continue;
    ++examples;
    ff::JobInfo first = parse(read_text(file));
    std::string written = ff::job_json_text(ff::to_json(first));
    ff::JobInfo second = parse(written);
    expect_same(first, second, file.string());
    // Written again, the text does not move: the writer is a fixed point.
    EXPECT_EQ(ff::job_json_text(ff::to_json(second)), written) << file;
  }
  EXPECT_GE(examples, 50);
}

TEST(JobJson, WritesTheFieldsInTheFormTheComponentsAlwaysWrote) {
  ff::JobInfo job;
  job.schema = ff::kIncidentSchema;
  job.cluster = "demo";
  job.job_id = "4242";
  job.state = "FAILED";
  job.exit_code = "1:0";
  job.start_time = ff::parse_iso8601_utc("2026-11-02T10:00:00Z");
  job.nodes = {"gpu-a01"};
  ff::RankInfo rank;
  rank.rank = 0;
  rank.node = "gpu-a01";
  rank.local_rank = 0;
  rank.gpus = {"00000000:3B:00.0"};
  job.ranks.push_back(rank);
  job.node_info["gpu-a01"].boot_time = ff::parse_iso8601_utc("2026-11-01T08:00:00Z");
  job.node_info["gpu-a01"].gpus.push_back({0, "00000000:3B:00.0", "GPU-1"});
  ff::Coverage c;
  c.collector = "kernel";
  c.node = "gpu-a01";
  c.status = CoverageStatus::kOk;
  c.lines = 12;
  c.detail = "1 file(s) read";
  job.coverage.push_back(c);
  EXPECT_EQ(ff::job_json_text(ff::to_json(job)), R"({
  "attempt": 0,
  "cluster": "demo",
  "coverage": [
    {
      "collector": "kernel",
      "detail": "1 file(s) read",
      "lines": 12,
      "node": "gpu-a01",
      "status": "ok"
    }
  ],
  "exit_code": "1:0",
  "job_id": "4242",
  "node_info": {
    "gpu-a01": {
      "boot_time": "2026-11-01T08:00:00Z",
      "gpus": [
        {
          "index": 0,
          "pci": "00000000:3B:00.0",
          "uuid": "GPU-1"
        }
      ]
    }
  },
  "nodes": [
    "gpu-a01"
  ],
  "ranks": [
    {
      "gpus": [
        "00000000:3B:00.0"
      ],
      "local_rank": 0,
      "node": "gpu-a01",
      "rank": 0
    }
  ],
  "schema": "firstfault.incident/v1",
  "start_time": "2026-11-02T10:00:00Z",
  "state": "FAILED",
  "timezone": "UTC"
}
)");
}

TEST(JobJson, APartialJobJsonStaysPartial) {
  // What a Kubernetes job of unindexed pods knows: no ranks, no zone given.
  ff::JobInfo job;
  job.job_id = "7";
  job.timezone = "";
  job.ranks_known = false;
  json j = ff::to_json(job);
  EXPECT_FALSE(j.contains("ranks"));
  EXPECT_FALSE(j.contains("node_info"));
  EXPECT_FALSE(j.contains("timezone"));
  EXPECT_FALSE(j.contains("start_time"));
  EXPECT_FALSE(j.contains("state"));
  EXPECT_EQ(j["nodes"], json::array());
  EXPECT_EQ(j["coverage"], json::array());
  ff::JobInfo back = parse(j.dump());
  EXPECT_FALSE(back.ranks_known);
  EXPECT_EQ(back.timezone, "UTC");  // no zone reads as UTC

  // A rank known to use no GPU is told from a pod that says nothing of them.
  job.ranks_known = true;
  ff::RankInfo none, unknown;
  none.rank = 0;
  unknown.rank = 1;
  unknown.gpus_known = false;
  job.ranks = {none, unknown};
  j = ff::to_json(job);
  EXPECT_EQ(j["ranks"][0]["gpus"], json::array());
  EXPECT_FALSE(j["ranks"][1].contains("gpus"));
  EXPECT_FALSE(j["ranks"][0].contains("local_rank"));  // -1: not known
  back = parse(j.dump());
  ASSERT_EQ(back.ranks.size(), 2u);
  EXPECT_TRUE(back.ranks[0].gpus_known);
  EXPECT_FALSE(back.ranks[1].gpus_known);
}

TEST(JobJson, TextThatIsNotUtf8FailsOrIsReplacedAsAsked) {
  json j = {{"detail", std::string("bad \xff byte")}};
  EXPECT_THROW(ff::job_json_text(j), json::type_error);
  EXPECT_NE(ff::job_json_text(j, ff::InvalidUtf8::kReplace).find("\xEF\xBF\xBD"),
            std::string::npos);
}

TEST(Coverage, EveryStatusIsWrittenAndReadByItsName) {
  for (auto s : {CoverageStatus::kOk, CoverageStatus::kEmpty, CoverageStatus::kPartial,
                 CoverageStatus::kTruncated, CoverageStatus::kMissing, CoverageStatus::kError,
                 CoverageStatus::kUnreachable, CoverageStatus::kUnauthorised}) {
    std::string name(ff::status_name(s));
    ASSERT_FALSE(name.empty());
    EXPECT_EQ(ff::coverage_status_named(name), s) << name;
    ff::Coverage c;
    c.status = s;
    EXPECT_EQ(ff::to_json(c)["status"], name);
  }
  EXPECT_EQ(ff::coverage_status_named(""), CoverageStatus::kUnstated);
  EXPECT_EQ(ff::coverage_status_named("OK"), CoverageStatus::kUnrecognised);
}

TEST(Coverage, AnUnknownStatusIsKeptAsWritten) {
  std::vector<ff::ErrorItem> errors;
  ff::Coverage c = ff::coverage_from_json(
      json{{"collector", "dcgm"}, {"status", "degraded"}, {"detail", "x"}}, errors);
  EXPECT_EQ(c.status, CoverageStatus::kUnrecognised);
  EXPECT_EQ(c.status_text(), "degraded");
  EXPECT_FALSE(c.delivered());  // a status nobody knows is a gap, not health
  EXPECT_EQ(ff::to_json(c)["status"], "degraded");
  // A status that is not text reads as its JSON text, as the engine always read it.
  c = ff::coverage_from_json(json{{"collector", "x"}, {"status", 5}}, errors);
  EXPECT_EQ(c.status_text(), "5");
  c = ff::coverage_from_json(json{{"collector", "x"}}, errors);
  EXPECT_EQ(c.status, CoverageStatus::kUnstated);
  EXPECT_TRUE(c.delivered());
  EXPECT_TRUE(errors.empty());
}

TEST(Coverage, OptionalFieldsAreWrittenOnlyWhenKnown) {
  ff::Coverage c;
  c.collector = "prometheus:up";
  c.status = CoverageStatus::kUnreachable;
  c.detail = "no reply";
  EXPECT_EQ(
      ff::to_json(c),
      (json{{"collector", "prometheus:up"}, {"status", "unreachable"}, {"detail", "no reply"}}));
  c.node = "n1";
  c.lines = 0;
  c.covers_from = ff::parse_iso8601_utc("2026-11-02T10:00:00Z");
  c.covers_until = ff::parse_iso8601_utc("2026-11-02T11:00:00Z");
  json j = ff::to_json(c);
  EXPECT_EQ(j["node"], "n1");
  EXPECT_EQ(j["lines"], 0);
  EXPECT_EQ(j["covers_from"], "2026-11-02T10:00:00Z");
  std::vector<ff::ErrorItem> errors;
  ff::Coverage back = ff::coverage_from_json(j, errors);
  EXPECT_EQ(back.lines, std::optional<std::uint64_t>(0));
  EXPECT_EQ(back.covers_until, c.covers_until);
  // A span that is not a time is reported, and vouches for nothing.
  j["covers_from"] = "yesterday";
  back = ff::coverage_from_json(j, errors);
  EXPECT_FALSE(back.covers_from.has_value());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "field 'covers_from' is not an RFC 3339 time: yesterday");
}

}  // namespace
