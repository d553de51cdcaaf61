// Unit tests for read/incident_layout and incident/node_file_kind: file
// kinds from names, and the fixed read order of an incident directory (rotated files oldest first).
#include "engine/read/incident_layout.h"
#include "tests/support/scratch_directory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "incident/node_file_kind.h"

namespace ff {
namespace {

namespace fs = std::filesystem;
using ff::test_support::ScratchDirectory;

TEST(NodeFileKind, KernelLogs) {
  EXPECT_EQ(node_file_kind("kernel.log"), "kernel");
  EXPECT_EQ(node_file_kind("dmesg"), "kernel");
  EXPECT_EQ(node_file_kind("dmesg.txt"), "kernel");
  EXPECT_EQ(node_file_kind("kern.log"), "kernel");
  EXPECT_EQ(node_file_kind("kern.log.1"), "kernel");
  EXPECT_EQ(node_file_kind("kernel.log.2.gz"), "kernel");
}

TEST(NodeFileKind, SyslogAndRotations) {
  EXPECT_EQ(node_file_kind("syslog"), "syslog");
  EXPECT_EQ(node_file_kind("syslog.1"), "syslog");
  EXPECT_EQ(node_file_kind("syslog.2.gz"), "syslog");
  EXPECT_EQ(node_file_kind("syslog-20261101"), "syslog");
  EXPECT_EQ(node_file_kind("messages"), "syslog");
  EXPECT_EQ(node_file_kind("messages-20261101.gz"), "syslog");
  EXPECT_EQ(node_file_kind("journal.log"), "syslog");
}

TEST(NodeFileKind, DaemonsAndApp) {
  EXPECT_EQ(node_file_kind("fabricmanager.log"), "fabricmanager");
  EXPECT_EQ(node_file_kind("nv-fabricmanager.log"), "fabricmanager");
  EXPECT_EQ(node_file_kind("slurmd.log"), "slurmd");
  EXPECT_EQ(node_file_kind("slurmstepd.log"), "slurmd");
  EXPECT_EQ(node_file_kind("app.log"), "app");
  EXPECT_EQ(node_file_kind("app.log.1.gz"), "app");
}

TEST(NodeFileKind, OtherNames) {
  EXPECT_EQ(node_file_kind("nvidia-bug-report.log"), "other");
  EXPECT_EQ(node_file_kind("README"), "other");
  EXPECT_EQ(node_file_kind("dcgm.json"), "other");
  EXPECT_EQ(node_file_kind(""), "other");
  EXPECT_EQ(node_file_kind("flight_recorder"), "flight_recorder");
  EXPECT_EQ(node_file_kind("flight_recorder.1"), "other");
}

TEST(NodeFileKind, FlightRecorderRanks) {
  EXPECT_EQ(flight_recorder_rank("0"), 0);
  EXPECT_EQ(flight_recorder_rank("17"), 17);
  EXPECT_EQ(flight_recorder_rank("9999999"), 9999999);
  for (const char* bad : {"", "017", "+1", "-1", "1.pkl", "10000000", "a", " 1", "..", "1/2"})
    EXPECT_FALSE(flight_recorder_rank(bad)) << bad;
}

class IncidentLayoutTest : public ::testing::Test {
 protected:
  void touch(const std::string& rel) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "x\n";
  }

  std::vector<std::string> rels(const IncidentLayout& l) {
    std::vector<std::string> out;
    for (const auto& f : l.files) out.push_back(f.rel);
    return out;
  }

