// A retried upload (same bundle_id) is recognised: add_bundle returns false
// and the table keeps one row, the first one.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::BundleRecord;
using ff::agent::DiagnosisStore;
using fftest::TempDir;

namespace {
BundleRecord bundle(const std::string& id, const std::string& node, std::int64_t bytes) {
  BundleRecord b;
  b.bundle_id = id;
  b.job_id = "12";
  b.attempt = 0;
  b.node = node;
  b.pass = "epilog";
  b.path = "jobs/12/0/bundles/" + id;
  b.bytes = bytes;
  b.received_at = 1000;
  return b;
}
}  // namespace

TEST(BundleDedup, DuplicateIdReturnsFalseAndKeepsOneRow) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  EXPECT_TRUE(store->add_bundle(bundle("n1-12-epilog-1", "n1", 100)));
  EXPECT_FALSE(store->add_bundle(bundle("n1-12-epilog-1", "n1", 999)));
  EXPECT_TRUE(store->add_bundle(bundle("n2-12-epilog-2", "n2", 200)));
  auto stored = store->bundles("12", 0);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].bundle_id, "n1-12-epilog-1");
  EXPECT_EQ(stored[0].bytes, 100) << "the first upload's row is kept";
  EXPECT_EQ(stored[1].path, "jobs/12/0/bundles/n2-12-epilog-2");
  EXPECT_EQ(fftest::RawDb(tmp.db()).count("SELECT count(*) FROM bundles"), 2);
  EXPECT_TRUE(store->bundles("12", 1).empty());
}

TEST(BundleDedup, DuplicateIsRecognisedAcrossReopen) {
  TempDir tmp;
  EXPECT_TRUE(DiagnosisStore::open(tmp.db())->add_bundle(bundle("b", "n1", 1)));
  EXPECT_FALSE(DiagnosisStore::open(tmp.db())->add_bundle(bundle("b", "n1", 1)));
}

// The totals the upload limits are checked against: this attempt's bundles
// only, a refused duplicate not counted twice, a negative count as 0.
TEST(BundleTotals, SumTheAttemptsStoredBundles) {
  TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  auto empty = store->bundle_totals("12", 0);
  EXPECT_EQ(empty.bundles, 0u);
  EXPECT_EQ(empty.bytes, 0u);
  EXPECT_EQ(empty.lines, 0u);
  BundleRecord a = bundle("n1-12-epilog-1", "n1", 100);
  a.lines = 7;
  BundleRecord b = bundle("n2-12-epilog-2", "n2", 5000000000);  // past 32 bits
  b.lines = 3;
  BundleRecord negative = bundle("n3-12-epilog-3", "n3", -50);
  negative.lines = -9;
  BundleRecord other_attempt = bundle("n1-12-epilog-4", "n1", 1000);
  other_attempt.attempt = 1;
  other_attempt.lines = 100;
  ASSERT_TRUE(store->add_bundle(a));
  ASSERT_FALSE(store->add_bundle(a));
  ASSERT_TRUE(store->add_bundle(b));
  ASSERT_TRUE(store->add_bundle(negative));
  ASSERT_TRUE(store->add_bundle(other_attempt));
  auto t = store->bundle_totals("12", 0);
  EXPECT_EQ(t.bundles, 3u);
  EXPECT_EQ(t.bytes, 5000000100u);
  EXPECT_EQ(t.lines, 10u);
  EXPECT_EQ(store->bundle_totals("12", 1).lines, 100u);
  EXPECT_EQ(store->bundle_totals("13", 0).bundles, 0u);
}
