#include "spank/spool_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <thread>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace firstfault::spank {
namespace {

using ff::test_support::read_file;
using ff::test_support::read_file_if_present;
using ff::test_support::ScratchDirectory;
using ff::test_support::write_file;

struct ErrorLog {
  std::vector<std::string> messages;
  SpoolWriter::ErrorSink sink() {
    return [this](const std::string& message) { messages.push_back(message); };
  }
};

mode_t ModeOf(const std::string& path) {
  struct stat status {};
  stat(path.c_str(), &status);
  return status.st_mode & 07777;
}

TEST(SpoolWriterTest, CreatesMissingDirectoriesWithFixedModes) {
  ScratchDirectory spool{"spank"};
  ErrorLog errors;
  mode_t old_umask = umask(0);  // slurmstepd's umask is not ours to trust
  SpoolWriter writer(spool.path().string() + "/n1", errors.sink());
  EXPECT_TRUE(writer.WriteFile("jobs/12/alloc-0.json", "{}\n"));
  umask(old_umask);
  EXPECT_EQ(read_file(spool.path().string() + "/n1/jobs/12/alloc-0.json"), "{}\n");
  // Root's only, whatever the umask: the spool also holds root-only logs.
  EXPECT_EQ(ModeOf(spool.path().string() + "/n1"), 0700u);
  EXPECT_EQ(ModeOf(spool.path().string() + "/n1/jobs/12"), 0700u);
  EXPECT_EQ(ModeOf(spool.path().string() + "/n1/jobs/12/alloc-0.json"), 0600u);
  EXPECT_TRUE(errors.messages.empty());
}

TEST(SpoolWriterTest, RewriteReplacesAndLeavesNoTemporaryFile) {
  ScratchDirectory spool{"spank"};
  ErrorLog errors;
  SpoolWriter writer(spool.path(), errors.sink());
  ASSERT_TRUE(writer.WriteFile("jobs/12/rank-0-0.json", "first\n"));
  ASSERT_TRUE(writer.WriteFile("jobs/12/rank-0-0.json", "second\n"));
  EXPECT_EQ(read_file(spool.path().string() + "/jobs/12/rank-0-0.json"), "second\n");
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(spool.path().string() + "/jobs/12")) {
    EXPECT_EQ(entry.path().filename(), "rank-0-0.json");
    ++files;
  }
  EXPECT_EQ(files, 1);
}

// A reader polling the file while it is rewritten sees one whole version or the other.
TEST(SpoolWriterTest, ReadersNeverSeeHalfAFile) {
  ScratchDirectory spool{"spank"};
  ErrorLog errors;
  SpoolWriter writer(spool.path(), errors.sink());
  std::string small(10, 'a');
  std::string large(200000, 'b');
  ASSERT_TRUE(writer.WriteFile("jobs/1/rank-0-0.json", small));
  std::atomic<bool> done{false};
  std::thread rewriter([&] {
    for (int i = 0; i < 200; ++i) writer.WriteFile("jobs/1/rank-0-0.json", i % 2 ? small : large);
    done = true;
  });
  int reads = 0;
  while (!done) {
    std::string seen = read_file_if_present(spool.path().string() + "/jobs/1/rank-0-0.json");
    EXPECT_TRUE(seen == small || seen == large) << "size " << seen.size();
    ++reads;
  }
  rewriter.join();
  EXPECT_GT(reads, 0);
}

TEST(SpoolWriterTest, ConcurrentWritersOfDifferentTasks) {
  ScratchDirectory spool{"spank"};
  ErrorLog errors;
  SpoolWriter writer(spool.path(), errors.sink());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        writer.WriteFile("jobs/7/rank-0-" + std::to_string(t) + ".json", std::to_string(i));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(read_file(spool.path().string() + "/jobs/7/rank-0-" + std::to_string(t) + ".json"),
              "49");
  }
  EXPECT_EQ(writer.failures(), 0);
}

// Running as root, permissions do not stop us; a file where a directory should be does.
TEST(SpoolWriterTest, UnwritableSpoolIsReportedOnce) {
  ScratchDirectory spool{"spank"};
  write_file(spool.path().string() + "/not-a-dir", "x");
  ErrorLog errors;
  SpoolWriter writer(spool.path().string() + "/not-a-dir/n1", errors.sink());
  EXPECT_FALSE(writer.WriteFile("jobs/12/alloc-0.json", "{}"));
  EXPECT_FALSE(writer.WriteFile("jobs/12/rank-0-0.json", "{}"));
  EXPECT_FALSE(writer.WriteFile("jobs/12/rank-0-1.json", "{}"));
  EXPECT_EQ(writer.failures(), 3);
  ASSERT_EQ(errors.messages.size(), 1u);
  EXPECT_NE(errors.messages[0].find("not-a-dir"), std::string::npos);
}

TEST(SpoolWriterTest, ReadOnlyFileSystem) {
  ErrorLog errors;
  SpoolWriter writer("/proc/firstfault-spool", errors.sink());  // /proc takes no mkdir
  EXPECT_FALSE(writer.WriteFile("jobs/1/alloc-0.json", "{}"));
  EXPECT_EQ(errors.messages.size(), 1u);
}

TEST(SpoolWriterTest, ReadOnlyDirectoryForNonRoot) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into 0555 directories";
  ScratchDirectory spool{"spank"};
  chmod(spool.path().c_str(), 0555);
  ErrorLog errors;
  SpoolWriter writer(spool.path(), errors.sink());
  EXPECT_FALSE(writer.WriteFile("jobs/1/alloc-0.json", "{}"));
  chmod(spool.path().c_str(), 0755);
  EXPECT_EQ(errors.messages.size(), 1u);
}

TEST(MakeDirectoriesTest, ExistingPathIsFine) {
  ScratchDirectory spool{"spank"};
  EXPECT_EQ(MakeDirectories(spool.path()), "");
  EXPECT_EQ(MakeDirectories(spool.path().string() + "/a/b/"), "");
  EXPECT_TRUE(std::filesystem::is_directory(spool.path().string() + "/a/b"));
}

}  // namespace
}  // namespace firstfault::spank