  ScratchDirectory dir_{"layout"};
};

TEST_F(IncidentLayoutTest, RotatedSyslogsAreReadOldestFirst) {
  for (const char* f : {"syslog", "syslog.1", "syslog.2.gz", "syslog-20261101"})
    touch(std::string("nodes/gpu-a01/") + f);
  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(rels(l),
            (std::vector<std::string>{"nodes/gpu-a01/syslog-20261101", "nodes/gpu-a01/syslog.2.gz",
                                      "nodes/gpu-a01/syslog.1", "nodes/gpu-a01/syslog"}));
  for (const auto& f : l.files) {
    EXPECT_EQ(f.kind, "syslog") << f.rel;
    EXPECT_EQ(f.node, "gpu-a01") << f.rel;
    EXPECT_EQ(f.path, dir_ / f.rel) << f.rel;
  }
}

TEST_F(IncidentLayoutTest, NumberedRotationsOrderNumericallyNotByName) {
  for (const char* f : {"syslog", "syslog.1", "syslog.2.gz", "syslog.10.gz", "syslog.9.gz"})
    touch(std::string("nodes/n1/") + f);
  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  EXPECT_EQ(rels(l), (std::vector<std::string>{"nodes/n1/syslog.10.gz", "nodes/n1/syslog.9.gz",
                                               "nodes/n1/syslog.2.gz", "nodes/n1/syslog.1",
                                               "nodes/n1/syslog"}));
}

TEST_F(IncidentLayoutTest, DatedRotationsOrderByDate) {
  for (const char* f : {"messages", "messages-20261101.gz", "messages-20261025"})
    touch(std::string("nodes/n1/") + f);
  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  EXPECT_EQ(rels(l),
            (std::vector<std::string>{"nodes/n1/messages-20261025", "nodes/n1/messages-20261101.gz",
                                      "nodes/n1/messages"}));
}

TEST_F(IncidentLayoutTest, KernelRotationBeforeCurrentKernelLog) {
  touch("nodes/n1/kernel.log");
  touch("nodes/n1/kernel.log.1");
  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  EXPECT_EQ(rels(l), (std::vector<std::string>{"nodes/n1/kernel.log.1", "nodes/n1/kernel.log"}));
}

TEST_F(IncidentLayoutTest, WholeIncidentLayout) {
  touch("nodes/gpu-b02/syslog");
  touch("nodes/gpu-b02/kernel.log");
  touch("nodes/gpu-a01/app.log");
  touch("nodes/gpu-a01/slurmd.log");
  touch("nodes/gpu-a01/fabricmanager.log");
  touch("nodes/gpu-a01/kernel.log");
  touch("nodes/gpu-a01/syslog");
  touch("nodes/gpu-a01/notes.txt");
  touch("app/slurm-48213.out");
  touch("cluster/slurmctld.log");
  touch("cluster/sacct.txt");
  touch("metrics/dcgm.json");
  touch("job.json");
  fs::create_directories(dir_ / "nodes/gpu-c03");  // a node without logs

  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(l.node_dirs, (std::vector<std::string>{"gpu-a01", "gpu-b02", "gpu-c03"}));
  EXPECT_EQ(l.metrics_files, (std::vector<std::string>{"metrics/dcgm.json"}));
  ASSERT_EQ(l.files.size(), 11u);

  // nodes in name order, each node's files grouped by kind
  std::vector<std::string> a01;
  for (const auto& f : l.files)
    if (f.node == "gpu-a01") a01.push_back(f.rel);
  ASSERT_EQ(a01.size(), 6u);
  EXPECT_EQ(l.files[0].node, "gpu-a01");
  EXPECT_EQ(l.files[6].node, "gpu-b02");
  EXPECT_EQ(l.files[7].node, "gpu-b02");

  auto find = [&](const std::string& rel) -> const SourceFile* {
    for (const auto& f : l.files)
      if (f.rel == rel) return &f;
    return nullptr;
  };
  ASSERT_NE(find("nodes/gpu-a01/app.log"), nullptr);
  EXPECT_EQ(find("nodes/gpu-a01/app.log")->kind, "app");
  EXPECT_EQ(find("nodes/gpu-a01/slurmd.log")->kind, "slurmd");
  EXPECT_EQ(find("nodes/gpu-a01/fabricmanager.log")->kind, "fabricmanager");
  EXPECT_EQ(find("nodes/gpu-a01/kernel.log")->kind, "kernel");
  EXPECT_EQ(find("nodes/gpu-a01/notes.txt")->kind, "other");

  const SourceFile* out = find("app/slurm-48213.out");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->kind, "app");
  EXPECT_EQ(out->node, "");
  const SourceFile* ctld = find("cluster/slurmctld.log");
  ASSERT_NE(ctld, nullptr);
  EXPECT_EQ(ctld->kind, "slurmctld");
  EXPECT_EQ(ctld->node, "");
  ASSERT_NE(find("cluster/sacct.txt"), nullptr);
  EXPECT_EQ(find("cluster/sacct.txt")->kind, "cluster");
  EXPECT_EQ(find("job.json"), nullptr);
  EXPECT_EQ(find("metrics/dcgm.json"), nullptr);

  // node files come before app/ and cluster/ files
  EXPECT_EQ(l.files[8].rel, "app/slurm-48213.out");
}

TEST_F(IncidentLayoutTest, OrderIsDeterministic) {
  for (const char* f : {"nodes/n2/syslog.1", "nodes/n1/kernel.log", "nodes/n2/syslog",
                        "nodes/n1/syslog-20261101", "nodes/n1/app.log", "cluster/slurmctld.log"})
    touch(f);
  std::vector<ErrorItem> e1, e2;
  EXPECT_EQ(rels(list_incident(dir_.path(), e1)), rels(list_incident(dir_.path(), e2)));
}

TEST_F(IncidentLayoutTest, EmptyOrMissingDirectoryGivesNoFiles) {
  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  EXPECT_TRUE(l.files.empty());
  EXPECT_TRUE(l.node_dirs.empty());
  IncidentLayout missing = list_incident(dir_ / "nope", errors);
  EXPECT_TRUE(missing.files.empty());
}

