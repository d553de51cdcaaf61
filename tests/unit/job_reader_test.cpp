// engine/read/job_reader: job.json of an incident directory. The reader never
// throws; what it cannot read goes to `errors`.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/read/job_reader.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace {

namespace fs = std::filesystem;
using ff::test_support::ScratchDirectory;

ff::JobInfo Read(const std::string& content, std::vector<ff::ErrorItem>& errors) {
  ScratchDirectory dir{"job-reader"};
  ff::test_support::write_file(dir / "job.json", content);
  ff::JobInfo job;
  EXPECT_NO_THROW(job = ff::read_job_json(dir / "job.json", errors));
  return job;
}

std::vector<ff::ErrorItem> ReadErrors(const std::string& content) {
  std::vector<ff::ErrorItem> errors;
  Read(content, errors);
  return errors;
}

std::vector<std::string> Messages(const std::vector<ff::ErrorItem>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) {
    EXPECT_EQ(e.source, "job.json");
    out.push_back(e.message);
  }
  return out;
}

// fuzz/crashes/fuzz_job_json/number-overflow: nlohmann's parser throws
// out_of_range (406), not parse_error, for a number beyond a double; the
// reader let it escape and `firstfault analyze` died in std::terminate.
TEST(JobReader, NumberBeyondADoubleIsMalformedNotACrash) {
  for (const char* content : {"1e400", "{\"job_id\":\"12\",\"attempt\":1e10793}", "[-1e999]"}) {
    std::vector<ff::ErrorItem> errors = ReadErrors(content);
    ASSERT_EQ(errors.size(), 1u) << content;
    EXPECT_EQ(errors[0].message.rfind("malformed job.json: ", 0), 0u) << errors[0].message;
  }
}

// A rank listed twice: the first entry is the rank, the second is dropped
// (it would otherwise claim the GPUs it names for the same rank).
TEST(JobReader, RankListedTwiceKeepsItsFirstEntry) {
  std::vector<ff::ErrorItem> errors;
  ff::JobInfo job = Read(R"({"job_id":"1","nodes":["a","b"],"ranks":[
      {"rank":0,"node":"a","gpus":["0000:18:00.0"]},
      {"rank":0,"node":"b","gpus":["0000:2a:00.0"]},
      {"rank":1,"node":"b","gpus":["0000:18:00.0"]}]})",
                         errors);
  EXPECT_EQ(Messages(errors),
            std::vector<std::string>{
                "rank 0 appears more than once in 'ranks': the first entry of a rank is used"});
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.rank_info(0)->node, "a");
  EXPECT_EQ(job.rank_for_gpu("b", "00000000:2A:00.0"), -1);
  EXPECT_EQ(job.rank_for_gpu("b", "00000000:18:00.0"), 1);
}

TEST(JobReader, RankOnANodeOutsideTheListAndRankWithoutNumber) {
  std::vector<ff::ErrorItem> errors;
  ff::JobInfo job = Read(R"({"job_id":"1","nodes":["a"],"ranks":[
      {"rank":0,"node":"a"},{"rank":1,"node":"z"},{"rank":"two","node":"a"}]})",
                         errors);
  EXPECT_EQ(
      Messages(errors),
      (std::vector<std::string>{
          "rank 1 is placed on node z, which is not in 'nodes': events there are not the "
          "job's",
          "'ranks': 1 entry without an integer rank (the GPUs listed there belong to no rank)"}));
  EXPECT_EQ(job.ranks.size(), 3u);
  EXPECT_FALSE(job.has_node("z"));  // 'nodes' stays what the job ran on
}

// Each kind of fault is one error, however many entries have it.
TEST(JobReader, ManyFaultyRanksAreOneErrorEach) {
  std::string ranks;
  for (int i = 0; i < 20000; ++i)
    ranks += std::string(i ? "," : "") + R"({"rank":)" + std::to_string(i % 3) + R"(,"node":"n)" +
             std::to_string(i) + R"("})";
  std::vector<ff::ErrorItem> errors;
  ff::JobInfo job = Read(R"({"job_id":"1","nodes":["n0"],"ranks":[)" + ranks + "]}", errors);
  EXPECT_EQ(Messages(errors),
            (std::vector<std::string>{
                "rank 0 appears more than once in 'ranks' (19997 repeats in all): the first entry "
                "of a rank is used",
                "rank 1 is placed on node n1, which is not in 'nodes' (2 ranks in all): events "
                "there are not the job's"}));
  EXPECT_EQ(job.ranks.size(), 3u);
}

TEST(JobReader, NodeListEmptyOrWithoutNames) {
  std::vector<ff::ErrorItem> errors;
  EXPECT_TRUE(Read(R"({"job_id":"1","nodes":[]})", errors).nodes.empty());
  EXPECT_EQ(
      Messages(errors),
      std::vector<std::string>{"job.json lists no nodes (\"nodes\": []); nodes taken from nodes/"});
  errors.clear();
  EXPECT_TRUE(Read(R"({"job_id":"1","nodes":[5,"",null]})", errors).nodes.empty());
  EXPECT_EQ(Messages(errors), (std::vector<std::string>{
                                  "'nodes': 3 entries ignored (not a node name, or named twice)",
                                  "job.json names no node in 'nodes'; nodes taken from nodes/"}));
  errors.clear();
  ff::JobInfo job = Read(R"({"job_id":"1","nodes":["a","b","a"]})", errors);
  EXPECT_EQ(job.nodes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Messages(errors),
            std::vector<std::string>{"'nodes': 1 entry ignored (not a node name, or named twice)"});
  errors.clear();
  Read(R"({"job_id":"1"})", errors);
  EXPECT_EQ(Messages(errors),
            std::vector<std::string>{"job.json has no 'nodes' list; nodes taken from nodes/"});
}

// start_time after end_time: both are kept (they date yearless timestamps)
// and neither bounds the job's window.
TEST(JobReader, StartAfterEndLeavesTheWindowUnbounded) {
  std::vector<ff::ErrorItem> errors;
  ff::JobInfo job = Read(R"({"job_id":"1","nodes":["a"],
      "start_time":"2026-11-02T12:00:00Z","end_time":"2026-11-02T11:00:00Z"})",
                         errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("is after end_time"), std::string::npos) << errors[0].message;
  EXPECT_TRUE(job.start_time && job.end_time);
  EXPECT_FALSE(job.window_start());
  EXPECT_FALSE(job.window_end());

  errors.clear();
  job = Read(R"({"job_id":"1","nodes":["a"],
      "start_time":"2026-11-02T10:00:00Z","end_time":"2026-11-02T11:00:00Z"})",
             errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(job.window_start(), job.start_time);
  EXPECT_EQ(job.window_end(), job.end_time);
}

// The bound is the bytes read: a job.json of 64 MiB and one byte is refused
// without being parsed.
TEST(JobReader, OversizedJobJsonIsRefused) {
  ScratchDirectory dir{"job-reader"};
  fs::path p = dir / "job.json";
  ff::test_support::write_file(p, "{");
  fs::resize_file(p, ff::kMaxJobJsonBytes + 1);  // sparse: NUL bytes after the brace
  std::vector<ff::ErrorItem> errors;
  ff::JobInfo job = ff::read_job_json(p, errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "job.json not read (larger than 64 MiB: not read); job window, ranks and GPUs unknown");
}

}  // namespace
