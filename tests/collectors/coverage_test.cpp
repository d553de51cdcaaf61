// Every configured source gets a coverage entry that says what happened to it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "collectors/sources/app_output.h"
#include "collectors/sources/log_collector.h"
#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;
using testing::at;

class Coverage : public ::testing::Test {
 protected:
  TimeWindow window{at("2026-11-02T10:00:00Z"), at("2026-11-02T11:00:00Z")};
  TimeContext ctx;
  ScratchDirectory dir{"collector"};
  LogCollection collect(const std::string& kind, std::vector<std::string> globs) {
    ctx.reference = window.begin;
    return collect_log_kind({kind, std::move(globs)}, "n1", window, ctx, dir / "bundle");
  }
};

TEST_F(Coverage, NoMatchingFileIsMissing) {
  LogCollection c = collect("fabricmanager", {(dir / "nope*.log").string()});
  EXPECT_EQ(c.coverage.collector, "fabricmanager");
  EXPECT_EQ(c.coverage.node, "n1");
  EXPECT_EQ(c.coverage.status_text(), "missing");
  EXPECT_NE(c.coverage.detail.find("no file matches"), std::string::npos);
}

TEST_F(Coverage, NoPathConfiguredIsMissing) {
  EXPECT_EQ(collect("slurmd", {}).coverage.status_text(), "missing");
}

TEST_F(Coverage, UnreadableSourceIsAnError) {
  std::filesystem::create_directories(dir / "kern.log");  // a directory where a file should be
  ::mkfifo((dir / "kern.fifo").c_str(), 0600);            // must not block the collector
  LogCollection c = collect("syslog", {(dir / "kern.log").string(), (dir / "kern.fifo").string()});
  EXPECT_EQ(c.coverage.status_text(), "error");
  EXPECT_NE(c.coverage.detail.find("kern.log"), std::string::npos);
  EXPECT_NE(c.coverage.detail.find("kern.fifo"), std::string::npos);
}

TEST_F(Coverage, NothingInTheWindowIsEmpty) {
  testing::write_file(dir / "slurmd.log", "[2026-11-01T10:00:00.000] old\n");
  LogCollection c = collect("slurmd", {(dir / "slurmd.log").string()});
  EXPECT_EQ(c.coverage.status_text(), "empty");
  EXPECT_EQ(c.coverage.lines, 0u);
  EXPECT_TRUE(c.files.empty());
}

TEST_F(Coverage, OneReadableFileIsEnoughForOk) {
  testing::write_file(dir / "slurmd.log", "[2026-11-02T10:30:00.000] error: x\n");
  std::filesystem::create_directories(dir / "slurmd.log.1");
  LogCollection c = collect("slurmd", {(dir / "slurmd.log*").string()});
  EXPECT_EQ(c.coverage.status_text(), "ok");
  EXPECT_EQ(c.coverage.lines, 1u);
  EXPECT_NE(c.coverage.detail.find("slurmd.log.1"), std::string::npos);  // the failure is named
}

TEST_F(Coverage, AppOutputMissingOrCut) {
  AppOutputCopy missing = copy_app_output((dir / "slurm-1.out").string(), "slurm-1.out", "n1",
                                          dir / "b", 100, ::getuid());
  EXPECT_EQ(missing.coverage.status_text(), "missing");
  EXPECT_TRUE(missing.file.rel.empty());

  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(i) + "\n";
  testing::write_file(dir / "slurm-2.out", text);
  AppOutputCopy cut = copy_app_output((dir / "slurm-2.out").string(), "slurm-2.out", "n1",
                                      dir / "b", 50, ::getuid());
  EXPECT_EQ(cut.coverage.status_text(), "truncated");
  EXPECT_EQ(cut.file.rel, "app/slurm-2.out");
  std::string kept = testing::read_file(dir / "b/app/slurm-2.out");
  EXPECT_LE(kept.size(), 50u);
  EXPECT_EQ(kept.substr(0, 5), "line ");  // starts at a line
  EXPECT_EQ(kept.substr(kept.size() - 8), "line 99\n");
}

TEST(AppOutputPath, SlurmPatternsExpanded) {
  EXPECT_EQ(expand_output_path("/home/u/slurm-%j.out", "12", "n1"), "/home/u/slurm-12.out");
  EXPECT_EQ(expand_output_path("/o/%N-%J-%%.log", "12", "n1"), "/o/n1-12-%.log");
}

}  // namespace
}  // namespace ff::collect
