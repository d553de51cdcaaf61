// `firstfault show` on a prepared database, through the real binary.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/run_cli.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using fftest::quote;
using fftest::run_cli;

namespace {
const char* kExample = "01-xid79-fallen-off-bus";
}

class Show : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = DiagnosisStore::open(tmp_.db());
    // A fast pass of another incident first, then the final pass: show
    // prints the newest.
    store->add_pass_text("48213", 0, "fastpass",
                         fftest::example_diagnosis("10-two-independent-faults"), 1764480000);
    auto final_pass =
        store->add_pass_text("48213", 0, "final", fftest::example_diagnosis(kExample), 1764480060);
    store->set_comment_status(final_pass.id, "written");
    db_ = quote(tmp_.db());
  }
  fftest::TempDir tmp_;
  std::string db_;
};

TEST_F(Show, JsonIsWhatAnalyzePrintedByteForByte) {
  auto analyzed =
      run_cli("analyze " + quote(std::string(FF_SOURCE_DIR) + "/examples/incidents/" + kExample) +
              " --format json");
  ASSERT_EQ(analyzed.exit_code, 0);
  auto shown = run_cli("show 48213 --db " + db_ + " --format json");
  EXPECT_EQ(shown.exit_code, 0);
  EXPECT_EQ(shown.out, analyzed.out);
}

TEST_F(Show, TextHasThePassThenTheEngineReport) {
  auto r = run_cli("show 48213 --db " + db_);
  EXPECT_EQ(r.exit_code, 0);
  for (const char* want :
       {"job 48213 attempt 0  pass 2 of 2 (final, 2025-11-30T05:21:00Z)", "verdict:    attributed",
        "domain:     gpu / gpu.fallen_off_bus", "root cause: gpu-a02 00000000:5D:00.0",
        "comment:    written", "summary:    gpu/fallen_off_bus on gpu-a02",
        // The engine's report of the stored diagnosis follows.
        "job 48213 on orion", "timeline", "demoted symptoms"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no colour into a pipe";
}

TEST_F(Show, AllPassesListsEveryPassOldestFirst) {
  auto r = run_cli("show 48213 --db " + db_ + " --all-passes --format json");
  EXPECT_EQ(r.exit_code, 0);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["pass"], 1);
  EXPECT_EQ(j[0]["trigger"], "fastpass");
  EXPECT_EQ(j[1]["comment_status"], "written");
  EXPECT_EQ(j[1]["diagnosis"], nlohmann::json::parse(fftest::example_diagnosis(kExample)));
  auto text = run_cli("show 48213 --db " + db_ + " --all-passes");
  EXPECT_NE(text.out.find("pass 1 of 2 (fastpass"), std::string::npos);
  EXPECT_NE(text.out.find("pass 2 of 2 (final"), std::string::npos);
}

TEST_F(Show, DatabaseFromTheEnvironment) {
  auto r = run_cli("show 48213 --format json", "FIRSTFAULT_DB=" + db_);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["job_id"], "48213");
}

TEST_F(Show, ExitCodes) {
  EXPECT_EQ(run_cli("show 99999 --db " + db_).exit_code, 2) << "no such job";
  EXPECT_EQ(run_cli("show 48213 --db " + db_ + " --attempt 3").exit_code, 2) << "no such attempt";
  EXPECT_EQ(run_cli("show 48213 --db " + quote(tmp_.path().string() + "/missing.db")).exit_code, 2)
      << "no database";
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "missing.db"));
  EXPECT_EQ(run_cli("show --db " + db_).exit_code, 64) << "no job id";
  EXPECT_EQ(run_cli("show 48213 --db " + db_ + " --format yaml").exit_code, 64);
}
