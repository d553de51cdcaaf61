// Cross-job suspects from a real database: many synthetic diagnoses stored
// with add_pass -> DiagnosisStore::sightings() -> find_suspects, and the
// `suspects` SQL view over the same file; migration 003 on a version-2 file.
#include <gtest/gtest.h>

#include <ctime>
#include <set>
#include <sstream>

#include "agent/store/diagnosis_store.h"
#include "agent/suspects/suspect_report.h"
#include "incident/time/time.h"
#include "sql/sql_migrations.h"
#include "tests/store/old_database.h"
#include "tests/store/store_fixture.h"

namespace {

using ff::agent::DiagnosisStore;
using ff::agent::find_suspects;
using ff::agent::Sighting;
using ff::agent::Suspect;
using ff::agent::SuspectReport;
using fftest::RawDb;
using fftest::TempDir;
using nlohmann::json;

constexpr std::int64_t kDay = 86400;
const std::string kGpu = "00000000:3B:00.0";

struct Root {
  std::string node;
  std::string device;
  std::string domain;
  std::string uuid;  // "" = no device_uuid key at all (an older engine)
};

struct Sym {
  std::string node;
  std::string status;  // active | demoted
};

// A diagnosis whose root causes happened 30 s before it was stored.
json diagnosis(const std::string& job, const std::string& verdict, std::int64_t at,
               const std::vector<Root>& roots, const std::vector<Sym>& symptoms) {
  std::vector<fftest::Cause> causes;
  std::vector<std::string> affected;
  for (const auto& r : roots) {
    causes.push_back({r.node, r.device, r.domain, r.domain + ".synthetic"});
    affected.push_back(r.node);
  }
  json d = fftest::synthetic_diagnosis(job, verdict, roots.empty() ? "" : roots.front().domain,
                                       causes, affected);
  for (std::size_t i = 0; i < roots.size(); ++i) {
    d["root_causes"][i]["time"] = ff::format_time_seconds(at - 30);
    if (!roots[i].uuid.empty()) d["root_causes"][i]["device_uuid"] = roots[i].uuid;
  }
  for (const auto& s : symptoms)
    d["symptoms"].push_back({{"node", s.node},
                             {"kind", "nccl.timeout"},
                             {"status", s.status},
                             {"count", 3},
                             {"first_time", ff::format_time_seconds(at - 20)},
                             {"evidence", json::array()}});
  return d;
}

class Suspects : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = DiagnosisStore::open(tmp_.db());
    now_ = static_cast<std::int64_t>(std::time(nullptr));
    auto& s = *store_;
    // n2's GPU kills four jobs over ten days; n1, its peer, only times out.
    // The newest two know the GPU's UUID.
    int day_ago[] = {10, 7, 3, 1};
    for (int i = 0; i < 4; ++i) {
      std::string job = "g" + std::to_string(i);
      std::int64_t at = now_ - day_ago[i] * kDay;
      s.add_pass(job, 0, "final",
                 diagnosis(job, "attributed", at, {{"n2", kGpu, "gpu", i >= 2 ? "GPU-1111" : ""}},
                           {{"n1", "active"}, {"n8", "demoted"}}),
                 at);
    }
    // A fifth: the fast pass blamed n9, the final pass (the one that
    // counts) the GPU of n2 again.
    s.add_pass("r1", 0, "fastpass",
               diagnosis("r1", "ambiguous", now_ - 2 * kDay, {{"n9", "", "host", ""}}, {}),
               now_ - 2 * kDay);
    s.add_pass("r1", 0, "final",
               diagnosis("r1", "attributed", now_ - 2 * kDay + 60, {{"n2", kGpu, "gpu", ""}},
                         {{"n1", "active"}}),
               now_ - 2 * kDay + 60);
    // One-offs.
    s.add_pass("o1", 0, "final",
               diagnosis("o1", "attributed", now_ - 5 * kDay, {{"n5", "", "host", ""}}, {}),
               now_ - 5 * kDay);
    s.add_pass(
        "o2", 0, "final",
        diagnosis("o2", "attributed", now_ - 4 * kDay, {{"n6", "mlx5_0:1", "network", ""}}, {}),
        now_ - 4 * kDay);
    // Completed jobs never count, whatever they list.
    for (int i = 0; i < 3; ++i) {
      std::string job = "ok" + std::to_string(i);
      s.add_pass(job, 0, "final",
                 diagnosis(job, "no_failure", now_ - kDay - i, {{"n7", kGpu, "gpu", ""}},
                           {{"n7", "active"}}),
                 now_ - kDay - i);
    }
    // A fabric outage: eight nodes blamed in eight jobs within four minutes.
    for (int i = 0; i < 8; ++i) {
      std::string job = "f" + std::to_string(i);
      std::int64_t at = now_ - 6 * kDay + 30 * i;
      s.add_pass(
          job, 0, "final",
          diagnosis(job, "attributed", at, {{"n1" + std::to_string(i), "mlx5_0:1", "network", ""}},
                    {{"n2" + std::to_string(i), "active"}}),
          at);
    }
    // Three weeks ago n3's GPU failed three jobs: outside the 14 days.
    for (int i = 0; i < 3; ++i) {
      std::string job = "old" + std::to_string(i);
      std::int64_t at = now_ - (21 + i) * kDay;
      s.add_pass(job, 0, "final", diagnosis(job, "attributed", at, {{"n3", kGpu, "gpu", ""}}, {}),
                 at);
    }
  }

  SuspectReport report() {
    std::int64_t since = now_ - 14 * kDay;
    return find_suspects(store_->sightings(since), {}, since, now_);
  }

  const Suspect* find(const SuspectReport& r, const std::string& id) {
    for (const auto& s : r.suspects)
      if (s.id == id) return &s;
    return nullptr;
  }

  TempDir tmp_;
  std::unique_ptr<DiagnosisStore> store_;
  std::int64_t now_ = 0;
};

