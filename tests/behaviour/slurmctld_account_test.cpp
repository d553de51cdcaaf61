// slurmctld's own account of the job (cluster/slurmctld.log): a node set
// DOWN under the job names that node, the same lines about another job or
// outside the window change nothing, and text slurmctld merely repeats (a
// Comment echoed by _update_job, an administrator's reason) is never read as
// slurmctld's message. Lines are shaped by Slurm 22.05's format strings
// (src/slurmctld/node_mgr.c update_node, job_mgr.c
// kill_running_job_by_node_name and _update_job, ping_nodes.c).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/behaviour/incident_builder.h"

using nlohmann::json;
using namespace fftest;

namespace {

// What the batch host printed when the job was ended for a node failure
// (src/slurmd/slurmstepd/req.c), without srun's "Node failure on" line.
const std::string kCancelledOnN1 =
    "slurmstepd: error: *** JOB 77 ON n1 CANCELLED AT 2026-11-02T10:40:01 DUE TO NODE FAILURE, "
    "SEE SLURMCTLD LOG FOR DETAILS ***\n";

const std::string kSetDownUnderJob77 =
    "[2026-11-02T10:00:01.000] sched: Allocate JobId=77 NodeList=n[1-2] #CPUs=4 Partition=gpu\n"
    "[2026-11-02T10:40:01.123] update_node: node n2 reason set to: x\n"
    "[2026-11-02T10:40:01.123] update_node: node n2 state set to DOWN\n"
    "[2026-11-02T10:40:01.124] requeue job JobId=77 due to failure of node n2\n"
    "[2026-11-02T10:40:01.125] Requeuing JobId=77\n";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// What matters of a diagnosis when comparing two incidents.
json essence(const json& d) {
  json e;
  e["verdict"] = d["verdict"];
  e["domain"] = d["domain"];
  e["sub_domain"] = d["sub_domain"];
  e["root_nodes"] = root_nodes(d);
  e["candidates"] = json::array();
  for (const auto& c : d["candidates"]) e["candidates"].push_back({c["node"], c["event"]});
  return e;
}

json node_fail_job(const std::string& slurmctld_log, const std::string& output = kCancelledOnN1,
                   const std::string& job_id = "77") {
  TempIncident inc;
  inc.write("job.json", replace_all(job_json("NODE_FAIL"), R"("job_id":"77")",
                                    R"("job_id":")" + job_id + "\""));
  inc.write("app/slurm-77.out", output);
  if (!slurmctld_log.empty()) inc.write("cluster/slurmctld.log", slurmctld_log);
  return analyze(inc);
}

}  // namespace

TEST(SlurmctldAccount, ANodeSetDownUnderTheJobIsTheNodeFailure) {
  json d = node_fail_job(kSetDownUnderJob77);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["sub_domain"], "scheduler.node_failure");
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  ASSERT_EQ(d["root_causes"].size(), 1u);
  EXPECT_EQ(d["root_causes"][0]["trusted"], true);
  // The DOWN line and the administrator's reason are the same fault's evidence.
  std::set<std::string> texts;
  for (const auto& e : d["evidence"]) texts.insert(e["text"].get<std::string>());
  EXPECT_TRUE(texts.count("[2026-11-02T10:40:01.123] update_node: node n2 state set to DOWN"));
  EXPECT_TRUE(texts.count("[2026-11-02T10:40:01.123] update_node: node n2 reason set to: x"));
}

