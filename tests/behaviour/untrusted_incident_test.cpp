// An incident comes from someone else's machine: nothing outside its
// directory is read through it, nothing in it makes the engine wait, and a
// job.json that contradicts itself is reported and the evidence still judged.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/behaviour/incident_builder.h"
#include "tests/support/open_watch.h"

using nlohmann::json;
using namespace fftest;
namespace fs = std::filesystem;

namespace {

const std::string kXid79 = xid_line("10:41:07", "n2", "2a", 79, "GPU has fallen off the bus.");

// True when an error of `source` says `needle`.
bool error_of(const json& d, const std::string& source, const std::string& needle) {
  for (const auto& e : d["errors"])
    if (e["source"] == source && e["message"].get<std::string>().find(needle) != std::string::npos)
      return true;
  return false;
}

// A relative link from `from` (in the incident) to `target` (beside it, in /tmp).
void link_beside(const TempIncident& inc, const std::string& from, const fs::path& target) {
  fs::path link = inc.dir() / from;
  fs::create_directories(link.parent_path());
  fs::create_symlink(target.lexically_relative(link.parent_path()), link);
}

std::string prometheus_reply(const std::string& metric, const std::string& node) {
  return R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":")" +
         metric + R"(","Hostname":")" + node +
         R"("},"values":[[1793961600,"0"],[1793961660,"7"]]}]}})";
}

TEST(UntrustedIncident, KernelLogLinkedToAFileBesideTheIncidentIsNotRead) {
  TempIncident inc, beside;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/syslog", noise(3));
  inc.write("nodes/n2/syslog", noise(3));
  beside.write("kernel.log", kXid79);
  link_beside(inc, "nodes/n2/kernel.log", beside.dir() / "kernel.log");
  ff::test_support::OpenWatch watch;
  watch.watch((beside.dir() / "kernel.log").string());
  json d = analyze(inc);
  EXPECT_TRUE(d["root_causes"].empty()) << d["root_causes"];
  EXPECT_TRUE(
      error_of(d, "nodes/n2/kernel.log", "symbolic link leading outside the incident: not read"))
      << d["errors"];
  EXPECT_EQ(watch.events(), 0) << "the file beside the incident was opened";
}

TEST(UntrustedIncident, NodeDirectoryLinkedOutsideIsNotRead) {
  TempIncident inc, beside;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/syslog", noise(3));
  beside.write("syslog", kXid79);
  link_beside(inc, "nodes/n2", beside.dir());
  json d = analyze(inc);
  // n2 without logs may be blamed as a node that went silent, never for the Xid beside the
  // incident.
  for (const auto& rc : d["root_causes"]) EXPECT_NE(rc["domain"], "gpu") << rc;
  EXPECT_TRUE(error_of(d, "nodes/n2", "symbolic link leading outside the incident")) << d["errors"];
  EXPECT_TRUE(error_of(d, "nodes/n2", "in the job but has no logs")) << d["errors"];
}

TEST(UntrustedIncident, JobJsonLinkedOutsideIsNotRead) {
  TempIncident inc, beside;
  beside.write("job.json", job_json());
  link_beside(inc, "job.json", beside.dir() / "job.json");
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_NE(d["job_id"], "77");
  EXPECT_TRUE(error_of(d, "job.json", "symbolic link leading outside the incident")) << d["errors"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});  // the logs are still read
}

TEST(UntrustedIncident, MetricsFileLinkedOutsideIsNotRead) {
  TempIncident inc, beside;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog", kXid79);
  beside.write("ib_port_errors.json", prometheus_reply("ib_port_errors", "n1"));
  link_beside(inc, "metrics/ib_port_errors.json", beside.dir() / "ib_port_errors.json");
  ff::test_support::OpenWatch watch;
  watch.watch((beside.dir() / "ib_port_errors.json").string());
  json d = analyze(inc);
  EXPECT_TRUE(error_of(d, "metrics/ib_port_errors.json",
                       "symbolic link leading outside the incident: not read"))
      << d["errors"];
  EXPECT_EQ(watch.events(), 0) << "the metrics file beside the incident was opened";
}

