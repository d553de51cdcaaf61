// A database written by a newer firstfault (higher user_version) is refused
// with a message that says so, and left as it was.
#include <gtest/gtest.h>

#include "agent/store/diagnosis_store.h"
#include "tests/store/store_fixture.h"

using ff::agent::DiagnosisStore;
using ff::agent::StoreError;
using fftest::RawDb;
using fftest::TempDir;

namespace {

void make_newer(const std::string& path) {
  DiagnosisStore::open(path);  // the current schema, then one version more
  RawDb(path).exec("PRAGMA user_version = " +
                   std::to_string(DiagnosisStore::latest_schema_version() + 1));
}

std::string open_error(bool read_only, const std::string& path) {
  try {
    if (read_only)
      DiagnosisStore::open_readonly(path);
    else
      DiagnosisStore::open(path);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(NewerSchema, ReadWriteOpenIsRefused) {
  TempDir tmp;
  make_newer(tmp.db());
  std::string error = open_error(false, tmp.db());
  EXPECT_NE(error.find("newer firstfault"), std::string::npos) << error;
  EXPECT_NE(error.find(std::to_string(DiagnosisStore::latest_schema_version() + 1)),
            std::string::npos)
      << error;
  EXPECT_EQ(RawDb(tmp.db()).count("PRAGMA user_version"),
            DiagnosisStore::latest_schema_version() + 1);
}

TEST(NewerSchema, ReadOnlyOpenIsRefused) {
  TempDir tmp;
  make_newer(tmp.db());
  std::string error = open_error(true, tmp.db());
  EXPECT_NE(error.find("newer firstfault"), std::string::npos) << error;
}
