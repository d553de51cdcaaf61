// pass_no counts 1, 2, 3 ... per job attempt; the newest pass is current.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using fftest::synthetic_diagnosis;
using fftest::TempDir;

TEST(PassNumber, IncrementsPerJobAttempt) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  auto d = synthetic_diagnosis("12", "ambiguous", "gpu", {}, {"n1"});
  EXPECT_EQ(store->add_pass("12", 0, "fastpass", d, 10).pass_no, 1);
  EXPECT_EQ(store->add_pass("12", 0, "final", d, 20).pass_no, 2);
  EXPECT_EQ(store->add_pass("12", 0, "replay", d, 30).pass_no, 3);
  EXPECT_EQ(store->add_pass("12", 1, "fastpass", d, 40).pass_no, 1) << "a new attempt restarts";
  EXPECT_EQ(store->add_pass("13", 0, "final", d, 50).pass_no, 1) << "another job";

  auto latest = store->latest_pass("12");
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->attempt, 1);
  EXPECT_EQ(latest->pass_no, 1);
  latest = store->latest_pass("12", 0);
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->pass_no, 3);
  EXPECT_EQ(latest->trigger, "replay");
  EXPECT_FALSE(store->latest_pass("12", 7));
  EXPECT_FALSE(store->latest_pass("nope"));

  auto all = store->passes("12");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].pass_no, 1);
  EXPECT_EQ(all[2].pass_no, 3);
  EXPECT_EQ(all[3].attempt, 1);
}

TEST(PassNumber, LastDiagnosesViewHoldsOnlyTheNewestPass) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  auto fast = synthetic_diagnosis("12", "ambiguous", "gpu", {}, {"n1"});
  auto final_pass = synthetic_diagnosis("12", "attributed", "gpu", {}, {"n1"});
  store->add_pass("12", 0, "fastpass", fast, 10);
  store->add_pass("12", 0, "final", final_pass, 20);
  fftest::RawDb raw(tmp.db());
  auto rows = raw.rows("SELECT pass_no, verdict, trigger FROM last_diagnoses");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"2", "attributed", "final"}));
}
