// agent/server/incident_merger: the incident depends on the set of bundles,
// not on their arrival order; an Epilog bundle beats a step bundle; the
// newest bundle (by the stamp in its id) of a node wins. The job's output
// the agent reads itself (no bundle carried it) is read only when it is a
// regular file of the job's uid, never through a final symlink, never past
// max_job_output_bytes, and what was not read is said in coverage.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "agent/server/incident_merger.h"
#include "tests/support/files.h"
#include "tests/support/growing_file.h"
#include "tests/support/open_watch.h"
#include "tests/support/process_memory.h"
#include "tests/support/scratch_directory.h"

namespace {

namespace fs = std::filesystem;
using namespace ff::agent;
using ff::test_support::read_file;
using ff::test_support::ScratchDirectory;
using ff::test_support::write_file;
using nlohmann::json;

class MergerTest : public ::testing::Test {
 protected:
  BundleRecord bundle(const std::string& node, const std::string& pass, long long stamp,
                      const json& fragment, const std::string& kernel,
                      const std::string& app = "") {
    BundleRecord b;
    b.node = node;
    b.pass = pass;
    b.job_id = "12";
    b.bundle_id = node + "-12-" + pass + "-" + std::to_string(stamp);
    b.path = StateLayout::bundle_rel(key_, b.bundle_id);
    fs::path dir = root_ / b.path;
    write_file(dir / "job.json", fragment.dump());
    write_file(dir / "nodes" / node / "kernel", kernel);
    if (!app.empty()) write_file(dir / "app" / "slurm-12.out", app);
    return b;
  }

  std::vector<BundleRecord> sample() {
    json n1 = {{"job_id", "12"},
               {"nodes", {"n1", "n2", "n10"}},
               {"start_time", "2026-11-30T05:00:02Z"},
               {"ranks", {{{"rank", 1}, {"node", "n1"}}}},
               {"node_info", {{"n1", {{"boot_time", "2026-11-01T00:00:00Z"}}}}},
               {"coverage", {{{"collector", "kernel"}, {"node", "n1"}, {"status", "ok"}}}}};
    json n1_old = n1;
    n1_old["coverage"] = {{{"collector", "kernel"}, {"node", "n1"}, {"status", "error"}}};
    json n2_step = {{"job_id", "12"},
                    {"nodes", {"n1", "n2"}},
                    {"start_time", "2026-11-30T05:00:01Z"},
                    {"ranks", {{{"rank", 0}, {"node", "n2"}}}}};
    json n2_epilog = n2_step;
    n2_epilog["end_time"] = "2026-11-30T06:00:00Z";
    n2_epilog["ranks"] = {{{"rank", 0}, {"node", "n2"}, {"exit_code", "1:0"}}};
    json n10 = {{"job_id", "12"}, {"ranks", {{{"rank", 2}, {"node", "n10"}}}}};
    return {bundle("n1", "step", 200, n1, "n1 new\n", "new output\n"),
            bundle("n1", "step", 100, n1_old, "n1 old\n", "old output\n"),
            bundle("n2", "step", 900, n2_step, "n2 step\n"),
            bundle("n2", "epilog", 300, n2_epilog, "n2 epilog\n"),
            bundle("n10", "step", 50, n10, "n10\n")};
  }

