// `firstfault gather DIR` with an agent.yaml naming a Loki: the real binary
// adds the Loki lines of the job's nodes and window under DIR and every
// node's coverage to DIR/job.json, then `firstfault analyze DIR` names the
// node Loki had the Xid for. Refusals: no central source, no job.json.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/central/fake_loki.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace {

namespace fs = std::filesystem;
using ff::test_support::read_file;
using ff::test_support::ScratchDirectory;
using nlohmann::json;

struct CommandRun {
  int exit_code = -1;
  std::string out;
};

CommandRun run(const std::string& args) {
  CommandRun r;
  std::FILE* p = ::popen((std::string(FF_BINARY) + " " + args + " 2>&1").c_str(), "r");
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class GatherCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "incident/nodes/n1");
    std::ofstream(dir_ / "incident/job.json")
        << R"({"job_id": "9", "nodes": ["n1", "n2"], "state": "FAILED",
              "start_time": "2026-11-30T00:50:00Z", "end_time": "2026-11-30T01:10:00Z",
              "coverage": [{"collector": "syslog", "node": "n1", "status": "ok"}]})";
    // n1's own kernel messages (quiet), so n1 is no gap in the evidence.
    std::ofstream(dir_ / "incident/nodes/n1/syslog")
        << "Nov 30 00:51:00 n1 systemd[1]: Started Session 7 of user root.\n";
    std::ofstream(dir_ / "incident/nodes/n1/app.log")
        << "[rank0]:[E1130 00:55:00.000000 11 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog "
           "caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for "
           "60000 milliseconds before timing out.\n";
  }
  ScratchDirectory dir_{"gather"};
};

TEST_F(GatherCommand, AddsLokiLinesAndCoverage) {
  fftest::FakeLoki loki;
  // 2026-11-30T00:53:21Z, inside the window.
  loki.add_stream("{host=\"n2\"}", {{"host", "n2"}},
                  {{1796000001000000000LL,
                    "n2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has "
                    "fallen off the bus."}});
  std::ofstream(dir_ / "agent.yaml") << "loki:\n  url: " << loki.url()
                                     << "\n  prefix_time: true\n  selectors:\n"
                                        "    kernel: '{host=\"%n\"}'\n";
  CommandRun g =
      run("gather --config " + (dir_ / "agent.yaml").string() + " " + (dir_ / "incident").string());
  EXPECT_EQ(g.exit_code, 0) << g.out;
  EXPECT_TRUE(fs::exists(dir_ / "incident/nodes/n2/kernel.loki"));
  EXPECT_FALSE(fs::exists(dir_ / "incident/.firstfault-gather"));
  json job = json::parse(read_file(dir_ / "incident/job.json"));
  int loki_entries = 0;
  for (const auto& c : job["coverage"]) loki_entries += c["collector"] == "loki:kernel";
  EXPECT_EQ(loki_entries, 2) << job["coverage"].dump(2);  // n1 (empty) and n2 (ok)
  EXPECT_EQ(job["coverage"][0]["collector"], "syslog");   // what was there stays

  CommandRun a = run("analyze " + (dir_ / "incident").string() + " --format json");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  json d = json::parse(a.out);
  EXPECT_EQ(d["verdict"], "attributed") << a.out;
  ASSERT_FALSE(d["root_causes"].empty());
  EXPECT_EQ(d["root_causes"][0]["node"], "n2");
}

TEST_F(GatherCommand, RefusesWithoutASourceOrAJob) {
  std::ofstream(dir_ / "plain.yaml") << "listen: 127.0.0.1:7421\n";
  EXPECT_EQ(
      run("gather --config " + (dir_ / "plain.yaml").string() + " " + (dir_ / "incident").string())
          .exit_code,
      64);
  std::ofstream(dir_ / "agent.yaml")
      << "loki:\n  url: http://127.0.0.1:1\n  selectors:\n    kernel: '{host=\"%n\"}'\n";
  EXPECT_EQ(run("gather --config " + (dir_ / "agent.yaml").string() + " " + dir_.path().string() +
                "/nowhere")
                .exit_code,
            2);
}

}  // namespace
