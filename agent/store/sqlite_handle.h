// An open SQLite connection (sqlite3*), closed when the handle goes away.
// The handle knows nothing of the schema; it runs SQL and turns every
// failure into SqliteError, which keeps SQLite's result code so the caller
// can tell "busy, try again" from "broken".
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "agent/store/diagnosis_store.h"
#include "agent/store/statement.h"

namespace ff::agent {

class SqliteHandle {
 public:
  // sqlite3_open_v2 with `flags` (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
  // or SQLITE_OPEN_READONLY). Extended result codes are turned on so errors
  // name e.g. SQLITE_BUSY_SNAPSHOT rather than SQLITE_BUSY.
  SqliteHandle(const std::string& path, int flags) : path_(path) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
      sqlite3_close_v2(db);
      throw SqliteError(rc, "cannot open " + path + ": " + message);
    }
    db_ = db;
    sqlite3_extended_result_codes(db_, 1);
  }
  ~SqliteHandle() {
    statements_.clear();  // finalized before the connection closes
    sqlite3_close_v2(db_);
  }
  SqliteHandle(const SqliteHandle&) = delete;
  SqliteHandle& operator=(const SqliteHandle&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }

  // Runs one or more statements that return nothing of interest.
  void exec(std::string_view sql) {
    std::string text(sql);
    char* error = nullptr;
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
      std::string message = error ? error : sqlite3_errstr(rc);
      sqlite3_free(error);
      throw SqliteError(sqlite3_extended_errcode(db_), message + " (in: " + first_line(text) + ")");
    }
  }

  // A prepared statement kept for the life of the connection: the store runs
  // the same few statements over and over, so each is compiled once.
  // The returned scope resets the statement when it ends, which also ends
  // the implicit read transaction of a SELECT that was not stepped to the end.
  StatementScope cached(const char* sql) {
    auto it = statements_.find(sql);
    if (it == statements_.end())
      it = statements_.emplace(sql, std::make_unique<Statement>(db_, sql, true)).first;
    return StatementScope(*it->second);
  }

  std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  int changes() const { return sqlite3_changes(db_); }
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

  // A PRAGMA's single value, e.g. pragma_value("journal_mode") == "wal".
  std::string pragma_value(const std::string& name) {
    Statement st(db_, "PRAGMA " + name, false);
    return st.step() ? st.column_text(0) : std::string();
  }

 private:
  static std::string first_line(const std::string& sql) {
    auto start = sql.find_first_not_of(" \n\t");
    if (start == std::string::npos) return "";
    auto end = sql.find('\n', start);
    return sql.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  // Keyed by the SQL text's address: every cached statement is a literal.
  std::unordered_map<const char*, std::unique_ptr<Statement>> statements_;
};

}  // namespace ff::agent
