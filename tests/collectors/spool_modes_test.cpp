// The node spool holds windows of root-only logs and copies of the jobs'
// output: the real Epilog and the real collector it starts leave nothing in
// it that other users of the node can read, whatever umask slurmd gave them,
// and close a spool directory that was made open before.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;

TEST(SpoolModes, NothingForOtherUsers) {
  ScratchDirectory dir{"collector"};
  std::filesystem::create_directories(dir / "spool");
  ::chmod((dir / "spool").c_str(), 0755);  // made open by hand
  testing::write_file(dir / "log/kern.log", "Nov 30 05:10:00 n2 kernel: NVRM: Xid 79\n");
  ::chmod((dir / "log/kern.log").c_str(), 0640);
  testing::write_file(dir / "out/slurm-12.out", "Traceback\nRuntimeError: x\n");
  testing::write_file(dir / "node.yaml",
                      "agent_url: http://127.0.0.1:1\n"  // nobody listens: the bundle stays
                      "spool: " +
                          (dir / "spool").string() + "\n" + "collector: " + FF_COLLECT_BINARY +
                          "\n" +
                          "retry: {initial_s: 0.1, max_s: 0.1, give_up_after_s: 0.5}\n"
                          "timezone: UTC\n"
                          "sources:\n  syslog: [" +
                          (dir / "log/kern.log*").string() + "]\n");
  std::string env = "SLURM_JOB_ID=12 SLURMD_NODENAME=n2 SLURM_JOB_EXIT_CODE2=1:0 SLURM_JOB_UID=" +
                    std::to_string(::getuid()) +
                    " SLURM_JOB_STDOUT=" + (dir / "out/slurm-12.out").string();
  mode_t old = ::umask(0);
  int rc = std::system(
      ("env -i " + env + " " + FF_EPILOG_BINARY + " --config " + (dir / "node.yaml").string())
          .c_str());
  ::umask(old);
  ASSERT_EQ(rc, 0);
  // The collector runs detached: wait for its bundle in the outbox.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool built = false;
  while (!built && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(dir / "spool/outbox", ec), end;
         !ec && it != end; it.increment(ec))
      if (it->path().filename() == "slurm-12.out") built = true;
  }
  ASSERT_TRUE(built) << "no bundle with the job's output in the outbox";
  std::this_thread::sleep_for(std::chrono::seconds(1));  // its retries give up, it exits

  int checked = 0;
  auto check = [&](const std::filesystem::path& p) {
    struct stat st {};
    ASSERT_EQ(::lstat(p.c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_mode & 077, 0u) << p << " has mode " << std::oct << (st.st_mode & 07777);
    ++checked;
  };
  check(dir / "spool");
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "spool"))
    check(e.path());
  EXPECT_GT(checked, 6);
}

}  // namespace
}  // namespace ff::collect
