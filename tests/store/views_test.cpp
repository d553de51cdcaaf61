// The operator views count the current diagnosis of each job attempt only
// (a superseded fast pass is not a second failure), on the synthetic
// history of store_fixture.h.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using Rows = std::vector<std::vector<std::string>>;

class Views : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = DiagnosisStore::open(tmp_.db());
    fftest::add_synthetic_history(*store);
  }
  fftest::TempDir tmp_;
  Rows rows(const std::string& sql) { return fftest::RawDb(tmp_.db()).rows(sql); }
};

TEST_F(Views, LastDiagnosesHasOneRowPerJobAttempt) {
  EXPECT_EQ(rows("SELECT job_id, attempt, pass_no FROM last_diagnoses ORDER BY created_at"),
            (Rows{{"1", "0", "1"},
                  {"2", "0", "1"},
                  {"3", "0", "1"},
                  {"4", "0", "1"},
                  {"5", "0", "1"},
                  {"6", "0", "1"},
                  {"7", "0", "1"},
                  {"8", "0", "2"},
                  {"1", "1", "1"}}));
  EXPECT_EQ(rows("SELECT created FROM last_diagnoses WHERE job_id = '2'"),
            (Rows{{"1970-01-01T00:03:20Z"}}));
}

TEST_F(Views, FailuresPerNode) {
  EXPECT_EQ(rows("SELECT node, failures, attributed, ambiguous, domains, last_seen_at "
                 "FROM failures_per_node ORDER BY node"),
            (Rows{{"n1", "4", "3", "1", "gpu=3 host=1", "900"},
                  {"n2", "2", "2", "0", "gpu=1 network=1", "810"},
                  {"n3", "1", "0", "1", "gpu=1", "400"}}));
}

TEST_F(Views, FailuresPerGpu) {
  EXPECT_EQ(rows("SELECT node, device, failures, attributed, ambiguous, sub_domains "
                 "FROM failures_per_gpu ORDER BY node, device"),
            (Rows{{"n1", "GPU-A", "2", "2", "0", "gpu.fallen_off_bus=1 gpu.uncorrectable_ecc=1"},
                  {"n1", "GPU-B", "1", "0", "1", "gpu.fallen_off_bus=1"},
                  {"n2", "GPU-D", "1", "1", "0", "gpu.fallen_off_bus=1"},
                  {"n2", "mlx5_0:1", "1", "1", "0", "network.ib_link_down=1"},
                  {"n3", "GPU-C", "1", "0", "1", "gpu.uncorrectable_ecc=1"}}));
}

TEST_F(Views, FailuresPerDomain) {
  EXPECT_EQ(rows("SELECT domain, failures, attributed, ambiguous, unattributed, nodes, "
                 "last_seen_at FROM failures_per_domain ORDER BY domain"),
            (Rows{{"gpu", "4", "3", "1", "0", "3", "810"},
                  {"host", "1", "1", "0", "0", "1", "900"},
                  {"network", "1", "1", "0", "0", "1", "300"},
                  {"scheduler", "1", "1", "0", "0", "0", "700"},
                  {"unknown", "1", "0", "0", "1", "0", "500"}}));
}

TEST_F(Views, TimeWindowsGoThroughTheRowViews) {
  // sql/README.md's "failures per node in the last N days", with a fixed "now".
  EXPECT_EQ(rows("SELECT node, count(DISTINCT diagnosis_id) FROM failure_root_causes "
                 "WHERE node IS NOT NULL AND created_at >= 350 GROUP BY node ORDER BY node"),
            (Rows{{"n1", "2"}, {"n2", "1"}, {"n3", "1"}}));
  EXPECT_EQ(rows("SELECT count(*) FROM failed_diagnoses"), (Rows{{"8"}}));
}
