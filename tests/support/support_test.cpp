// The shared test scaffolding does what the tests built on it assume.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/fake_command.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace {

namespace fs = std::filesystem;
using ff::test_support::FakeCommand;
using ff::test_support::read_file;
using ff::test_support::read_file_if_present;
using ff::test_support::ScratchDirectory;
using ff::test_support::write_executable;
using ff::test_support::write_file;

// Runs `command` through sh with `input` on its standard input; returns its
// standard output, and its exit status in `status`.
std::string run(const ScratchDirectory& dir, const std::string& command, int& status,
                const std::string& input = "") {
  write_file(dir / "stdin", input);
  std::string line = command + " < " + FakeCommand::shell_quote((dir / "stdin").string()) + " > " +
                     FakeCommand::shell_quote((dir / "stdout").string()) + " 2> " +
                     FakeCommand::shell_quote((dir / "stderr").string());
  int raw = std::system(line.c_str());
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return read_file(dir / "stdout");
}

TEST(ScratchDirectory, IsFreshAndGoesAwayWithItsContents) {
  fs::path where;
  {
    ScratchDirectory a("support"), b("support");
    EXPECT_NE(a.path(), b.path());
    EXPECT_TRUE(fs::is_directory(a.path()));
    EXPECT_TRUE(fs::is_empty(a.path()));
    EXPECT_NE(a.path().filename().string().find("ff-support-"), std::string::npos);
    write_file(a / "deep/er/file", "x");
    where = a.path();
  }
  EXPECT_FALSE(fs::exists(where));
}

TEST(ScratchDirectory, KeptWhenAsked) {
  std::optional<std::string> before;
  if (const char* v = std::getenv("FF_KEEP_TEST_DIRS")) before = v;
  ::setenv("FF_KEEP_TEST_DIRS", "1", 1);
  fs::path where;
  {
    ScratchDirectory kept("support-kept");
    where = kept.path();
  }
  EXPECT_TRUE(fs::is_directory(where));
  fs::remove_all(where);
  ::setenv("FF_KEEP_TEST_DIRS", "0", 1);
  {
    ScratchDirectory removed("support-kept");
    where = removed.path();
  }
  EXPECT_FALSE(fs::exists(where));
  if (before)
    ::setenv("FF_KEEP_TEST_DIRS", before->c_str(), 1);
  else
    ::unsetenv("FF_KEEP_TEST_DIRS");
}

TEST(Files, RoundTripBytesAndSayWhatIsMissing) {
  ScratchDirectory dir("support");
  std::string bytes("a\0b\r\n\xff", 6);
  write_file(dir / "sub/file", bytes);
  EXPECT_EQ(read_file(dir / "sub/file"), bytes);
  EXPECT_EQ(read_file_if_present(dir / "absent"), "");
  try {
    read_file(dir / "absent");
    ADD_FAILURE() << "read_file of a missing file returned";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "absent").string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_file(dir / "sub/file/below-a-file", "x"), std::exception);
  write_executable(dir / "run.sh", "#!/bin/sh\necho ran\n");
  int status = -1;
  EXPECT_EQ(run(dir, FakeCommand::shell_quote((dir / "run.sh").string()), status), "ran\n");
  EXPECT_EQ(status, 0);
}

TEST(FakeCommand, RecordsEachArgumentExactly) {
  ScratchDirectory dir("support");
  FakeCommand scontrol(dir.path(), "scontrol");
  EXPECT_FALSE(scontrol.called());
  std::string hostile = "a b\n'\"$(touch " + (dir / "ran").string() + ")\\";
  int status = -1;
  run(dir, scontrol.command() + " update " + FakeCommand::shell_quote(hostile) + " ''", status);
  run(dir, scontrol.command(), status);
  auto calls = scontrol.call_args();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], (std::vector<std::string>{"update", hostile, ""}));
  EXPECT_TRUE(calls[1].empty());
  EXPECT_FALSE(fs::exists(dir / "ran"));
  EXPECT_EQ(scontrol.last_call_starting({"update"}), calls[0]);
  EXPECT_TRUE(scontrol.last_call_starting({"show"}).empty());
}

TEST(FakeCommand, AnswersByLeadingArguments) {
  ScratchDirectory dir("support");
  FakeCommand scontrol(dir.path(), "scontrol", {.out = "other\n", .exit_code = 4});
  scontrol.answer_when({"show", "config"}, {.out = "SlurmUser = slurm\n"})
      .answer_when({"show"}, {.err = "no such thing\n", .exit_code = 1});
  int status = -1;
  EXPECT_EQ(run(dir, scontrol.command() + " show config extra", status), "SlurmUser = slurm\n");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(run(dir, scontrol.command() + " show node", status), "");
  EXPECT_EQ(status, 1);
  EXPECT_EQ(read_file(dir / "stderr"), "no such thing\n");
  EXPECT_EQ(run(dir, scontrol.command() + " config show", status), "other\n");
  EXPECT_EQ(status, 4);
  EXPECT_EQ(scontrol.calls().size(), 3u);
}

TEST(FakeCommand, RecordsInputWhenAsked) {
  ScratchDirectory dir("support");
  FakeCommand sacctmgr(dir.path(), "sacctmgr");
  sacctmgr.record_input();
  int status = -1;
  run(dir, sacctmgr.command() + " -i", status, "line one\nline two");
  auto calls = sacctmgr.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].args, (std::vector<std::string>{"-i"}));
  EXPECT_EQ(calls[0].input, "line one\nline two");
}

}  // namespace
