// The drain leaves for Slurm as an exec'd `scontrol update NodeName=<node>
// State=DRAIN Reason=<reason>`, never through a shell: a reason with quotes,
// $(), backticks or newlines arrives as one sanitized argument, and a node
// name that is a hostlist or a second assignment drains nothing. A recording
// stand-in for scontrol keeps its argument vectors exactly.
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
using ff::agent::SlurmClient;
using ff::agent::SlurmPaths;
using ff::test_support::FakeCommand;
using ff::test_support::ScratchDirectory;

class RecordingScontrol {
 public:
  // `show node` prints `node_line`; every call records its arguments.
  explicit RecordingScontrol(const std::string& node_line = "") {
    scontrol_.answer_when({"show", "node"}, {.out = node_line + "\n"});
  }
  const fs::path& dir() const { return dir_.path(); }
  SlurmPaths paths() const {
    SlurmPaths p;
    p.scontrol = scontrol_.command();
    p.sacctmgr = "";
    return p;
  }
  // The arguments of the last call.
  std::vector<std::string> args() const { return scontrol_.last_call_starting({}); }
  bool called() const { return scontrol_.called(); }
  // From now on every call fails as scontrol does on a node it does not know.
  void fail_every_call() {
    scontrol_.answer_otherwise(
        {.err = "slurm_update error: Invalid node name specified\n", .exit_code = 1});
  }
  bool anything_ran() const {
    return fs::exists(dir_ / "pwned1") || fs::exists(dir_ / "pwned2") ||
           fs::exists(dir_ / "pwned3");
  }

 private:
  ScratchDirectory dir_{"drain"};
  FakeCommand scontrol_{dir_.path(), "scontrol"};
};

TEST(DrainScontrol, ExactArgumentVector) {
  RecordingScontrol rec;
  SlurmClient slurm(rec.paths());
  EXPECT_EQ(slurm.drain_node("n2", "firstfault: gpu.fallen_off_bus 00000000:3B:00.0 in jobs 12,13"),
            "drained");
  EXPECT_EQ(rec.args(),
            (std::vector<std::string>{"update", "NodeName=n2", "State=DRAIN",
                                      "Reason=firstfault: gpu.fallen_off_bus 00000000:3B:00.0 in "
                                      "jobs 12,13"}));
}

TEST(DrainScontrol, AHostileReasonIsOneSanitizedArgument) {
  RecordingScontrol rec;
  SlurmClient slurm(rec.paths());
  std::string d = rec.dir().string();
  std::string reason = "firstfault: \"; touch " + d + "/pwned1; echo \"$(touch " + d +
                       "/pwned2)` touch " + d + "/pwned3`\n NodeName=n[1-64] State=DOWN\r\x1b[31m" +
                       std::string(400, 'x');
  EXPECT_EQ(slurm.drain_node("n2", reason), "drained");
  auto args = rec.args();
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[1], "NodeName=n2");
  EXPECT_EQ(args[2], "State=DRAIN");
  EXPECT_EQ(args[3], "Reason=" + ff::slurm_safe_text(reason, ff::agent::kMaxDrainReasonBytes));
  EXPECT_LE(args[3].size(), 7 + ff::agent::kMaxDrainReasonBytes);
  for (char c : args[3]) EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << args[3];
  EXPECT_FALSE(rec.anything_ran());
}

TEST(DrainScontrol, OnlyAPlainNodeNameIsDrained) {
  for (std::string node : {"n[1-64]", "n1,n2", "n2 State=RESUME", "", "-h", "n2\nn3"}) {
    RecordingScontrol rec;
    SlurmClient slurm(rec.paths());
    EXPECT_EQ(slurm.drain_node(node, "firstfault: x").rfind("failed: not a plain node name", 0), 0u)
        << node;
    EXPECT_FALSE(rec.called()) << node;
  }
}

TEST(DrainScontrol, AFailingScontrolIsReported) {
  RecordingScontrol rec;
  rec.fail_every_call();
  SlurmClient slurm(rec.paths());
  std::string status = slurm.drain_node("n9", "firstfault: x");
  EXPECT_EQ(status.rfind("failed: ", 0), 0u) << status;
  EXPECT_NE(status.find("Invalid node name"), std::string::npos) << status;
}

TEST(DrainScontrol, NodeState) {
  RecordingScontrol drained(
      "NodeName=n2 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=IDLE+DRAIN ThreadsPerCore=1 "
      "Reason=firstfault: gpu.fallen_off_bus in jobs 12,13 [root@2026-12-01T10:00:00]");
  auto state = SlurmClient(drained.paths()).node_state("n2");
  EXPECT_EQ(drained.args(), (std::vector<std::string>{"show", "node", "-o", "n2"}));
  ASSERT_TRUE(state.known) << state.error;
  EXPECT_EQ(state.state, "IDLE+DRAIN");
  EXPECT_TRUE(state.unavailable());

  RecordingScontrol idle("NodeName=n2 Arch=x86_64 State=MIXED ThreadsPerCore=1");
  state = SlurmClient(idle.paths()).node_state("n2");
  ASSERT_TRUE(state.known);
  EXPECT_FALSE(state.unavailable());

  // Another node's record (a hostlist answered) is not this node's state.
  RecordingScontrol other("NodeName=n3 State=IDLE");
  EXPECT_FALSE(SlurmClient(other.paths()).node_state("n2").known);
}

}  // namespace
