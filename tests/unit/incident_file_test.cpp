// engine/read/incident_file: opening an incident's files by their relative
// path. Every case runs with both resolvers, the kernel's openat2 and the
// component walk used where openat2 is missing, which must agree.
#include "engine/read/incident_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <functional>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/files.h"
#include "tests/support/open_watch.h"
#include "tests/support/scratch_directory.h"

namespace ff {
namespace {

namespace fs = std::filesystem;
using Resolver = IncidentRoot::Resolver;

class IncidentFileTest : public ::testing::TestWithParam<Resolver> {
 protected:
  void SetUp() override {
    fs::create_directories(dir_);
    write(base_ / "beside.log", "outside the incident\n");
  }

  static void write(const fs::path& p, const std::string& text) {
    ff::test_support::write_file(p, text);
  }
  void put(const std::string& rel, const std::string& text) { write(dir_ / rel, text); }
  void link(const std::string& target, const std::string& rel) {
    fs::create_directories((dir_ / rel).parent_path());
    fs::create_symlink(target, dir_ / rel);
  }

  IncidentRoot root() {
    std::string error;
    IncidentRoot r = IncidentRoot::open(dir_, error, GetParam());
    EXPECT_TRUE(r.ok()) << error;
    EXPECT_EQ(r.resolver(), GetParam());
    return r;
  }

  // The content of `rel` when it opens, else "refused: <why>".
  std::string read(const std::string& rel) {
    std::string error, text;
    UniqueFd fd = root().open_file(rel, error);
    if (!fd) return "refused: " + error;
    EXPECT_TRUE(read_bounded(fd.get(), 1 << 20, text, error)) << error;
    int fl = ::fcntl(fd.get(), F_GETFL);
    EXPECT_EQ(fl & O_NONBLOCK, 0) << "left in non-blocking mode";
    EXPECT_NE(::fcntl(fd.get(), F_GETFD) & FD_CLOEXEC, 0);
    return text;
  }

