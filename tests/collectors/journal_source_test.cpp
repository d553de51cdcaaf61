// The journal as a source (sources/journal_reader.h): journal files the test
// writes in the Journal Export Format, turned into real journal files by
// systemd-journal-remote, then cut to a window by the collector.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "collectors/config/node_config.h"
#include "collectors/sources/journal_reader.h"
#include "collectors/sources/log_collector.h"
#include "collectors/sources/tail_copy.h"
#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;
using testing::at;
using testing::read_file;
using testing::write_file;

// Debian's systemd-journal-remote puts it here (usrmerge or not).
std::string journal_remote() {
  for (const char* p :
       {"/lib/systemd/systemd-journal-remote", "/usr/lib/systemd/systemd-journal-remote"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

struct Entry {
  TimeUs t;
  std::vector<std::pair<std::string, std::string>> fields;
};

Entry kernel(TimeUs t, const std::string& message) {
  return {t,
          {{"_TRANSPORT", "kernel"},
           {"_HOSTNAME", "n1"},
           {"SYSLOG_IDENTIFIER", "kernel"},
           {"MESSAGE", message}}};
}

Entry unit(TimeUs t, const std::string& unit_name, const std::string& ident, const std::string& pid,
           const std::string& message) {
  return {t,
          {{"_TRANSPORT", "stdout"},
           {"_HOSTNAME", "n1"},
           {"SYSLOG_IDENTIFIER", ident},
           {"_PID", pid},
           {"_SYSTEMD_UNIT", unit_name},
           {"MESSAGE", message}}};
}

// https://systemd.io/JOURNAL_EXPORT_FORMATS/: "FIELD=value\n", or for a
// value with a newline or other control bytes "FIELD\n", its size as a
// little-endian 64-bit integer, the bytes, "\n". A blank line ends an entry.
std::string export_format(const std::vector<Entry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    out += "__REALTIME_TIMESTAMP=" + std::to_string(e.t) + "\n";
    out += "__MONOTONIC_TIMESTAMP=" + std::to_string(e.t % 1000000000000LL) + "\n";
    out += "_BOOT_ID=0123456789abcdef0123456789abcdef\n";
    for (const auto& [name, value] : e.fields) {
      bool binary = false;
      for (char c : value) binary = binary || (static_cast<unsigned char>(c) < 0x20 && c != '\t');
      if (!binary) {
        out += name + "=" + value + "\n";
        continue;
      }
      out += name + "\n";
      std::uint64_t size = value.size();
      for (int i = 0; i < 8; ++i) out += static_cast<char>((size >> (8 * i)) & 0xff);
      out += value + "\n";
    }
    out += "\n";
  }
  return out;
}

class JournalSource : public ::testing::Test {
 protected:
  TimeWindow window{at("2026-11-02T10:00:00Z"), at("2026-11-02T11:00:00Z")};
  TimeContext ctx;
  ScratchDirectory dir{"collector"};
  std::filesystem::path journal_dir = dir / "journal";

  void SetUp() override {
    if (journal_remote().empty())
      GTEST_SKIP() << "systemd-journal-remote is not installed (Debian package "
                      "systemd-journal-remote): no way to write a journal file";
    ctx.reference = window.begin;
  }

  // Pipes the entries to systemd-journal-remote, which writes
  // journal_dir/<name>.journal.
  void write_journal(const std::vector<Entry>& entries, const std::string& name = "x") {
    std::filesystem::create_directories(journal_dir);
    write_file(dir / (name + ".export"), export_format(entries));
    std::string cmd = journal_remote() +
                      " --output=" + (journal_dir / (name + ".journal")).string() + " - < " +
                      (dir / (name + ".export")).string() + " 2>" + (dir / "remote.err").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir / "remote.err");
  }

  LogCollection collect(const std::string& kind, std::vector<std::string> entries) {
    SourceGlobs source{kind, std::move(entries), journal_dir.string()};
    return collect_log_kind(source, "n1", window, ctx, dir / "bundle");
  }

  std::string bundle_file(const std::string& kind) {
    return read_file(dir / "bundle" / "nodes" / "n1" / (kind + "-journal"));
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// A night on a node without syslog: every kind finds its own entries, and
// nothing outside the window.
std::vector<Entry> night() {
  return {
      kernel(at("2026-11-02T09:59:59.999999Z"), "NVRM: Xid (PCI:0000:3b:00): 13, before"),
      unit(at("2026-11-02T10:00:00Z"), "slurmd.service", "slurmd", "4242",
           "slurmd: launching job 77"),
      kernel(at("2026-11-02T10:41:07.512004Z"),
             "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
             "the bus."),
      unit(at("2026-11-02T10:41:08Z"), "nvidia-fabricmanager.service", "nv-fabricmanager", "900",
           "[ERROR] [tid 903] NVLink training failed"),
      {at("2026-11-02T10:45:00Z"),
       {{"_TRANSPORT", "journal"},
        {"_HOSTNAME", "n1"},
        {"SYSLOG_IDENTIFIER", "systemd"},
        {"_PID", "1"},
        {"_SYSTEMD_UNIT", "init.scope"},
        {"UNIT", "slurmd.service"},
        {"MESSAGE", "slurmd.service: Main process exited, code=killed, status=9/KILL"}}},
      {at("2026-11-02T10:50:00Z"),
       {{"_TRANSPORT", "syslog"},
        {"_HOSTNAME", "n1"},
        {"SYSLOG_IDENTIFIER", "CRON"},
        {"SYSLOG_PID", "31"},
        {"MESSAGE", "(root) CMD (true)"}}},
      kernel(at("2026-11-02T11:00:00Z"), "last microsecond of the window"),
      kernel(at("2026-11-02T11:00:00.000001Z"), "NVRM: Xid (PCI:0000:3b:00): 48, after"),
  };
}

TEST_F(JournalSource, KernelMatchKeepsTheWindowsKernelEntriesInShortIsoForm) {
  write_journal(night());
  LogCollection c = collect("kernel", {"journal:kernel"});
  EXPECT_EQ(c.coverage.status_text(), "ok") << c.coverage.detail;
  EXPECT_EQ(c.coverage.lines, 2u);
  ASSERT_EQ(c.files.size(), 1u);
  EXPECT_EQ(c.files[0].rel, "nodes/n1/kernel-journal");
  EXPECT_EQ(c.files[0].collector, "kernel");
  EXPECT_EQ(bundle_file("kernel"),
            "2026-11-02T10:41:07.512004+00:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, "
            "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
            "2026-11-02T11:00:00.000000+00:00 n1 kernel: last microsecond of the window\n");
}

TEST_F(JournalSource, UnitMatchTakesTheUnitAndSystemdsLinesAboutIt) {
  write_journal(night());
  LogCollection c = collect("slurmd", {"journal:unit=slurmd.service"});
  EXPECT_EQ(c.coverage.status_text(), "ok") << c.coverage.detail;
  EXPECT_EQ(bundle_file("slurmd"),
            "2026-11-02T10:00:00.000000+00:00 n1 slurmd[4242]: slurmd: launching job 77\n"
            "2026-11-02T10:45:00.000000+00:00 n1 systemd[1]: slurmd.service: Main process "
            "exited, code=killed, status=9/KILL\n");
  // A unit name without a suffix is a service, as for journalctl -u.
  std::filesystem::remove_all(dir / "bundle");
  LogCollection fm = collect("fabricmanager", {"journal:unit=nvidia-fabricmanager"});
  EXPECT_EQ(fm.coverage.lines, 1u);
  EXPECT_EQ(bundle_file("fabricmanager"),
            "2026-11-02T10:41:08.000000+00:00 n1 nv-fabricmanager[900]: [ERROR] [tid 903] NVLink "
            "training failed\n");
}

TEST_F(JournalSource, AllTakesEverythingInTheWindowOnceAndIdentifierSelects) {
  write_journal(night());
  // "all" with another selection: still every entry, each once.
  LogCollection c = collect("syslog", {"journal:all", "journal:kernel"});
  EXPECT_EQ(c.coverage.lines, 6u) << bundle_file("syslog");
  std::vector<std::string> lines = lines_of(bundle_file("syslog"));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[4], "2026-11-02T10:50:00.000000+00:00 n1 CRON[31]: (root) CMD (true)");
  for (const auto& l : lines) {
    EXPECT_EQ(l.find("before"), std::string::npos);
    EXPECT_EQ(l.find("after"), std::string::npos);
  }
  std::filesystem::remove_all(dir / "bundle");
  // Two selections: either one, in time order.
  LogCollection two = collect("syslog", {"journal:identifier=CRON", "journal:_PID=900"});
  EXPECT_EQ(two.coverage.lines, 2u);
  lines = lines_of(bundle_file("syslog"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("nv-fabricmanager[900]"), std::string::npos);
  EXPECT_NE(lines[1].find("CRON[31]"), std::string::npos);
}

TEST_F(JournalSource, NothingInTheWindowIsEmpty) {
  write_journal({kernel(at("2026-11-02T09:00:00Z"), "early"),
                 unit(at("2026-11-02T10:30:00Z"), "slurmd.service", "slurmd", "1", "not kernel"),
                 kernel(at("2026-11-02T12:00:00Z"), "late")});
  LogCollection c = collect("kernel", {"journal:kernel"});
  EXPECT_EQ(c.coverage.status_text(), "empty") << c.coverage.detail;
  EXPECT_EQ(c.coverage.lines, 0u);
  EXPECT_TRUE(c.files.empty());
  EXPECT_FALSE(std::filesystem::exists(dir / "bundle/nodes/n1/kernel-journal"));
  // Read over the whole window: a kernel message absent from it was not
  // logged, which is what sets a forged copy in syslog aside.
  EXPECT_EQ(to_json(c.coverage)["covers_from"], "2026-11-02T10:00:00Z");
  EXPECT_EQ(to_json(c.coverage)["covers_until"], "2026-11-02T11:00:00Z");
  EXPECT_EQ(to_json(c.coverage)["covers_until"], "2026-11-02T11:00:00Z");
}

TEST_F(JournalSource, NoJournalIsMissingNeverEmpty) {
  // No directory at all.
  LogCollection c = collect("kernel", {"journal:kernel"});
  EXPECT_EQ(c.coverage.status_text(), "missing");
  EXPECT_NE(c.coverage.detail.find("no journal directory " + journal_dir.string()),
            std::string::npos)
      << c.coverage.detail;
  // A directory without journal files.
  std::filesystem::create_directories(journal_dir);
  c = collect("kernel", {"journal:kernel"});
  EXPECT_EQ(c.coverage.status_text(), "missing");
  EXPECT_NE(c.coverage.detail.find("no journal file"), std::string::npos) << c.coverage.detail;
  EXPECT_FALSE(c.coverage.covers_until.has_value());  // missing vouches for nothing
  // A journal rotated away before the job: no evidence, not a quiet node.
  write_journal({kernel(at("2026-11-02T12:00:00Z"), "later")});
  c = collect("kernel", {"journal:kernel"});
  EXPECT_EQ(c.coverage.status_text(), "missing");
  EXPECT_NE(c.coverage.detail.find("after the window"), std::string::npos) << c.coverage.detail;
}

TEST_F(JournalSource, JournalBeginningInsideTheWindowSaysSo) {
  write_journal({kernel(at("2026-11-02T10:30:00Z"), "first entry kept")});
  LogCollection c = collect("kernel", {"journal:kernel"});
  EXPECT_EQ(c.coverage.status_text(), "ok");
  EXPECT_NE(c.coverage.detail.find("begins at 2026-11-02T10:30:00.000000+00:00, inside the window"),
            std::string::npos)
      << c.coverage.detail;
  EXPECT_EQ(to_json(c.coverage)["covers_from"],
            "2026-11-02T10:30:00Z");  // not before its first entry
  EXPECT_EQ(to_json(c.coverage)["covers_until"], "2026-11-02T11:00:00Z");
}

// (Files in syslog: the kernel kind takes the kernel's own records only.)
TEST_F(JournalSource, FilesAndJournalInOneKind) {
  write_journal(night());
  write_file(dir / "logs/kern.log", "2026-11-02T10:20:00+00:00 n1 kernel: from the file\n");
  LogCollection c = collect("syslog", {(dir / "logs/kern.log*").string(), "journal:kernel"});
  EXPECT_EQ(c.coverage.status_text(), "ok");
  EXPECT_EQ(c.coverage.lines, 3u);
  ASSERT_EQ(c.files.size(), 2u);
  EXPECT_EQ(c.files[0].rel, "nodes/n1/syslog");
  EXPECT_EQ(c.files[1].rel, "nodes/n1/syslog-journal");
  EXPECT_EQ(c.coverage.detail, "1 file(s) and the journal read");
}

TEST_F(JournalSource, HugeMessageIsCutAtTheLineLimit) {
  std::string huge(3 * kMaxLineBytes, 'x');
  write_journal({kernel(at("2026-11-02T10:10:00Z"), "NVRM: Xid 79 " + huge),
                 kernel(at("2026-11-02T10:10:01Z"), "the next entry, whole")});
  LogCollection c = collect("kernel", {"journal:kernel"});
  EXPECT_EQ(c.coverage.status_text(), "ok");
  EXPECT_EQ(c.coverage.lines, 2u);
  EXPECT_NE(c.coverage.detail.find("1 journal line(s) cut"), std::string::npos)
      << c.coverage.detail;
  std::vector<std::string> lines = lines_of(bundle_file("kernel"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), kMaxLineBytes);
  EXPECT_EQ(lines[0].rfind("2026-11-02T10:10:00.000000+00:00 n1 kernel: NVRM: Xid 79 xxx", 0), 0u);
  EXPECT_EQ(lines[1], "2026-11-02T10:10:01.000000+00:00 n1 kernel: the next entry, whole");
}

TEST_F(JournalSource, BinaryMessagesAreEscapedAndLinesContinue) {
  const char raw[] = "GPU\0fault \xff\xfe caf\xc3\xa9\r\nsecond line\n";
  std::string blob(raw, sizeof raw - 1);
  write_journal({unit(at("2026-11-02T10:20:00Z"), "slurmd.service", "slurmd", "7", blob),
                 unit(at("2026-11-02T10:20:01Z"), "slurmd.service", "slurmd", "7", "after")});
  LogCollection c = collect("slurmd", {"journal:unit=slurmd.service"});
  EXPECT_EQ(c.coverage.status_text(), "ok");
  EXPECT_EQ(c.coverage.lines, 2u);
  std::string prefix = "2026-11-02T10:20:00.000000+00:00 n1 slurmd[7]: ";
  EXPECT_EQ(bundle_file("slurmd"), prefix + "GPU\\x00fault \\xff\\xfe caf\xc3\xa9\\x0d\n" +
                                       std::string(prefix.size(), ' ') +
                                       "second line\n"
                                       "2026-11-02T10:20:01.000000+00:00 n1 slurmd[7]: after\n");
}

TEST_F(JournalSource, EntriesFromSeveralJournalFilesInterleave) {
  std::vector<Entry> a, b;
  for (int i = 0; i < 5; ++i) {
    std::string n(1, static_cast<char>('0' + i));
    a.push_back(kernel(window.begin + (2 * i) * 60 * kUsPerSecond, "a" + n));
    b.push_back(kernel(window.begin + (2 * i + 1) * 60 * kUsPerSecond, "b" + n));
  }
  write_journal(a, "a");
  write_journal(b, "b");
  collect("kernel", {"journal:kernel"});
  std::vector<std::string> lines = lines_of(bundle_file("kernel"));
  ASSERT_EQ(lines.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    std::string expected = ": " + std::string(1, i % 2 ? 'b' : 'a') + std::to_string(i / 2);
    EXPECT_TRUE(lines[i].ends_with(expected)) << lines[i] << " is not " << expected;
  }
}

TEST(JournalConfig, EntriesSitNextToGlobsAndBadOnesAreRefused) {
  ScratchDirectory dir{"collector"};
  write_file(dir / "node.yaml",
             "journal_directory: /var/log/journal/remote-%n\n"
             "sources:\n"
             "  kernel: [/dev/kmsg, \"journal:kernel\"]\n"
             "  slurmd: journal:unit=slurmd.service\n"
             "  syslog: [/var/log/kern.log*, journal:all]\n");
  NodeConfig config = load_node_config(dir / "node.yaml", "n7");
  EXPECT_EQ(config.journal_directory, "/var/log/journal/remote-n7");
  ASSERT_EQ(config.sources.size(), 3u);
  EXPECT_EQ(config.sources[0].globs, (std::vector<std::string>{"/dev/kmsg", "journal:kernel"}));
  EXPECT_EQ(config.sources[1].globs, (std::vector<std::string>{"journal:unit=slurmd.service"}));
  EXPECT_EQ(config.sources[2].globs,
            (std::vector<std::string>{"/var/log/kern.log*", "journal:all"}));
  for (const auto& s : config.sources) EXPECT_EQ(s.journal_directory, "/var/log/journal/remote-n7");

  write_file(dir / "bad.yaml", "sources:\n  kernel:\n    - journal:kernel\n    - journal:Unit=x\n");
  try {
    load_node_config(dir / "bad.yaml", "n7");
    FAIL() << "a mistyped journal entry was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("journal:Unit=x"), std::string::npos) << e.what();
  }
}

TEST(JournalConfig, EntrySyntax) {
  std::string error;
  auto unit = parse_journal_entry("journal:unit=slurmd", error);
  ASSERT_TRUE(unit);
  ASSERT_EQ(unit->any_of.size(), 2u);
  EXPECT_EQ(unit->any_of[0], JournalConjunction{"_SYSTEMD_UNIT=slurmd.service"});
  EXPECT_EQ(unit->any_of[1], (JournalConjunction{"_PID=1", "UNIT=slurmd.service"}));
  EXPECT_EQ(parse_journal_entry("journal:kernel", error)->any_of[0],
            JournalConjunction{"_TRANSPORT=kernel"});
  EXPECT_TRUE(parse_journal_entry("journal:all", error)->any_of.empty());
  EXPECT_EQ(parse_journal_entry("journal:identifier=kernel", error)->any_of[0],
            JournalConjunction{"SYSLOG_IDENTIFIER=kernel"});
  for (const char* bad : {"journal:", "journal:unit=", "journal:kern", "journal:lower=x",
                          "journal:9X=y", "journal:=x"}) {
    EXPECT_FALSE(parse_journal_entry(bad, error)) << bad;
    EXPECT_NE(error.find(bad), std::string::npos);
  }
}

// The point of it all: the engine reads a bundle cut from the journal and
// finds the fault in it.
TEST_F(JournalSource, TheEngineFindsAnXidReadFromTheJournal) {
  write_journal(night());
  std::filesystem::path incident = dir / "bundle";
  LogCollection k = collect("kernel", {"journal:kernel"});
  LogCollection s = collect("slurmd", {"journal:unit=slurmd.service"});
  ASSERT_EQ(k.coverage.status_text(), "ok");
  nlohmann::json job = {{"schema", "firstfault.incident/v1"},
                        {"job_id", "77"},
                        {"state", "FAILED"},
                        {"exit_code", "1:0"},
                        {"start_time", "2026-11-02T10:05:00Z"},
                        {"end_time", "2026-11-02T10:55:00Z"},
                        {"timezone", "UTC"},
                        {"nodes", {"n1"}},
                        {"ranks",
                         {{{"rank", 0},
                           {"node", "n1"},
                           {"local_rank", 0},
                           {"gpus", {"00000000:3B:00.0"}},
                           {"exit_code", "0:6"}}}},
                        {"coverage", {to_json(k.coverage), to_json(s.coverage)}}};
  write_file(incident / "job.json", job.dump(2));
  std::string cmd = std::string(FF_BINARY) + " analyze --format json " + incident.string() + " > " +
                    (dir / "diagnosis.json").string() + " 2>" + (dir / "analyze.err").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir / "analyze.err");
  nlohmann::json d = nlohmann::json::parse(read_file(dir / "diagnosis.json"));
  ASSERT_FALSE(d["root_causes"].empty()) << d.dump(2);
  EXPECT_EQ(d["root_causes"][0]["event"], "xid") << d.dump(2);
  EXPECT_EQ(d["root_causes"][0]["code"], "79");
  EXPECT_EQ(d["root_causes"][0]["node"], "n1");
  EXPECT_EQ(d["root_causes"][0]["time"], "2026-11-02T10:41:07.512004Z");
  bool from_journal = false;
  for (const auto& e : d["evidence"])
    from_journal =
        from_journal || (e["source"] == "nodes/n1/kernel-journal" && e["event"] == "xid");
  EXPECT_TRUE(from_journal) << d["evidence"].dump(2);
}

}  // namespace
}  // namespace ff::collect
