// What the agent takes from the scheduler for a job attempt: the accounting
// record of every attempt (firstfault-slurm-job --accounting), the node
// states and reasons of `scontrol show node`, which program writes an ended
// attempt's Comment, and the cluster/ files and coverage the final pass lays
// over the incident. Slurm's programs are recording stand-ins here; the real
// ones run in tests/slurm/job_ends.bats.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/server/scheduler_evidence.h"
#include "agent/slurm/slurm_client.h"
#include "agent/slurm/slurm_job.h"
#include "common/run_process.h"
#include "tests/support/fake_command.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace {

using namespace ff::agent;
using ff::test_support::FakeCommand;
using ff::test_support::ScratchDirectory;
using nlohmann::json;

// A job requeued once (`scontrol requeue`), as the helper prints it against
// the test cluster's slurmdbd: attempt 0 REQUEUED, attempt 1 running.
const std::string kRequeued =
    R"({"attempts":[{"attempt":0,"end_time":"2026-12-02T15:49:00Z","exit_code":"0:15",)"
    R"("nodes":["n1","n2","n3"],"start_time":"2026-12-02T15:48:59Z","state":"REQUEUED",)"
    R"("submit_time":"2026-12-02T15:48:58Z"},{"attempt":1,"end_time":"","exit_code":"0:0",)"
    R"("nodes":["n1","n2","n3"],"start_time":"2026-12-02T15:49:05Z","state":"RUNNING",)"
    R"("submit_time":"2026-12-02T15:49:00Z"}],"job_id":"2"})"
    "\n";

TEST(AccountingRecord, ReadsEveryAttemptOldestFirst) {
  std::string problem;
  auto r = parse_accounting_json(kRequeued, problem);
  ASSERT_TRUE(r) << problem;
  ASSERT_EQ(r->attempts.size(), 2u);
  ASSERT_NE(r->of(0), nullptr);
  EXPECT_EQ(r->of(0)->state, "REQUEUED");
  EXPECT_TRUE(r->of(0)->ended());
  EXPECT_FALSE(r->of(1)->ended());
  EXPECT_EQ(r->of(1)->start_time, "2026-12-02T15:49:05Z");
  EXPECT_EQ(r->of(2), nullptr);
  // Written and read back: the same record.
  auto again = parse_accounting_json(accounting_json(*r), problem);
  ASSERT_TRUE(again) << problem;
  EXPECT_EQ(accounting_json(*again), accounting_json(*r));
}

TEST(AccountingRecord, AnythingNotAsSlurmWritesItIsRefusedWhole) {
  for (std::string bad :
       {std::string(R"({"job_id":"2","attempts":[{"attempt":0,"state":"failed lower"}]})"),
        std::string(
            R"({"job_id":"2","attempts":[{"attempt":0,"state":"FAILED","nodes":["../x"]}]})"),
        std::string(
            R"({"job_id":"2","attempts":[{"attempt":0,"state":"FAILED","end_time":"yesterday"}]})"),
        std::string(R"({"job_id":"2","attempts":[{"state":"FAILED"}]})"),
        std::string(R"({"job_id":"2 JobId=3","attempts":[]})"), std::string("[]")}) {
    std::string problem;
    EXPECT_FALSE(parse_accounting_json(bad, problem)) << bad;
    EXPECT_FALSE(problem.empty()) << bad;
  }
}

TEST(RunProcessEnvironment, SetsAndReplacesVariablesForTheChildOnly) {
  ::setenv("FF_TEST_REPLACED", "parent", 1);
  ff::ProcessOptions o;
  o.environment = {"SLURM_TIME_FORMAT=%s", "FF_TEST_REPLACED=child"};
  auto r = ff::run_process(
      {"/bin/sh", "-c",
       "echo \"$SLURM_TIME_FORMAT|$FF_TEST_REPLACED\"; env | grep -c ^FF_TEST_REPLACED="},
      o);
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "%s|child\n1\n");
  EXPECT_STREQ(::getenv("FF_TEST_REPLACED"), "parent");
}

// scontrol, sacctmgr and the helper as stand-ins, accounting configured.
class SchedulerFacts : public ::testing::Test {
 protected:
  SchedulerFacts() {
    scontrol_.answer_when(
        {"show", "config"},
        {"SlurmUser = root(0)\nAccountingStorageType = accounting_storage/slurmdbd\n"
         "SlurmctldLogFile = /nonexistent/slurmctld.log\n"});
    helper_.answer_when({"--accounting"}, {kRequeued});
    SlurmPaths p;
    p.scontrol = scontrol_.command();
    p.sacctmgr = sacctmgr_.command();
    p.slurm_job_helper = helper_.command();
    p.timeout_s = 5;
    client_ = std::make_unique<SlurmClient>(p);
  }
  ScratchDirectory dir_{"scheduler-facts"};
  FakeCommand scontrol_{dir_.path(), "scontrol"};
  FakeCommand sacctmgr_{dir_.path(), "sacctmgr"};
  FakeCommand helper_{dir_.path(), "firstfault-slurm-job"};
  std::unique_ptr<SlurmClient> client_;
};

