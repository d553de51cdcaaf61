// common/launch/detached_launch: the program runs on after the caller returned,
// outside the caller's session and process tree, with nothing of the caller's
// descriptors, signal state or environment beyond what it was given.
#include "common/launch/detached_launch.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ff {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class DetachedLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ff-detached-launch-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (pid_t pid : to_kill_) ::kill(pid, SIGKILL);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // /bin/sh -c `script` with a small fixed environment.
  DetachedCommand shell(const std::string& script) const {
    DetachedCommand command;
    command.argv = {"/bin/sh", "-c", script};
    command.environment = {"PATH=/usr/bin:/bin", "FF_GIVEN=yes"};
    return command;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The contents of `name` once the program has finished writing it (it
  // renames a temporary file into place), or "" after five seconds.
  std::string wait_for(const std::string& name) const {
    Clock::time_point deadline = Clock::now() + milliseconds(5000);
    while (Clock::now() < deadline) {
      if (fs::exists(dir_ / name)) {
        std::ifstream in(dir_ / name);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return "";
  }
  // A script fragment: run `command`, its output lands in `name` at once.
  std::string into(const std::string& name, const std::string& command) const {
    return "{ " + command + "; } > " + path(name) + ".tmp; mv " + path(name) + ".tmp " + path(name);
  }
  void kill_later(pid_t pid) { to_kill_.push_back(pid); }

  // The pid of `sleep` launched directly (no shell between, which could
  // clean up after the launcher), found by its argument; -1 when it did not start.
  pid_t launch_sleeper(DetachedCommand command) {
    std::string seconds = "60." + std::to_string(::getpid());
    command.argv = {"/bin/sleep", seconds};
    if (!launch_detached(command).ok()) return -1;
    std::string cmdline = std::string("/bin/sleep") + '\0' + seconds + '\0';
    Clock::time_point deadline = Clock::now() + milliseconds(5000);
    while (Clock::now() < deadline) {
      for (const auto& entry : fs::directory_iterator("/proc")) {
        std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        pid_t pid = std::stoi(name);
        if (read_proc(pid, "cmdline") == cmdline) {
          kill_later(pid);
          return pid;
        }
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return -1;
  }

  static std::string read_proc(pid_t pid, const std::string& file) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/" + file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  fs::path dir_;
  std::vector<pid_t> to_kill_;
};

// Field `index` (1-based, as in proc(5)) of /proc/<pid>/stat.
long stat_field(pid_t pid, int index) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t paren = text.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream rest(text.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= index && rest >> field; ++i) {
    if (i == index) return std::stol(field);
  }
  return -1;
}

TEST_F(DetachedLaunchTest, ReturnsAtOnceAndTheProgramRunsOnDetached) {
  Clock::time_point start = Clock::now();
  LaunchResult result = launch_detached(shell(into("pid", "echo $$") + "; exec sleep 60"));
  milliseconds took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  ASSERT_TRUE(result.ok()) << describe(result, shell(""));
  EXPECT_LT(took.count(), 200) << "the caller waited for the program";

  std::string pid_text = wait_for("pid");
  ASSERT_FALSE(pid_text.empty());
  pid_t program = std::stoi(pid_text);
  kill_later(program);
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(::kill(program, 0), 0) << "the program did not run on";
  // Not our child (the intermediate child is gone): re-parented to init or to
  // the nearest subreaper.
  EXPECT_NE(stat_field(program, 4), static_cast<long>(::getpid()));
  // A session of its own, and not its leader: it can never acquire a
  // controlling terminal; nor is it in our process group.
  EXPECT_NE(::getsid(program), ::getsid(0));
  EXPECT_NE(::getsid(program), program);
  EXPECT_NE(::getpgid(program), ::getpgrp());
  // Nothing is left for us to reap.
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

// slurmd waits for EOF on the Epilog's stdout: a pipe end that the caller holds
// without O_CLOEXEC must not live on in the program.
TEST_F(DetachedLaunchTest, InheritedDescriptorsAreClosedAndStdioIsDevNull) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t program = launch_sleeper(shell(""));
  ::close(fds[1]);
  ASSERT_GT(program, 0);
  pollfd reader{fds[0], POLLIN, 0};
  ASSERT_EQ(::poll(&reader, 1, 2000), 1) << "the program holds the pipe's write end";
  char byte;
  EXPECT_EQ(::read(fds[0], &byte, 1), 0);
  ::close(fds[0]);

  std::vector<std::string> open_fds;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(program) + "/fd")) {
    open_fds.push_back(entry.path().filename());
    EXPECT_EQ(fs::read_symlink(entry.path()), "/dev/null") << entry.path();
  }
  std::sort(open_fds.begin(), open_fds.end());
  EXPECT_EQ(open_fds, (std::vector<std::string>{"0", "1", "2"}));
}

TEST_F(DetachedLaunchTest, GetsExactlyTheGivenEnvironmentUmaskAndDirectory) {
  ::setenv("FF_SECRET_OF_THE_CALLER", "x", 1);
  DetachedCommand command = shell(into("env", "env; umask; pwd"));
  command.umask = 027;
  command.working_directory = dir_.string();
  LaunchResult result = launch_detached(command);
  ::unsetenv("FF_SECRET_OF_THE_CALLER");
  ASSERT_TRUE(result.ok());
  std::string seen = wait_for("env");
  EXPECT_NE(seen.find("FF_GIVEN=yes\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("PATH=/usr/bin:/bin\n"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("FF_SECRET_OF_THE_CALLER"), std::string::npos) << seen;
  EXPECT_NE(seen.find("0027\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find(fs::canonical(dir_).string() + "\n"), std::string::npos) << seen;
}

TEST_F(DetachedLaunchTest, CurrentEnvironmentIsPassedWhenAskedFor) {
  ::setenv("FF_INHERITED", "1", 1);
  DetachedCommand command = shell(into("env", "env"));
  command.environment = current_environment();
  LaunchResult result = launch_detached(command);
  ::unsetenv("FF_INHERITED");
  ASSERT_TRUE(result.ok());
  EXPECT_NE(wait_for("env").find("FF_INHERITED=1\n"), std::string::npos);
}

// slurmd and slurmstepd block and ignore signals of their own; the program
// starts with an empty mask and default dispositions.
TEST_F(DetachedLaunchTest, SignalMaskAndIgnoredSignalsAreReset) {
  sigset_t blocked;
  sigset_t previous_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR1);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &blocked, &previous_mask), 0);
  struct sigaction ignore {};
  struct sigaction previous_term {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGTERM, &ignore, &previous_term), 0);
  pid_t program = launch_sleeper(shell(""));
  ::sigaction(SIGTERM, &previous_term, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  ASSERT_GT(program, 0);

  std::istringstream status(read_proc(program, "status"));
  std::string line;
  int seen = 0;
  while (std::getline(status, line)) {
    if (line.rfind("SigBlk:", 0) == 0) {
      EXPECT_EQ(std::stoull(line.substr(7), nullptr, 16), 0u) << line;
      ++seen;
    } else if (line.rfind("SigIgn:", 0) == 0) {
      EXPECT_EQ(std::stoull(line.substr(7), nullptr, 16) & (1ull << (SIGTERM - 1)), 0u) << line;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
}

// The fast pass re-executes /proc/self/exe under its usual name.
TEST_F(DetachedLaunchTest, ProgramMayDifferFromArgvZero) {
  DetachedCommand command;
  command.program = "/bin/sh";
  command.argv = {"firstfault-collect", "-c", into("name", "echo $0")};
  LaunchResult result = launch_detached(command);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(wait_for("name"), "firstfault-collect\n");
}

// slurmstepd may ignore SIGCHLD, so the intermediate child is reaped by the
// kernel: that is not a failure.
TEST_F(DetachedLaunchTest, IgnoredSigchldIsNotAFailure) {
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &previous), 0);
  LaunchResult result = launch_detached(shell(into("ran", "echo ok")));
  ::sigaction(SIGCHLD, &previous, nullptr);
  EXPECT_TRUE(result.ok()) << describe(result, shell(""));
  EXPECT_EQ(wait_for("ran"), "ok\n");
}

TEST_F(DetachedLaunchTest, MissingOrEmptyProgramIsReportedBeforeAnyFork) {
  DetachedCommand missing;
  missing.argv = {"/nonexistent/firstfault-collect", "step"};
  LaunchResult result = launch_detached(missing);
  EXPECT_EQ(result.failure, LaunchFailure::kNotExecutable);
  EXPECT_EQ(result.errno_value, ENOENT);
  EXPECT_EQ(describe(result, missing),
            "cannot execute /nonexistent/firstfault-collect: No such file or directory");

  DetachedCommand not_executable;
  not_executable.argv = {path("plain-file")};
  std::ofstream(path("plain-file")) << "#!/bin/sh\n";
  EXPECT_EQ(launch_detached(not_executable).failure, LaunchFailure::kNotExecutable);

  EXPECT_EQ(launch_detached(DetachedCommand{}).failure, LaunchFailure::kEmptyCommand);
  DetachedCommand empty_name;
  empty_name.argv = {""};
  EXPECT_EQ(describe(launch_detached(empty_name), empty_name), "empty command");
}

// A relative program is found from the directory the program will run in, as
// exec will look for it after the chdir.
TEST_F(DetachedLaunchTest, RelativeProgramIsCheckedInTheWorkingDirectory) {
  DetachedCommand command;
  command.argv = {"bin/sh", "-c", into("ran", "echo ok")};
  command.working_directory = "/";
  EXPECT_TRUE(launch_detached(command).ok());
  EXPECT_EQ(wait_for("ran"), "ok\n");
  command.working_directory = dir_.string();
  EXPECT_EQ(launch_detached(command).failure, LaunchFailure::kNotExecutable);
}

}  // namespace
}  // namespace ff
