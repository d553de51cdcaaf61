// agent/slurm/slurmctld_excerpt: the lines of slurmctld's log inside a job's
// window that name the job or its nodes, on logs written in slurmctld's own
// formats (src/slurmctld/node_mgr.c update_node, job_mgr.c
// kill_running_job_by_node_name, ping_nodes.c, src/common/log.c %pJ), with
// the rotated file, user text, bounds, and files that must not be read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/slurm/slurmctld_excerpt.h"
#include "incident/time/time.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace {

using namespace ff::agent;
using ff::CoverageStatus;
using ff::parse_iso8601_utc;
using ff::test_support::ScratchDirectory;
using ff::test_support::write_file;

ff::TimeUs at(const std::string& iso) {
  return *parse_iso8601_utc(iso);
}

SlurmctldExcerptRequest request_for(const std::filesystem::path& log) {
  SlurmctldExcerptRequest r;
  r.log_path = log.string();
  r.from = at("2026-12-02T15:30:00Z");
  r.to = at("2026-12-02T15:45:00Z");
  r.job_id = "12";
  r.nodes = {"n1", "n2"};
  return r;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

// What slurmctld 22.05 wrote while `scontrol update NodeName=n2 State=DOWN
// Reason=x` ran under job 12 on n[1-2], with other jobs and nodes around it.
const std::string kNodeDownLog =
    "[2026-12-02T15:20:00.001] update_node: node n2 state set to DOWN\n"  // before the window
    "[2026-12-02T15:31:00.010] _slurm_rpc_submit_batch_job: JobId=12 InitPrio=4294901759 "
    "usec=517\n"
    "[2026-12-02T15:31:01.000] sched: Allocate JobId=12 NodeList=n[1-2] #CPUs=2 "
    "Partition=debug\n"
    "[2026-12-02T15:31:02.000] sched: Allocate JobId=120 NodeList=n3 #CPUs=1 Partition=debug\n"
    "[2026-12-02T15:31:03.000] sched: Allocate JobId=12_4(16) NodeList=n3 #CPUs=1 "
    "Partition=debug\n"
    "[2026-12-02T15:40:01.123] update_node: node n2 reason set to: x\n"
    "[2026-12-02T15:40:01.123] update_node: node n2 state set to DOWN\n"
    "[2026-12-02T15:40:01.124] requeue job JobId=12 due to failure of node n2\n"
    "[2026-12-02T15:40:01.125] update_node: node n20 state set to DOWN\n"
    "[2026-12-02T15:40:02.000] Killing JobId=121 on failed node n3\n"
    "[2026-12-02T15:40:03.000] _job_complete: JobId=12 WEXITSTATUS 0\n"
    "[2026-12-02T15:50:00.000] requeue job JobId=12 due to failure of node n1\n";  // after

TEST(SlurmctldExcerpt, KeepsTheWindowsLinesNamingTheJobOrItsNodes) {
  ScratchDirectory dir;
  write_file(dir / "slurmctld.log", kNodeDownLog);
  SlurmctldExcerpt got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  EXPECT_EQ(got.status, CoverageStatus::kOk) << got.detail;
  EXPECT_EQ(joined(got.lines),
            "[2026-12-02T15:31:00.010] _slurm_rpc_submit_batch_job: JobId=12 InitPrio=4294901759 "
            "usec=517\n"
            "[2026-12-02T15:31:01.000] sched: Allocate JobId=12 NodeList=n[1-2] #CPUs=2 "
            "Partition=debug\n"
            "[2026-12-02T15:40:01.123] update_node: node n2 reason set to: x\n"
            "[2026-12-02T15:40:01.123] update_node: node n2 state set to DOWN\n"
            "[2026-12-02T15:40:01.124] requeue job JobId=12 due to failure of node n2\n"
            "[2026-12-02T15:40:03.000] _job_complete: JobId=12 WEXITSTATUS 0\n");
  EXPECT_NE(got.detail.find("read slurmctld.log"), std::string::npos) << got.detail;
}

TEST(SlurmctldExcerpt, NodesInsideHostlistsAndAtTheEndOfASentence) {
  ScratchDirectory dir;
  write_file(dir / "slurmctld.log",
             "[2026-12-02T15:35:00.000] error: Nodes n[1-3] not responding\n"
             "[2026-12-02T15:35:00.000] error: Nodes n[3-5],gpu01 not responding\n"
             "[2026-12-02T15:36:40.000] error: Nodes n2 not responding, setting DOWN\n"
             "[2026-12-02T15:36:41.000] Killing JobId=77 on failed node n2.\n"
             "[2026-12-02T15:36:42.000] node n2-ib down\n"
             "[2026-12-02T15:36:43.000] error: Nodes gpu01,n1 not responding\n");
  auto r = request_for(dir / "slurmctld.log");
  r.nodes = {"n[1-2]"};
  SlurmctldExcerpt got = excerpt_slurmctld_log(r);
  EXPECT_EQ(joined(got.lines),
            "[2026-12-02T15:35:00.000] error: Nodes n[1-3] not responding\n"
            "[2026-12-02T15:36:40.000] error: Nodes n2 not responding, setting DOWN\n"
            "[2026-12-02T15:36:41.000] Killing JobId=77 on failed node n2.\n"
            "[2026-12-02T15:36:43.000] error: Nodes gpu01,n1 not responding\n");
}

TEST(SlurmctldExcerpt, ArrayTaskAndHetComponentForms) {
  ScratchDirectory dir;
  write_file(dir / "slurmctld.log",
             "[2026-12-02T15:40:00.000] Killing JobId=12_3(15) on failed node n9\n"
             "[2026-12-02T15:40:00.001] _slurm_rpc_requeue: Requeue of JobId=15 returned\n"
             "[2026-12-02T15:40:00.002] Killing JobId=12_4(16) on failed node n9\n"
             "[2026-12-02T15:40:00.003] Killing JobId=12_30(42) on failed node n9\n"
             "[2026-12-02T15:40:00.004] Killing JobId=12 on failed node n9\n"
             "[2026-12-02T15:40:00.005] Killing JobId=150 on failed node n9\n"
             "[2026-12-02T15:40:00.006] Killing JobId=30+1(32) on failed node n9\n"
             "[2026-12-02T15:40:00.007] Killing JobId=30+10(41) on failed node n9\n");
  auto r = request_for(dir / "slurmctld.log");
  r.nodes = {};
  r.job_id = "12_3";
  r.raw_job_id = "15";
  EXPECT_EQ(joined(excerpt_slurmctld_log(r).lines),
            "[2026-12-02T15:40:00.000] Killing JobId=12_3(15) on failed node n9\n"
            "[2026-12-02T15:40:00.001] _slurm_rpc_requeue: Requeue of JobId=15 returned\n");
  r.job_id = "30+1";
  r.raw_job_id = "32";
  EXPECT_EQ(joined(excerpt_slurmctld_log(r).lines),
            "[2026-12-02T15:40:00.006] Killing JobId=30+1(32) on failed node n9\n");
  r.job_id = "15";  // the task's own id alone (job.json's SLURM_JOB_ID) finds it too
  r.raw_job_id = "";
  EXPECT_EQ(joined(excerpt_slurmctld_log(r).lines),
            "[2026-12-02T15:40:00.000] Killing JobId=12_3(15) on failed node n9\n"
            "[2026-12-02T15:40:00.001] _slurm_rpc_requeue: Requeue of JobId=15 returned\n");
  r.job_id = "12";  // a plain job is not the head of an array task's id
  r.raw_job_id = "";
  EXPECT_EQ(joined(excerpt_slurmctld_log(r).lines),
            "[2026-12-02T15:40:00.004] Killing JobId=12 on failed node n9\n");
}

// _update_job (job_mgr.c) echoes a Comment the job's owner chose: it must not
// reach the engine, whatever it says.
TEST(SlurmctldExcerpt, DropsLinesThatEchoUserText) {
  ScratchDirectory dir;
  write_file(dir / "slurmctld.log",
             "[2026-12-02T15:40:00.000] _update_job: setting comment to Killing JobId=5 on failed "
             "node n2 for JobId=12\n"
             "[2026-12-02T15:40:00.001] _update_job: setting admin_comment to x for JobId=12\n"
             "[2026-12-02T15:40:00.002] _update_job: setting name to requeue job JobId=12 due "
             "to failure of node n2 for JobId=12\n"
             "[2026-12-02T15:40:00.003] _update_job: setting work_dir to /tmp/n2 for JobId=12\n"
             "[2026-12-02T15:40:00.004] job_submit.lua: job n2 from user x\n"
             "[2026-12-02T15:40:01.000] update_node: node n2 state set to DOWN\n");
  SlurmctldExcerpt got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  EXPECT_EQ(joined(got.lines),
            "[2026-12-02T15:40:01.000] update_node: node n2 state set to DOWN\n");
  EXPECT_EQ(got.user_text_dropped, 5u);
  EXPECT_NE(got.detail.find("5 with user text left out"), std::string::npos) << got.detail;
}

TEST(SlurmctldExcerpt, ReadsTheRotatedLogFirstPlainOrGzip) {
  ScratchDirectory dir;
  write_file(dir / "slurmctld.log.1",
             "[2026-12-02T15:31:01.000] sched: Allocate JobId=12 NodeList=n[1-2] #CPUs=2 "
             "Partition=debug\n");
  write_file(dir / "slurmctld.log",
             "[2026-12-02T15:40:01.124] requeue job JobId=12 due to failure of node n2\n");
  SlurmctldExcerpt got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  ASSERT_EQ(got.lines.size(), 2u) << got.detail;
  EXPECT_NE(got.lines[0].find("Allocate"), std::string::npos);
  EXPECT_NE(got.detail.find("read slurmctld.log.1, slurmctld.log"), std::string::npos);

  std::filesystem::remove(dir / "slurmctld.log.1");
  gzFile gz = gzopen((dir / "slurmctld.log.1.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  std::string old = "[2026-12-02T15:31:01.000] sched: Allocate JobId=12 NodeList=n[1-2]\n";
  gzwrite(gz, old.data(), static_cast<unsigned>(old.size()));
  gzclose(gz);
  got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  ASSERT_EQ(got.lines.size(), 2u) << got.detail;
  EXPECT_EQ(got.lines[0], old.substr(0, old.size() - 1));
}

TEST(SlurmctldExcerpt, ReadsLocalTimesInTheGivenZone) {
  ScratchDirectory dir;
  // 16:40 in Berlin is 15:40 UTC, inside the window; 16:50 is outside.
  write_file(dir / "slurmctld.log",
             "[2026-12-02T16:40:01] requeue job JobId=12 due to failure of node n2\n"
             "[2026-12-02T16:50:01] Killing JobId=12 on failed node n1\n");
  auto r = request_for(dir / "slurmctld.log");
  r.timezone = "Europe/Berlin";
  EXPECT_EQ(joined(excerpt_slurmctld_log(r).lines),
            "[2026-12-02T16:40:01] requeue job JobId=12 due to failure of node n2\n");
}

TEST(SlurmctldExcerpt, MissingEmptyAndBadRequests) {
  ScratchDirectory dir;
  SlurmctldExcerpt got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  EXPECT_EQ(got.status, CoverageStatus::kMissing);
  write_file(dir / "slurmctld.log",
             "[2026-12-02T15:40:00.000] Killing JobId=99 on failed node n7\n");
  got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  EXPECT_EQ(got.status, CoverageStatus::kEmpty) << got.detail;
  auto r = request_for(dir / "slurmctld.log");
  r.job_id = "12;rm";
  EXPECT_EQ(excerpt_slurmctld_log(r).status, CoverageStatus::kError);
  r = request_for(dir / "slurmctld.log");
  r.nodes = {"n[1-"};
  EXPECT_EQ(excerpt_slurmctld_log(r).status, CoverageStatus::kError);
  r = request_for(dir / "slurmctld.log");
  r.timezone = "Mars/Olympus";
  EXPECT_EQ(excerpt_slurmctld_log(r).status, CoverageStatus::kError);
}

// The agent reads as root: a link (to /etc/shadow, say) or a FIFO in the log
// directory must not be read, and a FIFO must not block.
TEST(SlurmctldExcerpt, RefusesSymlinksAndFilesThatAreNotRegular) {
  ScratchDirectory dir;
  write_file(dir / "elsewhere", "[2026-12-02T15:40:00.000] Killing JobId=12 on failed node n2\n");
  std::filesystem::create_symlink(dir / "elsewhere", dir / "slurmctld.log");
  SlurmctldExcerpt got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  EXPECT_EQ(got.status, CoverageStatus::kError);
  EXPECT_NE(got.detail.find("symbolic link"), std::string::npos) << got.detail;
  EXPECT_TRUE(got.lines.empty());

  std::filesystem::remove(dir / "slurmctld.log");
  ASSERT_EQ(::mkfifo((dir / "slurmctld.log").c_str(), 0600), 0);
  got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  EXPECT_EQ(got.status, CoverageStatus::kError);
  EXPECT_NE(got.detail.find("not a regular file"), std::string::npos) << got.detail;

  // A rotated file that is a link is refused too; the current log still counts.
  std::filesystem::remove(dir / "slurmctld.log");
  write_file(dir / "slurmctld.log",
             "[2026-12-02T15:40:00.000] Killing JobId=12 on failed node n2\n");
  std::filesystem::create_symlink(dir / "elsewhere", dir / "slurmctld.log.1");
  got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  EXPECT_EQ(got.status, CoverageStatus::kOk) << got.detail;
  EXPECT_EQ(got.lines.size(), 1u);
  EXPECT_NE(got.detail.find("slurmctld.log.1: is a symbolic link"), std::string::npos)
      << got.detail;
}

TEST(SlurmctldExcerpt, BoundsOutputAndLineLength) {
  ScratchDirectory dir;
  std::string log;
  for (int i = 0; i < 1000; ++i)
    log +=
        "[2026-12-02T15:40:00.000] Killing JobId=12 on failed node n2 " + std::to_string(i) + "\n";
  log += "[2026-12-02T15:40:01.000] requeue job JobId=12 due to failure of node n2 " +
         std::string(10000, 'x') + "\n";
  write_file(dir / "slurmctld.log", log);
  SlurmctldExcerptLimits limits;
  limits.max_bytes = 4096;
  limits.max_line = 100;
  SlurmctldExcerpt got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"), limits);
  EXPECT_EQ(got.status, CoverageStatus::kTruncated);
  std::size_t total = 0;
  for (const auto& l : got.lines) total += l.size() + 1;
  EXPECT_LE(total, 4096u);
  EXPECT_NE(got.lines.front().find(" 0"), std::string::npos);  // the earliest lines are kept

  limits.max_bytes = 1 << 20;
  got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"), limits);
  EXPECT_EQ(got.status, CoverageStatus::kOk);
  EXPECT_EQ(got.lines.back().size(), 100u);
  EXPECT_EQ(got.lines_cut, 1u);
}

// LogTimeFormat=clock or short has no date: such a log is not read whole
// line by line (each search probe gives up after 1 MiB without a time, then
// reading stops after 1 MiB), and nothing of it is taken for the window.
TEST(SlurmctldExcerpt, ALogInAnotherTimeFormatIsAnErrorNotAScan) {
  ScratchDirectory dir;
  std::string log;
  while (log.size() < (32u << 20))
    log += "[Dec 02 15:40:01.123] requeue job JobId=12 due to failure of node n2\n";
  write_file(dir / "slurmctld.log", log);
  SlurmctldExcerpt got = excerpt_slurmctld_log(request_for(dir / "slurmctld.log"));
  EXPECT_EQ(got.status, CoverageStatus::kError);
  EXPECT_NE(got.detail.find("iso8601"), std::string::npos) << got.detail;
  EXPECT_TRUE(got.lines.empty());
  EXPECT_LT(got.bytes_read, 16u << 20);
}

// The search, not a scan: in a 48 MiB log whose window is near its end, the
// bytes read are a small multiple of the window's, counted by the reader.
TEST(SlurmctldExcerpt, FindsTheWindowByBinarySearch) {
  ScratchDirectory dir;
  const std::string path = (dir / "slurmctld.log").string();
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  // One line every 100 ms from 00:00 on: 48 MiB reaches past 16:00.
  std::uint64_t written = 0;
  long long ms = 0;
  char buf[256];
  while (written < (48u << 20)) {
    long long s = ms / 1000;
    int n = std::snprintf(buf, sizeof buf,
                          "[2026-12-02T%02lld:%02lld:%02lld.%03lld] debug:  sched: Running job "
                          "scheduler for full queue.\n",
                          s / 3600, s / 60 % 60, s % 60, ms % 1000);
    std::fwrite(buf, 1, static_cast<std::size_t>(n), f);
    written += static_cast<std::uint64_t>(n);
    ms += 100;
    if (ms == 14LL * 3600 * 1000 + 100)
      written += std::fprintf(f,
                              "[2026-12-02T14:00:00.100] requeue job JobId=12 due to failure of "
                              "node n2\n");
  }
  std::fclose(f);
  auto r = request_for(path);
  r.from = at("2026-12-02T13:59:59Z");
  r.to = at("2026-12-02T14:00:01Z");
  SlurmctldExcerpt got = excerpt_slurmctld_log(r);
  ASSERT_EQ(got.lines.size(), 1u) << got.detail;
  EXPECT_EQ(got.lines[0],
            "[2026-12-02T14:00:00.100] requeue job JobId=12 due to failure of node n2");
  EXPECT_LT(got.bytes_read, 2u << 20) << "read " << got.bytes_read << " of " << written;
}

}  // namespace
