// Runs a piece of work as one write transaction, retrying it when another
// connection (another agent process, a migration, an operator's sqlite3
// shell writing) keeps the database locked past the busy timeout.
#pragma once

#include <chrono>
#include <thread>
#include <type_traits>
#include <utility>

#include "agent/store/sqlite_handle.h"

namespace ff::agent {

// How often a whole transaction is tried before SQLITE_BUSY reaches the
// caller. Each try already waits up to the busy timeout inside SQLite, so
// the bound on the wait is kWriteAttempts x busy timeout plus the back-off.
constexpr int kWriteAttempts = 3;

// BEGIN IMMEDIATE takes the write lock up front: a deferred transaction that
// reads first and writes later can fail with SQLITE_BUSY_SNAPSHOT in WAL
// mode once another writer committed, and that failure is not retryable
// inside the transaction. `work` must be safe to run again from the start
// (it sees the database as the new attempt finds it).
template <typename Work>
auto write_transaction(SqliteHandle& db, Work&& work) -> decltype(work()) {
  for (int attempt = 1;; ++attempt) {
    try {
      db.exec("BEGIN IMMEDIATE");
      if constexpr (std::is_void_v<decltype(work())>) {
        work();
        db.exec("COMMIT");
        return;
      } else {
        auto result = work();
        db.exec("COMMIT");
        return result;
      }
    } catch (const SqliteError& e) {
      if (db.in_transaction()) sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      if (!e.busy() || attempt >= kWriteAttempts) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
    } catch (...) {
      if (db.in_transaction()) sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
}

}  // namespace ff::agent
