// agent/slurm: `scontrol show job -o` and `show config` output as captured
// from Slurm 22.05, parsed into the fields the agent uses.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "slurm/comment_text.h"
#include "slurm/slurm_job.h"

namespace {

using namespace ff::agent;

// A 22.05 `scontrol show job -o 12` line (one line; values with spaces).
const std::string kFailedJob =
    "JobId=12 JobName=train job UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A "
    "Priority=4294901757 Nice=0 Account=(null) QOS=(null) JobState=FAILED "
    "Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=2 BatchFlag=1 Reboot=0 "
    "ExitCode=5:0 RunTime=00:00:03 TimeLimit=UNLIMITED TimeMin=N/A "
    "SubmitTime=2026-11-30T05:01:00 EligibleTime=2026-11-30T05:01:00 AccrueTime=Unknown "
    "StartTime=2026-11-30T05:01:02 EndTime=2026-11-30T05:01:05 Deadline=N/A "
    "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-30T05:01:02 Scheduler=Main "
    "Partition=debug AllocNode:Sid=head:1234 ReqNodeList=(null) ExcNodeList=(null) "
    "NodeList=n[1-3] BatchHost=n1 NumNodes=3 NumCPUs=3 NumTasks=3 CPUs/Task=1 "
    "ReqB:S:C:T=0:0:*:* TRES=cpu=3,node=3,billing=3 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* "
    "CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) "
    "DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) "
    "Command=/home/alice/train.sh WorkDir=/home/alice/my runs "
    "Comment=gpu/fallen_off_bus on n2 (Xid 79) StdErr=/home/alice/slurm-12.err "
    "StdIn=/dev/null StdOut=/home/alice/slurm-12.out Power=";

class ScontrolParserUtc : public ::testing::Test {
 protected:
  void SetUp() override { setenv("TZ", "UTC", 1), tzset(); }
};

TEST_F(ScontrolParserUtc, ParsesTheFieldsTheAgentUses) {
  auto job = parse_show_job(kFailedJob + "\n");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->job_id, "12");
  EXPECT_EQ(job->state, "FAILED");
  EXPECT_FALSE(job->running());
  EXPECT_EQ(job->exit_code, "5:0");
  EXPECT_EQ(job->start_time, "2026-11-30T05:01:02Z");
  EXPECT_EQ(job->end_time, "2026-11-30T05:01:05Z");
  EXPECT_EQ(job->nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(job->batch_host, "n1");
  EXPECT_EQ(job->std_out, "/home/alice/slurm-12.out");
  EXPECT_EQ(job->std_err, "/home/alice/slurm-12.err");
  EXPECT_EQ(job->user, "alice");
  EXPECT_EQ(job->uid, 1001);
  EXPECT_EQ(job->restart_count, 2);
  EXPECT_EQ(job->comment, "gpu/fallen_off_bus on n2 (Xid 79)");
  EXPECT_EQ(job->fields.at("WorkDir"), "/home/alice/my runs");
  EXPECT_EQ(job->fields.at("JobName"), "train job");
  EXPECT_EQ(job->fields.at("TRES"), "cpu=3,node=3,billing=3");
}

TEST_F(ScontrolParserUtc, RunningJobHasNoEndYetAndNullsAreEmpty) {
  auto job = parse_show_job(
      "JobId=7 JobName=x UserId=root(0) JobState=RUNNING Reason=None ExitCode=0:0 "
      "StartTime=2026-11-30T05:01:02 EndTime=Unknown NodeList=gpu-a[01-02] BatchHost=gpu-a01 "
      "Comment=(null) StdOut=/tmp/o");
  ASSERT_TRUE(job);
  EXPECT_TRUE(job->running());
  EXPECT_EQ(job->end_time, "");
  EXPECT_EQ(job->comment, "");
  EXPECT_EQ(job->restart_count, 0);
  EXPECT_EQ(job->nodes, (std::vector<std::string>{"gpu-a01", "gpu-a02"}));
}

// Captured on the three-node test cluster (Slurm 22.05.8) after an end-to-end
// run: the Comment the agent wrote, with spaces, parentheses and ';'.
const std::string kCapturedJob =
    "JobId=23 JobName=ff-e2e-hang UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=42949"
    "01737 Nice=0 Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode Dependency"
    "=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=1:0 RunTime=00:00:04 TimeLimi"
    "t=365-00:00:00 TimeMin=N/A SubmitTime=2026-11-30T05:14:34 EligibleTime=2026-11-30T05:14:"
    "34 AccrueTime=2026-11-30T05:14:34 StartTime=2026-11-30T05:14:34 EndTime=2026-11-30T05:14"
    ":38 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-30T05:14:34 Sch"
    "eduler=Backfill Partition=debug AllocNode:Sid=localhost:24543 ReqNodeList=(null) ExcNode"
    "List=(null) NodeList=n[1-3] BatchHost=n1 NumNodes=3 NumCPUs=3 NumTasks=3 CPUs/Task=1 Req"
    "B:S:C:T=0:0:*:* TRES=cpu=3,node=3,billing=3 Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSp"
    "ec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 O"
    "verSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/var/"
    "tmp/ff-e2e.OsWnOa Comment=gpu/fallen_off_bus on n2 (Xid 79, 00000000:3B:00.0); 2 other n"
    "odes saw srun task exits  StdErr=/var/tmp/ff-e2e.OsWnOa/slurm-23.out StdIn=/dev/null Std"
    "Out=/var/tmp/ff-e2e.OsWnOa/slurm-23.out Power=";

TEST(ScontrolParser, CapturedFromTheTestCluster) {
  auto job = parse_show_job(kCapturedJob + " \n");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->job_id, "23");
  EXPECT_EQ(job->state, "FAILED");
  EXPECT_EQ(job->exit_code, "1:0");
  EXPECT_EQ(job->nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(job->batch_host, "n1");
  EXPECT_EQ(job->restart_count, 0);
  EXPECT_EQ(job->user, "root");
  EXPECT_EQ(job->uid, 0);
  EXPECT_EQ(job->comment.rfind("gpu/fallen_off_bus on n2 (Xid 79, 00000000:3B:00.0);", 0), 0u);
  EXPECT_EQ(job->std_out.substr(job->std_out.size() - 13), "/slurm-23.out");
}

TEST(ScontrolParser, ArrayTaskIsNamedByItsArrayId) {
  auto job = parse_show_job("JobId=13 ArrayJobId=11 ArrayTaskId=2 JobState=COMPLETING\n");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->job_id, "11_2");
  EXPECT_TRUE(job->running());
}

