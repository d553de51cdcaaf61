// The drain decision (agent/drain/drain_policy.h) without Slurm: which
// root-cause nodes are drained and why the others are not.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "agent/drain/drain_policy.h"
#include "agent/server/agent_config.h"
#include "agent/slurm/comment_text.h"

namespace {

using ff::agent::decide_drains;
using ff::agent::DrainAction;
using ff::agent::DrainDecision;
using ff::agent::DrainInput;
using ff::agent::DrainSettings;
using ff::agent::NodeStateLookup;
using ff::agent::Sighting;
using ff::agent::SuspectSettings;
using nlohmann::json;

constexpr std::int64_t kNow = 1'800'000'000;
constexpr std::int64_t kDay = 86400;

json diagnosis(const std::string& verdict, const std::string& domain, const std::string& node,
               const std::string& sub_domain = "") {
  std::string sub = sub_domain.empty() ? domain + ".fault" : sub_domain;
  json rc = {
      {"node", node},      {"device", "00000000:3B:00.0"}, {"event", "xid"}, {"domain", domain},
      {"sub_domain", sub}, {"origin", "kernel"},           {"trusted", true}};
  return {{"verdict", verdict},
          {"domain", domain},
          {"sub_domain", verdict == "ambiguous" ? "ambiguous" : sub},
          {"root_causes", json::array({rc})}};
}

Sighting blame(const std::string& job, const std::string& node, std::int64_t at,
               const std::string& domain = "gpu", const std::string& verdict = "attributed") {
  Sighting s;
  s.job_id = job;
  s.seen_at = at;
  s.verdict = verdict;
  s.role = "root_cause";
  s.domain = domain;
  s.sub_domain = domain + ".fault";
  s.node = node;
  s.event = "xid";
  s.origin = "kernel";
  s.trusted = true;
  return s;
}

DrainSettings settings(int min_blames = 3) {
  DrainSettings s;
  s.enabled = true;
  s.min_blames = min_blames;
  return s;
}

// The job "13" just failed with `d`; n2 was blamed before in `history`.
DrainInput input(json d, std::vector<Sighting> history, std::string job = "13") {
  DrainInput in;
  in.job_id = std::move(job);
  in.diagnosis = std::move(d);
  in.sightings = std::move(history);
  in.now = kNow;
  in.node_state = [](const std::string&) {
    NodeStateLookup s;
    s.known = true;
    s.state = "IDLE";
    return s;
  };
  return in;
}

std::vector<DrainDecision> decide(const DrainInput& in, const DrainSettings& s = settings()) {
  return decide_drains(in, s, SuspectSettings{});
}

TEST(DrainPolicy, OneBlameShortOfTheThresholdIsDeclined) {
  // Two earlier blames of n2 plus this job: 3 of 4.
  auto in = input(diagnosis("attributed", "gpu", "n2"),
                  {blame("11", "n2", kNow - 3 * kDay), blame("12", "n2", kNow - kDay)});
  auto d = decide(in, settings(4));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].decision, "declined");
  EXPECT_EQ(d[0].reason, "blamed 3 of 4 times in 14 days");
  EXPECT_EQ(d[0].blames, 3);
}

TEST(DrainPolicy, DrainedAtTheThresholdWithASlurmReason) {
  auto in = input(diagnosis("attributed", "gpu", "n2", "gpu.fallen_off_bus"),
                  {blame("11", "n2", kNow - 3 * kDay), blame("12", "n2", kNow - kDay),
                   blame("13", "n2", kNow - 60)});
  auto d = decide(in);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].decision, "drain");
  EXPECT_EQ(d[0].node, "n2");
  EXPECT_EQ(d[0].blames, 3);
  EXPECT_EQ(d[0].reason, "firstfault: gpu.fallen_off_bus 00000000:3B:00.0 in jobs 11,12,13");
  EXPECT_EQ(d[0].jobs, (std::vector<std::string>{"11", "12", "13"}));
}

