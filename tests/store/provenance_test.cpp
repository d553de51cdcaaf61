// Evidence provenance (migration 005): root_causes[].origin and .trusted of
// the diagnosis become columns, suspect_sightings carries them, and a
// version-4 database gains them with its stored root causes untrusted (a
// diagnosis without the fields counts as untrusted).
#include <gtest/gtest.h>

#include <ctime>
#include <map>
#include <utility>

#include "agent/store/diagnosis_store.h"
#include "sql/sql_migrations.h"
#include "tests/store/old_database.h"
#include "tests/store/store_fixture.h"

namespace {

using ff::agent::DiagnosisStore;
using fftest::RawDb;
using fftest::TempDir;
using nlohmann::json;

json with_provenance(const std::string& job, const json& origin, const json& trusted) {
  json d = fftest::synthetic_diagnosis(
      job, "attributed", "gpu", {{"n2", "00000000:3B:00.0", "gpu", "gpu.fallen_off_bus"}}, {"n2"});
  auto& rc = d["root_causes"][0];
  rc.erase("origin");
  rc.erase("trusted");
  if (!origin.is_discarded()) rc["origin"] = origin;
  if (!trusted.is_discarded()) rc["trusted"] = trusted;
  return d;
}

TEST(Provenance, StoredAsTheEngineSaidAndReadAsSightings) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  auto now = static_cast<std::int64_t>(std::time(nullptr));
  json none(json::value_t::discarded);
  store->add_pass("1", 0, "final", with_provenance("1", "kernel", true), now);
  store->add_pass("2", 0, "final", with_provenance("2", "syslog", false), now);
  store->add_pass("3", 0, "final", with_provenance("3", none, none), now);
  store->add_pass("4", 0, "final", with_provenance("4", "app", "yes"), now);  // not a bool
  RawDb raw(tmp.db());
  auto rows = raw.rows(
      "SELECT d.job_id, coalesce(rc.origin, '-'), coalesce(rc.trusted, 'NULL') FROM root_causes "
      "rc JOIN diagnoses d ON d.id = rc.diagnosis_id ORDER BY d.job_id");
  EXPECT_EQ(
      rows,
      (std::vector<std::vector<std::string>>{
          {"1", "kernel", "1"}, {"2", "syslog", "0"}, {"3", "-", "NULL"}, {"4", "app", "NULL"}}));
  std::map<std::string, std::pair<std::string, bool>> seen;
  for (const auto& s : store->sightings(0))
    if (s.role == "root_cause") seen[s.job_id] = {s.origin, s.trusted};
  EXPECT_EQ(seen["1"], (std::pair<std::string, bool>{"kernel", true}));
  EXPECT_EQ(seen["2"], (std::pair<std::string, bool>{"syslog", false}));
  EXPECT_EQ(seen["3"], (std::pair<std::string, bool>{"", false}));
  EXPECT_EQ(seen["4"], (std::pair<std::string, bool>{"app", false}));
}

TEST(Provenance, Version4DatabaseGainsTheColumnsAndItsRootCausesAreUntrusted) {
  TempDir tmp;
  fftest::write_old_database(tmp.db(), 4, "00000000:3B:00.0");
  auto store = DiagnosisStore::open(tmp.db());
  EXPECT_GE(store->schema_version(), 5);
  auto sightings = store->sightings(0);
  ASSERT_EQ(sightings.size(), 1u);
  EXPECT_EQ(sightings[0].node, "n4");
  EXPECT_EQ(sightings[0].origin, "");
  EXPECT_FALSE(sightings[0].trusted);
  RawDb raw(tmp.db());
  EXPECT_EQ(raw.value("SELECT typeof(trusted) FROM root_causes"), "null");
  EXPECT_EQ(raw.value("SELECT trusted FROM suspect_sightings"), "0");
  // The suspects view still answers over the new suspect_sightings.
  EXPECT_EQ(raw.value("SELECT jobs FROM suspects WHERE node = 'n4' AND device IS NULL"), "1");
}

}  // namespace
