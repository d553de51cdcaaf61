// Rotated and gzip files of one source: each cut to the window, named
// oldest = highest number, gzip files outside the window not even opened.
#include <gtest/gtest.h>

#include "collectors/sources/log_collector.h"
#include "collectors/sources/log_files.h"
#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;
using testing::at;
using testing::rfc3164;

std::string lines(TimeUs from, int count, const std::string& tag) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text += rfc3164(from + i * 60 * kUsPerSecond) + " n1 kernel: " + tag + " " + std::to_string(i) +
            "\n";
  return text;
}

TEST(RotatedSources, GlobsListOldestFirst) {
  ScratchDirectory dir{"collector"};
  for (const char* name : {"syslog", "syslog.1", "syslog.2.gz", "syslog.10.gz"})
    testing::write_file(dir / name, "x\n");
  // Same modification time: the rotation number decides.
  for (const char* name : {"syslog", "syslog.1", "syslog.2.gz", "syslog.10.gz"})
    testing::set_mtime(dir / name, at("2026-11-02T00:00:00Z"));
  GlobResult g = expand_log_globs({(dir / "syslog*").string(), (dir / "syslog").string()});
  std::vector<std::string> names;
  for (const auto& f : g.files) names.push_back(std::filesystem::path(f).filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"syslog.10.gz", "syslog.2.gz", "syslog.1", "syslog"}));
}

TEST(RotatedSources, WindowSpansRotatedAndGzipFiles) {
  ScratchDirectory dir{"collector"};
  std::filesystem::path logs = dir / "var/log";
  TimeUs day = 24 * 3600 * kUsPerSecond;
  TimeUs t = at("2026-11-02T10:00:00Z");
  // syslog.3.gz: a week old, last written long before the window: skipped unread.
  testing::write_gzip(logs / "syslog.3.gz", lines(t - 7 * day, 100, "ancient"));
  testing::set_mtime(logs / "syslog.3.gz", t - 6 * day);
  // syslog.2.gz: the window starts inside it.
  testing::write_gzip(logs / "syslog.2.gz", lines(t - 100 * 60 * kUsPerSecond, 100, "gz"));
  testing::set_mtime(logs / "syslog.2.gz", t);
  // syslog.1: plain, entirely inside.
  testing::write_file(logs / "syslog.1", lines(t + 60 * kUsPerSecond, 10, "plain1"));
  testing::set_mtime(logs / "syslog.1", t + 11 * 60 * kUsPerSecond);
  // syslog: the window ends inside it.
  testing::write_file(logs / "syslog", lines(t + 12 * 60 * kUsPerSecond, 100, "live"));
  testing::set_mtime(logs / "syslog", t + 200 * 60 * kUsPerSecond);

  TimeWindow window{t - 30 * 60 * kUsPerSecond, t + 30 * 60 * kUsPerSecond};
  TimeContext ctx;
  ctx.reference = window.begin;
  std::filesystem::path bundle = dir / "bundle";
  LogCollection c =
      collect_log_kind({"syslog", {(logs / "syslog*").string()}}, "n1", window, ctx, bundle);
  EXPECT_EQ(c.coverage.status_text(), "ok");
  // gz: minutes -30..-1 (30 lines) plus -0 → the gz file's lines 70..99 are t-30m..t-1m: 30 lines.
  // plain1: 10 lines; live: minutes 12..30 → 19 lines.
  EXPECT_EQ(c.coverage.lines, 30u + 10u + 19u);
  ASSERT_EQ(c.files.size(), 3u);
  EXPECT_EQ(c.files[0].rel, "nodes/n1/syslog.2");
  EXPECT_EQ(c.files[1].rel, "nodes/n1/syslog.1");
  EXPECT_EQ(c.files[2].rel, "nodes/n1/syslog");
  std::string oldest = testing::read_file(bundle / "nodes/n1/syslog.2");
  EXPECT_EQ(oldest.substr(0, oldest.find('\n')),
            rfc3164(t - 30 * 60 * kUsPerSecond) + " n1 kernel: gz 70");
  EXPECT_EQ(testing::read_file(bundle / "nodes/n1/syslog.1"),
            lines(t + 60 * kUsPerSecond, 10, "plain1"));
  EXPECT_EQ(testing::read_file(bundle / "nodes/n1/syslog"),
            lines(t + 12 * 60 * kUsPerSecond, 19, "live"));
  EXPECT_FALSE(std::filesystem::exists(bundle / "nodes/n1/syslog.3"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(bundle / "nodes/n1"),
                          std::filesystem::directory_iterator()),
            3);
}

TEST(RotatedSources, GzipStartingAfterTheWindowIsSkipped) {
  ScratchDirectory dir{"collector"};
  TimeUs t = at("2026-11-02T10:00:00Z");
  testing::write_gzip(dir / "fm.log.1.gz", lines(t + 3600 * kUsPerSecond, 10, "later"));
  TimeWindow window{t - 600 * kUsPerSecond, t};
  TimeContext ctx;
  ctx.reference = window.begin;
  LogCollection c = collect_log_kind({"fabricmanager", {(dir / "fm.log*").string()}}, "n1", window,
                                     ctx, dir / "bundle");
  EXPECT_EQ(c.coverage.status_text(), "empty");
  EXPECT_TRUE(c.files.empty());
}

}  // namespace
}  // namespace ff::collect