  ScratchDirectory root_{"merger"};
  JobKey key_{"12", 0};
};

TEST_F(MergerTest, ArrivalOrderDoesNotMatter) {
  StateLayout layout(root_.path());
  auto bundles = sample();
  rebuild_incident(layout, key_, bundles, {});
  std::string first = read_file(layout.incident(key_) / "job.json");
  std::reverse(bundles.begin(), bundles.end());
  std::swap(bundles[1], bundles[3]);
  rebuild_incident(layout, key_, bundles, {});
  EXPECT_EQ(read_file(layout.incident(key_) / "job.json"), first);
}

TEST_F(MergerTest, WinnersAndUnions) {
  StateLayout layout(root_.path());
  MergeResult r = rebuild_incident(layout, key_, sample(), {});
  fs::path inc = layout.incident(key_);
  EXPECT_EQ(read_file(inc / "nodes/n1/kernel"), "n1 new\n");     // newest step bundle
  EXPECT_EQ(read_file(inc / "nodes/n2/kernel"), "n2 epilog\n");  // Epilog beats a newer step
  EXPECT_EQ(read_file(inc / "app/slurm-12.out"), "new output\n");
  json job = json::parse(read_file(inc / "job.json"));
  EXPECT_EQ(job["nodes"], json({"n1", "n2", "n10"}));  // union, Slurm's order
  EXPECT_EQ(job["ranks"].size(), 3u);
  EXPECT_EQ(job["ranks"][0]["rank"], 0);
  EXPECT_EQ(job["ranks"][0]["exit_code"], "1:0");
  EXPECT_EQ(job["start_time"], "2026-11-30T05:00:01Z");
  EXPECT_EQ(job["end_time"], "2026-11-30T06:00:00Z");
  EXPECT_EQ(job["coverage"].size(), 1u);
  EXPECT_EQ(job["coverage"][0]["status"], "ok");
  EXPECT_EQ(job["node_info"]["n1"]["boot_time"], "2026-11-01T00:00:00Z");
  EXPECT_EQ(job["job_id"], "12");
  EXPECT_EQ(job["attempt"], 0);
  EXPECT_TRUE(r.problems.empty());
}

// Each node of a job sends a fragment that names every node of the job: N
// fragments held at once would be N^2 names (gigabytes at 4,096 nodes). The
// merge folds one fragment at a time, so its memory follows N.
TEST_F(MergerTest, FragmentsNamingEveryNodeAreFoldedOneAtATime) {
  constexpr int kNodes = 2048;
  std::vector<std::string> names;
  for (int i = kNodes; i >= 1; --i) names.push_back("gpu-" + std::to_string(i));
  std::vector<BundleRecord> bundles;
  for (int i = 0; i < kNodes; ++i) {
    const std::string& node = names[static_cast<std::size_t>(i)];
    json fragment = {{"job_id", "12"},
                     {"nodes", names},
                     {"ranks", {{{"rank", i}, {"node", node}, {"gpus", {"00000000:5D:00.0"}}}}},
                     {"node_info", {{node, {{"boot_time", "2026-11-01T00:00:00Z"}}}}},
                     {"coverage", {{{"collector", "kernel"}, {"node", node}, {"status", "ok"}}}}};
    bundles.push_back(bundle(node, "epilog", 1000 + i, fragment, node + " kernel\n"));
  }
  StateLayout layout(root_.path());
  ASSERT_TRUE(fftest::reset_peak_rss());
  long before = fftest::peak_rss_kib(getpid());
  MergeResult r = rebuild_incident(layout, key_, bundles, {});
  long grown_kib = fftest::peak_rss_kib(getpid()) - before;

  EXPECT_TRUE(r.problems.empty());
  json job = json::parse(read_file(layout.incident(key_) / "job.json"));
  ASSERT_EQ(job["nodes"].size(), static_cast<std::size_t>(kNodes));
  EXPECT_EQ(job["nodes"][0], "gpu-1");
  EXPECT_EQ(job["nodes"][9], "gpu-10");  // node order
  EXPECT_EQ(job["nodes"][kNodes - 1], "gpu-2048");
  EXPECT_EQ(job["ranks"].size(), static_cast<std::size_t>(kNodes));
  EXPECT_EQ(job["node_info"].size(), static_cast<std::size_t>(kNodes));
  EXPECT_EQ(job["coverage"].size(), static_cast<std::size_t>(kNodes));
  EXPECT_EQ(read_file(layout.incident(key_) / "nodes/gpu-77/kernel"), "gpu-77 kernel\n");
  // All fragments at once hold 2048^2 names: about 256 MiB. One at a time:
  // the merged job.json and one fragment, a few MiB.
  if (!FF_UNDER_ADDRESS_SANITIZER) {
    EXPECT_LT(grown_kib, 48 * 1024);
  }
}

// A stored bundle whose node is not a node name (the upload refuses one; a
// store filled otherwise may not have) adds no directory for it, inside the
// incident or out of it.
TEST_F(MergerTest, ABundleNodeThatIsNotANodeNameIsNoDirectory) {
  StateLayout layout(root_.path());
  auto bundles = sample();
  BundleRecord forged = bundle("n3", "step", 400, json{{"job_id", "12"}}, "");
  forged.node = "../../../escaped";
  write_file(root_ / forged.path / "nodes" / forged.node / "kernel", "forged\n");
  bundles.push_back(forged);
  MergeResult r = rebuild_incident(layout, key_, bundles, {});
  // Where "<incident>/nodes/../../../escaped" would have led.
  fs::path outside = (layout.job(key_) / "incident.new/nodes" / forged.node).lexically_normal();
  ASSERT_EQ(outside, (root_ / "jobs/12/escaped").lexically_normal());
  EXPECT_FALSE(fs::exists(outside));
  EXPECT_EQ(read_file(layout.incident(key_) / "nodes/n1/kernel"), "n1 new\n");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("not a node name"), std::string::npos) << r.problems[0];
}

