// An empty file becomes the current schema; opening it again changes nothing.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using fftest::RawDb;
using fftest::TempDir;

TEST(Migrations, EmptyDatabaseGetsTheWholeSchema) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  EXPECT_GE(DiagnosisStore::latest_schema_version(), 1);
  EXPECT_EQ(store->schema_version(), DiagnosisStore::latest_schema_version());

  RawDb raw(tmp.db());
  EXPECT_EQ(raw.value("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.count("PRAGMA user_version"), DiagnosisStore::latest_schema_version());
  for (const char* table : {"jobs", "bundles", "diagnoses", "root_causes", "affected_nodes",
                            "symptoms", "evidence", "coverage"})
    EXPECT_EQ(raw.count(std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
                                    "AND name = '") +
                        table + "'"),
              1)
        << table;
  for (const char* view :
       {"last_diagnoses", "failures_per_node", "failures_per_gpu", "failures_per_domain"})
    EXPECT_EQ(raw.count(std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND "
                                    "name = '") +
                        view + "'"),
              1)
        << view;
  EXPECT_EQ(raw.value("PRAGMA integrity_check"), "ok");
  EXPECT_TRUE(raw.rows("PRAGMA foreign_key_check").empty());
}

TEST(Migrations, ReopeningIsIdempotentAndKeepsRows) {
  TempDir tmp;
  std::string schema_before;
  {
    auto store = DiagnosisStore::open(tmp.db());
    store->add_pass("7", 0, "final", fftest::synthetic_diagnosis("7", "unattributed", "", {}, {}),
                    100);
    schema_before = RawDb(tmp.db()).value("SELECT group_concat(sql, ';') FROM sqlite_schema");
  }
  for (int i = 0; i < 3; ++i) {
    auto store = DiagnosisStore::open(tmp.db());
    EXPECT_EQ(store->schema_version(), DiagnosisStore::latest_schema_version());
    ASSERT_TRUE(store->latest_pass("7").has_value());
    EXPECT_EQ(store->passes("7").size(), 1u);
  }
  EXPECT_EQ(RawDb(tmp.db()).value("SELECT group_concat(sql, ';') FROM sqlite_schema"),
            schema_before);
}

TEST(Migrations, ForeignKeysCascadeFromDiagnoses) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  auto pass = store->add_pass_text("48213", 0, "final",
                                   fftest::example_diagnosis("01-xid79-fallen-off-bus"), 100);
  RawDb raw(tmp.db());
  raw.exec("PRAGMA foreign_keys = ON");
  ASSERT_GT(raw.count("SELECT count(*) FROM evidence"), 0);
  raw.exec("DELETE FROM diagnoses WHERE id = " + std::to_string(pass.id));
  for (const char* table : {"root_causes", "affected_nodes", "symptoms", "evidence", "coverage"})
    EXPECT_EQ(raw.count(std::string("SELECT count(*) FROM ") + table), 0) << table;
}

TEST(Migrations, ReadOnlyOpenOfMissingFileSaysSo) {
  TempDir tmp;
  try {
    DiagnosisStore::open_readonly(tmp.db());
    FAIL() << "opened a missing database";
  } catch (const ff::agent::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("no database at"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.db())) << "a read-only open must not create the file";
}

TEST(Migrations, ReadOnlyOpenRefusesAFileThatIsNotOurs) {
  TempDir tmp;
  RawDb(tmp.db()).exec("CREATE TABLE other (x)");
  EXPECT_THROW(DiagnosisStore::open_readonly(tmp.db()), ff::agent::StoreError);
}
