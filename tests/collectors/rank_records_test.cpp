#include <gtest/gtest.h>

#include "collectors/spool/job_records.h"

namespace ff::collect {
namespace {

RankRecord rank(const std::string& step, int r, std::optional<int> status) {
  RankRecord rec;
  rec.step = step;
  rec.rank = r;
  rec.exit_status = status;
  return rec;
}

TEST(RankRecords, NewestFailingStepWinsElseNewestStep) {
  std::vector<RankRecord> records = {
      rank("batch", 0, 256), rank("0", 0, 0),   rank("1", 0, std::nullopt),  // rank 0: batch failed
      rank("0", 1, 256),     rank("2", 1, 256), rank("1", 1, 0),             // rank 1: step 2
      rank("0", 2, 0),       rank("3", 2, 0),                                // rank 2: step 3
  };
  auto chosen = select_rank_records(records);
  ASSERT_EQ(chosen.size(), 3u);
  EXPECT_EQ(chosen[0].step, "batch");
  EXPECT_EQ(chosen[1].step, "2");
  EXPECT_EQ(chosen[2].step, "3");
}

TEST(RankRecords, StepOrder) {
  EXPECT_LT(step_order("batch"), step_order("extern"));
  EXPECT_LT(step_order("interactive"), step_order("0"));
  EXPECT_LT(step_order("2"), step_order("10"));
}

}  // namespace
}  // namespace ff::collect
