// The Comment leaves for Slurm as one argument of an exec'd scontrol (or
// sacctmgr), never through a shell: text with quotes, $(), backticks,
// newlines, escape sequences or a second "JobId=" cannot change what runs
// or which job is updated. A recording stand-in for scontrol/sacctmgr writes
// its argument vector NUL-separated, so argument boundaries are exact.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agent/slurm/comment_text.h"
#include "agent/slurm/slurm_client.h"
#include "tests/agent/recorded_args.h"

namespace {

namespace fs = std::filesystem;
using ff::agent::comment_text;
using ff::agent::SlurmClient;
using ff::agent::SlurmPaths;

class Recorder {
 public:
  Recorder() {
    char tmpl[] = "/tmp/ff-injection-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    write_script("scontrol",
                 "if [ \"$1 $2\" = 'show config' ]; then\n"
                 "  echo 'SlurmUser = slurm(64030)'\n"
                 "  echo 'AccountingStorageType = accounting_storage/slurmdbd'\n"
                 "  exit 0\n"
                 "fi\n");
    write_script("sacctmgr", "");
  }
  ~Recorder() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& dir() const { return dir_; }
  SlurmPaths paths() const {
    SlurmPaths p;
    p.scontrol = (dir_ / "scontrol").string();
    p.sacctmgr = (dir_ / "sacctmgr").string();
    return p;
  }
  // The argument vector of the last call of `program`.
  std::vector<std::string> args(const std::string& program) const {
    return fftest::read_recorded_args(dir_ / (program + ".args"));
  }
  // The payload would have created one of these if any shell had parsed it.
  bool anything_ran() const {
    for (const char* name : {"pwned1", "pwned2", "pwned3", "pwned4"})
      if (fs::exists(dir_ / name)) return true;
    return false;
  }

 private:
  void write_script(const std::string& name, const std::string& before) {
    fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n"
                     << before << "printf '%s\\0' \"$@\" > '" << (dir_ / (name + ".args")).string()
                     << "'\n";
    fs::permissions(p, fs::perms::owner_all);
  }
  fs::path dir_;
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
  auto args = rec.args("scontrol");
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0], "update");
  EXPECT_EQ(args[1], "JobId=48213");
  EXPECT_EQ(args[2], "Comment=" + comment_text(text));
  EXPECT_TRUE(printable_ascii(args[2])) << args[2];
  EXPECT_FALSE(rec.anything_ran());
}

TEST(CommentInjection, SacctmgrGetsOneArgument) {
  Recorder rec;
  SlurmClient slurm(rec.paths());
  std::string text = hostile(rec.dir());
  EXPECT_EQ(slurm.set_comment_after_end("48213", text), "written: sacctmgr");
  auto args = rec.args("sacctmgr");
  ASSERT_EQ(args.size(), 7u);
  EXPECT_EQ(args[0], "-i");
  EXPECT_EQ(args[4], "jobid=48213");
  EXPECT_EQ(args[5], "set");
  EXPECT_EQ(args.back(), "Comment=" + comment_text(text));
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
