// agent/suspects/suspect_finder: synthetic sightings in, ranked suspects and
// systemic events out.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "agent/suspects/suspect_report.h"

namespace {

using namespace ff::agent;

constexpr std::int64_t kT0 = 1'790'000'000;  // 2026-09-21
constexpr std::int64_t kDay = 86400;

Sighting root(const std::string& job, std::int64_t at, const std::string& node,
              const std::string& device, const std::string& domain,
              const std::string& verdict = "attributed") {
  Sighting s;
  s.job_id = job;
  s.diagnosis_id = std::stoll(job);
  s.seen_at = at;
  s.verdict = verdict;
  s.role = "root_cause";
  s.domain = domain;
  s.sub_domain = domain + ".synthetic";
  s.node = node;
  s.device = device;
  s.event = domain == "gpu" ? "xid" : "ib.link_down";
  s.origin = "kernel";  // the kernel's own record: trusted
  s.trusted = true;
  return s;
}

Sighting symptom(const std::string& job, std::int64_t at, const std::string& node,
                 const std::string& domain = "gpu") {
  Sighting s;
  s.job_id = job;
  s.diagnosis_id = std::stoll(job);
  s.seen_at = at;
  s.verdict = "attributed";
  s.role = "symptom";
  s.domain = domain;
  s.node = node;
  s.event = "nccl.timeout";
  return s;
}

const Suspect* find(const SuspectReport& r, const std::string& id) {
  for (const auto& s : r.suspects)
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<std::string> flagged_ids(const SuspectReport& r) {
  std::vector<std::string> out;
  for (const auto& s : r.suspects)
    if (s.flagged) out.push_back(s.id);
  return out;
}

const std::string kGpu = "00000000:3B:00.0";

// n2's GPU kills five jobs a day apart (with symptoms on the peer n1);
// n7 has NCCL symptoms in ten jobs blamed on some other node's faults.
std::vector<Sighting> bad_gpu_history() {
  std::vector<Sighting> s;
  for (int i = 0; i < 5; ++i) {
    std::string job = std::to_string(100 + i);
    s.push_back(root(job, kT0 + i * kDay, "n2", kGpu, "gpu"));
    s.push_back(symptom(job, kT0 + i * kDay + 60, "n1"));
  }
  for (int i = 0; i < 10; ++i) {
    std::string job = std::to_string(200 + i);
    s.push_back(root(job, kT0 + i * kDay + 3600, "n" + std::to_string(20 + i), "", "host"));
    s.push_back(symptom(job, kT0 + i * kDay + 3700, "n7"));
  }
  return s;
}

TEST(SuspectFinder, RepeatGpuRanksFirstAheadOfSymptomOnlyNode) {
  auto r = find_suspects(bad_gpu_history(), {}, kT0, kT0 + 14 * kDay);
  ASSERT_FALSE(r.suspects.empty());
  const Suspect& top = r.suspects.front();
  EXPECT_EQ(top.kind, ComponentKind::gpu);
  EXPECT_EQ(top.id, "n2/" + kGpu);
  EXPECT_EQ(top.node, "n2");
  EXPECT_EQ(top.jobs, 5);
  EXPECT_EQ(top.root_cause_jobs, 5);
  EXPECT_EQ(top.attributed_jobs, 5);
  EXPECT_EQ(top.score, 5 * kAttributedWeight);
  EXPECT_TRUE(top.flagged);
  EXPECT_EQ(top.domains, std::vector<std::string>{"gpu=5"});
  EXPECT_EQ(top.first_seen, kT0);
  EXPECT_EQ(top.last_seen, kT0 + 4 * kDay);
  ASSERT_EQ(top.job_list.size(), 5u);
  EXPECT_EQ(top.job_list.front().job_id, "100");
  EXPECT_EQ(top.job_list.back().job_id, "104");
  // Its node is flagged too, but the jobs its GPU explains do not raise the
  // node's own score: the GPU is the precise answer.
  const Suspect* n2 = find(r, "n2");
  ASSERT_NE(n2, nullptr);
  EXPECT_EQ(n2->jobs, 5);
  EXPECT_EQ(n2->device_jobs, 5);
  EXPECT_EQ(n2->score, 0);
  EXPECT_TRUE(n2->flagged);

  const Suspect* n7 = find(r, "n7");
  ASSERT_NE(n7, nullptr);
  EXPECT_EQ(n7->jobs, 10);
  EXPECT_EQ(n7->symptom_jobs, 10);
  EXPECT_EQ(n7->root_cause_jobs, 0);
  EXPECT_EQ(n7->score, 10 * kSymptomWeight);
  EXPECT_TRUE(n7->flagged);  // flagged, but below the GPU
  EXPECT_EQ(r.suspects[1].id, "n7");
  EXPECT_TRUE(r.systemic_events.empty());
}

TEST(SuspectFinder, OneOffIsNotFlagged) {
  auto r = find_suspects(bad_gpu_history(), {}, kT0, kT0 + 14 * kDay);
  const Suspect* once = find(r, "n20");
  ASSERT_NE(once, nullptr);
  EXPECT_EQ(once->jobs, 1);
  EXPECT_EQ(once->root_cause_jobs, 1);
  EXPECT_FALSE(once->flagged);
  auto flagged = flagged_ids(r);
  EXPECT_EQ(flagged, (std::vector<std::string>{"n2/" + kGpu, "n7", "n1", "n2"}));
}

TEST(SuspectFinder, JobNamingANodeTwiceCountsOnce) {
  std::vector<Sighting> s = {root("1", kT0, "n1", kGpu, "gpu"),
                             root("1", kT0 + 5, "n1", "00000000:3C:00.0", "gpu"),
                             symptom("1", kT0 + 9, "n1")};
  auto r = find_suspects(s, {}, kT0, kT0 + kDay);
  const Suspect* n1 = find(r, "n1");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->jobs, 1);
  EXPECT_EQ(n1->root_cause_jobs, 1);
  EXPECT_EQ(n1->symptom_jobs, 0);
  EXPECT_FALSE(n1->flagged);
}

// A fabric outage: twelve nodes blamed with network root causes in twelve
// jobs within five minutes. In the same window n2's GPU fails three more jobs.
std::vector<Sighting> outage_history() {
  std::vector<Sighting> s;
  for (int i = 0; i < 12; ++i) {
    std::string job = std::to_string(300 + i);
    std::string node = "n" + std::to_string(30 + i);
    s.push_back(root(job, kT0 + 25 * i, node, "mlx5_0:1", "network"));
    s.push_back(symptom(job, kT0 + 25 * i + 10, "n" + std::to_string(31 + i), "network"));
  }
  for (int i = 0; i < 3; ++i)
    s.push_back(root(std::to_string(400 + i), kT0 + 60 + 30 * i, "n2", kGpu, "gpu"));
  // The same kind of link failure a week later on one node: not the outage.
  s.push_back(root("500", kT0 + 7 * kDay, "n30", "mlx5_0:1", "network"));
  return s;
}

TEST(SuspectFinder, SystemicOutageIsOneEventNotTwelveSuspects) {
  auto r = find_suspects(outage_history(), {}, kT0, kT0 + 14 * kDay);
  ASSERT_EQ(r.systemic_events.size(), 1u);
  const SystemicEvent& e = r.systemic_events.front();
  EXPECT_EQ(e.domain, "network");
  EXPECT_EQ(e.nodes.size(), 12u);
  EXPECT_EQ(e.jobs.size(), 12u);
  EXPECT_EQ(e.first_seen, kT0);
  EXPECT_EQ(e.last_seen, kT0 + 25 * 11);
  EXPECT_TRUE(e.jobs.front().systemic);

  // The real bad GPU still ranks first; only it and its node are flagged.
  EXPECT_EQ(r.suspects.front().id, "n2/" + kGpu);
  EXPECT_EQ(flagged_ids(r), (std::vector<std::string>{"n2/" + kGpu, "n2"}));

  const Suspect* n30 = find(r, "n30");
  ASSERT_NE(n30, nullptr);
  EXPECT_EQ(n30->systemic_jobs, 1);
  EXPECT_EQ(n30->jobs, 1);  // its own later failure
  EXPECT_FALSE(n30->flagged);
  const Suspect* n35 = find(r, "n35");  // root cause in one job, symptom in another
  ASSERT_NE(n35, nullptr);
  EXPECT_EQ(n35->jobs, 0);
  EXPECT_EQ(n35->systemic_jobs, 2);
  EXPECT_EQ(n35->score, 0);

  // Below systemic_min_nodes it is twelve ordinary failures again.
  SuspectSettings strict;
  strict.systemic_min_nodes = 13;
  auto plain = find_suspects(outage_history(), strict, kT0, kT0 + 14 * kDay);
  EXPECT_TRUE(plain.systemic_events.empty());
  EXPECT_GT(flagged_ids(plain).size(), 10u);
}

TEST(SuspectFinder, AmbiguousCountsForEachCandidateButLessThanAttributed) {
  std::vector<Sighting> s;
  for (int i = 0; i < 3; ++i) {
    std::string job = std::to_string(600 + i);
    s.push_back(root(job, kT0 + i * kDay, "n5", "", "host", "ambiguous"));
    s.push_back(root(job, kT0 + i * kDay, "n6", "", "host", "ambiguous"));
    std::string other = std::to_string(700 + i);
    s.push_back(root(other, kT0 + i * kDay + 1, "n8", "", "host"));
  }
  auto r = find_suspects(s, {}, kT0, kT0 + 14 * kDay);
  const Suspect* n5 = find(r, "n5");
  const Suspect* n6 = find(r, "n6");
  const Suspect* n8 = find(r, "n8");
  ASSERT_TRUE(n5 && n6 && n8);
  EXPECT_EQ(n5->jobs, 3);
  EXPECT_EQ(n6->jobs, 3);
  EXPECT_EQ(n5->root_cause_jobs, 3);
  EXPECT_EQ(n5->attributed_jobs, 0);
  EXPECT_EQ(n5->score, 3 * kCandidateWeight);
  EXPECT_EQ(n8->score, 3 * kAttributedWeight);
  EXPECT_LT(n5->score, n8->score);
  EXPECT_EQ(r.suspects.front().id, "n8");
  EXPECT_TRUE(n5->flagged);
}

// An attributed root cause on evidence the job's user could have written
// (syslog, the job's output) weighs as a candidate, not as a certainty:
// `logger -t kernel 'NVRM: Xid 79'` three times must not outrank a GPU the
// kernel itself blamed three times.
TEST(SuspectFinder, UntrustedAttributedRootCausesCountAsCandidates) {
  std::vector<Sighting> s;
  for (int i = 0; i < 3; ++i) {
    Sighting forged =
        root(std::to_string(800 + i), kT0 + i * kDay, "n3", "00000000:3B:00.0", "gpu");
    forged.origin = "syslog";
    forged.trusted = false;
    s.push_back(forged);
    s.push_back(root(std::to_string(900 + i), kT0 + i * kDay + 1, "n4", "00000000:3B:00.0", "gpu"));
  }
  auto r = find_suspects(s, {}, kT0, kT0 + 14 * kDay);
  const Suspect* n3 = find(r, "n3/00000000:3B:00.0");
  const Suspect* n4 = find(r, "n4/00000000:3B:00.0");
  ASSERT_TRUE(n3 && n4);
  EXPECT_EQ(n3->root_cause_jobs, 3);
  EXPECT_EQ(n3->attributed_jobs, 0);
  EXPECT_EQ(n3->score, 3 * kCandidateWeight);
  EXPECT_TRUE(n3->flagged);  // still listed: three failed jobs
  EXPECT_EQ(n4->attributed_jobs, 3);
  EXPECT_EQ(n4->score, 3 * kAttributedWeight);
  EXPECT_EQ(r.suspects.front().id, "n4/00000000:3B:00.0");
  for (const auto& j : n3->job_list) EXPECT_FALSE(j.trusted);
  for (const auto& j : n4->job_list) EXPECT_TRUE(j.trusted);
  auto json = suspects_to_json(r, false);
  EXPECT_EQ(json["suspects"][0]["job_list"][0]["trusted"], true) << json.dump(1);
}

TEST(SuspectFinder, ComponentKinds) {
  std::vector<Sighting> s = {
      root("1", kT0, "n1", kGpu, "gpu"),
      root("2", kT0, "n1", "mlx5_2:1", "network"),
      root("3", kT0, "n1", "0000:5e:00.0", "network"),  // an HCA by bus id: a port
      root("4", kT0, "n1", "ib-switch-07/17", "network"),
      root("5", kT0, "n2", "ib-switch-07/17", "network"),
      root("6", kT0, "n1", "nvidia-nvswitch2", "gpu_fabric"),
      root("7", kT0, "n1", "0000:9a:00.0", "host"),  // AER on a PCI device
      root("8", kT0, "n1", "sda", "storage"),
  };
  auto r = find_suspects(s, {}, kT0, kT0 + kDay);
  auto kind = [&](const std::string& id) {
    const Suspect* x = find(r, id);
    return x ? std::string(to_string(x->kind)) : std::string("absent");
  };
  EXPECT_EQ(kind("n1/" + kGpu), "gpu");
  EXPECT_EQ(kind("n1/mlx5_2:1"), "ib_port");
  EXPECT_EQ(kind("n1/0000:5e:00.0"), "ib_port");
  EXPECT_EQ(kind("ib-switch-07/17"), "switch_port");  // shared by n1 and n2
  EXPECT_EQ(find(r, "ib-switch-07/17")->jobs, 2);
  EXPECT_EQ(kind("n1/nvidia-nvswitch2"), "switch_port");
  EXPECT_EQ(kind("n1/0000:9a:00.0"), "gpu");
  EXPECT_EQ(kind("n1/sda"), "absent");
  EXPECT_EQ(find(r, "n1")->jobs, 7);
}

TEST(SuspectFinder, ApplicationFaultsBlameNoComponent) {
  std::vector<Sighting> s;
  for (int i = 0; i < 4; ++i) {
    std::string job = std::to_string(800 + i);
    s.push_back(root(job, kT0 + i, "n9", kGpu, "application"));
    s.push_back(symptom(job, kT0 + i, "n9", "application"));
  }
  auto r = find_suspects(s, {}, kT0, kT0 + kDay);
  EXPECT_TRUE(r.suspects.empty());
}

TEST(SuspectFinder, InputOrderDoesNotChangeTheJson) {
  auto history = outage_history();
  for (const auto& s : bad_gpu_history()) history.push_back(s);
  const std::string expected =
      suspects_to_json(find_suspects(history, {}, kT0, kT0 + 14 * kDay), true).dump();
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(history.begin(), history.end(), rng);
    EXPECT_EQ(suspects_to_json(find_suspects(history, {}, kT0, kT0 + 14 * kDay), true).dump(),
              expected);
  }
}

