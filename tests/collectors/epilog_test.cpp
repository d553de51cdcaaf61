// The Epilog returns 0 at once, whatever its environment, and slurmd sees EOF
// on its stdout right away even though the collector it started keeps running.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;
using Clock = std::chrono::steady_clock;

struct EpilogRun {
  int exit_code = -1;
  double seconds = 0;  // until EOF on its stdout and its exit, as slurmd waits
  std::string output;
};

// Runs the Epilog as slurmd does: an exact environment, stdout read to EOF.
EpilogRun run_epilog(const std::string& env, const std::string& args) {
  std::string command = "env -i " + env + " " + FF_EPILOG_BINARY + " " + args + " 2>&1";
  EpilogRun run;
  auto start = Clock::now();
  std::FILE* p = ::popen(command.c_str(), "r");
  char buf[256];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) run.output.append(buf, n);
  int status = ::pclose(p);
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(Epilog, EmptyEnvironmentExitsZeroAtOnce) {
  EpilogRun run = run_epilog("", "");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_LT(run.seconds, 1.0);
  EXPECT_EQ(run.output, "");
}

TEST(Epilog, UnwritableSpoolAndMissingCollectorExitZero) {
  ScratchDirectory dir{"collector"};
  testing::write_file(dir / "node.yaml",
                      "spool: /proc/firstfault-cannot-exist/%n\ncollector: /nonexistent/collect\n");
  EpilogRun run =
      run_epilog("SLURM_JOB_ID=12 SLURMD_NODENAME=n2", "--config " + (dir / "node.yaml").string());
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_LT(run.seconds, 1.0);
}

TEST(Epilog, UnreadableConfigFallsBackToDefaults) {
  ScratchDirectory dir{"collector"};
  std::filesystem::create_directories(dir / "node.yaml");  // a directory: unreadable as a file
  EpilogRun run = run_epilog("SLURM_JOB_ID=x/../../etc SLURMD_NODENAME=n2",
                             "--config " + (dir / "node.yaml").string());
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_LT(run.seconds, 1.0);
}

TEST(Epilog, HandsOffAndDetachesTheCollector) {
  ScratchDirectory dir{"collector"};
  // A stand-in collector that outlives the Epilog by far, then records its arguments.
  std::filesystem::path args_file = dir / "args";
  ff::test_support::write_executable(
      dir / "collect.sh", "#!/bin/sh\nsleep 2\necho \"$@\" > " + args_file.string() + "\nexit 0\n");
  testing::write_file(dir / "node.yaml",
                      "agent_url: http://head:7421\nspool: " + (dir / "spool-%n").string() +
                          "   # per node\ncollector: \"" + (dir / "collect.sh").string() + "\"\n");
  EpilogRun run = run_epilog(
      "SLURM_JOB_ID=12 SLURMD_NODENAME=n2 'SLURM_NODELIST=n[1-3]' SLURM_JOB_EXIT_CODE=1280 "
      "SLURM_JOB_EXIT_CODE2=5:0 SLURM_JOB_DERIVED_EC=1792 SLURM_JOB_STDOUT=/home/u/slurm-12.out "
      "SLURM_JOB_STDERR=/home/u/slurm-12.out SLURM_JOB_UID=1234",
      "--config " + (dir / "node.yaml").string());
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_LT(run.seconds, 1.0) << "slurmd would wait for the collector";

  auto pending = nlohmann::json::parse(testing::read_file(dir / "spool-n2/pending/12.json"));
  EXPECT_EQ(pending["job_id"], "12");
  EXPECT_EQ(pending["node"], "n2");
  EXPECT_EQ(pending["nodelist"], "n[1-3]");
  EXPECT_EQ(pending["exit_code"], "5:0");
  EXPECT_EQ(pending["derived_ec"], "1792");
  EXPECT_EQ(pending["stdout"], "/home/u/slurm-12.out");
  EXPECT_EQ(pending["uid"], "1234");

  for (int i = 0; i < 50 && !std::filesystem::exists(args_file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::string args = testing::read_file(args_file);
  EXPECT_EQ(args, "epilog --job 12 --node n2 --config " + (dir / "node.yaml").string() +
                      " --nodelist n[1-3] --exit-code 5:0 --derived-ec 1792 --stdout "
                      "/home/u/slurm-12.out --stderr /home/u/slurm-12.out --uid 1234\n");
}

}  // namespace
}  // namespace ff::collect
