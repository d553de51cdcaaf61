// Brings a database to the schema this binary was built with: every
// migration of sql/migrations/ whose version is above PRAGMA user_version,
// each in its own transaction together with the new user_version, so a
// crash leaves the database at one version or the next, never in between.
#pragma once

#include <vector>

#include "agent/store/sqlite_handle.h"
#include "sql/sql_migrations.h"

namespace ff::agent {

// The newest schema version this binary knows (the highest NNN).
int latest_schema_version();

// PRAGMA user_version of an open database.
int read_schema_version(SqliteHandle& db);

// Throws StoreError when the database was written by a newer firstfault
// (its version is above latest_schema_version()): reading or writing it
// with an older schema would silently lose what the newer one added.
void refuse_newer_schema(SqliteHandle& db);

// Applies the pending migrations of `migrations` (ordered, versions 1..N
// without gaps). Safe against another process migrating at the same time:
// the version is read again inside each write transaction.
void migrate(SqliteHandle& db, const std::vector<sql::Migration>& migrations = sql::migrations());

}  // namespace ff::agent
