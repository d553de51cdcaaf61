// A writer killed at any moment keeps every pass it was told was stored,
// and a transaction cut off before COMMIT leaves nothing behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;

TEST(CrashDurability, KillNineKeepsEveryAcknowledgedPass) {
  fftest::TempDir tmp;
  DiagnosisStore::open(tmp.db());
  int acks[2];
  ASSERT_EQ(pipe(acks), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child writes passes forever, acknowledging each after add_pass
    // returned (as the agent replies 201 only after the store returned).
    close(acks[0]);
    auto store = DiagnosisStore::open(tmp.db());
    for (int i = 1;; ++i) {
      auto d = fftest::synthetic_diagnosis(std::to_string(i), "attributed", "gpu",
                                           {{"n1", "GPU", "gpu", "gpu.x"}}, {"n1"});
      store->add_pass(std::to_string(i), 0, "final", d, i);
      if (write(acks[1], &i, sizeof i) != sizeof i) _exit(1);
    }
  }
  close(acks[1]);
  int last_ack = 0, n;
  while (last_ack < 40 && read(acks[0], &n, sizeof n) == sizeof n) last_ack = n;
  kill(child, SIGKILL);
  // Acknowledgements already in the pipe when the child died count too.
  while (read(acks[0], &n, sizeof n) == sizeof n) last_ack = n;
  close(acks[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_GE(last_ack, 40);

  auto store = DiagnosisStore::open(tmp.db());
  fftest::RawDb raw(tmp.db());
  EXPECT_EQ(raw.value("PRAGMA integrity_check"), "ok");
  for (int i = 1; i <= last_ack; ++i) {
    auto pass = store->latest_pass(std::to_string(i));
    ASSERT_TRUE(pass) << "acknowledged pass " << i << " lost";
    EXPECT_EQ(raw.count("SELECT count(*) FROM root_causes WHERE diagnosis_id = " +
                        std::to_string(pass->id)),
              1);
  }
  // At most the one pass that was in flight is there without an ack.
  EXPECT_LE(raw.count("SELECT count(*) FROM diagnoses"), last_ack + 1);
}

TEST(CrashDurability, ExitInsideATransactionLeavesNothing) {
  fftest::TempDir tmp;
  DiagnosisStore::open(tmp.db())->add_pass(
      "1", 0, "final", fftest::synthetic_diagnosis("1", "unattributed", "", {}, {}), 1);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Half of a pass: the diagnoses row and one child row, then the process
    // ends without COMMIT or ROLLBACK.
    fftest::RawDb raw(tmp.db());
    raw.exec("BEGIN IMMEDIATE");
    raw.exec(
        "INSERT INTO diagnoses (job_id, attempt, pass_no, trigger, created_at, verdict, "
        "diagnosis_json) VALUES ('2', 0, 1, 'final', 2, 'attributed', '{}')");
    raw.exec(
        "INSERT INTO root_causes (diagnosis_id, ordinal, node, event) "
        "VALUES (last_insert_rowid(), 0, 'n1', 'xid')");
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  auto store = DiagnosisStore::open(tmp.db());
  EXPECT_TRUE(store->latest_pass("1"));
  EXPECT_FALSE(store->latest_pass("2"));
  fftest::RawDb raw(tmp.db());
  EXPECT_EQ(raw.count("SELECT count(*) FROM root_causes"), 0);
  EXPECT_EQ(raw.value("PRAGMA integrity_check"), "ok");
  // And the database takes writes again: the dead writer's lock is gone.
  EXPECT_EQ(store
                ->add_pass("2", 0, "final",
                           fftest::synthetic_diagnosis("2", "unattributed", "", {}, {}), 3)
                .pass_no,
            1);
}
