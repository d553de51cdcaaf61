// Benchmark (not a test): the agent's slurmctld excerpt
// (agent/slurm/slurmctld_excerpt.h) on a large synthetic slurmctld.log.
//
//   ff_bench_slurmctld_excerpt LOG [--bytes N]
//
// Writes LOG (N bytes, default 1 GiB, one day of slurmctld 22.05 lines for
// many jobs) unless it already exists, then cuts a ten-minute window near its
// end for one job and prints wall time, bytes read and lines kept.
// bench/slurmctld_excerpt.sh runs it beside `grep -c` on the same file.
#include <sys/stat.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/slurm/slurmctld_excerpt.h"
#include "incident/time/time.h"

namespace {

constexpr long long kDayStart = 1796169600;  // 2026-12-02T00:00:00Z

void generate(const std::string& path, unsigned long long bytes) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    std::exit(2);
  }
  unsigned long long written = 0;
  // Spread over one day: the line rate is set by the size asked for.
  const unsigned long long approx_lines = bytes / 80 + 1;
  const double step_ms = 86400000.0 / static_cast<double>(approx_lines);
  unsigned long long i = 0;
  char buf[512];
  while (written < bytes) {
    long long ms = static_cast<long long>(static_cast<double>(i) * step_ms);
    long long s = ms / 1000;
    unsigned job = 100000 + static_cast<unsigned>(i % 50000);
    unsigned node = static_cast<unsigned>(i % 512);
    int n = 0;
    char ts[40];
    std::snprintf(ts, sizeof ts, "[2026-12-02T%02lld:%02lld:%02lld.%03lld]", s / 3600 % 24,
                  s / 60 % 60, s % 60, ms % 1000);
    switch (i % 5) {
      case 0:
        n = std::snprintf(buf, sizeof buf, "%s _job_complete: JobId=%u WEXITSTATUS 0\n", ts, job);
        break;
      case 1:
        n = std::snprintf(buf, sizeof buf,
                          "%s sched: Allocate JobId=%u NodeList=c[%03u-%03u] #CPUs=64 "
                          "Partition=gpu\n",
                          ts, job, node, node + 1);
        break;
      case 2:
        n = std::snprintf(buf, sizeof buf,
                          "%s _slurm_rpc_submit_batch_job: JobId=%u InitPrio=4294901759 usec=417\n",
                          ts, job);
        break;
      case 3:
        n = std::snprintf(buf, sizeof buf, "%s _job_complete: JobId=%u done\n", ts, job);
        break;
      default:
        n = std::snprintf(buf, sizeof buf,
                          "%s debug:  sched/backfill: _attempt_backfill: beginning\n", ts);
    }
    std::fwrite(buf, 1, static_cast<std::size_t>(n), f);
    written += static_cast<unsigned long long>(n);
    ++i;
    if (i == approx_lines * 9 / 10) {  // the job's failure, near the end
      n = std::snprintf(buf, sizeof buf,
                        "%s update_node: node c777 state set to DOWN\n"
                        "%s requeue job JobId=4242 due to failure of node c777\n",
                        ts, ts);
      std::fwrite(buf, 1, static_cast<std::size_t>(n), f);
      written += static_cast<unsigned long long>(n);
    }
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LOG [--bytes N]\n", argv[0]);
    return 2;
  }
  std::string path = argv[1];
  unsigned long long bytes = 1ull << 30;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--bytes") == 0) bytes = std::strtoull(argv[i + 1], nullptr, 10);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) generate(path, bytes);

  ff::agent::SlurmctldExcerptRequest r;
  r.log_path = path;
  // The failure is at 90% of the day (21:36): a ten-minute window around it.
  r.from = (kDayStart + 21 * 3600 + 30 * 60) * ff::kUsPerSecond;
  r.to = (kDayStart + 21 * 3600 + 40 * 60) * ff::kUsPerSecond;
  r.job_id = "4242";
  r.nodes = {"c777"};
  auto t0 = std::chrono::steady_clock::now();
  ff::agent::SlurmctldExcerpt got = ff::agent::excerpt_slurmctld_log(r);
  auto t1 = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(t1 - t0).count();
  std::printf("excerpt: %.4f s, %llu bytes read of %lld, %zu lines kept, status %s (%s)\n", secs,
              static_cast<unsigned long long>(got.bytes_read),
              static_cast<long long>(::stat(path.c_str(), &st) == 0 ? st.st_size : 0),
              got.lines.size(), std::string(ff::status_name(got.status)).c_str(),
              got.detail.c_str());
  for (const auto& l : got.lines) std::printf("  %s\n", l.c_str());
  return 0;
}
