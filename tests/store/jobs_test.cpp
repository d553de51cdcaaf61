// upsert_job merges what each source knows: non-empty fields replace, empty
// ones keep the stored value, nodes accumulate.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using ff::agent::JobRecord;

TEST(Jobs, UpsertMergesFields) {
  fftest::TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  JobRecord from_bundle;
  from_bundle.job_id = "12";
  from_bundle.nodes = {"n1", "n2"};
  from_bundle.start_time = "2026-11-30T05:01:02Z";
  store->upsert_job(from_bundle);

  JobRecord from_scontrol;
  from_scontrol.job_id = "12";
  from_scontrol.cluster = "demo";
  from_scontrol.user = "alice";
  from_scontrol.state = "FAILED";
  from_scontrol.exit_code = "1:0";
  from_scontrol.nodes = {"n2", "n3"};
  store->upsert_job(from_scontrol);

  auto job = store->job("12", 0);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->cluster, "demo");
  EXPECT_EQ(job->user, "alice");
  EXPECT_EQ(job->state, "FAILED");
  EXPECT_EQ(job->exit_code, "1:0");
  EXPECT_EQ(job->start_time, "2026-11-30T05:01:02Z");
  EXPECT_EQ(job->nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_FALSE(store->job("12", 1));
  EXPECT_EQ(fftest::RawDb(tmp.db()).count("SELECT count(*) FROM jobs"), 1);
}