// Evidence the job's user could have written: `logger -t kernel 'NVRM: Xid
// 79 ...'` lands in syslog, a job prints anything into its output.
TEST(DrainPolicy, UntrustedRootCauseIsDeclinedWhateverItsBlames) {
  auto history =
      std::vector<Sighting>{blame("11", "n2", kNow - 3 * kDay), blame("12", "n2", kNow - kDay)};
  for (std::string origin : {"syslog", "app"}) {
    json d = diagnosis("attributed", "gpu", "n2", "gpu.fallen_off_bus");
    d["root_causes"][0]["origin"] = origin;
    d["root_causes"][0]["trusted"] = false;
    auto out = decide(input(d, history));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].decision, "declined");
    EXPECT_EQ(out[0].reason, "evidence not from a trusted source (" + origin + "): not drained");
  }
  // No provenance at all (an older engine), or not a bool: untrusted.
  json d = diagnosis("attributed", "gpu", "n2");
  d["root_causes"][0].erase("origin");
  d["root_causes"][0].erase("trusted");
  auto out = decide(input(d, history));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].reason, "evidence not from a trusted source (origin unknown): not drained");
  d["root_causes"][0]["origin"] = "kernel";
  d["root_causes"][0]["trusted"] = "true";
  EXPECT_EQ(decide(input(d, history))[0].decision, "declined");
  // Control: the same with trusted evidence drains.
  d["root_causes"][0]["trusted"] = true;
  EXPECT_EQ(decide(input(d, history))[0].decision, "drain");
}

TEST(DrainPolicy, UntrustedEarlierRootCausesAreNoBlames) {
  auto history =
      std::vector<Sighting>{blame("11", "n2", kNow - 3 * kDay), blame("12", "n2", kNow - kDay)};
  for (auto& s : history) {
    s.origin = "syslog";
    s.trusted = false;
  }
  auto out = decide(input(diagnosis("attributed", "gpu", "n2"), history));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].decision, "declined");
  EXPECT_EQ(out[0].reason, "blamed 1 of 3 times in 14 days");
  EXPECT_EQ(out[0].blames, 1);
}

TEST(DrainPolicy, BlamesOfOtherNodesAndOtherDomainsDoNotCount) {
  auto in = input(diagnosis("attributed", "gpu", "n2"),
                  {blame("11", "n1", kNow - kDay), blame("12", "n2", kNow - kDay, "application"),
                   blame("14", "n2", kNow - kDay, "gpu", "ambiguous")});
  auto d = decide(in, settings(2));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].reason, "blamed 1 of 2 times in 14 days");
}

TEST(DrainPolicy, NonHardwareVerdictsAreDeclinedWithTheReason) {
  auto history = std::vector<Sighting>{blame("11", "n2", kNow - kDay), blame("12", "n2", kNow)};
  struct Case {
    json d;
    std::string reason;
  };
  std::vector<Case> cases = {
      {diagnosis("ambiguous", "gpu", "n2"), "verdict ambiguous"},
      {diagnosis("attributed", "application", "n2"), "domain application is not hardware"},
      {diagnosis("attributed", "scheduler", "n2"), "domain scheduler is not hardware"},
      {diagnosis("attributed", "storage", "n2"), "domain storage is not hardware"},
      {diagnosis("unattributed", "unknown", "n2"), "verdict unattributed"},
  };
  for (const auto& c : cases) {
    auto d = decide(input(c.d, history), settings(1));
    ASSERT_EQ(d.size(), 1u) << c.reason;
    EXPECT_EQ(d[0].decision, "declined");
    EXPECT_EQ(d[0].reason, c.reason);
  }
  // A domain the operator left out of drain.domains.
  DrainSettings gpu_only = settings(1);
  gpu_only.domains = {"gpu"};
  auto d = decide(input(diagnosis("attributed", "network", "n2"), history), gpu_only);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].reason, "domain network is not in drain.domains");
}

TEST(DrainPolicy, NoFailureAndNodelessCausesDecideNothing) {
  EXPECT_TRUE(
      decide(input({{"verdict", "no_failure"}, {"root_causes", json::array()}}, {}), settings(1))
          .empty());
  json time_limit = {{"verdict", "attributed"},
                     {"domain", "scheduler"},
                     {"root_causes", json::array({{{"node", nullptr}, {"event", "time_limit"}}})}};
  EXPECT_TRUE(decide(input(time_limit, {}), settings(1)).empty());
}

