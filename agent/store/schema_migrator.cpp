#include "agent/store/schema_migrator.h"

#include <string>

#include "agent/store/write_transaction.h"

namespace ff::agent {
namespace {

void check_sequence(const std::vector<sql::Migration>& migrations) {
  int expected = 1;
  for (const auto& m : migrations) {
    if (m.version != expected)
      throw StoreError(std::string("migration ") + m.name + " has version " +
                       std::to_string(m.version) + ", expected " + std::to_string(expected) +
                       ": migrations are numbered 001, 002, ... without gaps");
    ++expected;
  }
}

}  // namespace

int latest_schema_version() {
  const auto& all = sql::migrations();
  return all.empty() ? 0 : all.back().version;
}

int read_schema_version(SqliteHandle& db) {
  return std::stoi(db.pragma_value("user_version"));
}

void refuse_newer_schema(SqliteHandle& db) {
  int found = read_schema_version(db);
  int known = latest_schema_version();
  if (found > known)
    throw StoreError("database " + db.path() + " has schema version " + std::to_string(found) +
                     " but this firstfault knows versions up to " + std::to_string(known) +
                     ": it was written by a newer firstfault; upgrade this one");
}

void migrate(SqliteHandle& db, const std::vector<sql::Migration>& migrations) {
  check_sequence(migrations);
  int known = migrations.empty() ? 0 : migrations.back().version;
  for (const auto& m : migrations) {
    if (read_schema_version(db) >= m.version) continue;
    write_transaction(db, [&] {
      int found = read_schema_version(db);
      if (found > known)
        throw StoreError("database " + db.path() + " has schema version " + std::to_string(found) +
                         " but this firstfault knows versions up to " + std::to_string(known) +
                         ": upgrade firstfault");
      if (found >= m.version) return;  // another process got here first
      try {
        db.exec(m.text);
      } catch (const SqliteError& e) {
        if (e.busy()) throw;
        throw StoreError(std::string("migration ") + m.name + " failed: " + e.what());
      }
      // user_version lives in the database header, which is written as part
      // of this transaction: the schema and its version commit together.
      db.exec("PRAGMA user_version = " + std::to_string(m.version));
    });
  }
}

}  // namespace ff::agent
