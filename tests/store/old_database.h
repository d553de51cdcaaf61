// A database as an older agent left it: the migrations up to `version` only,
// and one attributed gpu pass of job 77 with one root cause on n4. Opening
// it with the current store must migrate it and keep that root cause.
#pragma once

#include <string>

#include "sql/sql_migrations.h"
#include "tests/store/store_fixture.h"

namespace fftest {

inline void write_old_database(const std::string& db, int version, const std::string& device) {
  RawDb raw(db);
  for (const auto& m : ff::sql::migrations())
    if (m.version <= version) raw.exec(m.text);
  raw.exec("PRAGMA user_version = " + std::to_string(version));
  raw.exec(
      "INSERT INTO diagnoses (id, job_id, attempt, pass_no, trigger, created_at, verdict, "
      "domain, diagnosis_json) VALUES (1, '77', 0, 1, 'final', strftime('%s', 'now'), "
      "'attributed', 'gpu', '{}')");
  raw.exec(
      "INSERT INTO root_causes (diagnosis_id, ordinal, node, device, event, time, domain) "
      "VALUES (1, 0, 'n4', '" +
      device + "', 'xid', NULL, 'gpu')");
}

}  // namespace fftest