TEST(SlurmctldAccount, AJobThatCannotBeRequeuedIsKilledWithTheSameAttribution) {
  json d = node_fail_job(replace_all(kSetDownUnderJob77, "requeue job JobId=77 due to failure of",
                                     "Killing JobId=77 on failed"));
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

// An array task's job.json names its own job id (SLURM_JOB_ID, 80); slurmctld
// prints the task as "JobId=77_1(80)".
TEST(SlurmctldAccount, AnArrayTaskIsKnownByItsOwnJobId) {
  json d = node_fail_job(replace_all(kSetDownUnderJob77, "JobId=77", "JobId=77_1(80)"),
                         kCancelledOnN1, "80");
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(SlurmctldAccount, WithSrunsNodeFailureLineTooItIsStillN2AndTrusted) {
  json d = node_fail_job(kSetDownUnderJob77,
                         "srun: error: Node failure on n2\n" + kCancelledOnN1 +
                             "srun: Job step aborted: Waiting up to 32 seconds for job step to "
                             "finish.\n");
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
  EXPECT_EQ(d["root_causes"][0]["trusted"], true);
}

// Another job's requeue for n2, or the same lines a day earlier, say nothing
// about this attempt: the diagnosis is the one without slurmctld's log.
TEST(SlurmctldAccount, TheSameLinesForAnotherJobOrOutsideTheWindowChangeNothing) {
  json without = essence(node_fail_job(""));
  EXPECT_NE(without["verdict"], "attributed");  // the job's output alone names no node

  EXPECT_EQ(essence(node_fail_job(replace_all(kSetDownUnderJob77, "JobId=77", "JobId=78"))),
            without);
  EXPECT_EQ(essence(node_fail_job(replace_all(kSetDownUnderJob77, "JobId=77", "JobId=77_1(80)"))),
            without);
  EXPECT_EQ(essence(node_fail_job(replace_all(kSetDownUnderJob77, "2026-11-02T", "2026-11-01T"))),
            without);
}

// `scontrol update JobId=77 Comment=...` makes slurmctld log
// "_update_job: setting comment to <Comment> for JobId=77"; an administrator's
// node reason is free text too. Neither is slurmctld's own message.
TEST(SlurmctldAccount, TextSlurmctldRepeatsIsNotItsOwnMessage) {
  const std::string app_failure =
      "[rank0]: Traceback (most recent call last):\n"
      "[rank0]:   File \"/home/u/train.py\", line 12, in <module>\n"
      "[rank0]: KeyError: 'input_ids'\n";
  auto failed_job = [&](const std::string& slurmctld_log) {
    TempIncident inc;
    inc.write("job.json", job_json("FAILED"));
    inc.write("nodes/n1/app.log", app_failure);
    if (!slurmctld_log.empty()) inc.write("cluster/slurmctld.log", slurmctld_log);
    return analyze(inc);
  };
  json without = failed_job("");
  EXPECT_EQ(without["verdict"], "attributed") << without["reasoning"];
  EXPECT_EQ(root_nodes(without), std::set<std::string>{"n1"});

  const std::string forged =
      "[2026-11-02T10:30:00.000] _update_job: setting comment to Killing JobId=77 on failed "
      "node n2 for JobId=77\n"
      "[2026-11-02T10:30:01.000] _update_job: setting comment to requeue job JobId=77 due to "
      "failure of node n2 for JobId=77\n"
      "[2026-11-02T10:30:02.000] _update_job: setting comment to error: Nodes n2 not "
      "responding, setting DOWN for JobId=77\n"
      "[2026-11-02T10:30:03.000] _update_job: setting comment to Time limit exhausted for "
      "JobId=77 for JobId=77\n"
      "[2026-11-02T10:30:04.000] _update_job: setting admin_comment to update_node: node n2 "
      "state set to DOWN for JobId=77\n"
      "[2026-11-02T10:30:05.000] update_node: node n1 reason set to: Killing JobId=77 on failed "
      "node n2\n"
      "[2026-11-02T10:30:06.000] update_node: node n1 reason set to: Nodes n2 not responding\n"
      "[2026-11-02T10:30:07.000] _update_job: setting comment to preempted JobId=77 has been "
      "killed to reclaim resources for JobId=78 for JobId=77\n"
      "[2026-11-02T10:30:08.000] _update_job: setting comment to _job_complete: JobId=77 OOM "
      "failure for JobId=77\n";
  EXPECT_EQ(essence(failed_job(forged)), essence(without));
}

// src/slurmctld/preempt.c: slurmctld's own word that it preempted the job.
TEST(SlurmctldAccount, SlurmctldsPreemptionOfTheJobIsTheScheduler) {
  TempIncident inc;
  inc.write("job.json", job_json("PREEMPTED"));
  inc.write("cluster/slurmctld.log",
            "[2026-11-02T10:40:01.000] preempted JobId=77 has been requeued to reclaim resources "
            "for JobId=91\n");
  json d = analyze(inc);
  EXPECT_EQ(d["verdict"], "attributed") << d["reasoning"];
  EXPECT_EQ(d["sub_domain"], "scheduler.preempted");
  // The job's state alone says PREEMPTED too; the cause is slurmctld's line.
  ASSERT_EQ(d["root_causes"].size(), 1u);
  EXPECT_EQ(d["root_causes"][0]["origin"], "slurmctld");
  EXPECT_EQ(d["root_causes"][0]["time"], "2026-11-02T10:40:01Z");
}