TEST(SuspectFinder, JsonLeavesOutUnflaggedUnlessAsked) {
  auto r = find_suspects(bad_gpu_history(), {}, kT0, kT0 + 14 * kDay);
  auto flagged = suspects_to_json(r, false);
  auto all = suspects_to_json(r, true);
  ASSERT_EQ(flagged["suspects"].size(), 4u);
  EXPECT_EQ(all["suspects"].size(), r.suspects.size());
  EXPECT_EQ(flagged["unflagged"], r.suspects.size() - 4);
  const auto& top = flagged["suspects"][0];
  EXPECT_EQ(top["rank"], 1);
  EXPECT_EQ(top["kind"], "gpu");
  EXPECT_EQ(top["id"], "n2/" + kGpu);
  EXPECT_EQ(top["jobs"], 5);
  EXPECT_EQ(top["first_seen"], kT0);  // unix seconds, as in GET /api/v1/diagnoses
  EXPECT_TRUE(top["device_uuid"].is_null());
  EXPECT_EQ(flagged["since"], kT0);
  EXPECT_EQ(flagged["until"], kT0 + 14 * kDay);
  EXPECT_EQ(flagged["systemic_events"], nlohmann::json::array());
}

}  // namespace

// A big cluster fails a job every few minutes all day: one failure per
// 200 s on a different node is a steady rate, not an outage, however long
// it goes on. Two bursts a day apart are two events.
TEST(SuspectFinder, ASteadyFailureRateIsNotSystemicAndBurstsStaySeparate) {
  std::vector<Sighting> s;
  for (int i = 0; i < 400; ++i)
    s.push_back(
        root(std::to_string(1000 + i), kT0 + 200 * i, "n" + std::to_string(i % 97), kGpu, "gpu"));
  auto steady = find_suspects(s, {}, kT0, kT0 + 14 * kDay);
  EXPECT_TRUE(steady.systemic_events.empty());

  std::vector<Sighting> bursts;
  for (int day = 0; day < 2; ++day)
    for (int i = 0; i < 6; ++i)
      bursts.push_back(root(std::to_string(day * 100 + i), kT0 + day * kDay + 10 * i,
                            "m" + std::to_string(i), "mlx5_0:1", "network"));
  auto r = find_suspects(bursts, {}, kT0, kT0 + 14 * kDay);
  ASSERT_EQ(r.systemic_events.size(), 2u);
  EXPECT_EQ(r.systemic_events[0].nodes.size(), 6u);
  EXPECT_EQ(r.systemic_events[1].first_seen, kT0 + kDay);
  // Every blame was part of an outage: no node is flagged for them.
  for (const auto& x : r.suspects) EXPECT_FALSE(x.flagged) << x.id;
}

