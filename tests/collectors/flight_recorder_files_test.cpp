// PyTorch flight-recorder dumps gathered into the bundle as
// nodes/<node>/flight_recorder/<global-rank>, by the job-output rules: the
// collector runs as root in a directory the job's user chose, so only regular
// files of that user are taken, a symlink planted in place of a dump is never
// followed, and the directory must be one no other user can put files in.
// Real files in a scratch directory, owners set with chown (root needed).
#include "collectors/sources/flight_recorder_files.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/config/node_config.h"
#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;

constexpr uid_t kJobUser = 65534;  // nobody

class FlightRecorderFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files to another user";
    std::filesystem::create_directories(dumps);
    ASSERT_EQ(::chown((dir / "fr").c_str(), kJobUser, kJobUser), 0);
    ASSERT_EQ(::chown(dumps.c_str(), kJobUser, kJobUser), 0);
    ::chmod(dumps.c_str(), 0755);
  }
  // A dump of the job's user, `bytes` long, its content naming its rank.
  void dump(int rank, std::size_t bytes = 64) {
    std::string content = "\x80\x02}rank " + std::to_string(rank);
    content.resize(bytes, 'x');
    auto path = dumps / ("rank_" + std::to_string(rank));
    testing::write_file(path, content);
    ASSERT_EQ(::chown(path.c_str(), kJobUser, kJobUser), 0);
  }
  FlightRecorderGather gather(std::optional<std::set<int>> ranks = std::nullopt,
                              std::size_t max_files = 64, std::uint64_t max_bytes = 1 << 20) {
    FlightRecorderSettings s;
    s.pattern = (dir / "fr/%j/rank_%r").string();
    s.max_files = max_files;
    s.max_bytes = max_bytes;
    return gather_flight_recorder(s, "4242", "n1", kJobUser, ranks, dir / "b");
  }
  std::filesystem::path out(int rank) {
    return dir / "b/nodes/n1/flight_recorder" / std::to_string(rank);
  }
  std::vector<std::string> rels(const FlightRecorderGather& g) {
    std::vector<std::string> r;
    for (const auto& f : g.files) r.push_back(f.rel);
    return r;
  }

  ScratchDirectory dir{"collector"};
  std::filesystem::path dumps = dir / "fr/4242";
};

TEST_F(FlightRecorderFiles, EachRanksDumpIsCopiedWholeUnderItsGlobalRank) {
  dump(0);
  dump(17, 3000);
  // Not dumps of this pattern: another prefix, a leading zero, a suffix.
  testing::write_file(dumps / "other_3", "x");
  testing::write_file(dumps / "rank_05", "x");
  testing::write_file(dumps / "rank_6.tmp", "x");
  FlightRecorderGather g = gather();
  ASSERT_TRUE(g.coverage);
  EXPECT_EQ(g.coverage->collector, "flight_recorder");
  EXPECT_EQ(g.coverage->node, "n1");
  EXPECT_EQ(g.coverage->status_text(), "ok") << g.coverage->detail;
  EXPECT_NE(g.coverage->detail.find("2 dump(s) (ranks 0, 17)"), std::string::npos)
      << g.coverage->detail;
  EXPECT_EQ(rels(g), (std::vector<std::string>{"nodes/n1/flight_recorder/0",
                                               "nodes/n1/flight_recorder/17"}));
  for (const auto& f : g.files) EXPECT_FALSE(f.cuttable) << f.rel;
  EXPECT_EQ(testing::read_file(out(17)), testing::read_file(dumps / "rank_17"));
  EXPECT_EQ(g.files[1].bytes, 3000u);
}

