// Several threads writing at once lose nothing: through one shared store
// (its mutex) and through several stores on one file (SQLite's locking,
// the busy timeout and the transaction retry).
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::BundleRecord;
using ff::agent::DiagnosisStore;

namespace {

constexpr int kThreads = 8;
constexpr int kPassesPerThread = 25;

// Each thread stores passes of one shared job (pass_no contention) and of
// its own job, and one bundle per pass.
void write_from(DiagnosisStore& store, int thread) {
  for (int i = 0; i < kPassesPerThread; ++i) {
    auto d = fftest::synthetic_diagnosis("shared", "attributed", "gpu",
                                         {{"n" + std::to_string(thread), "GPU", "gpu", "gpu.x"}},
                                         {"n" + std::to_string(thread)});
    store.add_pass("shared", 0, "replay", d, 1000 + i);
    store.add_pass("own-" + std::to_string(thread), 0, "replay", d, 1000 + i);
    BundleRecord b;
    b.bundle_id = "b-" + std::to_string(thread) + "-" + std::to_string(i);
    b.job_id = "shared";
    b.node = "n" + std::to_string(thread);
    b.pass = "step";
    b.path = "p";
    store.add_bundle(b);
    store.add_bundle(b);  // a retried upload, racing with the others
  }
}

void expect_nothing_lost(const std::string& db) {
  fftest::RawDb raw(db);
  const int total = kThreads * kPassesPerThread;
  EXPECT_EQ(raw.count("SELECT count(*) FROM diagnoses WHERE job_id = 'shared'"), total);
  // pass_no 1..total, each exactly once.
  EXPECT_EQ(raw.count("SELECT count(DISTINCT pass_no) FROM diagnoses WHERE job_id = 'shared'"),
            total);
  EXPECT_EQ(raw.count("SELECT max(pass_no) FROM diagnoses WHERE job_id = 'shared'"), total);
  EXPECT_EQ(raw.count("SELECT count(*) FROM diagnoses WHERE job_id LIKE 'own-%'"), total);
  EXPECT_EQ(raw.count("SELECT count(*) FROM root_causes"), 2 * total);
  EXPECT_EQ(raw.count("SELECT count(*) FROM bundles"), total);
  EXPECT_EQ(raw.value("PRAGMA integrity_check"), "ok");
}

}  // namespace

TEST(ConcurrentWriters, ThreadsSharingOneStore) {
  fftest::TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { write_from(*store, t); });
  // Readers alongside the writers, as the HTTP read endpoints would.
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        store->list({});
        store->latest_pass("shared");
      }
    });
  for (auto& t : threads) t.join();
  expect_nothing_lost(tmp.db());
}

TEST(ConcurrentWriters, ThreadsWithAStoreEach) {
  fftest::TempDir tmp;
  DiagnosisStore::open(tmp.db());  // created and migrated once
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto own = DiagnosisStore::open(tmp.db());
      write_from(*own, t);
    });
  for (auto& t : threads) t.join();
  expect_nothing_lost(tmp.db());
}

TEST(ConcurrentWriters, FirstOpenRacingMigrations) {
  fftest::TempDir tmp;
  std::vector<std::thread> threads;
  std::atomic<int> opened{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      auto store = DiagnosisStore::open(tmp.db());
      if (store->schema_version() == DiagnosisStore::latest_schema_version()) ++opened;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(opened.load(), kThreads);
}