TEST(DrainPolicy, AtMostMaxPerHour) {
  auto history = std::vector<Sighting>{blame("11", "n2", kNow - kDay), blame("12", "n3", kNow)};
  // n2 was drained 30 minutes ago; n3 reaches the threshold now.
  auto in = input(diagnosis("attributed", "gpu", "n3"), history);
  DrainAction earlier;
  earlier.created_at = kNow - 1800;
  earlier.job_id = "11";
  earlier.node = "n2";
  earlier.decision = "drained";
  in.recent = {earlier};
  auto d = decide(in, settings(2));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].decision, "declined");
  EXPECT_EQ(d[0].reason, "limit: 1 node drained in the last hour");
  EXPECT_EQ(d[0].blames, 2);

  // Declines do not use up the limit, and a drain older than an hour is past.
  in.recent[0].decision = "declined";
  EXPECT_EQ(decide(in, settings(2))[0].decision, "drain");
  in.recent[0].decision = "drained";
  in.recent[0].created_at = kNow - 3601;
  EXPECT_EQ(decide(in, settings(2))[0].decision, "drain");
}

TEST(DrainPolicy, TwoNodesOfOnePassShareTheLimit) {
  json d = diagnosis("attributed", "gpu", "n2");
  json second = d["root_causes"][0];
  second["node"] = "n3";
  d["root_causes"].push_back(second);
  auto in = input(d, {blame("11", "n2", kNow - kDay), blame("11", "n3", kNow - kDay)});
  auto out = decide(in, settings(2));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].decision, "drain");
  EXPECT_EQ(out[1].decision, "declined");
  EXPECT_EQ(out[1].reason, "limit: 1 node drained in the last hour");
}

TEST(DrainPolicy, AlreadyDrainedNodesAreDeclined) {
  for (std::string state :
       {"IDLE+DRAIN", "MIXED+DRAIN", "DRAINED", "DOWN*", "DOWN+NOT_RESPONDING"}) {
    auto in = input(diagnosis("attributed", "gpu", "n2"), {blame("11", "n2", kNow - kDay)});
    in.node_state = [state](const std::string& node) {
      EXPECT_EQ(node, "n2");
      NodeStateLookup s;
      s.known = true;
      s.state = state;
      return s;
    };
    auto d = decide(in, settings(2));
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].reason, "already drained") << state;
    EXPECT_EQ(d[0].detail, "State=" + state);
  }
  // ... and a node that only allocates jobs is not.
  auto in = input(diagnosis("attributed", "gpu", "n2"), {blame("11", "n2", kNow - kDay)});
  in.node_state = [](const std::string&) {
    NodeStateLookup s;
    s.known = true;
    s.state = "ALLOCATED";
    return s;
  };
  EXPECT_EQ(decide(in, settings(2))[0].decision, "drain");
}

TEST(DrainPolicy, TheNodeStateIsAskedOnlyBeforeADrain) {
  int asked = 0;
  auto in = input(diagnosis("attributed", "application", "n2"), {});
  in.node_state = [&asked](const std::string&) {
    ++asked;
    return NodeStateLookup{};
  };
  decide(in, settings(1));
  EXPECT_EQ(asked, 0);
}

TEST(DrainPolicy, SystemicSightingsDoNotCount) {
  // Four nodes blamed for network within minutes, one job each: a fabric
  // outage, not four bad nodes. n2's two blames are both in it.
  std::vector<Sighting> history;
  int job = 20;
  for (std::string node : {"n1", "n2", "n3", "n4"}) {
    history.push_back(blame(std::to_string(job), node, kNow - 2 * kDay + job, "network"));
    ++job;
  }
  history.push_back(blame("13", "n2", kNow - 2 * kDay + 30, "network"));
  // The outage's own jobs are declined as systemic...
  auto in = input(diagnosis("attributed", "network", "n2"), history, "13");
  auto d = decide(in, settings(2));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].reason, "part of a systemic event");
  // ... and a later failure of n2 alone counts one blame, not three.
  history.push_back(blame("30", "n2", kNow - 60, "network"));
  in = input(diagnosis("attributed", "network", "n2"), history, "30");
  d = decide(in, settings(2));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].reason, "blamed 1 of 2 times in 14 days");
  // Control: the same blames spread over days are no outage.
  for (auto& s : history) s.seen_at -= (s.node == "n2" ? 0 : 5 * kDay);
  d = decide(input(diagnosis("attributed", "network", "n2"), history, "30"), settings(2));
  EXPECT_EQ(d[0].decision, "drain");
}

TEST(DrainPolicy, DryRunDecidesWouldDrainAndCountsForTheLimit) {
  DrainSettings s = settings(2);
  s.dry_run = true;
  auto in = input(diagnosis("attributed", "gpu", "n2"), {blame("11", "n2", kNow - kDay)});
  auto d = decide(in, s);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].decision, "would_drain");
  EXPECT_EQ(d[0].detail, "dry run; State=IDLE");
  DrainAction earlier;
  earlier.created_at = kNow - 60;
  earlier.node = "n3";
  earlier.decision = "would_drain";
  in.recent = {earlier};
  EXPECT_EQ(decide(in, s)[0].reason, "limit: 1 node drained in the last hour");
}

