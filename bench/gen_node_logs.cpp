// Writes a node's syslog with rotations for bench/collector_window.sh: RFC
// 3164 lines of routine noise ending at the time given, so the collector's
// window (the last hour) is at the end of the newest file.
//
//   gen_node_logs DIR END_UNIX_SECONDS [--bytes 2147483648]
//
// DIR/syslog     --bytes of lines, ~12 lines a second, ending at END
// DIR/syslog.1   200 MB, the 2 days before syslog starts
// DIR/syslog.2.gz, syslog.3.gz   older days, gzip (written by gzip -n from the script)
// Standard library only; the script compiles it with c++ -O2.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace {

const char* kMessages[] = {
    "systemd[1]: Started Session %u of user slurm.",
    "CRON[%u]: (root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)",
    "kernel: [%u.512044] IPv6: ADDRCONF(NETDEV_CHANGE): veth3a9f: link becomes ready",
    "sshd[%u]: Accepted publickey for ops from 10.0.0.4 port 50122 ssh2",
    "chronyd[%u]: Selected source 10.0.0.1 (ntp.cluster.local)",
    "containerd[%u]: time=\"2026-11-30\" level=info msg=\"shim disconnected\"",
    "slurmd[%u]: debug:  _rpc_terminate_job, uid = 64030",
    "snmpd[%u]: error on subcontainer 'ia_addr' insert (-1)",
};

void write_file(const std::string& path, std::int64_t end_s, std::uint64_t bytes,
                std::uint64_t lines_per_s_hint, std::mt19937_64& rng) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  static std::vector<char> buffer(1 << 22);
  std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
  // Average line ~110 bytes: the file spans bytes / 110 / rate seconds.
  std::uint64_t lines = bytes / 110;
  std::int64_t span_us = static_cast<std::int64_t>(lines / lines_per_s_hint) * 1000000;
  std::int64_t start_us = end_s * 1000000 - span_us;
  std::uint64_t written = 0;
  char line[512], msg[256], stamp[32];
  std::time_t cached_s = -1;
  for (std::uint64_t i = 0; written < bytes; ++i) {
    std::int64_t t_us =
        start_us + static_cast<std::int64_t>(static_cast<double>(i) / static_cast<double>(lines) *
                                             static_cast<double>(span_us));
    std::time_t s = static_cast<std::time_t>(t_us / 1000000);
    if (s != cached_s) {
      struct tm tm {};
      gmtime_r(&s, &tm);
      std::strftime(stamp, sizeof stamp, "%b %e %H:%M:%S", &tm);
      cached_s = s;
    }
    std::snprintf(msg, sizeof msg, kMessages[rng() % 8], static_cast<unsigned>(rng() % 90000));
    int n = std::snprintf(line, sizeof line, "%s gpu-0137 %s\n", stamp, msg);
    std::fwrite(line, 1, static_cast<std::size_t>(n), f);
    written += static_cast<std::uint64_t>(n);
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gen_node_logs DIR END_UNIX_SECONDS [--bytes N]\n");
    return 64;
  }
  std::string dir = argv[1];
  std::int64_t end_s = std::atoll(argv[2]);
  std::uint64_t bytes = 2147483648ull;
  for (int i = 3; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--bytes") == 0) bytes = std::strtoull(argv[i + 1], nullptr, 10);
  std::mt19937_64 rng(1);
  // The newest file covers ~2 days at this size; each older file ends where the newer starts.
  std::uint64_t rate = bytes / 110 / (2 * 86400) + 1;
  std::int64_t span_s = static_cast<std::int64_t>(bytes / 110 / rate);
  write_file(dir + "/syslog", end_s, bytes, rate, rng);
  std::uint64_t small = 200ull << 20;
  std::uint64_t small_rate = small / 110 / 86400 + 1;
  write_file(dir + "/syslog.1", end_s - span_s, small, small_rate, rng);
  write_file(dir + "/syslog.2", end_s - span_s - 86400, small / 4, small_rate, rng);
  write_file(dir + "/syslog.3", end_s - span_s - 2 * 86400, small / 4, small_rate, rng);
  return 0;
}