// Where a job fails every minute all day, five failures in five minutes
// are the background rate: the window must also be well above the usual.
TEST(SuspectFinder, TheBackgroundRateIsNotAnOutage) {
  std::vector<Sighting> s;
  for (int i = 0; i < 1440; ++i)
    s.push_back(root(std::to_string(5000 + i), kT0 + 60 * i, "n" + std::to_string(i % 211),
                     "mlx5_0:1", "network"));
  EXPECT_TRUE(find_suspects(s, {}, kT0, kT0 + kDay).systemic_events.empty());
  SuspectSettings no_rate;
  no_rate.systemic_rate_factor = 0;  // the fixed window alone would call it an outage
  EXPECT_FALSE(find_suspects(s, no_rate, kT0, kT0 + kDay).systemic_events.empty());

  // Fifty nodes in one minute on top of it are one.
  for (int i = 0; i < 50; ++i)
    s.push_back(root(std::to_string(9000 + i), kT0 + 43200 + i, "x" + std::to_string(i), "mlx5_0:1",
                     "network"));
  auto r = find_suspects(s, {}, kT0, kT0 + kDay);
  ASSERT_EQ(r.systemic_events.size(), 1u);
  EXPECT_GE(r.systemic_events[0].nodes.size(), 50u);
}

// A busy node's job list is cut to the newest 50 in the JSON; the counts
// still cover every job.
TEST(SuspectFinder, JsonListsTheNewestFiftyJobs) {
  std::vector<Sighting> s;
  for (int i = 0; i < 120; ++i)
    s.push_back(root(std::to_string(7000 + i), kT0 + 3600 * i, "n2", kGpu, "gpu"));
  auto j = suspects_to_json(find_suspects(s, {}, kT0, kT0 + 14 * kDay), false);
  const auto& top = j["suspects"][0];
  EXPECT_EQ(top["jobs"], 120);
  ASSERT_EQ(top["job_list"].size(), 50u);
  EXPECT_EQ(top["job_list"][0]["job_id"], "7070");
  EXPECT_EQ(top["job_list"][49]["job_id"], "7119");
  EXPECT_FALSE(top["job_list_complete"].get<bool>());
}
