// The window search reads a few probes plus the window, never the whole file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "collectors/window/window_reader.h"
#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;
using testing::at;
using testing::rfc3164;

struct Generated {
  std::uint64_t size = 0;
  std::vector<std::string> expected;  // the lines inside the window, in order
};

// One RFC 3164 line per second for ~34 days (~270 MB); every 997th line is
// followed by an untimed continuation line, which belongs to the line before it.
Generated generate(const std::string& path, const TimeWindow& window) {
  Generated g;
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::vector<char> buffer(1 << 22);
  std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
  TimeUs start = at("2026-10-01T00:00:00Z");
  bool inside = false;
  char line[256];
  for (long i = 0; i < 3'000'000; ++i) {
    TimeUs t = start + i * kUsPerSecond;
    int n = std::snprintf(line, sizeof line,
                          "%s gpu-a01 systemd[1]: routine message number %09ld with some padding "
                          "text\n",
                          rfc3164(t).c_str(), i);
    std::fwrite(line, 1, static_cast<std::size_t>(n), f);
    inside = window.contains(t);
    if (inside) g.expected.emplace_back(line, static_cast<std::size_t>(n - 1));
    if (i % 997 == 0) {
      const char* cont = "    continuation of the line above\n";
      std::fputs(cont, f);
      if (inside) g.expected.emplace_back(cont, std::strlen(cont) - 1);
    }
  }
  std::fclose(f);
  g.size = std::filesystem::file_size(path);
  return g;
}

TEST(WindowSearch, LargeFileReadsOnlyTheWindow) {
  ScratchDirectory dir{"collector"};
  std::string path = (dir / "syslog").string();
  TimeWindow window{at("2026-10-20T07:00:00Z"), at("2026-10-20T08:00:00Z")};
  Generated g = generate(path, window);
  ASSERT_GT(g.size, 250u << 20);
  ASSERT_EQ(g.expected.size(), 3601u + 4u);  // 3601 seconds, 4 continuation lines among them

  TimeContext ctx;
  ctx.reference = window.begin;
  std::vector<std::string> kept;
  WindowReadStats stats =
      read_window(path, window, ctx, [&](std::string_view l) { kept.emplace_back(l); });
  EXPECT_EQ(stats.error, "");
  EXPECT_EQ(kept, g.expected);
  EXPECT_EQ(stats.lines_kept, g.expected.size());
  // The window is ~330 KB; probes and read-ahead must stay within a few MB of it.
  std::uint64_t window_bytes = stats.bytes_kept;
  EXPECT_LT(stats.bytes_read, window_bytes + (2u << 20)) << "read " << stats.bytes_read;
  EXPECT_LT(stats.probes, 40);
  std::printf("file %llu bytes, window %llu bytes, read %llu bytes in %d probes + the window\n",
              static_cast<unsigned long long>(g.size),
              static_cast<unsigned long long>(window_bytes),
              static_cast<unsigned long long>(stats.bytes_read), stats.probes);
}

TEST(WindowSearch, WindowBeforeOrAfterTheFileKeepsNothing) {
  ScratchDirectory dir{"collector"};
  std::string path = (dir / "syslog").string();
  std::string text;
  TimeUs t0 = at("2026-11-02T10:00:00Z");
  for (int i = 0; i < 1000; ++i)
    text += testing::rfc3164(t0 + i * kUsPerSecond) + " h prog: line " + std::to_string(i) + "\n";
  testing::write_file(path, text);
  TimeContext ctx;
  for (TimeWindow w : {TimeWindow{at("2026-11-01T00:00:00Z"), at("2026-11-01T01:00:00Z")},
                       TimeWindow{at("2026-11-03T00:00:00Z"), at("2026-11-03T01:00:00Z")}}) {
    ctx.reference = w.begin;
    int n = 0;
    read_window(path, w, ctx, [&](std::string_view) { ++n; });
    EXPECT_EQ(n, 0);
  }
}

TEST(WindowSearch, YearlessTimesTakeTheWindowsYear) {
  ScratchDirectory dir{"collector"};
  std::string path = (dir / "syslog").string();
  testing::write_file(path,
                      "Dec 31 23:59:58 h k: old year\nJan  1 00:00:01 h k: new year\n"
                      "Jan  1 00:10:00 h k: later\n");
  TimeWindow w{at("2026-12-31T23:59:00Z"), at("2027-01-01T00:05:00Z")};
  TimeContext ctx;
  ctx.reference = w.begin;
  std::vector<std::string> kept;
  read_window(path, w, ctx, [&](std::string_view l) { kept.emplace_back(l); });
  EXPECT_EQ(kept, (std::vector<std::string>{"Dec 31 23:59:58 h k: old year",
                                            "Jan  1 00:00:01 h k: new year"}));
}

TEST(WindowSearch, FileWithoutTimesIsKeptWhole) {
  ScratchDirectory dir{"collector"};
  std::string path = (dir / "app").string();
  testing::write_file(path, "no time here\nnor here\n");
  TimeWindow w{at("2026-11-01T00:00:00Z"), at("2026-11-01T01:00:00Z")};
  TimeContext ctx;
  int n = 0;
  read_window(path, w, ctx, [&](std::string_view) { ++n; });
  EXPECT_EQ(n, 2);
}

// The agent's options (slurmctld's log, read as root): an unknown time format
// keeps nothing and stops early; a symbolic link is refused.
TEST(WindowSearch, WithoutKeepUntimedAFileWithoutTimesKeepsNothing) {
  ScratchDirectory dir{"collector"};
  std::string path = (dir / "app").string();
  std::string text;
  while (text.size() < (24u << 20)) text += "[Dec 02 15:40:01.123] no date in this format\n";
  testing::write_file(path, text);
  TimeWindow w{at("2026-11-01T00:00:00Z"), at("2026-11-01T01:00:00Z")};
  TimeContext ctx;
  WindowReadOptions options;
  options.keep_untimed = false;
  int n = 0;
  WindowReadStats stats = read_window(
      path, w, ctx, [&](std::string_view) { ++n; }, options);
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(stats.untimed);
  // each search probe gives up after 1 MiB without a time, and so does the read after it
  EXPECT_LT(stats.bytes_read, 16u << 20);
}

TEST(WindowSearch, WithoutFollowSymlinksALinkIsRefused) {
  ScratchDirectory dir{"collector"};
  testing::write_file((dir / "real").string(), "Nov  1 00:10:00 h k: line\n");
  std::filesystem::create_symlink(dir / "real", dir / "link");
  TimeWindow w{at("2026-11-01T00:00:00Z"), at("2026-11-01T01:00:00Z")};
  TimeContext ctx;
  ctx.reference = w.begin;
  WindowReadOptions options;
  options.follow_symlinks = false;
  int n = 0;
  WindowReadStats stats =
      read_window((dir / "link").string(), w, ctx, [&](std::string_view) { ++n; }, options);
  EXPECT_EQ(stats.error, "is a symbolic link");
  EXPECT_EQ(n, 0);
  stats = read_window((dir / "link").string(), w, ctx, [&](std::string_view) { ++n; });
  EXPECT_EQ(stats.error, "");  // the collector's default follows it, as before
  EXPECT_EQ(n, 1);
}

}  // namespace
}  // namespace ff::collect
