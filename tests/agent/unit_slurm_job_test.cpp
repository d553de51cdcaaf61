// agent/slurm: the JSON record firstfault-slurm-job prints (captured from the
// real helper against the three-node Slurm 22.05.8 test cluster) read into
// SlurmJob, what makes a record unusable, and the `scontrol show node` /
// `show config` parsers.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <nlohmann/json.hpp>

#include "agent/slurm/comment_text.h"
#include "agent/slurm/slurm_job.h"

namespace {

using namespace ff::agent;
using nlohmann::json;

// `sbatch -o '/tmp/x %j NodeList=evil.out' --comment 'ok JobState=COMPLETED
// NodeList=n1,victim-17' --wrap 'exit 3'`: scontrol prints that job as
// "... JobState=FAILED ... NodeList=n1 ... Comment=ok JobState=COMPLETED
// NodeList=n1,victim-17 StdErr=/tmp/x 146 NodeList=evil.out ...", which a
// Key=value split reads as COMPLETED on n1,victim-17 (or on "evil.out").
// The helper's record of the same job:
const std::string kFailedJob =
    R"({"batch_host":"n1","end_time":"2026-12-02T01:07:05Z","exit_code":"3:0","job_id":"146",)"
    R"("nodes":["n1"],"restart_count":0,"start_time":"2026-12-02T01:07:05Z","state":"FAILED",)"
    R"("std_err":"/tmp/x 146 NodeList=evil.out","std_out":"/tmp/x 146 NodeList=evil.out",)"
    R"("uid":0,"user":"root"})"
    "\n";

// `sbatch --array=1-2 -o '/tmp/ffsj-%A_%a.out'`, asked for as 147_2.
const std::string kArrayTask =
    R"({"batch_host":"n1","end_time":"2026-12-02T01:11:58Z","exit_code":"3:0","job_id":"147_2",)"
    R"("nodes":["n1"],"restart_count":0,"start_time":"2026-12-02T01:11:58Z","state":"FAILED",)"
    R"("std_err":"/tmp/ffsj-147_2.out","std_out":"/tmp/ffsj-147_2.out","uid":0,"user":"root"})"
    "\n";

std::optional<SlurmJob> parse(const std::string& text) {
  std::string problem;
  auto job = parse_slurm_job_json(text, problem);
  EXPECT_EQ(job.has_value(), problem.empty()) << problem;
  return job;
}

TEST(SlurmJobRecord, TheHelpersRecordOfAJobWithAHostileCommentAndPath) {
  auto job = parse(kFailedJob);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->job_id, "146");
  EXPECT_EQ(job->state, "FAILED");
  EXPECT_FALSE(job->running());
  EXPECT_EQ(job->exit_code, "3:0");
  EXPECT_EQ(job->start_time, "2026-12-02T01:07:05Z");
  EXPECT_EQ(job->end_time, "2026-12-02T01:07:05Z");
  EXPECT_EQ(job->nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(job->batch_host, "n1");
  EXPECT_EQ(job->std_out, "/tmp/x 146 NodeList=evil.out");
  EXPECT_EQ(job->std_err, "/tmp/x 146 NodeList=evil.out");
  EXPECT_EQ(job->user, "root");
  EXPECT_EQ(job->uid, 0);
  EXPECT_EQ(job->restart_count, 0);
}

TEST(SlurmJobRecord, ArrayTask) {
  auto job = parse(kArrayTask);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->job_id, "147_2");
  EXPECT_EQ(job->std_out, "/tmp/ffsj-147_2.out");
}

// The helper writes the user's text as a JSON string: whatever it holds
// (quotes, "Key=value" words, bytes that are not UTF-8) comes back as that
// one value and nothing else.
TEST(SlurmJobRecord, HostileTextStaysInsideItsValue) {
  SlurmJob job;
  job.job_id = "12";
  job.state = "FAILED";
  job.exit_code = "1:0";
  job.nodes = {"n1", "n2"};
  job.uid = 1001;
  job.user = "alice";
  job.std_out = R"(/home/alice/x","nodes":["victim-17"],"state":"COMPLETED","y":")";
  job.std_err = "/home/alice/e JobState=COMPLETED NodeList=victim-17 Restarts=3 \n StdOut=/etc";
  auto back = parse(slurm_job_json(job));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(back->state, "FAILED");
  EXPECT_EQ(back->restart_count, 0);
  EXPECT_EQ(back->std_out, job.std_out);
  EXPECT_EQ(back->std_err, job.std_err);

  job.std_out = "/home/alice/\xff\xfe.out";  // a path is bytes, JSON is UTF-8
  back = parse(slurm_job_json(job));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->std_out, "/home/alice/\xef\xbf\xbd\xef\xbf\xbd.out");
  EXPECT_EQ(back->nodes, (std::vector<std::string>{"n1", "n2"}));
}

TEST(SlurmJobRecord, MissingMembersTakeTheirDefaults) {
  auto job = parse(R"({"job_id": "5", "state": "RUNNING"})");
  ASSERT_TRUE(job);
  EXPECT_TRUE(job->running());
  EXPECT_TRUE(job->nodes.empty());
  EXPECT_EQ(job->start_time, "");
  EXPECT_EQ(job->exit_code, "");
  EXPECT_EQ(job->std_out, "");
  EXPECT_EQ(job->uid, -1);
  EXPECT_EQ(job->restart_count, 0);
}

