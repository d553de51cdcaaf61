// The collector runs as root and the job's output path is the user's to
// choose: only a regular file owned by the job's user is copied. A symlink
// (to a root-only file, a FIFO, a device), a hard link, another user's file,
// a FIFO (which must not hang the collector) or a device is refused, said so
// in coverage, and never opened: inotify sees no open of it, so a symlink to
// /dev/watchdog arms nothing. A file that grows while it is read gives at
// most the limit; a line longer than 1 MiB is cut, so the agent never
// refuses the bundle for it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collectors/sources/app_output.h"
#include "collectors/sources/tail_copy.h"
#include "common/user_file.h"
#include "tests/collectors/collector_test_support.h"
#include "tests/support/growing_file.h"
#include "tests/support/open_watch.h"

namespace ff::collect {
namespace {

using ff::test_support::OpenWatch;
using ff::test_support::ScratchDirectory;

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
    return copy_app_output((dir / name).string(), name, "n1", dir / "b", 1 << 20, owner);
  }
  bool copied(const std::string& name) { return std::filesystem::exists(dir / "b/app" / name); }

  ScratchDirectory dir{"collector"};
};

TEST_F(AppOutputOwner, TheJobUsersFileIsCopied) {
  testing::write_file(dir / "slurm-1.out", "Traceback\nRuntimeError: x\n");
  ASSERT_EQ(::chown((dir / "slurm-1.out").c_str(), kJobUser, kJobUser), 0);
  AppOutputCopy c = copy("slurm-1.out");
  EXPECT_EQ(c.coverage.status_text(), "ok") << c.coverage.detail;
  EXPECT_EQ(testing::read_file(dir / "b/app/slurm-1.out"), "Traceback\nRuntimeError: x\n");
}

// The watch sees an open when there is one: each test that shows "never
// opened" checks the watch this way after the collector ran.
void expect_watch_sees_an_open(OpenWatch& watch, const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ::close(fd);
  EXPECT_GT(watch.events(), 0) << "the watch on " << path << " saw nothing";
}

TEST_F(AppOutputOwner, SymlinkToARootFileIsRefusedUnopened) {
  std::filesystem::create_symlink(dir / "secret", dir / "slurm-2.out");
  OpenWatch watch;
  watch.watch((dir / "secret").string());
  AppOutputCopy c = copy("slurm-2.out");
  EXPECT_EQ(c.coverage.status_text(), "error");
  EXPECT_NE(c.coverage.detail.find("symbolic link"), std::string::npos) << c.coverage.detail;
  EXPECT_TRUE(c.file.rel.empty());
  EXPECT_FALSE(copied("slurm-2.out"));
  EXPECT_EQ(watch.events(), 0) << "the collector opened the symlink's target";
  expect_watch_sees_an_open(watch, dir / "secret");
}

TEST_F(AppOutputOwner, SymlinkToTheUsersOwnFileIsRefused) {
  // Not followed even to a file of the job's user: the last component is
  // never a symlink, so no check on a target can be raced.
  testing::write_file(dir / "real.out", "x\n");
  ASSERT_EQ(::chown((dir / "real.out").c_str(), kJobUser, kJobUser), 0);
  std::filesystem::create_symlink(dir / "real.out", dir / "slurm-2.out");
  AppOutputCopy c = copy("slurm-2.out");
  EXPECT_EQ(c.coverage.status_text(), "error");
  EXPECT_NE(c.coverage.detail.find("symbolic link"), std::string::npos) << c.coverage.detail;
  EXPECT_FALSE(copied("slurm-2.out"));
}

TEST_F(AppOutputOwner, HardLinkToARootFileIsRefusedUnopened) {
  std::filesystem::create_hard_link(dir / "secret", dir / "slurm-3.out");
  OpenWatch watch;
  watch.watch((dir / "secret").string());
  AppOutputCopy c = copy("slurm-3.out");
  EXPECT_EQ(c.coverage.status_text(), "error");
  EXPECT_NE(c.coverage.detail.find("owned by uid 0"), std::string::npos) << c.coverage.detail;
  EXPECT_FALSE(copied("slurm-3.out"));
  EXPECT_EQ(watch.events(), 0) << "the collector opened a root-only file";
  expect_watch_sees_an_open(watch, dir / "secret");
}

TEST_F(AppOutputOwner, AnotherUsersFileIsRefusedUnopened) {
  testing::write_file(dir / "slurm-8.out", "someone else's output\n");
  ASSERT_EQ(::chown((dir / "slurm-8.out").c_str(), 12345, 12345), 0);
  OpenWatch watch;
  watch.watch((dir / "slurm-8.out").string());
  AppOutputCopy c = copy("slurm-8.out");
  EXPECT_EQ(c.coverage.status_text(), "error");
  EXPECT_NE(c.coverage.detail.find("owned by uid 12345, not by the job's user (uid 65534)"),
            std::string::npos)
      << c.coverage.detail;
  EXPECT_FALSE(copied("slurm-8.out"));
  EXPECT_EQ(watch.events(), 0) << "the collector opened another user's file";
  expect_watch_sees_an_open(watch, dir / "slurm-8.out");
}

