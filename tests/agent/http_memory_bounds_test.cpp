// The agent's in-memory per-job structures stay bounded however many jobs
// it sees: the real agent is fed many small distinct jobs (one node, one
// Epilog bundle each, so each gets its final pass) and its own /metrics
// counts the entries of the job tracker, the job locks and the scontrol
// lookups; its anonymous resident memory is measured too, with the
// allocator set as the packaged systemd unit sets it (MALLOC_ARENA_MAX=2:
// with one arena per thread, glibc's heaps alone grow by a few MiB over
// thousands of jobs). FF_MEMORY_BOUNDS_JOBS sets the number of jobs
// (default 1200, past the scontrol lookups' cap; 20000 run by hand).
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/agent/agent_process.h"
#include "tests/support/process_memory.h"

namespace {

using namespace fftest;

Bundle tiny_job(int i) {
  Bundle b;
  b.job_id = std::to_string(700000 + i);
  b.node = "mem-n" + std::to_string(i % 7);
  b.pass = "epilog";
  b.bundle_id = b.node + "-" + b.job_id + "-epilog-" + std::to_string(1796000000000000000LL + i);
  json job = {{"schema", "firstfault.incident/v1"},
              {"cluster", "membound"},
              {"job_id", b.job_id},
              {"attempt", 0},
              {"state", "FAILED"},
              {"exit_code", "1:0"},
              {"start_time", "2026-11-02T08:00:14Z"},
              {"end_time", "2026-11-02T08:10:14Z"},
              {"timezone", "UTC"},
              {"nodes", {b.node}},
              {"ranks", json::array()},
              {"node_info", json::object()},
              {"coverage", json::array()}};
  b.files.push_back({"job.json", job.dump()});
  b.files.push_back({"nodes/" + b.node + "/syslog", "2026-11-02T08:10:13.000000+00:00 " + b.node +
                                                        " train[4242]: RuntimeError: step " +
                                                        std::to_string(i) + " failed\n"});
  return b;
}

// `name{structure="<structure>"} <value>` of the agent's /metrics.
double entries(const std::string& metrics, const std::string& structure) {
  std::string key = "firstfault_agent_tracked_entries{structure=\"" + structure + "\"} ";
  auto at = metrics.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + key.size()));
}

TEST(MemoryBounds, PerJobStructuresStayBoundedOverManyJobs) {
  int jobs = 1200;
  if (const char* n = std::getenv("FF_MEMORY_BOUNDS_JOBS")) jobs = std::atoi(n);
  const int warmup = jobs / 6;
  // No job is known to scontrol: each job's nodes are its bundle's, so its
  // single Epilog bundle completes it and its final pass runs at once.
  ::setenv("MALLOC_ARENA_MAX", "2", 1);  // inherited by the agent, as the unit's Environment=
  AgentProcess agent("max_tracked_jobs: 200\nfinal_pass_workers: 2\n");
  auto client = agent.client();
  auto db = agent.state() / "firstfault.db";
  auto wait_for_passes = [&](int n) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(600);
    while (count_rows(db, "SELECT count(*) FROM diagnoses") < n &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return count_rows(db, "SELECT count(*) FROM diagnoses");
  };
  auto start = std::chrono::steady_clock::now();
  long rss_warm = -1;
  double most_tracked = 0, most_locks = 0, most_lookups = 0;
  for (int i = 0; i < jobs; ++i) {
    auto res = upload(client, tiny_job(i));
    ASSERT_TRUE(res) << i;
    ASSERT_EQ(res->status, 201) << i << ": " << res->body << agent.log();
    if (i % 1000 == 999)
      std::printf("after %d jobs: RssAnon %ld KiB, RssFile %ld KiB\n", i + 1,
                  agent.status_kib("RssAnon"), agent.status_kib("RssFile"));
    if (i % 250 == 249) {
      std::string m = client.Get("/metrics")->body;
      most_tracked = std::max(most_tracked, entries(m, "job_tracker"));
      most_locks = std::max(most_locks, entries(m, "job_locks"));
      most_lookups = std::max(most_lookups, entries(m, "scontrol_lookups"));
    }
    if (i + 1 == warmup) {
      ASSERT_GE(wait_for_passes(warmup), warmup) << agent.log().substr(0, 4000);
      rss_warm = agent.status_kib("RssAnon");
    }
  }
  ASSERT_GE(wait_for_passes(jobs), jobs) << agent.log().substr(0, 4000);
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long rss_end = agent.status_kib("RssAnon");
  std::string m = client.Get("/metrics")->body;
  most_tracked = std::max(most_tracked, entries(m, "job_tracker"));
  most_locks = std::max(most_locks, entries(m, "job_locks"));
  most_lookups = std::max(most_lookups, entries(m, "scontrol_lookups"));
  std::printf(
      "%d jobs in %.1f s; RssAnon %ld KiB after %d jobs, %ld KiB after %d; most entries: "
      "tracker %.0f, locks %.0f, scontrol lookups %.0f\n",
      jobs, took, rss_warm, warmup, rss_end, jobs, most_tracked, most_locks, most_lookups);
  // Every job got its pass (none was lost to a cap) and every entry count
  // stayed under its cap however many jobs came.
  EXPECT_EQ(count_rows(db, "SELECT count(DISTINCT job_id) FROM diagnoses"), jobs);
  EXPECT_GE(most_tracked, 1);
  EXPECT_LE(most_tracked, 200 + 2);  // max_tracked_jobs, plus the passes under way
  EXPECT_GE(most_locks, 0);
  EXPECT_LE(most_locks, 200);
  EXPECT_LE(most_lookups, 1024);
  if (jobs > 1024) {
    EXPECT_LT(entries(m, "scontrol_lookups"), jobs);
  }
  // Anonymous memory after all the jobs is about what it was after the
  // first sixth: nothing is held per job (SQLite's page caches filling up
  // account for the few MiB allowed). Under AddressSanitizer freed memory
  // sits in its quarantine (256 MiB by default), so resident memory says
  // nothing there; the entry counts above still hold.
#if FF_UNDER_ADDRESS_SANITIZER
  std::printf("AddressSanitizer build: resident memory not compared\n");
#else
  EXPECT_LT(rss_end - rss_warm, 6 * 1024) << rss_warm << " -> " << rss_end;
#endif
  auto stop_start = std::chrono::steady_clock::now();
  EXPECT_EQ(agent.stop(), 0);
  std::printf("stopped in %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_start).count());
}

}  // namespace
