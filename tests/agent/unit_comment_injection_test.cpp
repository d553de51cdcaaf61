// The Comment leaves for Slurm as one argument of an exec'd scontrol (or
// sacctmgr), never through a shell: text with quotes, $(), backticks,
// newlines, escape sequences or a second "JobId=" cannot change what runs
// or which job is updated. Recording stand-ins for scontrol/sacctmgr keep
// each argument vector exactly, so argument boundaries are exact.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agent/slurm/comment_text.h"
#include "agent/slurm/slurm_client.h"
#include "tests/support/fake_command.h"
#include "tests/support/scratch_directory.h"

namespace {

namespace fs = std::filesystem;
using ff::agent::comment_text;
using ff::agent::SlurmClient;
using ff::agent::SlurmPaths;
using ff::test_support::FakeCommand;
using ff::test_support::ScratchDirectory;

// Stand-ins for scontrol (whose `show config` says accounting runs, so the
// Comment may go to the accounting record too) and firstfault-slurm-job, in
// a scratch directory.
class Recorder {
 public:
  Recorder() {
    scontrol_.answer_when({"show", "config"},
                          {.out = "SlurmUser = slurm(64030)\n"
                                  "AccountingStorageType = accounting_storage/slurmdbd\n"});
  }
  const fs::path& dir() const { return dir_.path(); }
  SlurmPaths paths() const {
    SlurmPaths p;
    p.scontrol = scontrol_.command();
    p.slurm_job_helper = helper_.command();
    return p;
  }
  // The argument vector of the last `scontrol update`.
  std::vector<std::string> scontrol_update() const {
    return scontrol_.last_call_starting({"update"});
  }
  // The argument vector of the last `firstfault-slurm-job --set-comment`.
  std::vector<std::string> set_comment_call() const {
    return helper_.last_call_starting({"--set-comment"});
  }
  // The payload would have created one of these if any shell had parsed it.
  bool anything_ran() const {
    for (const char* name : {"pwned1", "pwned2", "pwned3", "pwned4"})
      if (fs::exists(dir_ / name)) return true;
    return false;
  }

 private:
  ScratchDirectory dir_{"injection"};
  FakeCommand scontrol_{dir_.path(), "scontrol"};
  FakeCommand helper_{dir_.path(), "firstfault-slurm-job"};
};

std::string hostile(const fs::path& dir) {
  std::string d = dir.string();
  return "RuntimeError: \"; touch " + d + "/pwned1; echo \"$(touch " + d + "/pwned2)` touch " + d +
         "/pwned3` ' || touch " + d + "/pwned4 \\\n JobId=1 Comment=evil\r\x1b]0;title\x07" +
         "\x1b[31mred\x7f end";
}

bool printable_ascii(const std::string& s) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

TEST(CommentInjection, ScontrolGetsOneArgument) {
  Recorder rec;
  SlurmClient slurm(rec.paths());
  std::string text = hostile(rec.dir());
  EXPECT_EQ(slurm.set_comment("48213", text), "written");
  auto args = rec.scontrol_update();
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0], "update");
  EXPECT_EQ(args[1], "JobId=48213");
  EXPECT_EQ(args[2], "Comment=" + comment_text(text));
  EXPECT_TRUE(printable_ascii(args[2])) << args[2];
  EXPECT_FALSE(rec.anything_ran());
}

TEST(CommentInjection, TheAccountingCommentIsOneArgument) {
  Recorder rec;
  SlurmClient slurm(rec.paths());
  std::string text = hostile(rec.dir());
  EXPECT_EQ(slurm.set_comment_after_end("48213", text), "written: slurmdbd");
  auto args = rec.set_comment_call();
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[1], "48213");
  EXPECT_EQ(args[2], "0");
  EXPECT_EQ(args[3], comment_text(text));
  EXPECT_TRUE(printable_ascii(args[3])) << args[3];
  // slurmdbd puts it between single quotes in its SQL: none may be left.
  EXPECT_EQ(args[3].find('\''), std::string::npos);
  EXPECT_EQ(args[3].find('\\'), std::string::npos);
  EXPECT_FALSE(rec.anything_ran());
}

TEST(CommentInjection, CommentTextIsOneLineOfPrintableAscii) {
  std::string text = comment_text("a\nb\r\tc\x1b[0m\xc3\xa9 d\x7f");
  EXPECT_TRUE(printable_ascii(text)) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(comment_text(std::string(5000, 'x')).size(), ff::agent::kMaxCommentBytes);
}

// The Comment follows the rules of incident/slurm_text.h, as the engine's
// summary does: nothing a shell would act on if an operator pasted it.
TEST(CommentInjection, CommentTextHasNoShellQuotingLeft) {
  Recorder rec;
  std::string text = comment_text(hostile(rec.dir()));
  EXPECT_EQ(text.find_first_of("\"'`$\\"), std::string::npos) << text;
  EXPECT_EQ(text.find("  "), std::string::npos) << text;
  EXPECT_EQ(comment_text("RuntimeError: \"$(touch x)\" `id`\n JobId=1 Comment=evil \xc3\xa9"),
            "RuntimeError: (touch x) id JobId=1 Comment=evil ?");
  EXPECT_EQ(comment_text(text), text);
}

}  // namespace
