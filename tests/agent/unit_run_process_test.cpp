// common/run_process: argument vectors are never interpreted, output is
// captured and bounded, stdin is fed, the time bound kills.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "common/run_process.h"

namespace {

using ff::ProcessOptions;
using ff::run_process;
using namespace std::chrono_literals;

TEST(RunProcess, CapturesStdoutStderrAndExitCode) {
  auto r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.ok());
}

TEST(RunProcess, ChildInheritsNoDescriptorButStdio) {
  // A descriptor without close-on-exec, as a thread may hold one at any time.
  int fd = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, 200), 200);
  ::close(fd);
  auto r = run_process({"/bin/ls", "/proc/self/fd"});
  ::close(200);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("200"), std::string::npos) << r.out;
}

TEST(RunProcess, ArgumentsWithQuotesAndShellSyntaxAreNotExecuted) {
  std::string marker = "/tmp/ff-run-process-" + std::to_string(::getpid());
  std::filesystem::remove(marker);
  std::string arg =
      "$(touch " + marker + ") `touch " + marker + "` ; touch " + marker + " 'quoted' \"double\"";
  auto r = run_process({"/bin/echo", arg});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, arg + "\n");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(RunProcess, FeedsStdin) {
  ProcessOptions o;
  o.stdin_text = std::string(300000, 'x') + "\n";  // larger than a pipe buffer
  auto r = run_process({"/usr/bin/wc", "-c"}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "300001\n");
}

TEST(RunProcess, StdinIsDevNullByDefault) {
  auto r = run_process({"/bin/cat"});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "");
}

TEST(RunProcess, TimeoutTerminatesTheChild) {
  ProcessOptions o;
  o.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  auto r = run_process({"/bin/sleep", "30"}, o);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(took, 5s);
}

TEST(RunProcess, ChildIgnoringSigtermIsKilled) {
  ProcessOptions o;
  o.timeout = 200ms;
  o.kill_grace = 200ms;
  auto start = std::chrono::steady_clock::now();
  auto r = run_process({"/bin/sh", "-c", "trap '' TERM; sleep 30 & wait; sleep 30"}, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(RunProcess, GrandchildHoldingThePipeDoesNotBlock) {
  ProcessOptions o;
  o.timeout = 10s;
  auto start = std::chrono::steady_clock::now();
  auto r = run_process({"/bin/sh", "-c", "sleep 5 & echo started"}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(RunProcess, OutputIsBounded) {
  ProcessOptions o;
  o.max_output_bytes = 1000;
  auto r = run_process({"/bin/sh", "-c", "head -c 1000000 /dev/zero"}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out_truncated);
}

TEST(RunProcess, MissingProgramIsReported) {
  auto r = run_process({"/nonexistent/program"});
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.error.empty());
  EXPECT_NE(r.describe().find("not started"), std::string::npos);
  EXPECT_FALSE(run_process({}).started);
}

TEST(RunProcess, ProgramLookedUpInPath) {
  auto r = run_process({"true"});
  EXPECT_TRUE(r.ok());
}

}  // namespace