TEST_F(MergerTest, SlurmAndFastPassFacts) {
  setenv("TZ", "UTC", 1);
  StateLayout layout(root_.path());
  MergeFacts facts;
  SlurmJob slurm;
  slurm.state = "NODE_FAIL";
  slurm.exit_code = "0:0";
  slurm.nodes = {"n1", "n2", "n10", "n11"};
  slurm.end_time = "2026-11-30T07:00:00Z";
  write_file(root_ / "out" / "slurm-12.err", "Traceback\n");
  slurm.std_err = (root_ / "out" / "slurm-12.err").string();
  slurm.uid = static_cast<int>(::getuid());  // the test wrote the output
  facts.slurm = slurm;
  json job = rebuild_incident(layout, key_, sample(), facts).job;
  EXPECT_EQ(job["state"], "NODE_FAIL");
  EXPECT_EQ(job["nodes"], json({"n1", "n2", "n10", "n11"}));
  EXPECT_EQ(job["end_time"], "2026-11-30T07:00:00Z");
  EXPECT_EQ(read_file(layout.incident(key_) / "app/slurm-12.err"), "Traceback\n");

  MergeFacts fast;
  fast.state_override = "FAILED";
  fast.exit_code_override = exit_code_from_wait_status(5 << 8);
  job = rebuild_incident(layout, key_, sample(), fast).job;
  EXPECT_EQ(job["state"], "FAILED");
  EXPECT_EQ(job["exit_code"], "5:0");
  EXPECT_EQ(exit_code_from_wait_status(9), "0:9");
}

TEST_F(MergerTest, EveryCoverageEntryOfTheWinningBundleIsKept) {
  // The collector reports stdout and stderr as two "app" entries: the
  // refused one must not be hidden behind the one that was read.
  json n1 = {{"job_id", "12"},
             {"coverage",
              {{{"collector", "app"}, {"node", "n1"}, {"status", "ok"}, {"detail", "/o/out"}},
               {{"collector", "app"},
                {"node", "n1"},
                {"status", "error"},
                {"detail", "/o/err: a symbolic link (not followed): not collected"}}}}};
  json n1_old = n1;
  n1_old["coverage"] = {
      {{"collector", "app"}, {"node", "n1"}, {"status", "missing"}, {"detail", "old"}}};
  StateLayout layout(root_.path());
  json job =
      rebuild_incident(
          layout, key_,
          {bundle("n1", "step", 100, n1_old, "old\n"), bundle("n1", "step", 200, n1, "new\n")}, {})
          .job;
  std::multiset<std::string> statuses;
  for (const auto& c : job["coverage"]) statuses.insert(c["status"].get<std::string>());
  EXPECT_EQ(statuses, (std::multiset<std::string>{"error", "ok"})) << job["coverage"].dump();
}