// Nothing outside the incident is listed: a link leading out of it (to a file
// beside it, to /etc), a FIFO, is named in errors and skipped; a node
// directory linked outside is not a node of the incident.
TEST_F(IncidentLayoutTest, LinksLeavingTheIncidentAndSpecialFilesAreNamedAndSkipped) {
  fs::path beside = dir_.path().string() + "-beside.log";
  std::ofstream(beside) << "x\n";
  touch("nodes/n1/syslog");
  fs::create_symlink("../../../" + beside.filename().string(), dir_ / "nodes/n1/kernel.log");
  ASSERT_EQ(::mkfifo((dir_ / "nodes/n1/app.log").c_str(), 0600), 0);
  fs::create_directory_symlink("/etc", dir_ / "nodes/n2");
  fs::create_directory_symlink("/var/log", dir_ / "cluster");
  touch("metrics/dcgm.json");
  fs::create_symlink(beside, dir_ / "metrics/ib.json");

  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  fs::remove(beside);
  EXPECT_EQ(rels(l), std::vector<std::string>{"nodes/n1/syslog"});
  EXPECT_EQ(l.node_dirs, std::vector<std::string>{"n1"});
  EXPECT_EQ(l.metrics_files, std::vector<std::string>{"metrics/dcgm.json"});
  std::vector<std::string> said;
  for (const auto& e : errors) said.push_back(e.source + ": " + e.message);
  EXPECT_EQ(said,
            (std::vector<std::string>{
                "nodes/n1/app.log: a FIFO, not a regular file: not read",
                "nodes/n1/kernel.log: symbolic link leading outside the incident: not read",
                "nodes/n2: symbolic link leading outside the incident: node directory not read",
                "cluster: symbolic link leading outside the incident: not read",
                "metrics/ib.json: symbolic link leading outside the incident: not read"}));
}

// nodes/<node>/flight_recorder/ holds pickles, never read as log text: not
// among the files to scan, not an error, listed by (node, rank, path).
TEST_F(IncidentLayoutTest, FlightRecorderDumpsAreListedApartFromTheLogs) {
  touch("nodes/n2/syslog");
  touch("nodes/n2/flight_recorder/12");
  touch("nodes/n2/flight_recorder/3");
  touch("nodes/n1/flight_recorder/0");
  touch("nodes/n1/flight_recorder/notes.txt");
  touch("nodes/n1/flight_recorder/sub/4");
  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  EXPECT_EQ(rels(l), std::vector<std::string>{"nodes/n2/syslog"});
  std::vector<std::string> dumps;
  for (const auto& d : l.flight_recorder_files)
    dumps.push_back(d.node + " " + std::to_string(d.rank) + " " + d.rel);
  EXPECT_EQ(dumps, (std::vector<std::string>{"n1 0 nodes/n1/flight_recorder/0",
                                             "n2 3 nodes/n2/flight_recorder/3",
                                             "n2 12 nodes/n2/flight_recorder/12"}));
  std::vector<std::string> said;
  for (const auto& e : errors) said.push_back(e.source + ": " + e.message);
  EXPECT_EQ(said, (std::vector<std::string>{
                      "nodes/n1/flight_recorder/notes.txt: not named by a global rank: not read",
                      "nodes/n1/flight_recorder/sub: a directory, not a regular file: not read"}));
  // The same list on its own, for the engine's hang analysis.
  std::string error;
  IncidentRoot root = IncidentRoot::open(dir_.path(), error);
  std::vector<ErrorItem> again;
  EXPECT_EQ(list_flight_recorder_files(root, again).size(), 3u);
  // A file where the directory belongs is named, not read as a log.
  fs::remove_all(dir_ / "nodes/n1/flight_recorder");
  touch("nodes/n1/flight_recorder");
  errors.clear();
  l = list_incident(dir_.path(), errors);
  EXPECT_EQ(rels(l), std::vector<std::string>{"nodes/n2/syslog"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].source, "nodes/n1/flight_recorder");
}

TEST_F(IncidentLayoutTest, LinksStayingInsideAreListed) {
  touch("raw/n1-kernel.log");
  touch("nodes/n1/syslog");
  fs::create_symlink("../../raw/n1-kernel.log", dir_ / "nodes/n1/kernel.log");
  fs::create_directory_symlink("n1", dir_ / "nodes/n1-alias");
  std::vector<ErrorItem> errors;
  IncidentLayout l = list_incident(dir_.path(), errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(l.node_dirs, (std::vector<std::string>{"n1", "n1-alias"}));
  EXPECT_EQ(rels(l),
            (std::vector<std::string>{"nodes/n1/kernel.log", "nodes/n1/syslog",
                                      "nodes/n1-alias/kernel.log", "nodes/n1-alias/syslog"}));
}

}  // namespace
}  // namespace ff