TEST(SlurmJobRecord, NotARecord) {
  for (const std::string text :
       {"", "JobId=5 JobState=FAILED", "[]", "null", R"({"job_id": "5"})", R"({"state": "FAILED"})",
        R"({"job_id": "5", "state": "FAILED")"}) {
    std::string problem;
    EXPECT_FALSE(parse_slurm_job_json(text, problem)) << text;
    EXPECT_FALSE(problem.empty()) << text;
  }
}

// One member that is not what the helper writes and the whole record is
// not used: the agent then knows the job from the bundles alone.
TEST(SlurmJobRecord, AnyMemberOfTheWrongShapeMakesItUnusable) {
  const std::vector<std::pair<std::string, json>> bad = {
      {"job_id", 12},
      {"job_id", "12;rm"},
      {"job_id", "12 JobState=COMPLETED"},
      {"job_id", "-1"},
      {"state", "failed"},
      {"state", "FAILED JobState=COMPLETED"},
      {"state", 3},
      {"exit_code", "1"},
      {"exit_code", "1:0 x"},
      {"start_time", "2026-11-30T05:01:02"},  // local time, no zone
      {"end_time", 1796000000},
      {"nodes", "n1"},
      {"nodes", {"n1", 2}},
      {"nodes", {"n1", "../../etc"}},
      {"nodes", {"n1/x"}},
      {"nodes", {"-n1"}},
      {"nodes", {"n1 victim-17"}},
      {"nodes", {std::string(65, 'a')}},
      {"batch_host", "../x"},
      {"std_out", 5},
      {"std_out", std::string("/tmp/a\0b", 8)},
      {"user", json::array()},
      {"uid", "0"},
      {"uid", 1.5},
      {"uid", -5},
      {"uid", 1LL << 40},
      {"restart_count", -1},
      {"restart_count", "2"},
  };
  for (const auto& [key, value] : bad) {
    json record = json::parse(kFailedJob);
    record[key] = value;
    std::string problem;
    EXPECT_FALSE(parse_slurm_job_json(record.dump(), problem)) << key << " = " << value.dump();
    EXPECT_NE(problem.find(key), std::string::npos) << problem;
  }
}

TEST(SlurmJobRecord, NullMembersAreMissing) {
  json record = json::parse(kFailedJob);
  record["nodes"] = nullptr;
  record["start_time"] = nullptr;
  auto job = parse(record.dump());
  ASSERT_TRUE(job);
  EXPECT_TRUE(job->nodes.empty());
  EXPECT_EQ(job->start_time, "");
}

// Slurm's times are epoch seconds: UTC whatever the agent's zone is.
TEST(SlurmEpochToUtc, IndependentOfTheLocalZone) {
  const char* old = getenv("TZ");
  std::string saved = old ? old : "";
  for (const char* zone : {"UTC", "America/New_York", "Asia/Kolkata"}) {
    setenv("TZ", zone, 1);
    tzset();
    EXPECT_EQ(slurm_epoch_to_utc(1796000000), "2026-11-30T00:53:20Z") << zone;
    // Summer time in New York, and both passes through the hour that the
    // change back to standard time repeats there (01:30 EDT, then 01:30 EST).
    EXPECT_EQ(slurm_epoch_to_utc(1782864000), "2026-07-01T00:00:00Z") << zone;
    EXPECT_EQ(slurm_epoch_to_utc(1793511000), "2026-11-01T05:30:00Z") << zone;
    EXPECT_EQ(slurm_epoch_to_utc(1793514600), "2026-11-01T06:30:00Z") << zone;
  }
  if (old)
    setenv("TZ", saved.c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
  EXPECT_EQ(slurm_epoch_to_utc(0), "");
  EXPECT_EQ(slurm_epoch_to_utc(-1), "");
  EXPECT_EQ(slurm_epoch_to_utc(0xfffffffeLL), "");  // NO_VAL
  EXPECT_EQ(slurm_epoch_to_utc(0xffffffffLL), "");  // INFINITE
}

// slurmctld refuses a Comment once the job's base state is past SUSPENDED;
// COMPLETING (the Epilog runs) is already too late.
TEST(SlurmJobRecord, OnlyALiveJobAcceptsAComment) {
  SlurmJob job;
  for (const char* state : {"PENDING", "RUNNING", "SUSPENDED", "CONFIGURING"}) {
    job.state = state;
    EXPECT_TRUE(job.accepts_comment()) << state;
  }
  for (const char* state : {"COMPLETING", "FAILED", "TIMEOUT", "COMPLETED", "STAGE_OUT"}) {
    job.state = state;
    EXPECT_FALSE(job.accepts_comment()) << state;
  }
}

// `scontrol show node -o`: the Reason comes after State, and a Reason may
// hold "State=..." words; the node's own State is the first.
TEST(ScontrolFields, AKeySeenAgainKeepsItsFirstValue) {
  auto f = parse_scontrol_fields(
      "NodeName=n2 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 "
      "Reason=firstfault: gpu.fallen_off_bus State=IDLE NodeName=n9 [root@2026-11-30T05:01:00]");
  EXPECT_EQ(f["NodeName"], "n2");
  EXPECT_EQ(f["State"], "IDLE+DRAIN");
  EXPECT_EQ(f["Reason"], "firstfault: gpu.fallen_off_bus");
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
  // One '?' per character outside ASCII (incident/slurm_text.h), not per byte.
  EXPECT_EQ(comment_text("gpu on n2\n\tbad \x01 byte \xc3\xa9"), "gpu on n2 bad byte ?");
  EXPECT_EQ(comment_text(std::string(5000, 'a')).size(), kMaxCommentBytes);
  EXPECT_EQ(comment_text("  "), "");
}

}  // namespace