TEST(DrainPolicy, TheReasonIsShortPrintableAscii) {
  json d = diagnosis("attributed", "gpu", "n2", "gpu.x\n$(reboot)\"\x1b[31m");
  std::vector<Sighting> history;
  for (int i = 0; i < 40; ++i)
    history.push_back(blame(std::to_string(100000 + i), "n2", kNow - kDay + i));
  auto out = decide(input(d, history, "999999"), settings(2));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].decision, "drain");
  EXPECT_LE(out[0].reason.size(), ff::agent::kMaxDrainReasonBytes);
  for (char c : out[0].reason) EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << out[0].reason;
  EXPECT_NE(out[0].reason.find("in 41 jobs, last "), std::string::npos) << out[0].reason;
  EXPECT_NE(out[0].reason.find("999999"), std::string::npos) << out[0].reason;
}

TEST(DrainConfig, DefaultsAndErrors) {
  auto c = ff::agent::parse_agent_config("listen: 127.0.0.1:0\n", "a.yaml");
  EXPECT_FALSE(c.drain.enabled);
  EXPECT_EQ(c.drain.min_blames, 3);
  EXPECT_EQ(c.drain.max_per_hour, 1);
  EXPECT_EQ(c.drain.domains, (std::vector<std::string>{"gpu", "gpu_fabric", "network", "host"}));
  c = ff::agent::parse_agent_config(
      "drain:\n  enabled: true\n  min_blames: 2\n  window_days: 7\n  max_per_hour: 3\n"
      "  domains: [gpu, host]\n  dry_run: true\n",
      "a.yaml");
  EXPECT_TRUE(c.drain.enabled);
  EXPECT_TRUE(c.drain.dry_run);
  EXPECT_EQ(c.drain.min_blames, 2);
  EXPECT_EQ(c.drain.window_days, 7);
  EXPECT_EQ(c.drain.max_per_hour, 3);
  EXPECT_EQ(c.drain.domains, (std::vector<std::string>{"gpu", "host"}));

  auto error = [](const std::string& yaml) {
    try {
      ff::agent::parse_agent_config(yaml, "agent.yaml");
    } catch (const ff::agent::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("listen: 127.0.0.1:0\ndrain:\n  domains:\n    - gpu\n    - application\n"),
            "agent.yaml:5: 'drain.domains' may hold only hardware domains (gpu, gpu_fabric, "
            "network, host), not 'application'");
  for (std::string bad : {"scheduler", "unknown", "storage"})
    EXPECT_NE(error("drain:\n  domains: [" + bad + "]\n").find("agent.yaml:2: "), std::string::npos)
        << bad;
  EXPECT_EQ(error("drain:\n  min_blames: 0\n"),
            "agent.yaml:2: 'drain.min_blames' must be at least 1");
  EXPECT_EQ(error("drain:\n  enabled: maybe\n"),
            "agent.yaml:2: 'drain.enabled' has the wrong type: 'maybe'");
  EXPECT_EQ(error("drain:\n  max_per_day: 1\n"),
            "agent.yaml:2: unknown setting 'drain.max_per_day'");
}

}  // namespace

// The OOM killer is a `host` fault the job brings on itself: host stays a
// drain domain (MCE, PCIe, memory errors), its OOM sub-domains do not.
TEST(DrainPolicy, OomKillsNeitherDrainNorCountAsBlames) {
  auto oom = diagnosis("attributed", "host", "n2", "host.oom_kill");
  auto history = std::vector<Sighting>{blame("11", "n2", kNow - kDay, "host"),
                                       blame("12", "n2", kNow - 2 * kDay, "host")};
  for (auto& s : history) s.sub_domain = "host.oom_kill";
  auto out = decide(input(oom, history));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].decision, "declined");
  EXPECT_NE(out[0].reason.find("drain.ignore_sub_domains"), std::string::npos) << out[0].reason;

  // A machine check after two OOM kills is one blame, not three.
  out = decide(input(diagnosis("attributed", "host", "n2", "host.mce_uncorrected"), history));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].decision, "declined");
  EXPECT_EQ(out[0].reason, "blamed 1 of 3 times in 14 days");
}