TEST_F(Suspects, SightingsAreTheCurrentFailedDiagnosesInTheWindow) {
  auto sightings = store_->sightings(now_ - 14 * kDay);
  std::set<std::string> jobs;
  for (const auto& s : sightings) jobs.insert(s.job_id);
  EXPECT_EQ(jobs.size(), 4u + 1 + 2 + 8);  // g*, r1, o1 o2, f*
  EXPECT_FALSE(jobs.count("ok0"));
  EXPECT_FALSE(jobs.count("old0"));
  for (const auto& s : sightings) {
    EXPECT_NE(s.node, "n9") << "the superseded fast pass";
    EXPECT_NE(s.node, "n8") << "a demoted symptom";
    EXPECT_NE(s.node, "n7") << "a completed job";
  }
  // Ordered by seen_at, which is the root cause's time, not the pass's.
  for (std::size_t i = 1; i < sightings.size(); ++i)
    EXPECT_LE(sightings[i - 1].seen_at, sightings[i].seen_at);
  const Sighting& first = sightings.front();
  EXPECT_EQ(first.job_id, "g0");
  EXPECT_EQ(first.role, "root_cause");
  EXPECT_EQ(first.seen_at, now_ - 10 * kDay - 30);
  EXPECT_EQ(first.node, "n2");
  EXPECT_EQ(first.device, kGpu);
  EXPECT_EQ(first.domain, "gpu");
  EXPECT_EQ(first.event, "xid");
  EXPECT_EQ(first.verdict, "attributed");
  EXPECT_EQ(first.device_uuid, "");
  EXPECT_EQ(sightings[1].role, "symptom");
  EXPECT_EQ(sightings[1].node, "n1");
  EXPECT_EQ(sightings[1].seen_at, now_ - 10 * kDay - 20);
  int with_uuid = 0;
  for (const auto& s : sightings) with_uuid += s.device_uuid == "GPU-1111";
  EXPECT_EQ(with_uuid, 2);
}