// %u is the job's user's name, as sites lay out scratch (/scratch/%u/...).
TEST_F(FlightRecorderFiles, UserNameAndNodeAreExpanded) {
  struct passwd* pw = ::getpwuid(kJobUser);
  if (!pw) GTEST_SKIP() << "uid " << kJobUser << " has no name here";
  std::filesystem::path user_dir = dir / "fr" / pw->pw_name / "n1";
  std::filesystem::create_directories(user_dir);
  testing::write_file(user_dir / "4242-rank_2", "dump");
  ASSERT_EQ(::chown((user_dir / "4242-rank_2").c_str(), kJobUser, kJobUser), 0);
  FlightRecorderSettings s;
  s.pattern = (dir / "fr/%u/%n/%j-rank_%r").string();
  FlightRecorderGather g =
      gather_flight_recorder(s, "4242", "n1", kJobUser, std::nullopt, dir / "b");
  EXPECT_EQ(g.coverage->status_text(), "ok") << g.coverage->detail;
  EXPECT_EQ(rels(g), (std::vector<std::string>{"nodes/n1/flight_recorder/2"}));
  // No user known: nothing is looked for under someone's name.
  std::filesystem::remove_all(dir / "b");
  g = gather_flight_recorder(s, "4242", "n1", std::nullopt, std::nullopt, dir / "b");
  EXPECT_EQ(g.coverage->status_text(), "error") << g.coverage->detail;
  EXPECT_TRUE(g.files.empty());
}

TEST_F(FlightRecorderFiles, OnlyThisNodesRanksWhenTheSpoolNamesThem) {
  for (int r : {0, 1, 2, 3}) dump(r);
  FlightRecorderGather g = gather(std::set<int>{2, 3});
  EXPECT_EQ(g.coverage->status_text(), "ok") << g.coverage->detail;
  EXPECT_EQ(rels(g),
            (std::vector<std::string>{"nodes/n1/flight_recorder/2", "nodes/n1/flight_recorder/3"}));
  EXPECT_NE(g.coverage->detail.find("2 dump(s) of ranks not on this node"), std::string::npos)
      << g.coverage->detail;
}

TEST_F(FlightRecorderFiles, ASymlinkPlantedInPlaceOfADumpIsNotFollowed) {
  testing::write_file(dir / "secret", "root only\n");
  ::chmod((dir / "secret").c_str(), 0600);
  dump(0);
  std::filesystem::create_symlink(dir / "secret", dumps / "rank_1");
  FlightRecorderGather g = gather();
  EXPECT_EQ(g.coverage->status_text(), "partial") << g.coverage->detail;
  EXPECT_NE(g.coverage->detail.find("rank 1: a symbolic link (not followed): not collected"),
            std::string::npos)
      << g.coverage->detail;
  EXPECT_EQ(rels(g), (std::vector<std::string>{"nodes/n1/flight_recorder/0"}));
  EXPECT_FALSE(std::filesystem::exists(out(1)));
}

TEST_F(FlightRecorderFiles, AnotherUsersFileIsRefused) {
  dump(0);
  testing::write_file(dumps / "rank_1", "someone else's");
  ASSERT_EQ(::chown((dumps / "rank_1").c_str(), 12345, 12345), 0);
  FlightRecorderGather g = gather();
  EXPECT_EQ(g.coverage->status_text(), "partial") << g.coverage->detail;
  EXPECT_NE(g.coverage->detail.find("rank 1: owned by uid 12345, not by the job's user"),
            std::string::npos)
      << g.coverage->detail;
  EXPECT_FALSE(std::filesystem::exists(out(1)));
  // Only another user's file: nothing taken is an error, not "partial".
  std::filesystem::remove(dumps / "rank_0");
  std::filesystem::remove_all(dir / "b");
  g = gather();
  EXPECT_EQ(g.coverage->status_text(), "error") << g.coverage->detail;
  EXPECT_TRUE(g.files.empty());
}