TEST_F(AppOutputOwner, FifoAndDeviceAreRefusedUnopenedWithoutWaiting) {
  ASSERT_EQ(::mkfifo((dir / "slurm-4.out").c_str(), 0666), 0);
  ASSERT_EQ(::chown((dir / "slurm-4.out").c_str(), kJobUser, kJobUser), 0);
  // A device node of the job's user (the null device's numbers, so an open
  // would do no harm here; /dev/watchdog's would reset the node).
  ASSERT_EQ(::mknod((dir / "device").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::chown((dir / "device").c_str(), kJobUser, kJobUser), 0);
  OpenWatch watch;
  watch.watch((dir / "slurm-4.out").string());
  watch.watch((dir / "device").string());
  AppOutputCopy fifo = copy("slurm-4.out");  // no writer: a blocking open would hang here
  EXPECT_EQ(fifo.coverage.status_text(), "error");
  EXPECT_NE(fifo.coverage.detail.find("a FIFO, not a regular file"), std::string::npos)
      << fifo.coverage.detail;
  AppOutputCopy device = copy("device");
  EXPECT_EQ(device.coverage.status_text(), "error");
  EXPECT_NE(device.coverage.detail.find("a character device, not a regular file"),
            std::string::npos)
      << device.coverage.detail;
  EXPECT_FALSE(copied("device"));
  EXPECT_EQ(watch.events(), 0) << "the collector opened a FIFO or a device";
  expect_watch_sees_an_open(watch, dir / "device");
}

TEST_F(AppOutputOwner, SymlinkToAFifoOrADeviceIsNeverOpened) {
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0666), 0);
  ASSERT_EQ(::chown((dir / "fifo").c_str(), kJobUser, kJobUser), 0);
  ASSERT_EQ(::mknod((dir / "device").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::chown((dir / "device").c_str(), kJobUser, kJobUser), 0);
  std::filesystem::create_symlink(dir / "fifo", dir / "slurm-7.out");
  std::filesystem::create_symlink(dir / "device", dir / "slurm-7.err");
  OpenWatch watch;
  watch.watch((dir / "fifo").string());
  watch.watch((dir / "device").string());
  for (const char* name : {"slurm-7.out", "slurm-7.err"}) {
    AppOutputCopy c = copy(name);
    EXPECT_EQ(c.coverage.status_text(), "error") << name;
    EXPECT_NE(c.coverage.detail.find("symbolic link"), std::string::npos) << c.coverage.detail;
    EXPECT_FALSE(copied(name));
  }
  EXPECT_EQ(watch.events(), 0) << "the collector opened the FIFO or the device behind a symlink";
  // And no reader was left open on the FIFO: a writer that does not wait finds none.
  int writer = ::open((dir / "fifo").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  EXPECT_EQ(writer, -1);
  EXPECT_EQ(errno, ENXIO);
  if (writer >= 0) ::close(writer);
  expect_watch_sees_an_open(watch, dir / "fifo");
}

TEST_F(AppOutputOwner, ASparseFileGrowingWhileReadGivesAtMostTheLimit) {
  // 1 GiB of holes that grows by 16 MiB at each read, up to 512 MiB more:
  // what is read and kept stays within max_bytes.
  constexpr std::uint64_t kLimit = 4 << 20;
  ff::test_support::GrowingFile grows(dir / "slurm-9.out", off_t{1} << 30, kJobUser, 16 << 20,
                                      off_t{512} << 20);
  std::uint64_t before = ff::test_support::bytes_read_by_this_process();
  AppOutputCopy c = copy_app_output((dir / "slurm-9.out").string(), "slurm-9.out", "n1", dir / "b",
                                    kLimit, kJobUser);
  std::uint64_t read = ff::test_support::bytes_read_by_this_process() - before;
  EXPECT_EQ(c.coverage.status_text(), "truncated") << c.coverage.detail;
  EXPECT_LE(c.file.bytes, kLimit);
  EXPECT_LE(std::filesystem::file_size(dir / "b/app/slurm-9.out"), kLimit);
  EXPECT_LE(read, kLimit + 64 * 1024) << "the collector read " << read << " bytes";
}

TEST(PrintablePath, OnlyPrintableAsciiStays) {
  EXPECT_EQ(ff::printable_path("/home/u/train run.out"), "/home/u/train run.out");
  EXPECT_EQ(ff::printable_path("a\nb\\c\xff\xc3\xa9"), "a\\x0ab\\x5cc\\xff\\xc3\\xa9");
}

TEST_F(AppOutputOwner, UnknownOwnerCopiesNothing) {
  testing::write_file(dir / "slurm-5.out", "x\n");
  AppOutputCopy c = copy("slurm-5.out", std::nullopt);
  EXPECT_EQ(c.coverage.status_text(), "error");
  EXPECT_NE(c.coverage.detail.find("unknown"), std::string::npos) << c.coverage.detail;
  EXPECT_FALSE(copied("slurm-5.out"));
}

TEST_F(AppOutputOwner, OverlongLinesAreCut) {
  std::string text = "before\n" + std::string(kMaxLineBytes + 5000, 'p') + "\nafter\n";
  testing::write_file(dir / "slurm-6.out", text);
  ASSERT_EQ(::chown((dir / "slurm-6.out").c_str(), kJobUser, kJobUser), 0);
  AppOutputCopy c = copy_app_output((dir / "slurm-6.out").string(), "slurm-6.out", "n1", dir / "b",
                                    16 << 20, kJobUser);
  EXPECT_EQ(c.coverage.status_text(), "truncated");
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
