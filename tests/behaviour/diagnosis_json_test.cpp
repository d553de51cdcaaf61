// The diagnosis JSON both ways (incident/diagnosis_json.h): what the
// firstfault binary prints for every bundled example reads back into
// ff::Diagnosis and serialises to the same bytes, so `firstfault show`
// prints the engine's own report of what the agent stored.
#include "incident/diagnosis_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/verdict/text_report.h"
#include "tests/behaviour/run_firstfault.h"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> example_dirs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(FF_SOURCE_DIR) / "examples" / "incidents"))
    if (fs::exists(e.path() / "job.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(DiagnosisJson, EveryExampleRoundTripsByteForByte) {
  auto dirs = example_dirs();
  ASSERT_FALSE(dirs.empty());
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.filename().string());
    auto r =
        fftest::run_firstfault("analyze " + fftest::shell_quote(dir.string()) + " --format json");
    ASSERT_EQ(r.exit_code, 0);
    ASSERT_FALSE(r.out.empty());
    ASSERT_EQ(r.out.back(), '\n');
    std::string text = r.out.substr(0, r.out.size() - 1);
    ff::Diagnosis d = ff::diagnosis_from_json(nlohmann::json::parse(text));
    EXPECT_EQ(ff::diagnosis_to_json(d), text);
  }
}

// Every optional field set: the round trip keeps what no example exercises
// too (a symptom's explained_by, an error's line, a candidate's note, ...).
TEST(DiagnosisJson, EveryFieldRoundTrips) {
  ff::Diagnosis d;
  d.cluster = "c";
  d.job_id = "7";
  d.attempt = 2;
  d.terminal_state = "FAILED";
  d.verdict = "attributed";
  d.domain = "gpu";
  d.sub_domain = "gpu.fallen_off_bus";
  auto t = ff::parse_iso8601_utc("2026-11-02T10:41:07.512004Z");
  ASSERT_TRUE(t);
  ff::RootCause rc;
  rc.node = "n1";
  rc.device = "00000000:3B:00.0";
  rc.device_uuid = "GPU-1";
  rc.event = "xid";
  rc.code = "79";
  rc.time = rc.earliest = rc.latest = t;
  rc.summary = "s";
  rc.domain = "gpu";
  rc.sub_domain = "gpu.fallen_off_bus";
  rc.rank = 3;
  rc.evidence = {1};
  rc.related_devices = {"0000:3a:00.0"};
  rc.origin = "syslog";
  rc.provenance = "user-writable";
  d.root_causes.push_back(rc);
  d.affected_nodes = {"n1", "n2"};
  d.symptoms.push_back({"n2", "nccl.timeout", "demoted", 4, t, {1}, "downstream of n1"});
  ff::EvidenceItem e;
  e.id = 1;
  e.time_inferred = true;
  e.earliest = e.latest = t;
  e.node = "n1";
  e.source = "nodes/n1/syslog";
  e.line = 9;
  e.text = "x";
  e.event = "xid";
  e.also_in = {"nodes/n1/kernel.log:3"};
  d.evidence.push_back(e);
  d.coverage.push_back({"kernel", "n1", "ok", 12, "d"});
  d.errors.push_back({"job.json", 4, "m"});
  d.ignored.push_back({"n1", "xid", "stale", 2, "nodes/n1/kernel.log:1"});
  d.candidates.push_back({1, "n1", "dev", "xid", "79", t, "gpu.x", "strong", "late", "note", {1}});
  d.recommended_action = "drain_node";
  d.summary = "sum";
  d.reasoning = {"a", "b"};
  d.failure_onset = d.failure_onset_earliest = d.failure_onset_latest = t;
  d.engine_version = "v";

  std::string text = ff::diagnosis_to_json(d);
  EXPECT_EQ(ff::diagnosis_to_json(ff::diagnosis_from_json(nlohmann::json::parse(text))), text);
}

TEST(DiagnosisJson, ForeignShapesDoNotThrow) {
  for (const char* text : {"null", "[]", "{}", R"({"verdict": 3, "root_causes": [1, {"node": 2}]})",
                           R"({"evidence": [{"time": "yesterday", "line": -1}]})"}) {
    auto d = ff::diagnosis_from_json(nlohmann::json::parse(text));
    EXPECT_NO_THROW(ff::diagnosis_to_text(d, false)) << text;
  }
}