TEST_F(Suspects, RepeatGpuRanksFirstAndTheOutageIsSetApart) {
  auto r = report();
  ASSERT_FALSE(r.suspects.empty());
  const Suspect& top = r.suspects.front();
  EXPECT_EQ(top.id, "n2/" + kGpu);
  EXPECT_EQ(top.jobs, 5);
  EXPECT_EQ(top.attributed_jobs, 5);
  EXPECT_EQ(top.device_uuid, "GPU-1111");
  EXPECT_TRUE(top.flagged);

  std::vector<std::string> flagged;
  for (const auto& s : r.suspects)
    if (s.flagged) flagged.push_back(s.id);
  // n2 is flagged too, below n1: its GPU explains its jobs (device_jobs).
  EXPECT_EQ(flagged, (std::vector<std::string>{"n2/" + kGpu, "n1", "n2"}));
  EXPECT_EQ(find(r, "n2")->device_jobs, 5);
  EXPECT_EQ(find(r, "n1")->symptom_jobs, 5);
  EXPECT_FALSE(find(r, "n5")->flagged);
  EXPECT_FALSE(find(r, "n6/mlx5_0:1")->flagged);
  EXPECT_EQ(find(r, "n3"), nullptr);
  EXPECT_EQ(find(r, "n7"), nullptr);

  ASSERT_EQ(r.systemic_events.size(), 1u);
  EXPECT_EQ(r.systemic_events[0].domain, "network");
  EXPECT_EQ(r.systemic_events[0].nodes.size(), 8u);
  EXPECT_EQ(find(r, "n10")->systemic_jobs, 1);
  EXPECT_EQ(find(r, "n10")->jobs, 0);
  EXPECT_EQ(find(r, "n20")->systemic_jobs, 1) << "the outage's symptoms are set apart too";

  // A 30-day window brings n3's old GPU back, still below the recent one.
  std::int64_t since = now_ - 30 * kDay;
  auto wide = find_suspects(store_->sightings(since), {}, since, now_);
  ASSERT_NE(find(wide, "n3/" + kGpu), nullptr);
  EXPECT_TRUE(find(wide, "n3/" + kGpu)->flagged);
  EXPECT_EQ(wide.suspects.front().id, "n2/" + kGpu);
}

TEST_F(Suspects, SqlViewCountsTheSameWindow) {
  RawDb raw(tmp_.db());
  // job_list is a group_concat: its order is SQLite's choice, so sorted here.
  auto row = [&](const std::string& where) {
    auto rows = raw.rows(
        "SELECT jobs, root_cause_jobs, symptom_jobs, job_list FROM suspects WHERE " + where);
    if (rows.size() != 1) return std::vector<std::string>{"rows: " + std::to_string(rows.size())};
    std::vector<std::string> jobs;
    std::stringstream list(rows.front()[3]);
    for (std::string j; std::getline(list, j, ',');) jobs.push_back(j);
    std::sort(jobs.begin(), jobs.end());
    rows.front()[3].clear();
    for (const auto& j : jobs) rows.front()[3] += (rows.front()[3].empty() ? "" : ",") + j;
    return rows.front();
  };
  EXPECT_EQ(row("node = 'n2' AND device IS NULL"),
            (std::vector<std::string>{"5", "5", "0", "g0,g1,g2,g3,r1"}));
  EXPECT_EQ(row("node = 'n2' AND device = '" + kGpu + "'"),
            (std::vector<std::string>{"5", "5", "0", "g0,g1,g2,g3,r1"}));
  EXPECT_EQ(row("node = 'n1' AND device IS NULL")[0], "5");
  EXPECT_EQ(row("node = 'n1' AND device IS NULL")[2], "5");
  // A plain aggregate: the outage's nodes are there, one job each.
  EXPECT_EQ(row("node = 'n10' AND device IS NULL")[0], "1");
  for (const char* absent : {"n3", "n7", "n8", "n9"})
    EXPECT_EQ(raw.count(std::string("SELECT count(*) FROM suspects WHERE node = '") + absent + "'"),
              0)
        << absent;
  auto seen = raw.rows(
      "SELECT first_seen, last_seen FROM suspects WHERE node = 'n2' AND "
      "device IS NOT NULL");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0][0], ff::format_time_seconds(now_ - 10 * kDay - 30));
  EXPECT_EQ(seen[0][1], ff::format_time_seconds(now_ - kDay - 30));
}

// A version-2 database (before 003) gains device_uuid and the views, and
// its stored root causes become sightings with no UUID.
TEST(SuspectsMigration, Version2DatabaseGainsTheColumnAndViews) {
  TempDir tmp;
  fftest::write_old_database(tmp.db(), 2, kGpu);
  auto store = DiagnosisStore::open(tmp.db());
  EXPECT_GE(store->schema_version(), 3);
  auto sightings = store->sightings(0);
  ASSERT_EQ(sightings.size(), 1u);
  EXPECT_EQ(sightings[0].node, "n4");
  EXPECT_EQ(sightings[0].device_uuid, "");
  RawDb raw(tmp.db());
  EXPECT_EQ(raw.value("SELECT typeof(device_uuid) FROM root_causes"), "null");
  EXPECT_EQ(raw.value("SELECT jobs FROM suspects WHERE node = 'n4' AND device IS NULL"), "1");
  // seen_at falls back to created_at when the root cause has no time.
  EXPECT_EQ(raw.value("SELECT seen_at = created_at FROM suspect_sightings"), "1");
}

}  // namespace
