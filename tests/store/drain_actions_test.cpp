// drain_actions (migration 004): the drain policy's decisions, written by
// add_drain_action and read back by drain_actions(since) from the read
// connection; a version-3 database gains the table.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "sql/sql_migrations.h"
#include "tests/store/store_fixture.h"

namespace {

using ff::agent::DiagnosisStore;
using ff::agent::DrainAction;
using fftest::RawDb;
using fftest::TempDir;

DrainAction action(std::int64_t at, const std::string& node, const std::string& decision) {
  DrainAction a;
  a.created_at = at;
  a.job_id = "12";
  a.attempt = 1;
  a.diagnosis_id = 7;
  a.node = node;
  a.device = "00000000:3B:00.0";
  a.decision = decision;
  a.reason = decision == "drained" ? "firstfault: gpu.fallen_off_bus in jobs 11,12" : "why not";
  a.blames = 2;
  a.detail = "State=IDLE";
  return a;
}

TEST(DrainActions, StoredAndReadSince) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  std::int64_t first = store->add_drain_action(action(1000, "n2", "drained"));
  std::int64_t second = store->add_drain_action(action(2000, "n3", "declined"));
  EXPECT_LT(first, second);

  auto all = store->drain_actions(0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, first);
  EXPECT_EQ(all[0].node, "n2");
  EXPECT_EQ(all[0].decision, "drained");
  EXPECT_EQ(all[0].reason, "firstfault: gpu.fallen_off_bus in jobs 11,12");
  EXPECT_EQ(all[0].job_id, "12");
  EXPECT_EQ(all[0].attempt, 1);
  EXPECT_EQ(all[0].diagnosis_id, 7);
  EXPECT_EQ(all[0].device, "00000000:3B:00.0");
  EXPECT_EQ(all[0].blames, 2);
  EXPECT_EQ(all[0].detail, "State=IDLE");
  EXPECT_EQ(all[0].created_at, 1000);

  auto recent = store->drain_actions(1500);
  ASSERT_EQ(recent.size(), 1u);
  EXPECT_EQ(recent[0].node, "n3");

  // The read-only store (`firstfault drains`) sees them too, and cannot write.
  auto reader = DiagnosisStore::open_readonly(tmp.db());
  EXPECT_EQ(reader->drain_actions(0).size(), 2u);
  EXPECT_THROW(reader->add_drain_action(action(3000, "n1", "drained")), ff::agent::StoreError);
}

TEST(DrainActions, UnknownDecisionIsRefused) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  EXPECT_THROW(store->add_drain_action(action(1000, "n2", "maybe")), ff::agent::StoreError);
  EXPECT_TRUE(store->drain_actions(0).empty());
}

TEST(DrainActions, Version3DatabaseGainsTheTable) {
  TempDir tmp;
  {
    RawDb raw(tmp.db());
    for (const auto& m : ff::sql::migrations())
      if (m.version <= 3) raw.exec(m.text);
    raw.exec("PRAGMA user_version = 3");
  }
  auto store = DiagnosisStore::open(tmp.db());
  EXPECT_GE(store->schema_version(), 4);
  store->add_drain_action(action(1000, "n2", "would_drain"));
  RawDb raw(tmp.db());
  EXPECT_EQ(raw.value("SELECT decision FROM drain_actions"), "would_drain");
  EXPECT_EQ(raw.count("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                      "tbl_name = 'drain_actions'"),
            2);
}

}  // namespace
