#include "spank/spool_records.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace firstfault::spank {
namespace {

TEST(SpoolRecordsTest, Paths) {
  EXPECT_EQ(AllocRecordPath("12", "0"), "jobs/12/alloc-0.json");
  EXPECT_EQ(AllocRecordPath("12", "batch"), "jobs/12/alloc-batch.json");
  EXPECT_EQ(RankRecordPath("12", "0", 3), "jobs/12/rank-0-3.json");
}

TEST(SpoolRecordsTest, Rfc3339) {
  EXPECT_EQ(FormatRfc3339Utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339Utc(1796014862), "2026-11-30T05:01:02Z");
}

TEST(SpoolRecordsTest, AllocRecordAsInTheContract) {
  // Designated initializers: assigning these literals trips GCC 12's -Wrestrict bug.
  AllocRecord record{.job_id = "12",
                     .step = "0",
                     .node = "n2",
                     .node_index = 1,
                     .node_count = 3,
                     .local_task_count = 1,
                     .total_task_count = 3,
                     .restart_count = 0,
                     .start_time = 1796014862,
                     .uid = 0,
                     .cuda_visible_devices = "0,1",
                     .slurm_job_gpus = "0,1",
                     .nodelist = "n[1-3]"};
  constexpr const char* kExpected =
      R"({"job_id":"12","step":"0","node":"n2","node_index":1,"node_count":3,)"
      R"("local_task_count":1,"total_task_count":3,"restart_count":0,)"
      R"("start_time":"2026-11-30T05:01:02Z","uid":0,"cuda_visible_devices":"0,1",)"
      R"("slurm_job_gpus":"0,1","nodelist":"n[1-3]"})"
      "\n";
  EXPECT_STREQ(AllocRecordJson(record).c_str(), kExpected);
}

TEST(SpoolRecordsTest, RankRecordBeforeAndAfterExit) {
  RankRecord record;
  record.job_id = "12";
  record.step = "0";
  record.node = "n2";
  record.rank = 1;
  record.pid = 4242;
  record.gpus = {"0"};
  record.gpu_pci = {"00000000:3B:00.0"};
  nlohmann::json running = nlohmann::json::parse(RankRecordJson(record));
  EXPECT_FALSE(running.contains("exit_status"));
  EXPECT_FALSE(running.contains("exit_code"));
  EXPECT_EQ(running["gpus"], nlohmann::json::array({"0"}));
  record.exit_status = 256;
  nlohmann::json ended = nlohmann::json::parse(RankRecordJson(record));
  EXPECT_EQ(ended["exit_status"], 256);
  EXPECT_EQ(ended["exit_code"], "1:0");
  EXPECT_EQ(ended["rank"], 1);
  EXPECT_EQ(ended["local_rank"], 0);
  EXPECT_EQ(ended["pid"], 4242);
}

TEST(SpoolRecordsTest, InvalidUtf8FromTheEnvironmentDoesNotThrow) {
  AllocRecord record;
  record.nodelist = "n\xff[1-3]";
  std::string text;
  EXPECT_NO_THROW(text = AllocRecordJson(record));
  EXPECT_NO_THROW(nlohmann::json::parse(text));
}

}  // namespace
}  // namespace firstfault::spank
