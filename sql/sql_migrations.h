// The agent's schema migrations, embedded from sql/migrations/NNN_name.sql.
// Version N is applied when PRAGMA user_version < N, in one transaction.
#pragma once

#include <string>
#include <vector>

namespace ff::sql {

struct Migration {
  int version;       // NNN from the file name
  const char* name;  // file name, for messages
  const char* text;  // the SQL
};

// Every migration, ordered by version.
const std::vector<Migration>& migrations();

}  // namespace ff::sql
