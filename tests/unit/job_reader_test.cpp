// engine/read/job_reader: job.json of an incident directory. The reader never
// throws; what it cannot read goes to `errors`.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "read/job_reader.h"

namespace {

namespace fs = std::filesystem;

std::vector<ff::ErrorItem> ReadErrors(const std::string& content) {
  char tmpl[] = "/tmp/ff-job-reader-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  std::ofstream(dir / "job.json", std::ios::binary) << content;
  std::vector<ff::ErrorItem> errors;
  EXPECT_NO_THROW(ff::read_job_json(dir / "job.json", errors));
  fs::remove_all(dir);
  return errors;
}

// fuzz/crashes/fuzz_job_json/number-overflow: nlohmann's parser throws
// out_of_range (406), not parse_error, for a number beyond a double; the
// reader let it escape and `firstfault analyze` died in std::terminate.
TEST(JobReader, NumberBeyondADoubleIsMalformedNotACrash) {
  for (const char* content : {"1e400", "{\"job_id\":\"12\",\"attempt\":1e10793}", "[-1e999]"}) {
    std::vector<ff::ErrorItem> errors = ReadErrors(content);
    ASSERT_EQ(errors.size(), 1u) << content;
    EXPECT_EQ(errors[0].message.rfind("malformed job.json: ", 0), 0u) << errors[0].message;
  }
}

}  // namespace