// The job's output as the agent reads it from Slurm's StdOut/StdErr path.
class AgentReadsJobOutput : public MergerTest {
 protected:
  static constexpr int kJobUser = 65534;  // nobody

  void SetUp() override {
    MergerTest::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files to another user";
    // A file the agent can read but the job's user does not own, as the
    // Slurm user's own /etc/slurm/slurmdbd.conf is.
    write_file(root_ / "secret", "StoragePass=hunter2\n");
    ::chmod((root_ / "secret").c_str(), 0600);
    slurm_.uid = kJobUser;
  }

  // Rebuilds with Slurm naming `std_out` as the job's StdOut.
  json rebuild_with_stdout(const std::string& std_out, std::size_t max_bytes = 64 << 20) {
    slurm_.std_out = std_out;
    MergeFacts facts;
    facts.slurm = slurm_;
    facts.max_job_output_bytes = max_bytes;
    StateLayout layout(root_.path());
    return rebuild_incident(layout, key_, sample(), facts).job;
  }

  // The coverage entries the agent added for its own read.
  static std::vector<json> agent_coverage(const json& job) {
    std::vector<json> out;
    for (const auto& c : job["coverage"])
      if (c.value("detail", "").rfind("agent: ", 0) == 0) out.push_back(c);
    return out;
  }

  fs::path app_dir() { return StateLayout(root_.path()).incident(key_) / "app"; }

  SlurmJob slurm_;
};

TEST_F(AgentReadsJobOutput, TheJobUsersFileIsCopied) {
  write_file(root_ / "out" / "train.log", "Traceback\nRuntimeError: x\n");
  ASSERT_EQ(::chown((root_ / "out" / "train.log").c_str(), kJobUser, kJobUser), 0);
  json job = rebuild_with_stdout((root_ / "out" / "train.log").string());
  EXPECT_EQ(read_file(app_dir() / "train.log"), "Traceback\nRuntimeError: x\n");
  auto coverage = agent_coverage(job);
  ASSERT_EQ(coverage.size(), 1u) << job["coverage"].dump();
  EXPECT_EQ(coverage[0]["status"], "ok");
}

TEST_F(AgentReadsJobOutput, SymlinkToAFileOfAnotherUserIsNotRead) {
  std::filesystem::create_symlink(root_ / "secret", root_ / "out.log");
  ff::test_support::OpenWatch watch;
  watch.watch((root_ / "secret").string());
  json job = rebuild_with_stdout((root_ / "out.log").string());
  EXPECT_FALSE(fs::exists(app_dir() / "out.log"));
  EXPECT_EQ(job.dump().find("hunter2"), std::string::npos);
  auto coverage = agent_coverage(job);
  ASSERT_EQ(coverage.size(), 1u) << job["coverage"].dump();
  EXPECT_EQ(coverage[0]["collector"], "app");
  EXPECT_EQ(coverage[0]["status"], "error");
  EXPECT_NE(coverage[0]["detail"].get<std::string>().find("symbolic link"), std::string::npos)
      << coverage[0].dump();
  EXPECT_EQ(watch.events(), 0) << "the agent opened the symlink's target";
}

TEST_F(AgentReadsJobOutput, AFileOfAnotherUidIsNotRead) {
  std::filesystem::create_hard_link(root_ / "secret", root_ / "out.log");
  ff::test_support::OpenWatch watch;
  watch.watch((root_ / "secret").string());
  json job = rebuild_with_stdout((root_ / "out.log").string());
  EXPECT_FALSE(fs::exists(app_dir() / "out.log"));
  auto coverage = agent_coverage(job);
  ASSERT_EQ(coverage.size(), 1u) << job["coverage"].dump();
  EXPECT_EQ(coverage[0]["status"], "error");
  EXPECT_NE(coverage[0]["detail"].get<std::string>().find(
                "owned by uid 0, not by the job's user (uid 65534)"),
            std::string::npos)
      << coverage[0].dump();
  EXPECT_EQ(watch.events(), 0) << "the agent opened a file of another uid";
}