// slurmctld refuses a Comment once the job's base state is past SUSPENDED;
// COMPLETING (the Epilog runs) is already too late.
TEST(ScontrolParser, OnlyALiveJobAcceptsAComment) {
  for (const char* state : {"PENDING", "RUNNING", "SUSPENDED", "CONFIGURING"})
    EXPECT_TRUE(parse_show_job(std::string("JobId=5 JobState=") + state + "\n")->accepts_comment())
        << state;
  for (const char* state : {"COMPLETING", "FAILED", "TIMEOUT", "COMPLETED", "STAGE_OUT"})
    EXPECT_FALSE(parse_show_job(std::string("JobId=5 JobState=") + state + "\n")->accepts_comment())
        << state;
}

TEST(ScontrolParser, NoRecordIsNotFound) {
  EXPECT_FALSE(parse_show_job(""));
  EXPECT_FALSE(parse_show_job("slurm_load_jobs error: Invalid job id specified\n"));
}

TEST(ScontrolParser, ShowConfig) {
  auto c = parse_show_config(
      "Configuration data as of 2026-11-30T05:00:00\n"
      "AccountingStorageType   = accounting_storage/slurmdbd\n"
      "SlurmUser               = slurm(64030)\n"
      "Epilog                  = /etc/slurm/epilog.d/*\n");
  EXPECT_EQ(c["AccountingStorageType"], "accounting_storage/slurmdbd");
  EXPECT_EQ(c["SlurmUser"], "slurm(64030)");
  EXPECT_EQ(c["Epilog"], "/etc/slurm/epilog.d/*");
}

TEST(CommentText, PrintableAsciiAndBounded) {
  EXPECT_EQ(comment_text("gpu on n2\n\tbad \x01 byte \xc3\xa9"), "gpu on n2 bad byte ??");
  EXPECT_EQ(comment_text(std::string(5000, 'a')).size(), kMaxCommentBytes);
  EXPECT_EQ(comment_text("  "), "");
}

}  // namespace