// Files planted in a directory another user may write to could be that
// user's doing: refused whole. A sticky directory (/tmp, PyTorch's default)
// lets no one else rename or remove the user's files, and is read.
TEST_F(FlightRecorderFiles, ADirectoryOthersMayWriteToIsRefusedUnlessSticky) {
  dump(0);
  ::chmod(dumps.c_str(), 0777);
  FlightRecorderGather g = gather();
  EXPECT_EQ(g.coverage->status_text(), "error") << g.coverage->detail;
  EXPECT_NE(g.coverage->detail.find("others may write to (mode 0777"), std::string::npos)
      << g.coverage->detail;
  EXPECT_TRUE(g.files.empty());
  ::chmod(dumps.c_str(), 01777);
  g = gather();
  EXPECT_EQ(g.coverage->status_text(), "ok") << g.coverage->detail;
  // A directory of a third user: refused.
  ::chmod(dumps.c_str(), 0755);
  ASSERT_EQ(::chown(dumps.c_str(), 12345, 12345), 0);
  std::filesystem::remove_all(dir / "b");
  g = gather();
  EXPECT_EQ(g.coverage->status_text(), "error") << g.coverage->detail;
  EXPECT_NE(g.coverage->detail.find("neither the job's user"), std::string::npos)
      << g.coverage->detail;
  // A symlink for the directory is followed (scratch is often a link), the
  // files in it still checked.
  ASSERT_EQ(::chown(dumps.c_str(), kJobUser, kJobUser), 0);
  std::filesystem::rename(dumps, dir / "fr/real");
  std::filesystem::create_directory_symlink(dir / "fr/real", dumps);
  std::filesystem::remove_all(dir / "b");
  g = gather();
  EXPECT_EQ(g.coverage->status_text(), "ok") << g.coverage->detail;
}

TEST_F(FlightRecorderFiles, TooManyDumpsKeepTheLowestRanks) {
  for (int r : {9, 3, 12, 0, 5}) dump(r);
  FlightRecorderGather g = gather(std::nullopt, 3);
  EXPECT_EQ(g.coverage->status_text(), "partial") << g.coverage->detail;
  EXPECT_EQ(rels(g),
            (std::vector<std::string>{"nodes/n1/flight_recorder/0", "nodes/n1/flight_recorder/3",
                                      "nodes/n1/flight_recorder/5"}));
  EXPECT_NE(g.coverage->detail.find("2 more over flight_recorder_max_files (3) not collected "
                                    "(ranks 9, 12)"),
            std::string::npos)
      << g.coverage->detail;
}

// The directory is the job user's: 20,000 names in it keep only the lowest
// ranks in memory, and the dumps taken are still the lowest ranks.
TEST_F(FlightRecorderFiles, ADirectoryFloodedWithNamesIsBounded) {
  for (int r : {2, 0, 1}) dump(r);
  for (int r = 100; r < 20100; ++r) {
    auto path = dumps / ("rank_" + std::to_string(r));
    testing::write_file(path, "");
  }
  FlightRecorderGather g = gather(std::nullopt, 3);
  EXPECT_EQ(rels(g),
            (std::vector<std::string>{"nodes/n1/flight_recorder/0", "nodes/n1/flight_recorder/1",
                                      "nodes/n1/flight_recorder/2"}));
  EXPECT_EQ(g.coverage->status_text(), "partial") << g.coverage->detail;
  EXPECT_NE(g.coverage->detail.find("higher ranks over flight_recorder_max_files not looked at"),
            std::string::npos)
      << g.coverage->detail;
  EXPECT_LT(g.coverage->detail.size(), 2000u);
}

// A cut pickle keeps its oldest entries and loses the newest, where a hang
// shows: a dump over the limit is skipped whole and said so.
TEST_F(FlightRecorderFiles, AnOversizeDumpIsSkippedNotCut) {
  dump(0, 100);
  dump(1, 5000);
  FlightRecorderGather g = gather(std::nullopt, 64, 1000);
  EXPECT_EQ(g.coverage->status_text(), "partial") << g.coverage->detail;
  EXPECT_EQ(rels(g), (std::vector<std::string>{"nodes/n1/flight_recorder/0"}));
  EXPECT_NE(g.coverage->detail.find("1 larger than flight_recorder_max_bytes (1000) not "
                                    "collected"),
            std::string::npos)
      << g.coverage->detail;
  EXPECT_FALSE(std::filesystem::exists(out(1)));
}