TEST(UntrustedIncident, FifoJobJsonDoesNotBlock) {
  TempIncident inc;
  ASSERT_EQ(mkfifo((inc.dir() / "job.json").c_str(), 0600), 0);  // an open for reading would wait
  inc.write("nodes/n2/syslog", kXid79);
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_firstfault("analyze " + inc.arg() + " --format json", 20);
  ASSERT_EQ(r.exit_code, 0) << "killed after 20 s: the engine waited on the FIFO";
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  json d = json::parse(r.out);
  EXPECT_TRUE(error_of(d, "job.json", "a FIFO, not a regular file")) << d["errors"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(UntrustedIncident, FifoKernelLogDoesNotBlock) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n2/syslog", kXid79);
  ASSERT_EQ(mkfifo((inc.dir() / "nodes/n2/kernel.log").c_str(), 0600), 0);
  auto r = run_firstfault("analyze " + inc.arg() + " --format json", 20);
  ASSERT_EQ(r.exit_code, 0) << "killed after 20 s: the engine waited on the FIFO";
  json d = json::parse(r.out);
  EXPECT_TRUE(error_of(d, "nodes/n2/kernel.log", "a FIFO, not a regular file: not read"))
      << d["errors"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(UntrustedIncident, DeviceJobJsonIsNeverOpened) {
  if (geteuid() != 0) GTEST_SKIP() << "mknod of a device needs root";
  TempIncident inc;
  // The numbers of /dev/null: opening it would do no harm, and would be seen.
  ASSERT_EQ(mknod((inc.dir() / "job.json").c_str(), S_IFCHR | 0600, makedev(1, 3)), 0);
  inc.write("nodes/n2/syslog", kXid79);
  ff::test_support::OpenWatch watch;
  watch.watch((inc.dir() / "job.json").string());
  json d = analyze(inc);
  EXPECT_TRUE(error_of(d, "job.json", "a character device, not a regular file")) << d["errors"];
  EXPECT_EQ(watch.events(), 0) << "the device was opened";
}

TEST(UntrustedIncident, SymlinkStayingInsideTheIncidentIsRead) {
  TempIncident inc;
  inc.write("job.json", job_json());
  inc.write("nodes/n1/syslog", noise(3));
  inc.write("raw/n2-kernel.log", kXid79);
  fs::create_directories(inc.dir() / "nodes/n2");
  fs::create_symlink("../../raw/n2-kernel.log", inc.dir() / "nodes/n2/kernel.log");
  json d = analyze(inc);
  EXPECT_TRUE(d["errors"].empty()) << d["errors"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

// The text report shows names and fields of the incident on one line each,
// without control characters: a file name holding a newline, a job id holding
// an escape sequence, forge no line of the report and do not drive the terminal.
TEST(UntrustedIncident, NamesAndFieldsCannotForgeLinesOfTheTextReport) {
  TempIncident inc;
  std::string job = job_json();
  job.replace(job.find(R"("job_id":"77")"), 13, R"("job_id":"77\u001b[2J\nforged: job line")");
  inc.write("job.json", job);
  inc.write("nodes/n2/syslog", kXid79);
  ASSERT_EQ(mkfifo((inc.dir() / "nodes/n2/x\nforged: file line").c_str(), 0600), 0);
  auto r = run_firstfault("analyze " + inc.arg() + " --format text --color always", 20);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("\nforged"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b[2J"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodes/n2/x?forged: file line"), std::string::npos) << r.out;
}

// `text` with `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// job_json() with one piece of it replaced.
std::string job_json_with(const std::string& from, const std::string& to) {
  return replaced(job_json(), from, to);
}

TEST(InconsistentJobJson, EmptyNodeListIsReportedAndNodeDirectoriesUsed) {
  TempIncident inc;
  inc.write("job.json", job_json_with(R"("nodes":["n1","n2"])", R"("nodes":[])"));
  inc.write("nodes/n1/syslog", noise(3));
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(
      error_of(d, "job.json", R"(job.json lists no nodes ("nodes": []); nodes taken from nodes/)"))
      << d["errors"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(InconsistentJobJson, RankListedTwiceIsReported) {
  TempIncident inc;
  inc.write("job.json", job_json_with(R"({"rank":1,"node":"n1")", R"({"rank":0,"node":"n1")"));
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(error_of(d, "job.json", "rank 0 appears more than once in 'ranks'")) << d["errors"];
  EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"});
}

TEST(InconsistentJobJson, RankOnANodeOutsideTheJobIsReported) {
  TempIncident inc;
  inc.write("job.json", job_json_with(R"({"rank":3,"node":"n2")", R"({"rank":3,"node":"n9")"));
  inc.write("nodes/n2/syslog", kXid79);
  json d = analyze(inc);
  EXPECT_TRUE(error_of(d, "job.json", "rank 3 is placed on node n9, which is not in 'nodes'"))
      << d["errors"];
}

// start_time after end_time: one of them is wrong and nothing tells which.
// The fault lies after the stated end in one case, before the stated start
// in the other; both times it must still be judged.
TEST(InconsistentJobJson, StartAfterEndStillJudgesTheEvidence) {
  for (const auto& [start, end] :
       {std::pair<std::string, std::string>{"2026-11-02T10:00:00Z", "2026-11-02T09:00:00Z"},
        std::pair<std::string, std::string>{"2026-11-02T12:00:00Z", "2026-11-02T11:00:00Z"}}) {
    TempIncident inc;
    inc.write("job.json",
              replaced(job_json_with(R"("start_time":"2026-11-02T10:00:00Z")",
                                     R"("start_time":")" + start + R"(")"),
                       R"("end_time":"2026-11-02T11:00:00Z")", R"("end_time":")" + end + R"(")"));
    inc.write("nodes/n1/syslog", noise(3));
    inc.write("nodes/n2/syslog", kXid79);
    json d = analyze(inc);
    EXPECT_TRUE(error_of(d, "job.json", "is after end_time")) << start << " " << d["errors"];
    EXPECT_EQ(d["verdict"], "attributed") << start;
    EXPECT_EQ(root_nodes(d), std::set<std::string>{"n2"}) << start;
  }
}

}  // namespace
