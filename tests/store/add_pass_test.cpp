// add_pass stores a real engine diagnosis: the diagnoses row, one child row
// per root cause, affected node, symptom, evidence line and coverage entry,
// and the JSON text byte for byte.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using fftest::RawDb;
using fftest::TempDir;
using nlohmann::json;

namespace {

void expect_rows_match(RawDb& raw, std::int64_t id, const json& d) {
  std::string where = " WHERE diagnosis_id = " + std::to_string(id);
  EXPECT_EQ(raw.count("SELECT count(*) FROM root_causes" + where), d["root_causes"].size());
  EXPECT_EQ(raw.count("SELECT count(*) FROM affected_nodes" + where), d["affected_nodes"].size());
  EXPECT_EQ(raw.count("SELECT count(*) FROM symptoms" + where), d["symptoms"].size());
  EXPECT_EQ(raw.count("SELECT count(*) FROM evidence" + where), d["evidence"].size());
  EXPECT_EQ(raw.count("SELECT count(*) FROM coverage" + where), d["coverage"].size());
}

}  // namespace

TEST(AddPass, StoresEveryChildRowOfARealDiagnosis) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  std::string text = fftest::example_diagnosis("01-xid79-fallen-off-bus");
  json d = json::parse(text);
  auto pass = store->add_pass_text("48213", 0, "final", text, 1764480000);
  EXPECT_EQ(pass.pass_no, 1);
  EXPECT_EQ(pass.verdict, "attributed");
  EXPECT_EQ(pass.root_node, "gpu-a02");

  RawDb raw(tmp.db());
  expect_rows_match(raw, pass.id, d);
  auto row = raw.rows(
      "SELECT job_id, attempt, trigger, verdict, domain, sub_domain, recommended_action, "
      "root_node, root_device, root_event, terminal_state, engine_version FROM diagnoses");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0],
            (std::vector<std::string>{
                "48213", "0", "final", "attributed", "gpu", "gpu.fallen_off_bus", "drain_node",
                "gpu-a02", d["root_causes"][0]["device"], "xid", "FAILED", d["engine_version"]}));
  // The stored evidence line is the engine's, text and all.
  const auto& e0 = d["evidence"][0];
  EXPECT_EQ(raw.value("SELECT text FROM evidence WHERE evidence_id = " +
                      std::to_string(e0["id"].get<int>())),
            e0["text"].get<std::string>());
  EXPECT_EQ(raw.value("SELECT diagnosis_json FROM diagnoses"), text);

  auto latest = store->latest_pass("48213");
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->diagnosis_text, text);
  EXPECT_EQ(latest->diagnosis, d);
  EXPECT_EQ(latest->sub_domain, "gpu.fallen_off_bus");
}

TEST(AddPass, AmbiguousDiagnosisKeepsEveryCandidate) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  std::string text = fftest::example_diagnosis("10-two-independent-faults");
  json d = json::parse(text);
  auto pass = store->add_pass_text(d["job_id"], 0, "final", text, 1764480000);
  RawDb raw(tmp.db());
  expect_rows_match(raw, pass.id, d);
  EXPECT_EQ(raw.count("SELECT count(DISTINCT node) FROM root_causes"), 2);
}

TEST(AddPass, EveryExampleIncidentStores) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  RawDb raw(tmp.db());
  for (const auto& name : fftest::example_names()) {
    std::string text = fftest::example_diagnosis(name);
    json d = json::parse(text);
    auto pass = store->add_pass_text(d["job_id"], d["attempt"], "replay", text, 1764480000);
    SCOPED_TRACE(name);
    expect_rows_match(raw, pass.id, d);
    EXPECT_EQ(store->latest_pass(d["job_id"])->diagnosis_text, text);
  }
  EXPECT_EQ(raw.value("PRAGMA integrity_check"), "ok");
}

TEST(AddPass, JsonObjectFormIsStoredAndReadBack) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  json d = json::parse(fftest::example_diagnosis("06-ib-port-down"));
  auto pass = store->add_pass(d["job_id"], 0, "fastpass", d, 5);
  EXPECT_EQ(store->latest_pass(d["job_id"])->diagnosis, d);
  RawDb raw(tmp.db());
  expect_rows_match(raw, pass.id, d);
}

TEST(AddPass, TextThatIsNotJsonIsRefusedAndNothingIsStored) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  EXPECT_THROW(store->add_pass_text("1", 0, "final", "{not json", 5), ff::agent::StoreError);
  EXPECT_EQ(RawDb(tmp.db()).count("SELECT count(*) FROM diagnoses"), 0);
}

TEST(AddPass, CommentStatusIsRecorded) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  auto pass =
      store->add_pass("9", 0, "fastpass",
                      fftest::synthetic_diagnosis("9", "attributed", "gpu",
                                                  {{"n1", "0000:3b:00.0", "gpu", "gpu.x"}}, {"n1"}),
                      5);
  EXPECT_EQ(store->latest_pass("9")->comment_status, "");
  store->set_comment_status(pass.id, "written");
  EXPECT_EQ(store->latest_pass("9")->comment_status, "written");
  EXPECT_THROW(store->set_comment_status(pass.id + 100, "written"), ff::agent::StoreError);
}