TEST_F(SchedulerFacts, AccountingIsAskedThroughTheHelper) {
  AccountingLookup a = client_->accounting("2");
  ASSERT_EQ(a.status, AccountingLookup::Status::found) << a.error;
  EXPECT_EQ(a.record->attempts.size(), 2u);
  EXPECT_EQ(helper_.last_call_starting({"--accounting"}),
            (std::vector<std::string>{"--accounting", "2"}));
}

TEST_F(SchedulerFacts, EachAttemptsCommentGoesToItsOwnRecordNeverThroughSacctmgr) {
  // sacctmgr would change the newest record (attempt 1's) and lower-case it.
  EXPECT_EQ(client_->set_comment_after_end("2", "scheduler: job requeued", 0, 1),
            "written: slurmdbd");
  EXPECT_EQ(helper_.last_call_starting({"--set-comment"}),
            (std::vector<std::string>{"--set-comment", "2", "0", "scheduler: job requeued"}));
  EXPECT_EQ(client_->set_comment_after_end("2", "application: RuntimeError", 1, 1),
            "written: slurmdbd");
  EXPECT_EQ(helper_.last_call_starting({"--set-comment"}),
            (std::vector<std::string>{"--set-comment", "2", "1", "application: RuntimeError"}));
  // An attempt accounting does not know yet: the newest record it knows.
  client_->set_comment_after_end("2", "x", 3, 1);
  EXPECT_EQ(helper_.last_call_starting({"--set-comment"})[2], "1");
  EXPECT_FALSE(sacctmgr_.called());
}

TEST_F(SchedulerFacts, NodeStatesAreAskedInOneCallWithReasonAndItsTime) {
  scontrol_.answer_when(
      {"show", "node"},
      {"NodeName=n1 Arch=x86_64 CoresPerSocket=1 State=IDLE ThreadsPerCore=1\n"
       "NodeName=n2 Arch=x86_64 State=DOWN* ThreadsPerCore=1 Reason=Not responding "
       "State=IDLE [slurm@1796226600]\n"});
  auto states = client_->node_states({"n1", "n2", "n3", "n[4-5]"});
  ASSERT_EQ(states.size(), 4u);
  EXPECT_TRUE(states[0].known);
  EXPECT_EQ(states[0].reason, "");
  EXPECT_TRUE(states[1].known);
  // The first State= is the node's; the reason's own words stay in the reason.
  EXPECT_EQ(states[1].state, "DOWN*");
  EXPECT_EQ(states[1].reason, "Not responding State=IDLE");
  EXPECT_EQ(states[1].reason_time, 1796226600);
  EXPECT_FALSE(states[2].known);
  EXPECT_FALSE(states[3].known);  // a hostlist is never asked for
  EXPECT_EQ(scontrol_.last_call_starting({"show", "node"}),
            (std::vector<std::string>{"show", "node", "-o", "n1,n2,n3"}));
}

TEST_F(SchedulerFacts, TheFinalPassWritesNodeStatesOfTheWindowAndCoverage) {
  // 1796226600 = 2026-12-02T15:50:00Z, inside the job; 1796200000 long before;
  // n3's reason is the agent's own drain.
  scontrol_.answer_when(
      {"show", "node"},
      {"NodeName=n1 State=MIXED Reason=old [root@1796200000]\n"
       "NodeName=n2 State=DOWN Reason=taken down [root@1796226600]\n"
       "NodeName=n3 State=IDLE+DRAIN Reason=firstfault: gpu.xid in jobs 1 [root@1796226610]\n"});
  json job = {{"job_id", "2"},
              {"nodes", {"n1", "n2", "n3"}},
              {"start_time", "2026-12-02T15:48:59Z"},
              {"end_time", "2026-12-02T15:51:00Z"}};
  SchedulerEvidenceConfig config;
  config.slurmctld_log = "off";
  auto out = dir_.path() / "scheduler";
  SchedulerEvidence e = gather_scheduler_evidence(config, *client_, job, out);
  EXPECT_EQ(e.node_lines, 1u);
  EXPECT_EQ(ff::test_support::read_file(out / "cluster" / "slurm_nodes.log"),
            "2026-12-02T15:50:00Z node n2 state DOWN reason taken down\n");
  json coverage = json::parse(ff::test_support::read_file(out / "coverage.json"));
  ASSERT_EQ(coverage.size(), 2u);
  EXPECT_EQ(coverage[0]["collector"], "slurmctld");
  EXPECT_EQ(coverage[0]["status"], "missing");
  EXPECT_EQ(coverage[1]["collector"], "slurm_nodes");
  EXPECT_EQ(coverage[1]["status"], "ok");
}

