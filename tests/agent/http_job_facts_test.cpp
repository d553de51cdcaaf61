// Where the agent learns a job's state, nodes and output paths. The job's
// Comment and output path are the user's text, and `scontrol show job -o`
// prints them among the fields: here a fake scontrol prints the job as Slurm
// 22.05 does for `--comment 'ok JobState=COMPLETED ExitCode=0:0
// NodeList=gpu-a01,victim-17'` and `-o '/tmp/x %j StdOut=<a file not the
// job's>'`,
// while firstfault-slurm-job (faked here too; the real one runs in
// tests/slurm/comment_injection.bats) gives libslurm's record of the same job.
// The incident and the diagnosis follow the record: FAILED on the three
// gpu-a nodes, no victim-17.
#include <gtest/gtest.h>

#include "tests/agent/agent_process.h"

namespace {

using namespace fftest;

// `other` is a file that is not the job's (a root-only file on a real head
// node).
std::string hostile_scontrol_line(const std::string& other) {
  return "JobId=48213 JobName=train UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=1 "
         "Nice=0 Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode "
         "Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=1:0 "
         "RunTime=02:51:28 StartTime=2026-11-02T08:00:14 EndTime=2026-11-02T10:51:42 "
         "Partition=debug NodeList=gpu-a[01-03] BatchHost=gpu-a01 NumNodes=3 WorkDir=/tmp "
         "Comment=ok JobState=COMPLETED ExitCode=0:0 NodeList=gpu-a01,victim-17 "
         "StdErr=/tmp/x 48213 StdOut=" +
         other + " StdIn=/dev/null StdOut=/tmp/x 48213 StdOut=" + other + " Power=";
}

// scontrol answers `show job` with that line; everything else as the
// fixture's scontrol does.
void answer_show_job_with_hostile_line(const fs::path& dir, const std::string& other) {
  fs::rename(dir / "scontrol", dir / "scontrol.fixture");
  write_file(dir / "show-job.txt", hostile_scontrol_line(other) + "\n");
  write_executable(dir / "scontrol",
                   "#!/bin/sh\n"
                   "if [ \"$1 $2\" = 'show job' ]; then cat '" +
                       (dir / "show-job.txt").string() +
                       "'; exit 0; fi\n"
                       "exec '" +
                       (dir / "scontrol.fixture").string() + "' \"$@\"\n");
}

// Every file under `root` whose path or content holds `needle`.
std::vector<std::string> mentions(const fs::path& root, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& rel : files_under(root)) {
    if (rel.find(needle) != std::string::npos ||
        read_file(root / rel).find(needle) != std::string::npos)
      out.push_back(rel);
  }
  return out;
}

TEST(JobFacts, FromTheRecordNotFromScontrolText) {
  ScratchDirectory elsewhere{"agent"};
  fs::path other = elsewhere.path() / "not-the-job.out";
  write_file(other, "NOT-THE-JOBS-OUTPUT\n");
  FakeSlurm s = ended_job();
  s.job["std_out"] = s.job["std_err"] = "/tmp/x 48213 StdOut=" + other.string();
  AgentProcess agent("", s);
  answer_show_job_with_hostile_line(agent.dir(), other.string());
  auto client = agent.client();
  for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL))
    ASSERT_EQ(upload(client, b)->status, 201);

  auto d = wait_for_diagnosis(client, "48213");
  ASSERT_TRUE(d) << agent.log();
  EXPECT_EQ((*d)["terminal_state"], "FAILED");
  EXPECT_EQ((*d)["verdict"], "attributed");
  ASSERT_FALSE((*d)["root_causes"].empty());
  EXPECT_EQ((*d)["root_causes"][0]["node"], "gpu-a02");
  json incident = json::parse(read_file(agent.state() / "jobs/48213/0/incident/job.json"));
  EXPECT_EQ(incident["nodes"], json({"gpu-a01", "gpu-a02", "gpu-a03"}));
  EXPECT_EQ(incident["state"], "FAILED");
  EXPECT_EQ(incident["exit_code"], "1:0");
  EXPECT_EQ(mentions(agent.state(), "victim-17"), std::vector<std::string>{}) << agent.log();
  EXPECT_EQ(mentions(agent.state(), "NOT-THE-JOBS-OUTPUT"), std::vector<std::string>{});
}

// A record naming a node that is not a node name ("..", a '/') is not used
// at all: the agent knows the job from its bundles, and no directory is
// made for that name.
TEST(JobFacts, ARecordWithAForgedNodeNameIsNotUsed) {
  FakeSlurm s = ended_job();
  s.job["nodes"] = {"gpu-a01", "../../../escaped", "gpu-a03"};
  s.job["state"] = "COMPLETED";
  s.job["exit_code"] = "0:0";
  AgentProcess agent("", s);
  auto client = agent.client();
  for (const auto& b : example_bundles("01-xid79-fallen-off-bus", "epilog", 1796000000000000000LL))
    ASSERT_EQ(upload(client, b)->status, 201);

  auto d = wait_for_diagnosis(client, "48213");
  ASSERT_TRUE(d) << agent.log();
  EXPECT_EQ((*d)["verdict"], "attributed");
  EXPECT_NE((*d)["terminal_state"], "COMPLETED");
  json incident = json::parse(read_file(agent.state() / "jobs/48213/0/incident/job.json"));
  EXPECT_EQ(incident["nodes"], json({"gpu-a01", "gpu-a02", "gpu-a03"}));
  EXPECT_EQ(mentions(agent.state(), "escaped"), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(agent.state() / "jobs/escaped"));
  EXPECT_NE(agent.log().find("'nodes' holds something that is not a node name"), std::string::npos)
      << agent.log();
}

}  // namespace
