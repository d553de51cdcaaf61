// The collector runs as root and the job's output path is the user's to
// choose: only a regular file owned by the job's user is copied. A symlink
// to a root-only file, a hard link, a FIFO (which must not hang the
// collector) or a device is refused and said so in coverage; a line longer
// than 1 MiB is cut, so the agent never refuses the bundle for it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector_test_support.h"
#include "sources/app_output.h"
#include "sources/tail_copy.h"

namespace ff::collect {
namespace {

using testing::TempDir;

constexpr uid_t kJobUser = 65534;  // nobody

class AppOutputOwner : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files to another user";
    // A file only root may read, as /etc/shadow is.
    testing::write_file(dir / "secret", "root:$6$hash:19000:0:99999:7:::\n");
    ::chmod((dir / "secret").c_str(), 0600);
  }
  AppOutputCopy copy(const std::string& name, std::optional<uid_t> owner = kJobUser) {
    return copy_app_output((dir / name).string(), "n1", dir / "b", 1 << 20, owner);
  }
  bool copied(const std::string& name) { return std::filesystem::exists(dir / "b/app" / name); }

  TempDir dir;
};

TEST_F(AppOutputOwner, TheJobUsersFileIsCopied) {
  testing::write_file(dir / "slurm-1.out", "Traceback\nRuntimeError: x\n");
  ASSERT_EQ(::chown((dir / "slurm-1.out").c_str(), kJobUser, kJobUser), 0);
  AppOutputCopy c = copy("slurm-1.out");
  EXPECT_EQ(c.coverage.status, "ok") << c.coverage.detail;
  EXPECT_EQ(testing::read_file(dir / "b/app/slurm-1.out"), "Traceback\nRuntimeError: x\n");
}

TEST_F(AppOutputOwner, SymlinkToARootFileIsRefused) {
  std::filesystem::create_symlink(dir / "secret", dir / "slurm-2.out");
  AppOutputCopy c = copy("slurm-2.out");
  EXPECT_EQ(c.coverage.status, "error");
  EXPECT_NE(c.coverage.detail.find("owned by uid 0"), std::string::npos) << c.coverage.detail;
  EXPECT_TRUE(c.file.rel.empty());
  EXPECT_FALSE(copied("slurm-2.out"));
}

TEST_F(AppOutputOwner, HardLinkToARootFileIsRefused) {
  std::filesystem::create_hard_link(dir / "secret", dir / "slurm-3.out");
  EXPECT_EQ(copy("slurm-3.out").coverage.status, "error");
  EXPECT_FALSE(copied("slurm-3.out"));
}

TEST_F(AppOutputOwner, FifoAndDeviceAreRefusedWithoutWaiting) {
  ASSERT_EQ(::mkfifo((dir / "slurm-4.out").c_str(), 0666), 0);
  ASSERT_EQ(::chown((dir / "slurm-4.out").c_str(), kJobUser, kJobUser), 0);
  AppOutputCopy fifo = copy("slurm-4.out");  // no writer: a blocking open would hang here
  EXPECT_EQ(fifo.coverage.status, "error");
  EXPECT_NE(fifo.coverage.detail.find("not a regular file"), std::string::npos);
  AppOutputCopy device = copy_app_output("/dev/zero", "n1", dir / "b", 1 << 20, 0);
  EXPECT_EQ(device.coverage.status, "error");
  EXPECT_FALSE(copied("zero"));
}

TEST_F(AppOutputOwner, UnknownOwnerCopiesNothing) {
  testing::write_file(dir / "slurm-5.out", "x\n");
  AppOutputCopy c = copy("slurm-5.out", std::nullopt);
  EXPECT_EQ(c.coverage.status, "error");
  EXPECT_NE(c.coverage.detail.find("unknown"), std::string::npos) << c.coverage.detail;
  EXPECT_FALSE(copied("slurm-5.out"));
}

TEST_F(AppOutputOwner, OverlongLinesAreCut) {
  std::string text = "before\n" + std::string(kMaxLineBytes + 5000, 'p') + "\nafter\n";
  testing::write_file(dir / "slurm-6.out", text);
  ASSERT_EQ(::chown((dir / "slurm-6.out").c_str(), kJobUser, kJobUser), 0);
  AppOutputCopy c =
      copy_app_output((dir / "slurm-6.out").string(), "n1", dir / "b", 16 << 20, kJobUser);
  EXPECT_EQ(c.coverage.status, "truncated");
  EXPECT_NE(c.coverage.detail.find("1 line(s) longer than"), std::string::npos)
      << c.coverage.detail;
  EXPECT_EQ(testing::read_file(dir / "b/app/slurm-6.out"),
            "before\n" + std::string(kMaxLineBytes, 'p') + "\nafter\n");
}

TEST(ParseUid, NumbersOnly) {
  EXPECT_EQ(parse_uid("0"), 0u);
  EXPECT_EQ(parse_uid("1234"), 1234u);
  EXPECT_FALSE(parse_uid(""));
  EXPECT_FALSE(parse_uid("-1"));
  EXPECT_FALSE(parse_uid("12a"));
  EXPECT_FALSE(parse_uid("4294967295"));
  EXPECT_FALSE(parse_uid("99999999999"));
}

}  // namespace
}  // namespace ff::collect
