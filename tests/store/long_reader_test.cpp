// WAL: an operator's sqlite3 shell holding a read transaction open for as
// long as it likes does not block the agent's writes, and keeps seeing its
// snapshot until it ends the transaction.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;

namespace {

// A sqlite3 shell on `db` with a pipe to its stdin and one from its stdout.
class SqliteShell {
 public:
  explicit SqliteShell(const std::string& db) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[0]);
      close(in[1]);
      close(out[0]);
      close(out[1]);
      execl(FF_SQLITE3_SHELL, "sqlite3", db.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~SqliteShell() {
    if (to_ >= 0) close(to_);
    close(from_);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  void send(const std::string& sql) {
    if (write(to_, sql.data(), sql.size()) != static_cast<ssize_t>(sql.size()))
      throw std::runtime_error("write to sqlite3");
  }
  std::string read_line() {
    std::string line;
    char c;
    while (read(from_, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

}  // namespace

TEST(LongReader, ReadTransactionInAnotherProcessDoesNotBlockWrites) {
  if (std::string(FF_SQLITE3_SHELL).empty()) GTEST_SKIP() << "no sqlite3 shell installed";
  fftest::TempDir tmp;
  auto store = DiagnosisStore::open(tmp.db());
  auto d =
      fftest::synthetic_diagnosis("1", "attributed", "gpu", {{"n1", "G", "gpu", "gpu.x"}}, {"n1"});
  store->add_pass("1", 0, "final", d, 1);

  SqliteShell reader(tmp.db());
  reader.send("BEGIN;\nSELECT count(*) FROM diagnoses;\n");
  ASSERT_EQ(reader.read_line(), "1") << "the reader's transaction holds its snapshot from here";

  auto start = std::chrono::steady_clock::now();
  for (int i = 2; i <= 20; ++i) store->add_pass(std::to_string(i), 0, "final", d, i);
  auto took = std::chrono::steady_clock::now() - start;
  // Far below the 5 s busy timeout: the writes did not wait for the reader.
  EXPECT_LT(took, std::chrono::seconds(2));
  EXPECT_EQ(store->list({}).size(), 20u);

  reader.send("SELECT count(*) FROM diagnoses;\n");
  EXPECT_EQ(reader.read_line(), "1") << "still its snapshot";
  reader.send("COMMIT;\nSELECT count(*) FROM diagnoses;\n");
  EXPECT_EQ(reader.read_line(), "20") << "a new transaction sees the writes";
}