TEST_F(AgentReadsJobOutput, AnUnknownUidReadsNothing) {
  write_file(root_ / "out" / "train.log", "Traceback\n");
  ASSERT_EQ(::chown((root_ / "out" / "train.log").c_str(), kJobUser, kJobUser), 0);
  slurm_.uid = -1;  // Slurm did not say whose job it is
  json job = rebuild_with_stdout((root_ / "out" / "train.log").string());
  EXPECT_FALSE(fs::exists(app_dir() / "train.log"));
  auto coverage = agent_coverage(job);
  ASSERT_EQ(coverage.size(), 1u) << job["coverage"].dump();
  EXPECT_EQ(coverage[0]["status"], "error");
  EXPECT_NE(coverage[0]["detail"].get<std::string>().find("unknown"), std::string::npos);
}

TEST_F(AgentReadsJobOutput, AFifoIsNotOpenedAndSaidSo) {
  ASSERT_EQ(::mkfifo((root_ / "out.fifo").c_str(), 0666), 0);
  ASSERT_EQ(::chown((root_ / "out.fifo").c_str(), kJobUser, kJobUser), 0);
  ff::test_support::OpenWatch watch;
  watch.watch((root_ / "out.fifo").string());
  json job = rebuild_with_stdout((root_ / "out.fifo").string());
  auto coverage = agent_coverage(job);
  ASSERT_EQ(coverage.size(), 1u) << job["coverage"].dump();
  EXPECT_NE(coverage[0]["detail"].get<std::string>().find("a FIFO"), std::string::npos);
  EXPECT_EQ(watch.events(), 0);
}

TEST_F(AgentReadsJobOutput, AHiddenNameIsKeptUnderAVisibleOne) {
  write_file(root_ / "out" / ".x", "Traceback\n");
  ASSERT_EQ(::chown((root_ / "out" / ".x").c_str(), kJobUser, kJobUser), 0);
  json job = rebuild_with_stdout((root_ / "out" / ".x").string());
  EXPECT_EQ(read_file(app_dir() / "x"), "Traceback\n");
  EXPECT_FALSE(fs::exists(app_dir() / ".x"));
}

TEST_F(AgentReadsJobOutput, ASparseFileGrowingWhileReadGivesAtMostTheLimit) {
  // 1 GiB of holes that grows by 16 MiB at each read, up to 512 MiB more:
  // at most the limit is read and kept (the old copy read to the moving end
  // of the file).
  fs::path path = root_ / "out" / "grows.out";
  fs::create_directories(path.parent_path());
  constexpr std::size_t kLimit = 4 << 20;
  ff::test_support::GrowingFile grows(path, off_t{1} << 30, kJobUser, 16 << 20, off_t{512} << 20);
  std::uint64_t before = ff::test_support::bytes_read_by_this_process();
  json job = rebuild_with_stdout(path.string(), kLimit);
  std::uint64_t read = ff::test_support::bytes_read_by_this_process() - before;
  EXPECT_LE(fs::file_size(app_dir() / "grows.out"), kLimit);
  // The bundles' own small files are read too: 64 KiB of slack.
  EXPECT_LE(read, kLimit + 64 * 1024) << "the agent read " << read << " bytes";
  auto coverage = agent_coverage(job);
  ASSERT_EQ(coverage.size(), 1u) << job["coverage"].dump();
  EXPECT_EQ(coverage[0]["status"], "truncated");
}

TEST(NodeOrder, NumbersCompareAsNumbers) {
  EXPECT_TRUE(node_name_less("n2", "n10"));
  EXPECT_FALSE(node_name_less("n10", "n2"));
  EXPECT_TRUE(node_name_less("a01", "a2"));
  EXPECT_TRUE(node_name_less("a", "b"));
}

}  // namespace
