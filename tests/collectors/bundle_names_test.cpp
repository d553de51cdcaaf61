// The job's user names the output file, and one name the agent refuses gets
// the whole node bundle refused, kernel log included. So whatever the file is
// called (hidden, spaces, control characters, bytes that are not UTF-8, 255
// bytes, two files of one name in two directories), the bundle the collector
// builds passes the agent's own upload validation, each output is kept under
// a name of the one grammar (incident/bundle_paths.h), and coverage still names
// the original path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "agent/server/upload_validation.h"
#include "collectors/bundle/bundle_builder.h"
#include "collectors/bundle/bundle_meta.h"
#include "collectors/delivery/outbox.h"
#include "common/user_file.h"
#include "incident/bundle_paths.h"
#include "tests/collectors/collector_test_support.h"

namespace ff::collect {
namespace {

using ff::test_support::ScratchDirectory;
using testing::at;
using testing::rfc3164;

struct OutputNames {
  std::string label;
  std::string stdout_rel, stderr_rel;  // under <dir>/out
};

void PrintTo(const OutputNames& names, std::ostream* os) {
  *os << names.label;
}

class BundleNames : public ::testing::TestWithParam<OutputNames> {
 protected:
  void SetUp() override {
    config = default_node_config("n2");
    config.spool = dir / "spool";
    config.timezone = "UTC";
    config.sources = {{"syslog", {(dir / "log/syslog").string()}}};
    testing::write_file(dir / "spool/jobs/12/alloc-batch.json",
                        R"({"job_id":"12","step":"batch","node":"n2","restart_count":0,)"
                        R"("start_time":"2026-11-30T05:01:02Z","nodelist":"n2"})");
    testing::write_file(dir / "log/syslog", rfc3164(at("2026-11-30T05:10:00Z")) +
                                                " n2 kernel: NVRM: Xid (PCI:0000:3b:00): 79\n");
  }

  CollectRequest request(const std::string& out, const std::string& err) {
    CollectRequest r;
    r.pass = "epilog";
    r.job_id = "12";
    r.node = "n2";
    r.nodelist = "n2";
    r.exit_code = "1:0";
    r.outputs = {out, err};
    r.owner_uid = ::getuid();  // the test wrote the outputs
    r.now = at("2026-11-30T05:30:00Z");
    return r;
  }

  ScratchDirectory dir{"collector"};
  NodeConfig config;
};

TEST_P(BundleNames, TheAgentAcceptsTheBundleAndEveryOutputIsKept) {
  const OutputNames& names = GetParam();
  std::string out = (dir / "out").string() + "/" + names.stdout_rel;
  std::string err = (dir / "out").string() + "/" + names.stderr_rel;
  testing::write_file(out, "stdout of the job\n");
  testing::write_file(err, "Traceback\nRuntimeError: stderr of the job\n");

  BuiltBundle built = build_bundle(config, request(out, err));

  // What the collector would send, checked by the agent's own validation.
  std::vector<ff::agent::UploadedFile> files;
  std::set<std::string> app_contents;
  for (const std::string& rel : bundle_files(built.entry.files())) {
    files.push_back({rel, testing::read_file(built.entry.files() / rel)});
    EXPECT_EQ(ff::bundle_path_problem(rel, "n2"), "") << rel;
    if (rel.rfind("app/", 0) == 0) app_contents.insert(files.back().content);
  }
  ff::agent::UploadMeta meta;
  ff::agent::UploadCheck check = ff::agent::validate_upload(wire_meta(built.entry.meta).dump(),
                                                            files, ff::agent::BundleLimits{}, meta);
  EXPECT_EQ(check.status, 200) << check.error;
  EXPECT_EQ(app_contents, (std::set<std::string>{"stdout of the job\n",
                                                 "Traceback\nRuntimeError: stderr of the job\n"}));

  // Coverage names each output's original path (escaped where it must be).
  auto job = nlohmann::json::parse(testing::read_file(built.entry.files() / "job.json"));
  std::vector<std::string> details;
  for (const auto& c : job["coverage"])
    if (c["collector"] == "app") {
      EXPECT_EQ(c["status"], "ok") << c.dump();
      details.push_back(c["detail"]);
    }
  ASSERT_EQ(details.size(), 2u);
  for (const std::string& original : {out, err}) {
    std::string shown = ff::printable_path(original);
    EXPECT_TRUE(details[0].rfind(shown, 0) == 0 || details[1].rfind(shown, 0) == 0)
        << shown << " not in " << details[0] << " | " << details[1];
  }
}

INSTANTIATE_TEST_SUITE_P(
    UserChosen, BundleNames,
    ::testing::Values(OutputNames{"HiddenAndSpaces", ".x", "train run 12.err"},
                      OutputNames{"OnlyDots", "...", ".hidden.err"},
                      OutputNames{"ControlAndNotUtf8", "a\nb.out", "r\xc3\xa9sum\xff.err"},
                      OutputNames{"QuotesAndBackslash", "say \"hi\".out", "a\\b.err"},
                      OutputNames{"Longest", std::string(251, 'l') + ".out",
                                  "d/" + std::string(255, 'l')},
                      OutputNames{"SameNameTwoDirectories", "a/slurm.out", "b/slurm.out"}),
    [](const ::testing::TestParamInfo<OutputNames>& p) { return p.param.label; });

// The derivation on its own: always a valid name, never the same twice.
TEST(AppFileNames, DerivedNamesAreValidAndUnique) {
  EXPECT_EQ(ff::app_file_name_for("/home/u/slurm-12.out", "stdout"), "slurm-12.out");
  EXPECT_EQ(ff::app_file_name_for("/home/u/train run.out", "stdout"), "train run.out");
  EXPECT_EQ(ff::app_file_name_for("/home/u/.x", "stdout"), "x");
  EXPECT_EQ(ff::app_file_name_for("/home/u/..", "stdout"), "stdout");
  EXPECT_EQ(ff::app_file_name_for("/home/u/", "stderr"), "u");
  EXPECT_EQ(ff::app_file_name_for("", "stderr"), "stderr");
  EXPECT_EQ(ff::app_file_name_for("/x/r\xc3\xa9sum\xc3\xa9.out", "stdout"), "r_sum_.out");
  EXPECT_EQ(ff::app_file_name_for("/x/a\n\tb", "stdout"), "a_b");
  std::set<std::string> taken;
  EXPECT_EQ(ff::unique_app_file_name("slurm.out", taken), "slurm.out");
  EXPECT_EQ(ff::unique_app_file_name("slurm.out", taken), "slurm-2.out");
  EXPECT_EQ(ff::unique_app_file_name("slurm.out", taken), "slurm-3.out");
  std::string longest(255, 'l');
  EXPECT_EQ(ff::unique_app_file_name(longest, taken), longest);
  std::string second = ff::unique_app_file_name(longest, taken);
  EXPECT_EQ(second, std::string(253, 'l') + "-2");
  // Every byte value, at every position of a short name: valid or the fallback.
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; b += 7) {
      std::string path = "/d/";
      path += static_cast<char>(a);
      path += static_cast<char>(b);
      std::string name = ff::app_file_name_for(path, "stdout");
      ASSERT_TRUE(ff::valid_app_file_name(name)) << a << " " << b << " → " << name;
      std::set<std::string> t{name};
      ASSERT_TRUE(ff::valid_app_file_name(ff::unique_app_file_name(name, t)));
    }
}

}  // namespace
}  // namespace ff::collect
