// Evidence provenance and the drain policy, through a real SQLite store:
// diagnoses written by hand with root_causes[].origin/trusted are stored
// with add_pass, the policy reads them back as sightings (suspect_sightings,
// migration 005) and decides. A GPU root cause on n2 in three jobs drains n2
// only when the evidence came from a source the job's user cannot write
// (the kernel's ring buffer); a syslog line (`logger -t kernel 'NVRM: Xid
// ...'`) is declined with the reason, and counts as no blame.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/drain/drain_policy.h"
#include "agent/slurm/slurm_client.h"
#include "agent/store/diagnosis_store.h"
#include "incident/time/time.h"
#include "tests/support/fake_command.h"
#include "tests/support/scratch_directory.h"

namespace {

namespace fs = std::filesystem;
using ff::agent::DiagnosisStore;
using ff::agent::DrainAction;
using ff::agent::DrainPolicy;
using ff::agent::DrainSettings;
using ff::agent::PassRecord;
using ff::agent::SlurmClient;
using ff::agent::SlurmPaths;
using ff::agent::SuspectSettings;
using ff::test_support::FakeCommand;
using ff::test_support::ScratchDirectory;
using nlohmann::json;

const std::string kGpu = "00000000:3B:00.0";

// A scratch directory with the database and a stand-in for scontrol:
// `show node` says n2 is IDLE; every call is recorded.
class DrainTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    scontrol_.answer_when({"show", "node", "-o", "n2"},
                          {.out = "NodeName=n2 Arch=x86_64 State=IDLE ThreadsPerCore=1\n"});
    store_ = DiagnosisStore::open((dir_ / "firstfault.db").string());
    now_ = static_cast<std::int64_t>(std::time(nullptr));
  }
  void TearDown() override { store_.reset(); }

  // An attributed GPU fault on n2, its event from `origin`. `trusted`
  // absent: a diagnosis of an engine without provenance.
  static json gpu_fault(const std::string& job, std::int64_t at, const std::string& origin,
                        std::optional<bool> trusted) {
    json rc = {{"node", "n2"},
               {"device", kGpu},
               {"event", "xid"},
               {"code", "79"},
               {"time", ff::format_time_seconds(at)},
               {"summary", "Xid 79 on n2"},
               {"domain", "gpu"},
               {"sub_domain", "gpu.fallen_off_bus"}};
    if (!origin.empty()) rc["origin"] = origin;
    if (trusted) rc["trusted"] = *trusted;
    return {{"schema", "firstfault.diagnosis/v1"},
            {"job_id", job},
            {"verdict", "attributed"},
            {"domain", "gpu"},
            {"sub_domain", "gpu.fallen_off_bus"},
            {"recommended_action", "drain_node"},
            {"summary", "GPU fell off the bus on n2"},
            {"root_causes", json::array({rc})},
            {"affected_nodes", json::array({"n2"})},
            {"symptoms", json::array()},
            {"evidence", json::array()},
            {"coverage", json::array()},
            {"errors", json::array()}};
  }

  // Jobs 11, 12 and 13 fail on n2's GPU an hour apart; the policy runs
  // after 13's final pass. Returns its decision about n2.
  DrainAction three_jobs(const std::string& origin, std::optional<bool> trusted) {
    PassRecord last;
    int i = 0;
    for (std::string job : {"11", "12", "13"}) {
      std::int64_t at = now_ - (3 - i++) * 3600;
      last = store_->add_pass(job, 0, "final", gpu_fault(job, at - 30, origin, trusted), at);
    }
    DrainSettings settings;
    settings.enabled = true;
    settings.min_blames = 3;
    SlurmPaths paths;
    paths.scontrol = scontrol_.command();
    paths.sacctmgr = "";
    SlurmClient slurm(paths);
    DrainPolicy policy(settings, SuspectSettings{}, *store_, slurm);
    policy.after_pass(last);
    auto actions = store_->drain_actions(0);
    EXPECT_EQ(actions.size(), 1u);
    return actions.empty() ? DrainAction{} : actions.back();
  }

  std::vector<std::string> scontrol_update() const {
    return scontrol_.last_call_starting({"update"});
  }

  ScratchDirectory dir_{"drain-trust"};
  FakeCommand scontrol_{dir_.path(), "scontrol"};
  std::unique_ptr<DiagnosisStore> store_;
  std::int64_t now_ = 0;
};

TEST_F(DrainTrust, UntrustedGpuFaultInThreeJobsIsNotDrained) {
  DrainAction a = three_jobs("syslog", false);
  EXPECT_EQ(a.node, "n2");
  EXPECT_EQ(a.job_id, "13");
  EXPECT_EQ(a.decision, "declined");
  EXPECT_EQ(a.reason, "evidence not from a trusted source (syslog): not drained");
  EXPECT_EQ(a.blames, 0);
  EXPECT_TRUE(scontrol_update().empty());
  // The store kept what the engine said.
  auto sightings = store_->sightings(0);
  ASSERT_EQ(sightings.size(), 3u);
  for (const auto& s : sightings) {
    EXPECT_EQ(s.origin, "syslog");
    EXPECT_FALSE(s.trusted);
  }
}

TEST_F(DrainTrust, TrustedGpuFaultInThreeJobsIsDrained) {
  DrainAction a = three_jobs("kernel", true);
  EXPECT_EQ(a.decision, "drained") << a.reason << " / " << a.detail;
  EXPECT_EQ(a.blames, 3);
  std::string reason = "firstfault: gpu.fallen_off_bus " + kGpu + " in jobs 11,12,13";
  EXPECT_EQ(a.reason, reason);
  EXPECT_EQ(scontrol_update(),
            (std::vector<std::string>{"update", "NodeName=n2", "State=DRAIN", "Reason=" + reason}));
  for (const auto& s : store_->sightings(0)) {
    EXPECT_EQ(s.origin, "kernel");
    EXPECT_TRUE(s.trusted);
  }
}

// A diagnosis without the fields (an older engine, a pass stored before
// migration 005) is untrusted.
TEST_F(DrainTrust, DiagnosesWithoutProvenanceAreUntrusted) {
  DrainAction a = three_jobs("", std::nullopt);
  EXPECT_EQ(a.decision, "declined");
  EXPECT_EQ(a.reason, "evidence not from a trusted source (origin unknown): not drained");
  EXPECT_TRUE(scontrol_update().empty());
}

// Two blames from syslog and one from the kernel are one blame, not three.
TEST_F(DrainTrust, UntrustedEarlierFaultsAreNoBlames) {
  int i = 0;
  for (std::string job : {"11", "12"}) {
    std::int64_t at = now_ - (3 - i++) * 3600;
    store_->add_pass(job, 0, "final", gpu_fault(job, at - 30, "syslog", false), at);
  }
  PassRecord last =
      store_->add_pass("13", 0, "final", gpu_fault("13", now_ - 30, "kernel", true), now_);
  DrainSettings settings;
  settings.enabled = true;
  SlurmPaths paths;
  paths.scontrol = scontrol_.command();
  paths.sacctmgr = "";
  SlurmClient slurm(paths);
  DrainPolicy(settings, SuspectSettings{}, *store_, slurm).after_pass(last);
  auto actions = store_->drain_actions(0);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].decision, "declined");
  EXPECT_EQ(actions[0].reason, "blamed 1 of 3 times in 14 days");
  EXPECT_EQ(actions[0].blames, 1);
}

}  // namespace