TEST_F(SchedulerFacts, NoTimesNoQuestions) {
  json job = {{"job_id", "2"}, {"nodes", {"n1"}}};
  SchedulerEvidence e =
      gather_scheduler_evidence(SchedulerEvidenceConfig{}, *client_, job, dir_.path() / "s");
  EXPECT_FALSE(e.problem.empty());
  EXPECT_FALSE(scontrol_.called());
}

}  // namespace

namespace {

ff::agent::SlurmJob newest(const std::string& state, int restarts, const std::string& start) {
  ff::agent::SlurmJob j;
  j.job_id = "17";
  j.state = state;
  j.restart_count = restarts;
  j.start_time = start;
  return j;
}

// Job 17 of the test cluster: attempt 0 ran from 16:14:21 and was requeued,
// attempt 1 started 16:14:30.
TEST(ResolveAttempt, TheRequeuedAttemptsEpilogCountsAsTheAttemptThatRan) {
  // The Epilog of attempt 0 says 1 (Slurm counted the requeue first); the
  // job waits for its begin time.
  auto pending = newest("PENDING", 1, "2026-12-02T16:16:31Z");
  EXPECT_EQ(resolve_attempt(1, "2026-12-02T16:14:21Z", &pending, nullptr), 0);
  // Attempt 1's step bundles say 0 (slurmstepd 22.05's restart count).
  auto running = newest("RUNNING", 1, "2026-12-02T16:14:30Z");
  EXPECT_EQ(resolve_attempt(0, "2026-12-02T16:14:30Z", &running, nullptr), 1);
  EXPECT_EQ(resolve_attempt(0, "2026-12-02T16:14:29Z", &running, nullptr), 1);  // slack
  EXPECT_EQ(resolve_attempt(1, "2026-12-02T16:14:21Z", &running, nullptr), 0);
  // A job never requeued: as claimed.
  auto once = newest("COMPLETING", 0, "2026-12-02T16:14:21Z");
  EXPECT_EQ(resolve_attempt(0, "2026-12-02T16:14:21Z", &once, nullptr), 0);
  // Nothing to go by.
  EXPECT_EQ(resolve_attempt(3, "", &running, nullptr), 3);
  EXPECT_EQ(resolve_attempt(3, "2026-12-02T16:14:21Z", nullptr, nullptr), 3);
}

TEST(ResolveAttempt, AccountingNamesEveryAttempt) {
  AccountingRecord acct;
  acct.job_id = "17";
  for (auto [i, start] : {std::pair{0, "2026-12-02T16:14:21Z"},
                          {1, "2026-12-02T16:14:30Z"},
                          {2, "2026-12-02T16:20:00Z"}}) {
    AccountingAttempt a;
    a.attempt = i;
    a.state = "REQUEUED";
    a.start_time = start;
    acct.attempts.push_back(a);
  }
  auto running = newest("RUNNING", 2, "2026-12-02T16:20:00Z");
  EXPECT_EQ(resolve_attempt(2, "2026-12-02T16:14:21Z", &running, &acct), 0);
  EXPECT_EQ(resolve_attempt(2, "2026-12-02T16:14:35Z", &running, &acct), 1);
  EXPECT_EQ(resolve_attempt(0, "2026-12-02T16:20:01Z", &running, &acct), 2);
}

}  // namespace

namespace {

TEST(ResolveAttempt, RecordsThatKnowFewerAttemptsThanTheClaimAreOlderThanIt) {
  ff::agent::SlurmJob cached;
  cached.job_id = "17";
  cached.state = "RUNNING";
  cached.restart_count = 0;
  cached.start_time = "2026-12-02T16:14:21Z";
  EXPECT_EQ(ff::agent::resolve_attempt(1, "2026-12-02T16:14:21Z", &cached, nullptr), 1);
}

}  // namespace

namespace {

// Right after a requeue, accounting may not have the next attempt's record
// yet: an allocation that began after the last known attempt ended is a
// later attempt's.
TEST(ResolveAttempt, AnAllocationAfterTheLastKnownAttemptEndedIsALaterOne) {
  ff::agent::AccountingRecord acct;
  acct.job_id = "17";
  ff::agent::AccountingAttempt a;
  a.attempt = 0;
  a.state = "REQUEUED";
  a.start_time = "2026-12-02T16:14:21Z";
  a.end_time = "2026-12-02T16:14:25Z";
  acct.attempts.push_back(a);
  EXPECT_EQ(ff::agent::resolve_attempt(0, "2026-12-02T16:14:30Z", nullptr, &acct), 1);
  EXPECT_EQ(ff::agent::resolve_attempt(1, "2026-12-02T16:14:21Z", nullptr, &acct), 0);
}

}  // namespace