  ff::test_support::ScratchDirectory base_{"incident-file"};
  fs::path dir_ = base_ / "incident";
};

TEST_P(IncidentFileTest, RegularFileOpens) {
  put("nodes/n1/syslog", "hello\n");
  EXPECT_EQ(read("nodes/n1/syslog"), "hello\n");
}

TEST_P(IncidentFileTest, SymlinkToAFileBesideTheIncidentIsRefused) {
  link("../../../beside.log", "nodes/n1/kernel.log");
  EXPECT_EQ(read("nodes/n1/kernel.log"), "refused: symbolic link leading outside the incident");
  // Absolute, even where it names a file inside: a path of another machine.
  put("nodes/n2/syslog", "inside\n");
  link((dir_ / "nodes/n2/syslog").string(), "nodes/n1/syslog");
  EXPECT_EQ(read("nodes/n1/syslog"), "refused: symbolic link leading outside the incident");
}

TEST_P(IncidentFileTest, SymlinkedDirectoryLeavingTheIncidentIsRefused) {
  link("/etc", "nodes/n3");
  EXPECT_EQ(read("nodes/n3/passwd"), "refused: symbolic link leading outside the incident");
  link("../..", "nodes/up");
  EXPECT_EQ(read("nodes/up/beside.log"), "refused: symbolic link leading outside the incident");
  EXPECT_EQ(read("../beside.log"), "refused: symbolic link leading outside the incident");
  EXPECT_EQ(read("/etc/passwd"), "refused: symbolic link leading outside the incident");
}

TEST_P(IncidentFileTest, SymlinkStayingInsideIsFollowed) {
  put("shared/n2-kernel.log", "kernel\n");
  link("../../shared/n2-kernel.log", "nodes/n2/kernel.log");
  EXPECT_EQ(read("nodes/n2/kernel.log"), "kernel\n");
  link("n2", "nodes/alias");  // a directory link, then a file link through it
  EXPECT_EQ(read("nodes/alias/kernel.log"), "kernel\n");
  link("alias/../n2/kernel.log",
       "nodes/dotdot.log");  // ".." after a link: the link's target's parent
  EXPECT_EQ(read("nodes/dotdot.log"), "kernel\n");
}

TEST_P(IncidentFileTest, SymlinkLoopIsRefused) {
  link("b", "nodes/a");
  link("a", "nodes/b");
  EXPECT_EQ(read("nodes/a"), "refused: symbolic link loop, or a /proc magic link");
}

TEST_P(IncidentFileTest, BrokenSymlinkAndMissingFile) {
  link("nowhere", "nodes/n1/syslog");
  EXPECT_EQ(read("nodes/n1/syslog"), "refused: not found (or a broken symbolic link)");
  EXPECT_EQ(read("job.json"), "refused: not found (or a broken symbolic link)");
}

TEST_P(IncidentFileTest, FifoIsRefusedWithoutBlockingOrBeingOpened) {
  fs::create_directories(dir_ / "nodes/n1");
  ASSERT_EQ(::mkfifo((dir_ / "nodes/n1/kernel.log").c_str(), 0600), 0);
  test_support::OpenWatch watch;
  watch.watch((dir_ / "nodes/n1/kernel.log").string());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(read("nodes/n1/kernel.log"), "refused: a FIFO, not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(watch.events(), 0);
}

TEST_P(IncidentFileTest, DeviceNodeIsNeverOpened) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod of a device needs root";
  fs::create_directories(dir_ / "nodes/n1");
  // The numbers of /dev/null: opening it would do no harm, and would be seen.
  ASSERT_EQ(::mknod((dir_ / "nodes/n1/kernel.log").c_str(), S_IFCHR | 0600, makedev(1, 3)), 0);
  test_support::OpenWatch watch;
  watch.watch((dir_ / "nodes/n1/kernel.log").string());
  EXPECT_EQ(read("nodes/n1/kernel.log"), "refused: a character device, not a regular file");
  EXPECT_EQ(watch.events(), 0);
}

TEST_P(IncidentFileTest, DirectoryIsNotAFile) {
  fs::create_directories(dir_ / "nodes/n1/sub");
  EXPECT_EQ(read("nodes/n1/sub"), "refused: a directory, not a regular file");
  put("nodes/n1/syslog", "x\n");
  EXPECT_EQ(read("nodes/n1/syslog/x"),
            "refused: not found (a component of the path is not a directory)");
  EXPECT_EQ(read("nodes/n1/syslog/"),
            "refused: not found (a component of the path is not a directory)");
  EXPECT_EQ(read("nodes/n1/sub/../syslog"), "x\n");
  EXPECT_EQ(read("nodes/n1/./syslog"), "x\n");
}

TEST_P(IncidentFileTest, ListingClassifiesByTheSameRule) {
  put("nodes/n1/syslog", "x\n");
  put("shared/k.log", "k\n");
  link("../../shared/k.log", "nodes/n1/kernel.log");
  link("../../../beside.log", "nodes/n1/app.log");
  fs::create_directories(dir_ / "nodes/n1/sub");
  ASSERT_EQ(::mkfifo((dir_ / "nodes/n1/fifo").c_str(), 0600), 0);
  IncidentListing l = root().list_dir("nodes/n1");
  EXPECT_TRUE(l.found);
  EXPECT_EQ(l.error, "");
  ASSERT_EQ(l.entries.size(), 5u);
  auto entry = [&](std::size_t i, const std::string& name, IncidentEntry::Type type,
                   const std::string& problem) {
    EXPECT_EQ(l.entries[i].name, name);
    EXPECT_EQ(l.entries[i].type, type) << name;
    EXPECT_EQ(l.entries[i].problem, problem) << name;
  };
  entry(0, "app.log", IncidentEntry::Type::refused, "symbolic link leading outside the incident");
  entry(1, "fifo", IncidentEntry::Type::refused, "a FIFO, not a regular file");
  entry(2, "kernel.log", IncidentEntry::Type::file, "");
  entry(3, "sub", IncidentEntry::Type::directory, "");
  entry(4, "syslog", IncidentEntry::Type::file, "");
}

TEST_P(IncidentFileTest, ListingADirectoryLinkLeavingTheIncidentListsNothing) {
  link("/etc", "nodes");
  IncidentListing l = root().list_dir("nodes");
  EXPECT_FALSE(l.found);
  EXPECT_EQ(l.error, "symbolic link leading outside the incident");
  EXPECT_TRUE(l.entries.empty());
  IncidentListing missing = root().list_dir("metrics");
  EXPECT_FALSE(missing.found);
  EXPECT_EQ(missing.error, "");  // simply absent
}

// Runs `body` in a child process, whose changes to its own mounts or
// seccomp filter stay there: its exit status, or -1 when it did not exit.
int in_child(const std::function<int()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Without /proc (a minimal chroot) an O_PATH handle cannot be reopened
// through /proc/self/fd: the path is resolved a second time, opening it,
// and the inode compared; the rule holds all the same.
TEST_P(IncidentFileTest, WithoutProcTheRuleStillHolds) {
  put("nodes/n1/syslog", "hello\n");
  link("../../../beside.log", "nodes/n1/kernel.log");
  ASSERT_EQ(::mkfifo((dir_ / "nodes/n1/fifo").c_str(), 0600), 0);
  int status = in_child([&] {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::umount2("/proc", MNT_DETACH) != 0)
      return 77;
    if (::access("/proc/self/fd", F_OK) == 0) return 10;
    if (read("nodes/n1/syslog") != "hello\n") return 11;
    if (read("nodes/n1/kernel.log") != "refused: symbolic link leading outside the incident")
      return 12;
    if (read("nodes/n1/fifo") != "refused: a FIFO, not a regular file") return 13;
    return ::testing::Test::HasFailure() ? 14 : 0;
  });
  if (status == 77) GTEST_SKIP() << "cannot unmount /proc in a mount namespace (not root?)";
  EXPECT_EQ(status, 0);
}

// A kernel without openat2, or a seccomp filter refusing it (ENOSYS, EPERM):
// the incident is opened with the component walk, under the same rule.
TEST(IncidentRoot, WithoutOpenat2TheComponentWalkIsUsed) {
  ff::test_support::ScratchDirectory scratch{"incident-file"};
  const fs::path& base = scratch.path();
  fs::create_directories(base / "incident/nodes/n1");
  std::ofstream(base / "beside.log") << "outside\n";
  std::ofstream(base / "incident/nodes/n1/syslog") << "inside\n";
  fs::create_symlink("../../../beside.log", base / "incident/nodes/n1/kernel.log");
  fs::create_symlink("syslog", base / "incident/nodes/n1/syslog.link");
  for (int refusal : {ENOSYS, EPERM}) {
    int status = in_child([&] {
      sock_filter filter[] = {
          BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
          BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
          BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | static_cast<unsigned>(refusal)),
          BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      };
      sock_fprog prog{static_cast<unsigned short>(std::size(filter)), filter};
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
          ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return 77;
      std::string error, text;
      IncidentRoot root = IncidentRoot::open(base / "incident", error);
      if (!root.ok() || root.resolver() != IncidentRoot::Resolver::component_walk) return 10;
      if (root.open_file("nodes/n1/kernel.log", error) ||
          error != "symbolic link leading outside the incident")
        return 11;
      UniqueFd fd = root.open_file("nodes/n1/syslog.link", error);
      if (!fd || !read_bounded(fd.get(), 1024, text, error) || text != "inside\n") return 12;
      return 0;
    });
    EXPECT_EQ(status, 0) << "refused with " << refusal;
  }
}

std::string resolver_name(const ::testing::TestParamInfo<Resolver>& param) {
  return param.param == Resolver::kernel ? "openat2" : "component_walk";
}

INSTANTIATE_TEST_SUITE_P(BothResolvers, IncidentFileTest,
                         ::testing::Values(Resolver::kernel, Resolver::component_walk),
                         resolver_name);

TEST(IncidentRoot, AutomaticUsesOpenat2WhereTheKernelHasIt) {
  std::string error;
  IncidentRoot r = IncidentRoot::open("/tmp", error);
  ASSERT_TRUE(r.ok()) << error;
  EXPECT_EQ(r.resolver(), IncidentRoot::Resolver::kernel);  // Linux >= 5.6, no seccomp filter
}

TEST(IncidentRoot, MissingDirectoryIsNotOk) {
  std::string error;
  IncidentRoot r = IncidentRoot::open("/nonexistent/incident", error);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(error.find("/nonexistent/incident"), std::string::npos) << error;
}

TEST(ReadBounded, ReadsUpToTheBoundAndRefusesMore) {
  char tmpl[] = "/tmp/ff-read-bounded-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  UniqueFd file(fd);
  std::string data(100000, 'x');
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  std::string out, error;
  ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
  EXPECT_TRUE(read_bounded(fd, 100000, out, error)) << error;
  EXPECT_EQ(out.size(), 100000u);
  ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
  EXPECT_FALSE(read_bounded(fd, 99999, out, error));
  EXPECT_EQ(error, "larger than 99999 bytes: not read");
  EXPECT_TRUE(out.empty());
  ::unlink(tmpl);
}

}  // namespace
}  // namespace ff
