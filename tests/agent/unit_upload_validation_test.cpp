// agent/server/upload_validation: the checks of an uploaded bundle that need
// no credential (what BundleReceiver::receive runs before storing anything;
// fuzz/fuzz_bundle_upload fuzzes the same functions).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/server/upload_validation.h"

namespace {

using namespace ff::agent;

const std::string kMeta =
    R"({"bundle_id":"gpu-a01.epilog.1","job_id":"12","node":"gpu-a01","pass":"epilog","attempt":2})";

UploadCheck Validate(const std::string& meta, const std::vector<UploadedFile>& files,
                     BundleLimits limits = {}) {
  UploadMeta parsed;
  return validate_upload(meta, files, limits, parsed);
}

TEST(UploadValidation, AcceptsAWellFormedBundle) {
  UploadMeta meta;
  UploadCheck c =
      validate_upload(kMeta,
                      {{"job.json", R"({"job_id":"12","nodes":["gpu-a01","gpu-a02","../x",7]})"},
                       {"nodes/gpu-a01/kernel.log", "[ 1.0] x\n"},
                       {"app/slurm-12.out", "hello\n"}},
                      BundleLimits{}, meta);
  EXPECT_EQ(c.status, 200) << c.error;
  EXPECT_EQ(meta.job_id, "12");
  EXPECT_EQ(meta.node, "gpu-a01");
  EXPECT_EQ(meta.pass, "epilog");
  EXPECT_EQ(meta.attempt, 2);
  EXPECT_EQ(c.weight.bytes, 54u + 9u + 6u);
  EXPECT_EQ(c.weight.lines, 3u);
  EXPECT_EQ(c.fragment_nodes, (std::vector<std::string>{"gpu-a01", "gpu-a02"}));
}

TEST(UploadValidation, RefusesABadMetaPart) {
  for (const char* meta : {
           "",
           "[]",
           "{",
           R"({"job_id":"12","node":"n1","pass":"step"})",
           R"({"bundle_id":"b","job_id":"../12","node":"n1","pass":"step"})",
           R"({"bundle_id":"b","job_id":"12","node":"n/1","pass":"step"})",
           R"({"bundle_id":"b","job_id":"12","node":"n1","pass":"final"})",
           R"({"bundle_id":"b","job_id":"12","node":"n1","pass":"step","attempt":-1})",
           R"({"bundle_id":"b","job_id":"12","node":"n1","pass":"step","attempt":1.5})",
           R"({"bundle_id":"b","job_id":"12","node":"n1","pass":"step","attempt":99999999999})",
       }) {
    UploadCheck c = Validate(meta, {{"job.json", "{}"}});
    EXPECT_EQ(c.status, 400) << meta;
    EXPECT_EQ(c.error.rfind("meta: ", 0), 0u) << meta << ": " << c.error;
  }
}

TEST(UploadValidation, RefusesBadFileLists) {
  struct Case {
    std::vector<UploadedFile> files;
    int status;
    std::string error;
  };
  std::vector<Case> cases = {
      {{{"nodes/gpu-a01/kernel", "x"}}, 400, "file 'job.json' missing"},
      {{{"job.json", "{}"}, {"job.json", "{}"}}, 400, "file 'job.json' sent twice"},
      {{{"job.json", "{}"}, {"nodes/gpu-a02/kernel", "x"}},
       400,
       "file 'nodes/gpu-a02/kernel': file of another node"},
      {{{"job.json", "{}"}, {"../etc/passwd", "x"}},
       400,
       "file '../etc/passwd': file outside job.json, nodes/ and app/"},
      {{{"job.json", "[]"}}, 400, "file 'job.json': not a JSON object"},
      {{{"job.json", R"({"job_id":12})"}}, 400, "file 'job.json': job_id differs from meta"},
      {{{"job.json", R"({"job_id":"13"})"}}, 400, "file 'job.json': job_id differs from meta"},
  };
  for (const auto& c : cases) {
    UploadCheck r = Validate(kMeta, c.files);
    EXPECT_EQ(r.status, c.status) << c.error;
    EXPECT_EQ(r.error, c.error);
  }
}

TEST(UploadValidation, LimitsAreA413BeforeAnyName) {
  BundleLimits limits;
  limits.max_files = 2;
  limits.max_total_bytes = 10;
  // Over a limit: 413, whatever the names (nothing is looked at further).
  for (const auto& files :
       std::vector<std::vector<UploadedFile>>{{{"job.json", "{}"}, {"app/a", ""}, {"app/b", ""}},
                                              {{"job.json", "{}"}, {"app/a", "0123456789"}},
                                              {{"../x", "{}"}, {"app/a", "0123456789"}}}) {
    UploadCheck c = Validate(kMeta, files, limits);
    EXPECT_EQ(c.status, 413) << c.error;
    EXPECT_FALSE(c.error.empty());
  }
  UploadCheck exact = Validate(kMeta, {{"job.json", "{}"}, {"app/a", "01234567"}}, limits);
  EXPECT_EQ(exact.status, 200) << exact.error;
  EXPECT_EQ(exact.weight.bytes, 10u);
}

}  // namespace
