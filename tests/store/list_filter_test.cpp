// list(): the newest pass of each job attempt, newest first, filtered by
// node (root cause or affected), since, failures only, and limit.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using ff::agent::ListFilter;

class ListFilters : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = DiagnosisStore::open(tmp_.db());
    fftest::add_synthetic_history(*store_);
  }
  // "job" or "job.attempt" of each row, in order.
  std::vector<std::string> jobs(const ListFilter& f) {
    std::vector<std::string> out;
    for (const auto& p : store_->list(f))
      out.push_back(p.attempt ? p.job_id + "." + std::to_string(p.attempt) : p.job_id);
    return out;
  }
  fftest::TempDir tmp_;
  std::unique_ptr<DiagnosisStore> store_;
};

using V = std::vector<std::string>;

TEST_F(ListFilters, NewestPassPerJobAttemptNewestFirst) {
  EXPECT_EQ(jobs({}), (V{"1.1", "8", "7", "6", "5", "4", "3", "2", "1"}));
  auto rows = store_->list({});
  EXPECT_EQ(rows[1].pass_no, 2) << "job 8's final pass, not its fast pass";
  EXPECT_EQ(rows[1].verdict, "attributed");
  EXPECT_EQ(rows[1].diagnosis["summary"], "attributed 8");
}

TEST_F(ListFilters, FailuresOnly) {
  ListFilter f;
  f.failures_only = true;
  EXPECT_EQ(jobs(f), (V{"1.1", "8", "7", "5", "4", "3", "2", "1"}));
}

TEST_F(ListFilters, ByNodeMatchesRootCauseOrAffectedNode) {
  ListFilter f;
  f.node = "n2";
  EXPECT_EQ(jobs(f), (V{"8", "3", "1"}));
  f.node = "n3";
  EXPECT_EQ(jobs(f), (V{"4"})) << "job 8's superseded fast pass named n3";
  f.node = "n4";
  EXPECT_EQ(jobs(f), (V{"8", "7", "5"}));
  f.node = "n9";
  EXPECT_TRUE(jobs(f).empty());
}

TEST_F(ListFilters, SinceAndLimit) {
  ListFilter f;
  f.since = 450;
  EXPECT_EQ(jobs(f), (V{"1.1", "8", "7", "6", "5"}));
  f.limit = 2;
  EXPECT_EQ(jobs(f), (V{"1.1", "8"}));
  f = {};
  f.node = "n1";
  f.since = 150;
  EXPECT_EQ(jobs(f), (V{"1.1", "4", "2"}));
  f = {};
  f.limit = 0;
  EXPECT_EQ(jobs(f).size(), 9u) << "0 means no limit";
}

TEST_F(ListFilters, WithoutDiagnosisLeavesTheJsonOut) {
  ListFilter f;
  f.include_diagnosis = false;
  auto rows = store_->list(f);
  ASSERT_FALSE(rows.empty());
  EXPECT_TRUE(rows[0].diagnosis_text.empty());
  EXPECT_TRUE(rows[0].diagnosis.is_null());
  EXPECT_EQ(rows[0].summary, "attributed 1");
}
