// Unit tests for extract/parallel_scan: whatever the thread count and
// wherever large files are cut, the events arrive in read order with their
// file's line numbers, and every file's statistics are those of a reading
// on one thread.
#include "engine/extract/parallel_scan.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rules/compiled_rules.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace ff {
namespace {

namespace fs = std::filesystem;
using ff::test_support::ScratchDirectory;

const CompiledRules& rules() {
  static std::shared_ptr<const CompiledRules> r = [] {
    std::vector<RuleError> errors;
    auto loaded = load_rules(true, {}, errors);
    if (!errors.empty()) throw std::runtime_error(errors.front().to_string());
    return loaded;
  }();
  return *r;
}

class ParallelScanTest : public ::testing::Test {
 protected:
  // A kernel log of `lines` lines with an Xid every `every` lines; every
  // `untimed`-th Xid line has no timestamp (its time bounds come from the
  // lines around it, across any boundary).
  ScanFile kernel_log(const std::string& node, int lines, int every, int untimed = 0) {
    fs::path p = dir_ / (node + "-kernel.log");
    std::ofstream out(p, std::ios::binary);
    for (int i = 1; i <= lines; ++i) {
      bool xid = i % every == 0;
      bool timed = !(xid && untimed && (i / every) % untimed == 0);
      if (timed)
        out << "2026-11-02T10:" << (i / 60) % 60 / 10 << (i / 60) % 10 << ":" << (i % 60) / 10
            << i % 10 << ".000000+00:00 " << node << " kernel: ";
      if (xid)
        out << "NVRM: Xid (PCI:0000:5d:00): " << (i % 3 ? 79 : 48) << ", pid=" << i
            << ", name=python3, line " << i << "\n";
      else
        out << "pcieport 0000:00:01.0: noise " << i << "\n";
    }
    return {{p, "nodes/" + node + "/kernel.log", node, "kernel"}, TimeContext{}};
  }

  ScratchDirectory dir_{"pscan"};
};

struct Seen {
  std::vector<std::string> events;  // file, line, code, time bounds: all that must not move
  std::vector<std::string> files;   // per file: its statistics
};

UniqueFd open_plain(const SourceFile& f, std::string& error) {
  UniqueFd fd(::open(f.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) error = "cannot open";
  return fd;
}

Seen scan(const std::vector<ScanFile>& files, unsigned jobs, std::uint64_t split) {
  Seen seen;
  EventExtractor x(rules());
  std::size_t last_file = 0;
  scan_files(
      files, x, open_plain, {jobs, split},
      [&](std::size_t i, Event&& e) {
        EXPECT_GE(i, last_file) << "events out of file order";
        last_file = i;
        seen.events.push_back(std::to_string(i) + ":" + std::to_string(e.line) + " " +
                              e.field("code") + " " + e.field("prev_line_time") + " " +
                              e.field("next_line_time") + " " + e.text);
      },
      [&](std::size_t i, const ExtractStats& st) {
        seen.files.push_back(std::to_string(i) + " lines " + std::to_string(st.read.lines) +
                             " events " + std::to_string(st.events) + " first " +
                             (st.first_time ? std::to_string(*st.first_time) : "-") + " last " +
                             (st.last_time ? std::to_string(*st.last_time) : "-") + " error '" +
                             st.read.error + "'");
      });
  return seen;
}

TEST_F(ParallelScanTest, SameEventsInTheSameOrderForEveryThreadCountAndSplit) {
  std::vector<ScanFile> files;
  for (int n = 0; n < 6; ++n)
    files.push_back(kernel_log("gpu-" + std::to_string(n), 3000 + n * 500, 7 + n, 3));
  Seen one = scan(files, 1, 0);
  ASSERT_GT(one.events.size(), 2000u);
  ASSERT_EQ(one.files.size(), files.size());
  for (unsigned jobs : {1u, 2u, 3u, 8u, 16u})
    for (std::uint64_t split :
         {std::uint64_t{0}, std::uint64_t{4096}, std::uint64_t{50000}, std::uint64_t{333}}) {
      Seen other = scan(files, jobs, split);
      EXPECT_EQ(other.events, one.events) << jobs << " threads, split " << split;
      EXPECT_EQ(other.files, one.files) << jobs << " threads, split " << split;
    }
}

// Far more events than the hand-over buffers hold, in many small ranges:
// threads wait for the caller instead of buffering, and nothing is lost.
TEST_F(ParallelScanTest, AFloodOfEventsIsHandedOverInOrderWithoutLoss) {
  std::vector<ScanFile> files{kernel_log("flood", 60000, 1), kernel_log("quiet", 100, 50)};
  Seen one = scan(files, 1, 0);
  ASSERT_EQ(one.events.size(), 60002u);
  Seen many = scan(files, 4, 8192);
  EXPECT_EQ(many.events, one.events);
  EXPECT_EQ(many.files, one.files);
}

TEST_F(ParallelScanTest, AFileThatCannotBeOpenedIsReportedAndTheOthersRead) {
  std::vector<ScanFile> files{kernel_log("a", 100, 10),
                              {{dir_ / "missing", "nodes/b/kernel.log", "b", "kernel"}, {}},
                              kernel_log("c", 100, 10)};
  Seen s = scan(files, 3, 0);
  ASSERT_EQ(s.files.size(), 3u);
  EXPECT_NE(s.files[1].find("error 'cannot open'"), std::string::npos) << s.files[1];
  EXPECT_EQ(s.events.size(), 20u);
}

TEST_F(ParallelScanTest, AGzipFileIsNeverSplit) {
  ScanFile plain = kernel_log("z", 5000, 10);
  std::string text = ff::test_support::read_file(plain.file.path);
  fs::path gz = dir_ / "kernel.log.1.gz";
  gzFile out = gzopen(gz.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(out);
  ScanFile zipped{{gz, "nodes/z/kernel.log.1.gz", "z", "kernel"}, {}};
  Seen whole = scan({plain}, 1, 0);
  Seen split = scan({zipped}, 4, 1024);
  EXPECT_EQ(split.events, whole.events);
  EXPECT_EQ(split.files, whole.files);
}

TEST(SplitRanges, FixedMultiplesTheLastOpenEnded) {
  EXPECT_EQ(split_ranges(100, 0).size(), 1u);
  EXPECT_EQ(split_ranges(100, 100).size(), 1u);
  auto r = split_ranges(250, 100);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].begin, 0u);
  EXPECT_EQ(r[0].end, 100u);
  EXPECT_EQ(r[2].begin, 200u);
  EXPECT_EQ(r[2].end, ByteRange{}.end);
}

}  // namespace
}  // namespace ff
