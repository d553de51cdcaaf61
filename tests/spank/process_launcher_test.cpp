#include "spank/process_launcher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace firstfault::spank {
namespace {

using ff::test_support::read_file;
using ff::test_support::read_file_if_present;
using ff::test_support::ScratchDirectory;

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

bool WaitForFile(const std::string& path, milliseconds limit) {
  Clock::time_point deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (std::filesystem::exists(path)) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

// Alive and not a zombie waiting for whoever inherited it.
bool IsRunning(pid_t pid) {
  std::string stat = read_file_if_present("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

TEST(RunBoundedTest, ExitStatusOfAQuickCommand) {
  BoundedRun ok = RunBounded({"/bin/true"}, milliseconds(5000));
  EXPECT_EQ(ok.outcome, BoundedRun::Outcome::kExited);
  EXPECT_EQ(ok.wait_status, 0);
  BoundedRun failed = RunBounded({"/bin/sh", "-c", "exit 3"}, milliseconds(5000));
  EXPECT_EQ(failed.outcome, BoundedRun::Outcome::kExited);
  EXPECT_EQ(WEXITSTATUS(failed.wait_status), 3);
}

TEST(RunBoundedTest, TimeoutKillsSleep60WithinTheBound) {
  Clock::time_point start = Clock::now();
  BoundedRun run = RunBounded({"/bin/sleep", "60"}, milliseconds(300), milliseconds(200));
  milliseconds took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  EXPECT_EQ(run.outcome, BoundedRun::Outcome::kTimedOut);
  EXPECT_GE(took.count(), 300);
  EXPECT_LT(took.count(), 300 + 2 * 200 + 200);
  EXPECT_TRUE(WIFSIGNALED(run.wait_status));
  EXPECT_EQ(WTERMSIG(run.wait_status), SIGTERM);
}

// A collector that ignores SIGTERM, and its children, are killed with SIGKILL.
TEST(RunBoundedTest, IgnoredTermIsFollowedByKillOfTheWholeGroup) {
  ScratchDirectory dir{"spank"};
  std::string pid_file = dir.path().string() + "/child.pid";
  Clock::time_point start = Clock::now();
  BoundedRun run = RunBounded(
      {"/bin/sh", "-c", "trap '' TERM; sleep 60 & echo $! > " + pid_file + "; wait; sleep 60"},
      milliseconds(300), milliseconds(300));
  milliseconds took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  EXPECT_EQ(run.outcome, BoundedRun::Outcome::kTimedOut);
  EXPECT_LT(took.count(), 300 + 2 * 300 + 300);
  ASSERT_TRUE(WaitForFile(pid_file, milliseconds(100)));
  pid_t child = std::stoi(read_file(pid_file));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(IsRunning(child)) << "the collector's child survived";
}

TEST(RunBoundedTest, MissingProgramIsNotStarted) {
  BoundedRun run = RunBounded({"/nonexistent/firstfault-collect"}, milliseconds(1000));
  EXPECT_EQ(run.outcome, BoundedRun::Outcome::kNotStarted);
  EXPECT_NE(run.error.find("/nonexistent/firstfault-collect"), std::string::npos);
}

TEST(RunBoundedTest, ChildGetsCleanStdioAndEnvironment) {
  ScratchDirectory dir{"spank"};
  std::string out = dir.path().string() + "/out";
  setenv("FF_SECRET_OF_THE_JOB", "x", 1);
  BoundedRun run = RunBounded(
      {"/bin/sh", "-c", "{ env; ls /proc/self/fd; } > " + out + "; echo noise; echo err >&2"},
      milliseconds(5000));
  unsetenv("FF_SECRET_OF_THE_JOB");
  ASSERT_EQ(run.outcome, BoundedRun::Outcome::kExited);
  std::string seen = read_file(out);
  EXPECT_EQ(seen.find("FF_SECRET_OF_THE_JOB"), std::string::npos);
  EXPECT_NE(seen.find("PATH=/usr/local/sbin"), std::string::npos);
}

TEST(LaunchDetachedTest, ReturnsAtOnceAndTheCommandRunsOn) {
  ScratchDirectory dir{"spank"};
  std::string marker = dir.path().string() + "/ran";
  Clock::time_point start = Clock::now();
  std::string error = LaunchDetached({"/bin/sh", "-c", "sleep 0.5; echo ok > " + marker});
  milliseconds took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  EXPECT_EQ(error, "");
  EXPECT_LT(took.count(), 200) << "LaunchDetached waited for the command";
  EXPECT_FALSE(std::filesystem::exists(marker));
  ASSERT_TRUE(WaitForFile(marker, milliseconds(5000)));
  // No zombie of ours: the intermediate child was reaped, the command is not our child.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(LaunchDetachedTest, Sleep60DoesNotHoldTheCaller) {
  ScratchDirectory dir{"spank"};
  std::string pid_file = dir.path().string() + "/pid";
  Clock::time_point start = Clock::now();
  EXPECT_EQ(LaunchDetached({"/bin/sh", "-c", "echo $$ > " + pid_file + "; exec sleep 60"}), "");
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count(), 200);
  ASSERT_TRUE(WaitForFile(pid_file, milliseconds(5000)));
  std::this_thread::sleep_for(milliseconds(50));
  pid_t sleeper = std::stoi(read_file(pid_file));
  EXPECT_TRUE(IsRunning(sleeper));
  EXPECT_NE(getsid(sleeper), getsid(0)) << "not in its own session";
  kill(sleeper, SIGKILL);
}

TEST(LaunchDetachedTest, MissingProgramIsReported) {
  EXPECT_NE(LaunchDetached({"/nonexistent/firstfault-collect", "step"}), "");
  EXPECT_NE(LaunchDetached({}), "");
}

}  // namespace
}  // namespace firstfault::spank
