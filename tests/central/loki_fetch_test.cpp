// Node logs pulled from Loki's query_range API (a local server answering as
// Loki documents, tests/central/fake_loki.h — no Loki is packaged here):
// paging through a window larger than one reply, ties at a page boundary,
// one selector per node and kind, and coverage for every way it can fail.
#include <gtest/gtest.h>
#include <unistd.h>
#include <optional>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "central/loki/loki_fetch.h"
#include "tests/central/fake_loki.h"
#include "tests/support/scratch_directory.h"

namespace {

namespace fs = std::filesystem;
using ff::sources::fetch_loki_logs;
using ff::sources::LokiConfig;
using ff::sources::parse_loki_config;
using ff::test_support::ScratchDirectory;
using fftest::FakeLoki;
using fftest::LokiEntry;

constexpr std::int64_t kSecond = 1000000000;
constexpr std::int64_t kStart = 1796000000 * kSecond;  // the job window
constexpr std::int64_t kEnd = kStart + 3600 * kSecond;

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

LokiConfig config(const FakeLoki& loki, std::size_t limit = 1000) {
  LokiConfig c;
  c.url = loki.url();
  c.limit = limit;
  c.timeout_s = 5;
  c.selectors = {{"kernel", "{host=\"%n\", source=\"kernel\"}"}};
  return c;
}

// The node's entry as job.json holds it.
std::optional<nlohmann::json> coverage_of(const ff::sources::LokiFetch& f,
                                          const std::string& node) {
  for (const auto& c : f.coverage)
    if (c.node == node) return to_json(c);
  return std::nullopt;
}

TEST(LokiFetch, PagesThroughTheWindowInTimeOrder) {
  FakeLoki loki;
  // Two streams of one node (Loki splits by labels, e.g. per file), 2500
  // entries interleaved in time, three sharing the time of page boundaries.
  std::vector<LokiEntry> a, b;
  for (int i = 0; i < 1250; ++i) {
    a.push_back({kStart + (2 * i) * kSecond, "a " + std::to_string(i)});
    b.push_back({kStart + (2 * i + 1) * kSecond, "b " + std::to_string(i)});
  }
  b[499].ts = a[500].ts;  // entries 999..1001 share one nanosecond
  b[500].ts = a[500].ts;
  loki.add_stream("{host=\"n1\", source=\"kernel\"}", {{"host", "n1"}, {"filename", "a"}}, a);
  loki.add_stream("{host=\"n1\", source=\"kernel\"}", {{"host", "n1"}, {"filename", "b"}}, b);
  // Outside the window: never written.
  loki.add_stream("{host=\"n1\", source=\"kernel\"}", {{"host", "n1"}, {"filename", "c"}},
                  {{kStart - kSecond, "before"}, {kEnd, "at the end (exclusive)"}});
  ScratchDirectory dir{"loki"};
  auto fetch = fetch_loki_logs(config(loki), {"n1"}, kStart, kEnd, dir.path());
  auto lines = lines_of(dir.path() / "nodes/n1/kernel.loki");
  ASSERT_EQ(lines.size(), 2500u);
  EXPECT_EQ(fetch.lines, 2500u);
  EXPECT_GE(loki.requests(), 3);
  std::set<std::string> unique(lines.begin(), lines.end());
  EXPECT_EQ(unique.size(), 2500u) << "an entry was written twice";
  EXPECT_EQ(lines.front(), "a 0");
  EXPECT_EQ(lines.back(), "b 1249");
  EXPECT_EQ(unique.count("before"), 0u);
  const auto c = coverage_of(fetch, "n1");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ((*c)["status"], "ok");
  EXPECT_EQ((*c)["collector"], "loki:kernel");
  EXPECT_EQ((*c)["lines"], 2500);
}

TEST(LokiFetch, OneSelectorPerNodeAndKind) {
  FakeLoki loki;
  loki.add_stream(
      "{host=\"n1\", source=\"kernel\"}", {{"host", "n1"}},
      {{kStart + kSecond, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."}});
  loki.add_stream("{host=\"n2\", source=\"kernel\"}", {{"host", "n2"}},
                  {{kStart + kSecond, "n2 line"}});
  ScratchDirectory dir{"loki"};
  LokiConfig c = config(loki);
  c.prefix_time = true;
  auto fetch = fetch_loki_logs(c, {"n1", "n2", "n3"}, kStart, kEnd, dir.path());
  auto n1 = lines_of(dir.path() / "nodes/n1/kernel.loki");
  ASSERT_EQ(n1.size(), 1u);
  // The entry's time first, as the engine reads RFC 3339.
  EXPECT_EQ(n1[0],
            "2026-11-30T00:53:21.000000000Z NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen "
            "off the bus.");
  EXPECT_EQ(lines_of(dir.path() / "nodes/n2/kernel.loki"),
            std::vector<std::string>{"2026-11-30T00:53:21.000000000Z n2 line"});
  // n3 has nothing: empty, and no file.
  EXPECT_EQ((*coverage_of(fetch, "n3"))["status"], "empty");
  EXPECT_FALSE(fs::exists(dir.path() / "nodes/n3/kernel.loki"));
}

// A job.json's node names become directories: one that is not a node name
// ("..", a '/', an option) is neither asked for nor written, even when Loki
// has lines for it.
TEST(LokiFetch, NameThatIsNotANodeIsNeverAPath) {
  FakeLoki loki;
  loki.add_stream("{host=\"n1\", source=\"kernel\"}", {{"host", "n1"}},
                  {{kStart + kSecond, "n1 line"}});
  loki.add_stream("{host=\"../../escaped\", source=\"kernel\"}", {{"host", "../../escaped"}},
                  {{kStart + kSecond, "written outside the incident"}});
  ScratchDirectory dir{"loki"};
  fs::path incident = dir.path() / "incident";
  fs::create_directories(incident);
  auto fetch =
      fetch_loki_logs(config(loki), {"n1", "../../escaped", "-n2", "n3/x"}, kStart, kEnd, incident);
  EXPECT_EQ(lines_of(incident / "nodes/n1/kernel.loki"), std::vector<std::string>{"n1 line"});
  EXPECT_FALSE(fs::exists(dir.path() / "escaped"));
  EXPECT_FALSE(fs::exists(incident / "nodes/-n2"));
  EXPECT_FALSE(fs::exists(incident / "nodes/n3"));
  EXPECT_EQ(loki.requests(), 1) << "a selector was sent for a name that is not a node";
  for (const char* bad : {"../../escaped", "-n2", "n3/x"}) {
    const auto c = coverage_of(fetch, bad);
    ASSERT_TRUE(c.has_value()) << bad;
    EXPECT_EQ((*c)["status"], "error") << bad;
    EXPECT_EQ((*c)["detail"], "not asked: not a node name") << bad;
  }
}

TEST(LokiFetch, TenantAndToken) {
  FakeLoki loki;
  loki.require_org("team-a");
  loki.require_token("s3cret");
  loki.add_stream("{host=\"n1\", source=\"kernel\"}", {{"host", "n1"}}, {{kStart, "x"}});
  ScratchDirectory dir{"loki"};
  LokiConfig c = config(loki);
  auto denied = fetch_loki_logs(c, {"n1"}, kStart, kEnd, dir.path());
  EXPECT_EQ((*coverage_of(denied, "n1"))["status"], "unauthorised");
  c.org_id = "team-a";
  std::ofstream(dir.path() / "token") << "s3cret\n";
  c.bearer_token_file = (dir.path() / "token").string();
  auto allowed = fetch_loki_logs(c, {"n1"}, kStart, kEnd, dir.path());
  EXPECT_EQ((*coverage_of(allowed, "n1"))["status"], "ok");
}

TEST(LokiFetch, FailuresAreCoverageNotHealth) {
  ScratchDirectory dir{"loki"};
  {
    FakeLoki loki;
    LokiConfig c = config(loki);
    c.selectors["kernel"] = "{host=\"%n\"";  // not a selector Loki can parse
    auto bad = fetch_loki_logs(c, {"n1"}, kStart, kEnd, dir.path());
    const auto cov = *coverage_of(bad, "n1");
    EXPECT_EQ(cov["status"], "error");
    EXPECT_NE(cov["detail"].get<std::string>().find("parse error"), std::string::npos) << cov;
  }
  {
    FakeLoki loki;
    loki.add_stream("{host=\"n1\", source=\"kernel\"}", {{"host", "n1"}}, {{kStart, "x"}});
    loki.fail_next(2, 503);  // busy twice, then answers
    auto busy = fetch_loki_logs(config(loki), {"n1"}, kStart, kEnd, dir.path());
    EXPECT_EQ((*coverage_of(busy, "n1"))["status"], "ok");
    EXPECT_EQ(loki.requests(), 3);
    loki.fail_next(10, 503);
    auto down = fetch_loki_logs(config(loki), {"n1"}, kStart, kEnd, dir.path());
    EXPECT_EQ((*coverage_of(down, "n1"))["status"], "unreachable");
  }
  LokiConfig nowhere;
  nowhere.url = "http://127.0.0.1:1";
  nowhere.timeout_s = 2;
  nowhere.selectors = {{"kernel", "{host=\"%n\"}"}};
  auto gone = fetch_loki_logs(nowhere, {"n1", "n2", "n3"}, kStart, kEnd, dir.path());
  EXPECT_EQ((*coverage_of(gone, "n1"))["status"], "unreachable");
  // Asked once, not once per node: the others are unreachable without a wait.
  EXPECT_EQ(gone.requests, 1);
  EXPECT_EQ((*coverage_of(gone, "n3"))["status"], "unreachable");
  EXPECT_NE((*coverage_of(gone, "n3"))["detail"].get<std::string>().find("not asked"),
            std::string::npos);
}

TEST(LokiFetch, TooManyEntriesInOneNanosecondIsPartial) {
  FakeLoki loki;
  std::vector<LokiEntry> same;
  for (int i = 0; i < 5; ++i) same.push_back({kStart, "line " + std::to_string(i)});
  loki.add_stream("{host=\"n1\", source=\"kernel\"}", {{"host", "n1"}}, same);
  ScratchDirectory dir{"loki"};
  auto fetch = fetch_loki_logs(config(loki, 2), {"n1"}, kStart, kEnd, dir.path());
  const auto cov = *coverage_of(fetch, "n1");
  EXPECT_EQ(cov["status"], "partial");
  EXPECT_NE(cov["detail"].get<std::string>().find("share one time stamp"), std::string::npos);
  EXPECT_EQ(lines_of(dir.path() / "nodes/n1/kernel.loki").size(), 2u);
}

TEST(LokiConfigFile, ErrorsNameTheLine) {
  auto parse = [](const std::string& text) {
    return parse_loki_config(YAML::Load(text), "agent.yaml");
  };
  LokiConfig c = parse("url: http://loki:3100/\nselectors:\n  kernel: '{host=\"%n\"}'\n");
  EXPECT_EQ(c.url, "http://loki:3100");
  try {
    parse("url: http://loki:3100\nselectors:\n  dmesg: '{host=\"%n\"}'\n");
    FAIL() << "an unknown kind was accepted";
  } catch (const ff::sources::LokiConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("agent.yaml:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse("url: loki:3100\nselectors: {kernel: '{a=\"b\"}'}\n"),
               ff::sources::LokiConfigError);
  EXPECT_THROW(parse("url: http://loki:3100\n"), ff::sources::LokiConfigError);
}

}  // namespace