TEST_F(FlightRecorderFiles, NoDumpOrNoDirectoryIsMissing) {
  FlightRecorderGather g = gather();
  EXPECT_EQ(g.coverage->status_text(), "missing") << g.coverage->detail;
  std::filesystem::remove_all(dumps);
  g = gather();
  EXPECT_EQ(g.coverage->status_text(), "missing") << g.coverage->detail;
  EXPECT_TRUE(g.files.empty());
}

TEST_F(FlightRecorderFiles, UnsetGathersNothingAndReportsNothing) {
  dump(0);
  FlightRecorderSettings s;  // no pattern
  FlightRecorderGather g =
      gather_flight_recorder(s, "4242", "n1", kJobUser, std::nullopt, dir / "b");
  EXPECT_FALSE(g.coverage);
  EXPECT_TRUE(g.files.empty());
  EXPECT_FALSE(std::filesystem::exists(dir / "b"));
}

TEST(FlightRecorderPattern, RankOnlyInTheFileName) {
  std::string error;
  auto p = parse_flight_recorder_pattern("/scratch/%u/fr/%j/rank_%r.pkl", error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->directory, "/scratch/%u/fr/%j");
  EXPECT_EQ(p->before, "rank_");
  EXPECT_EQ(p->after, ".pkl");
  p = parse_flight_recorder_pattern("/tmp/nccl_trace_rank_%r", error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->directory, "/tmp");
  EXPECT_FALSE(parse_flight_recorder_pattern("/fr/%r/dump", error));
  EXPECT_NE(error.find("only in the file name"), std::string::npos) << error;
  EXPECT_FALSE(parse_flight_recorder_pattern("/fr/%r_%r", error));
  EXPECT_FALSE(parse_flight_recorder_pattern("/fr/rank_", error));
  EXPECT_FALSE(parse_flight_recorder_pattern("fr/rank_%r", error));
  EXPECT_FALSE(parse_flight_recorder_pattern("/fr/%x/rank_%r", error));
  EXPECT_FALSE(parse_flight_recorder_pattern("/fr/rank_%%r", error));  // a literal "%r"
}

TEST(FlightRecorderConfig, KeysAreReadAndCheckedWithFileAndLine) {
  ScratchDirectory dir{"collector"};
  testing::write_file(dir / "node.yaml", R"(agent_url: http://head:7421
flight_recorder: /scratch/fr/%j/rank_%r
flight_recorder_max_bytes: 1048576
flight_recorder_max_files: 8
)");
  NodeConfig c = load_node_config(dir / "node.yaml", "n1");
  EXPECT_EQ(c.flight_recorder, "/scratch/fr/%j/rank_%r");
  EXPECT_EQ(c.flight_recorder_max_bytes, 1048576u);
  EXPECT_EQ(c.flight_recorder_max_files, 8u);
  NodeConfig d = load_node_config(dir / "none.yaml", "n1");
  EXPECT_EQ(d.flight_recorder, "");
  EXPECT_EQ(d.flight_recorder_max_bytes, 16u << 20);
  EXPECT_EQ(d.flight_recorder_max_files, 64u);
  auto error = [&](const std::string& text) {
    testing::write_file(dir / "bad.yaml", text);
    try {
      load_node_config(dir / "bad.yaml", "n1");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string file = (dir / "bad.yaml").string();
  std::string e = error("agent_url: http://h:1\nflight_recorder: /fr/%r/x\n");
  EXPECT_EQ(e.rfind(file + ":2: 'flight_recorder' %r (the rank) may stand only", 0), 0u) << e;
  e = error("agent_url: http://h:1\n\nflight_recorder_max_bytes: 0\n");
  EXPECT_EQ(e.rfind(file + ":3: 'flight_recorder_max_bytes' must be 1 to", 0), 0u) << e;
  e = error("flight_recorder_max_bytes: 1000000000\n");
  EXPECT_EQ(e.rfind(file + ":1: 'flight_recorder_max_bytes' must be 1 to", 0), 0u) << e;
  e = error("flight_recorder_max_files: 0\n");
  EXPECT_EQ(e.rfind(file + ":1: 'flight_recorder_max_files' must be at least 1", 0), 0u) << e;
}

}  // namespace
}  // namespace ff::collect
