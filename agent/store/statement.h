// A prepared SQLite statement (sqlite3_stmt*), finalized when it goes away,
// with typed bind and column helpers. Parameters are 1-based as in SQLite,
// columns 0-based as in SQLite.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agent/store/diagnosis_store.h"

namespace ff::agent {

// A failed SQLite call. `code` is the extended result code.
struct SqliteError : StoreError {
  SqliteError(int result_code, const std::string& message)
      : StoreError(message + " [" + sqlite3_errstr(result_code) + "]"), code(result_code) {}
  // Another connection holds the lock longer than the busy timeout: the
  // whole transaction may be retried.
  bool busy() const override {
    int primary = code & 0xff;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
  }
  int code;
};

class Statement {
 public:
  // `persistent`: kept and reused for the connection's life (a hint to
  // SQLite's memory allocator, SQLITE_PREPARE_PERSISTENT).
  Statement(sqlite3* db, std::string_view sql, bool persistent) : db_(db) {
    int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt_, nullptr);
    if (rc != SQLITE_OK) {
      std::string message = sqlite3_errmsg(db);
      sqlite3_finalize(stmt_);
      throw SqliteError(sqlite3_extended_errcode(db),
                        "cannot prepare: " + message + " (in: " + std::string(sql) + ")");
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::string_view text) {
    // SQLITE_TRANSIENT: SQLite copies the text, so a temporary may be bound.
    check(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                            SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) {
    return bind(index, std::string_view(text));
  }
  Statement& bind(int index, std::int64_t value) {
    check(sqlite3_bind_int64(stmt_, index, value));
    return *this;
  }
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind_null(int index) {
    check(sqlite3_bind_null(stmt_, index));
    return *this;
  }
  // NULL when absent: the engine's null fields stay NULL in the tables.
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // One step: true when a row is ready, false when the statement is done.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw SqliteError(sqlite3_extended_errcode(db_),
                      std::string(sqlite3_errmsg(db_)) + " (in: " + sqlite3_sql(stmt_) + ")");
  }
  // Steps to the end, for statements that return no rows.
  void run() {
    while (step()) {
    }
  }

  bool column_is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  std::int64_t column_int(int column) const { return sqlite3_column_int64(stmt_, column); }
  // "" for NULL.
  std::string column_text(int column) const {
    const auto* text = sqlite3_column_text(stmt_, column);
    if (!text) return {};
    return std::string(reinterpret_cast<const char*>(text),
                       static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
  }

  // Ready to run again with new parameters.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK)
      throw SqliteError(rc, std::string("cannot bind: ") + sqlite3_errmsg(db_) +
                                " (in: " + sqlite3_sql(stmt_) + ")");
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Borrows a cached statement and resets it on every exit path, so a
// statement left half-stepped by an exception holds no lock afterwards.
class StatementScope {
 public:
  explicit StatementScope(Statement& statement) : statement_(statement) { statement_.reset(); }
  ~StatementScope() { statement_.reset(); }
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;

  Statement* operator->() { return &statement_; }
  Statement& operator*() { return statement_; }

 private:
  Statement& statement_;
};

}  // namespace ff::agent
