// ff_bench_gen: writes one large, deterministic incident directory for the firstfault benchmark.
//
//   ff_bench_gen OUT_DIR [--nodes 512] [--lines 5000000] [--seed 1] [--gzip-rotated]
//
// The incident is one 3 h training job on N nodes (8 GPUs and 8 ranks each) in which one GPU falls
// off the bus (Xid 79 in the root node's syslog) and every rank elsewhere hits the 600 s NCCL
// watchdog timeout about ten minutes later. Everything else is routine noise, plus a few decoys: a
// stale Xid 63 days before the job on another node, and noise lines containing "error" that are
// not faults. Same arguments give the same bytes: all randomness comes from std::mt19937_64 seeded
// from --seed (mapped to ranges with plain modulo, not the implementation-defined
// std::uniform_int_distribution) and no wall clock is read. Only the C++ standard library is used,
// plus popen("gzip -n") for the optional rotated files.
//
// Layout and line shapes follow docs/spec/incident.md and the hand-written incidents.
// See bench/README.md.

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Micros = std::int64_t;  // microseconds since the Unix epoch, UTC
constexpr Micros kSec = 1'000'000;
constexpr Micros kMin = 60 * kSec;
constexpr Micros kHour = 60 * kMin;
constexpr Micros kDay = 24 * kHour;

constexpr int kGpusPerNode = 8;
constexpr int kBadGpu = 3;  // local index of the GPU that falls off the bus (PCI 5D)
constexpr std::array<std::string_view, kGpusPerNode> kPciBus = {"18", "2A", "3A", "5D",
                                                                "9A", "AB", "BA", "DB"};
constexpr std::array<std::string_view, kGpusPerNode> kPciBusLower = {"18", "2a", "3a", "5d",
                                                                     "9a", "ab", "ba", "db"};

// ---------------------------------------------------------------------------------------------
// Calendar (proleptic Gregorian, UTC), after H. Hinnant's days_from_civil / civil_from_days.

constexpr std::int64_t DaysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

constexpr Micros At(int y, unsigned mo, unsigned d, int h, int mi, int s, Micros us = 0) {
  return (DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * kSec + us;
}

struct Civil {
  std::int64_t year;
  unsigned month, day, hour, minute, second, micros;
};

Civil ToCivil(Micros t) {
  std::int64_t days = t / kDay;
  Micros rem = t % kDay;
  if (rem < 0) {
    rem += kDay;
    --days;
  }
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
  const auto secs = static_cast<unsigned>(rem / kSec);
  return Civil{y, m, d, secs / 3600, secs / 60 % 60, secs % 60, static_cast<unsigned>(rem % kSec)};
}

// ---------------------------------------------------------------------------------------------
// Appending to a std::string without iostreams or printf.

void Put(std::string& o, std::string_view v) {
  o.append(v);
}

void PutU(std::string& o, std::uint64_t v) {
  char b[24];
  const auto r = std::to_chars(b, b + sizeof b, v);
  o.append(b, r.ptr);
}

void PutPad(std::string& o, std::uint64_t v, int width, char fill = '0') {
  char b[24];
  const auto r = std::to_chars(b, b + sizeof b, v);
  for (auto n = r.ptr - b; n < width; ++n) o.push_back(fill);
  o.append(b, r.ptr);
}

void PutHex(std::string& o, std::uint64_t v, int width, bool upper = false) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  for (int i = width - 1; i >= 0; --i) o.push_back(digits[(v >> (4 * i)) & 0xF]);
}

// Fixed-point decimal: value / 10^decimals, e.g. PutFixed(o, 28996, 4) -> "2.8996".
void PutFixed(std::string& o, std::uint64_t value, int decimals) {
  std::uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  PutU(o, value / scale);
  o.push_back('.');
  PutPad(o, value % scale, decimals);
}

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void PutHms(std::string& o, const Civil& c) {
  PutPad(o, c.hour, 2);
  o.push_back(':');
  PutPad(o, c.minute, 2);
  o.push_back(':');
  PutPad(o, c.second, 2);
}

void PutDate(std::string& o, const Civil& c) {
  PutPad(o, static_cast<std::uint64_t>(c.year), 4);
  o.push_back('-');
  PutPad(o, c.month, 2);
  o.push_back('-');
  PutPad(o, c.day, 2);
}

// RFC 3164: "Nov 20 10:41:07", "Nov  2 10:41:07".
void PutSyslogTs(std::string& o, Micros t) {
  const Civil c = ToCivil(t);
  Put(o, kMonths[c.month - 1]);
  o.push_back(' ');
  PutPad(o, c.day, 2, ' ');
  o.push_back(' ');
  PutHms(o, c);
}

// "2026-11-20T10:41:07" with 0, 3 or 6 fractional digits, then `suffix`.
void PutIso(std::string& o, Micros t, int frac_digits, std::string_view suffix = {}) {
  const Civil c = ToCivil(t);
  PutDate(o, c);
  o.push_back('T');
  PutHms(o, c);
  if (frac_digits == 3) {
    o.push_back('.');
    PutPad(o, c.micros / 1000, 3);
  } else if (frac_digits == 6) {
    o.push_back('.');
    PutPad(o, c.micros, 6);
  }
  Put(o, suffix);
}

// Python logging: "2026-11-20 08:04:13,168".
void PutPyTs(std::string& o, Micros t) {
  const Civil c = ToCivil(t);
  PutDate(o, c);
  o.push_back(' ');
  PutHms(o, c);
  o.push_back(',');
  PutPad(o, c.micros / 1000, 3);
}

// glog after the severity letter: "1120 10:51:05.354814".
void PutGlogTs(std::string& o, Micros t) {
  const Civil c = ToCivil(t);
  PutPad(o, c.month, 2);
  PutPad(o, c.day, 2);
  o.push_back(' ');
  PutHms(o, c);
  o.push_back('.');
  PutPad(o, c.micros, 6);
}

// dmesg raw: "[971836.512044]", "[    0.000000]".
void PutUptime(std::string& o, Micros since_boot) {
  if (since_boot < 0) since_boot = 0;
  o.push_back('[');
  PutPad(o, static_cast<std::uint64_t>(since_boot / kSec), 5, ' ');
  o.push_back('.');
  PutPad(o, static_cast<std::uint64_t>(since_boot % kSec), 6);
  o.push_back(']');
}

// ---------------------------------------------------------------------------------------------
// Randomness: one independent mt19937_64 stream per (node, file).

std::uint64_t SplitMix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t node, std::uint64_t stream)
      : g_(SplitMix(seed ^ SplitMix((node << 8) | stream))) {}
  std::uint64_t Next() { return g_(); }
  std::uint64_t Below(std::uint64_t n) { return n == 0 ? 0 : g_() % n; }
  std::uint64_t Range(std::uint64_t lo, std::uint64_t hi) { return lo + Below(hi - lo + 1); }
  bool PerMille(std::uint64_t p) { return Below(1000) < p; }
  template <class Array>
  std::string_view Pick(const Array& a) {
    return a[Below(a.size())];
  }

 private:
  std::mt19937_64 g_;
};

// ---------------------------------------------------------------------------------------------
// The scenario: one job, one root cause, one stale decoy.

struct Options {
  std::string out;
  int nodes = 512;
  std::uint64_t lines = 5'000'000;
  std::uint64_t seed = 1;
  bool gzip_rotated = false;
};

struct Node {
  int idx = 0;  // 1-based
  std::string host;
  std::string ip;  // IPoIB address used in NCCL lines
  Micros boot = 0;
  std::array<std::string, kGpusPerNode> uuid;
  std::uint64_t agent_pid = 0;  // torchrun agent; ranks are agent_pid + 80 + local_rank
};

struct Scenario {
  Options opt;
  std::string cluster = "titan";
  std::uint64_t job_id = 73105;
  std::string job;  // job_id as text
  Micros submit = At(2026, 11, 20, 7, 49, 51);
  Micros start = At(2026, 11, 20, 7, 52, 14);
  Micros xid = At(2026, 11, 20, 10, 44, 7, 512044);  // Xid 79 on the root node
  Micros collective = 0;                             // start of the allreduce that hangs
  Micros end = At(2026, 11, 20, 10, 54, 41);
  Micros decoy_xid = 0;  // stale Xid 63, days before the job
  int root = 0;          // 1-based node index
  int decoy = 0;
  std::vector<Node> nodes;
};

std::string HostName(int idx) {
  std::string h = "gpu-";
  PutPad(h, static_cast<std::uint64_t>(idx), 4);
  return h;
}

std::string Uuid(Rng& r) {
  std::string u = "GPU-";
  PutHex(u, r.Next(), 8);
  u.push_back('-');
  PutHex(u, r.Next(), 4);
  u.push_back('-');
  PutHex(u, r.Next(), 4);
  u.push_back('-');
  PutHex(u, r.Next(), 4);
  u.push_back('-');
  PutHex(u, r.Next(), 12);
  return u;
}

std::string PciId(int gpu) {
  std::string p = "00000000:";
  Put(p, kPciBus[static_cast<std::size_t>(gpu)]);
  Put(p, ":00.0");
  return p;
}

Scenario MakeScenario(const Options& opt) {
  Scenario s;
  s.opt = opt;
  s.job = std::to_string(s.job_id);
  s.collective = s.xid - 2'310'000;
  s.decoy_xid = s.start - 4 * kDay - 6 * kHour - 13 * kMin + 118'305;
  s.root = opt.nodes >= 137 ? 137 : opt.nodes / 2 + 1;
  s.decoy = (s.root - 1 + opt.nodes / 2) % opt.nodes + 1;
  if (s.decoy == s.root && opt.nodes > 1) s.decoy = s.root % opt.nodes + 1;
  s.nodes.resize(static_cast<std::size_t>(opt.nodes));
  for (int i = 1; i <= opt.nodes; ++i) {
    Node& n = s.nodes[static_cast<std::size_t>(i - 1)];
    Rng r(opt.seed, static_cast<std::uint64_t>(i), 0);
    n.idx = i;
    n.host = HostName(i);
    n.ip = "10.20." + std::to_string(1 + (i - 1) / 250) + "." + std::to_string(1 + (i - 1) % 250);
    n.boot = At(2026, 11, 9, 4, 43, 14) + static_cast<Micros>(i - 1) * 37 * kSec +
             static_cast<Micros>(r.Below(1000)) * 1000;
    for (auto& u : n.uuid) u = Uuid(r);
    n.agent_pid = 1'200'000 + r.Below(2'000'000);
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Writing files.

struct Stats {
  std::uint64_t files = 0;
  std::uint64_t lines = 0;          // lines in plain-text log files
  std::uint64_t rotated_lines = 0;  // lines inside syslog.1.gz (not part of --lines)
  std::uint64_t bytes = 0;          // bytes on disk, all files
};

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "ff_bench_gen: %s\n", msg.c_str());
  std::exit(1);
}

std::uint64_t CountLines(const std::string& s) {
  return static_cast<std::uint64_t>(std::count(s.begin(), s.end(), '\n'));
}

void WriteFile(const fs::path& p, const std::string& data, Stats& st, bool is_log = true) {
  std::FILE* f = std::fopen(p.c_str(), "wb");
  if (f == nullptr) Die("cannot open " + p.string() + ": " + std::strerror(errno));
  if (!data.empty() && std::fwrite(data.data(), 1, data.size(), f) != data.size()) {
    Die("write failed: " + p.string());
  }
  if (std::fclose(f) != 0) Die("close failed: " + p.string());
  ++st.files;
  st.bytes += data.size();
  if (is_log) st.lines += CountLines(data);
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q.push_back(c);
    }
  }
  q.push_back('\'');
  return q;
}

void WriteGzip(const fs::path& p, const std::string& data, Stats& st) {
  // -n: no name or time stamp in the header, so the bytes stay deterministic.
  const std::string cmd = "gzip -n -c > " + ShellQuote(p.string());
  std::FILE* f = popen(cmd.c_str(), "w");
  if (f == nullptr) Die("cannot run gzip for " + p.string());
  if (!data.empty() && std::fwrite(data.data(), 1, data.size(), f) != data.size()) {
    Die("gzip pipe write failed: " + p.string());
  }
  if (pclose(f) != 0) Die("gzip failed for " + p.string());
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) Die("cannot stat " + p.string());
  ++st.files;
  st.bytes += size;
  st.rotated_lines += CountLines(data);
}

// ---------------------------------------------------------------------------------------------
// Time-ordered streams: n noise lines spread over [a, b), with pre-rendered special lines merged
// in by time. Noise times never decrease, so the file stays sorted.

struct Special {
  Micros t;
  std::string text;  // one or more complete lines
};

template <class NoiseFn>
void Stream(std::string& o, Micros a, Micros b, std::uint64_t n, Rng& r,
            std::vector<Special> specials, NoiseFn&& noise) {
  std::stable_sort(specials.begin(), specials.end(),
                   [](const Special& x, const Special& y) { return x.t < y.t; });
  std::size_t si = 0;
  const Micros stride = n > 0 && b > a ? (b - a) / static_cast<Micros>(n) : 0;
  for (std::uint64_t k = 0; k < n; ++k) {
    const Micros t = a + static_cast<Micros>(k) * stride +
                     static_cast<Micros>(r.Below(static_cast<std::uint64_t>(stride)));
    while (si < specials.size() && specials[si].t <= t) o += specials[si++].text;
    noise(o, t);
  }
  while (si < specials.size()) o += specials[si++].text;
}

// ---------------------------------------------------------------------------------------------
// Noise vocabularies.

void PutVeth(std::string& o, Rng& r) {
  Put(o, "veth");
  PutHex(o, r.Next(), 7);
}

// Routine kernel ring-buffer messages (no timestamp prefix).
void KernelNoise(std::string& o, Rng& r, Micros t) {
  const std::uint64_t k = r.Below(1000);
  if (k < 180) {
    Put(o, "docker0: port ");
    PutU(o, r.Range(1, 4));
    o.push_back('(');
    PutVeth(o, r);
    Put(o,
        r.Pick(std::array<std::string_view, 3>{
            ") entered blocking state", ") entered disabled state", ") entered forwarding state"}));
  } else if (k < 300) {
    Put(o, "device ");
    PutVeth(o, r);
    Put(o, r.PerMille(500) ? " entered promiscuous mode" : " left promiscuous mode");
  } else if (k < 400) {
    Put(o, "IPv6: ADDRCONF(NETDEV_CHANGE): ");
    PutVeth(o, r);
    Put(o, ": link becomes ready");
  } else if (k < 470) {
    Put(o, "eth0: renamed from ");
    PutVeth(o, r);
  } else if (k < 560) {
    Put(o, "EXT4-fs (nvme0n1p2): resizing filesystem is not needed; skipping");
  } else if (k < 650) {
    Put(o, "loop");
    PutU(o, r.Below(8));
    Put(o, ": detected capacity change from 0 to ");
    PutU(o, r.Range(100'000, 900'000));
  } else if (k < 700) {
    const std::uint64_t a = r.Range(2500, 3600);
    Put(o, "perf: interrupt took too long (");
    PutU(o, a);
    Put(o, " > ");
    PutU(o, a - r.Range(100, 400));
    Put(o, "), lowering kernel.perf_event_max_sample_rate to ");
    PutU(o, r.Range(50'000, 80'000));
  } else if (k < 850) {
    Put(o, "audit: type=1400 audit(");
    PutU(o, static_cast<std::uint64_t>(t / kSec));
    o.push_back('.');
    PutPad(o, r.Below(1000), 3);
    o.push_back(':');
    PutU(o, r.Range(100, 999));
    Put(o,
        "): apparmor=\"STATUS\" operation=\"profile_replace\" info=\"same as current profile, "
        "skipping\" profile=\"unconfined\" name=\"docker-default\" pid=");
    PutU(o, r.Range(100'000, 999'999));
    Put(o, " comm=\"apparmor_parser\"");
  } else if (k < 950) {
    Put(o, "overlayfs: fs on '/var/lib/docker/overlay2/l/");
    for (int i = 0; i < 26; ++i) o.push_back(static_cast<char>('A' + r.Below(26)));
    Put(o, "' does not support file handles, falling back to xino=off.");
  } else if (k < 990) {
    Put(o, "hrtimer: interrupt took ");
    PutU(o, r.Range(20'000, 90'000));
    Put(o, " ns");
  } else {
    // Decoy: harmless firmware noise (Dell power meter) that says "Error".
    Put(o, r.PerMille(500)
               ? "ACPI Error: Aborting method \\_SB.PMI0._PMM due to previous error "
                 "(AE_AML_BUFFER_LIMIT) (20230628/psparse-529)"
               : "ACPI Error: SMBus/IPMI/GenericSerialBus write requires Buffer of length 66, "
                 "found length 32 (20230628/exfield-393)");
  }
}

void PutSyslogHead(std::string& o, Micros t, const Node& n, std::string_view prog) {
  PutSyslogTs(o, t);
  o.push_back(' ');
  Put(o, n.host);
  o.push_back(' ');
  Put(o, prog);
  Put(o, ": ");
}

void PutSyslogHeadPid(std::string& o, Micros t, const Node& n, std::string_view prog,
                      std::uint64_t pid) {
  PutSyslogTs(o, t);
  o.push_back(' ');
  Put(o, n.host);
  o.push_back(' ');
  Put(o, prog);
  o.push_back('[');
  PutU(o, pid);
  Put(o, "]: ");
}

void PutIp(std::string& o, Rng& r, std::string_view prefix) {
  Put(o, prefix);
  PutU(o, r.Range(1, 254));
  o.push_back('.');
  PutU(o, r.Range(1, 254));
}

// One routine host syslog line at time t.
void SyslogNoise(std::string& o, Rng& r, const Node& n, Micros t) {
  const std::uint64_t k = r.Below(1000);
  if (k < 300) {
    PutSyslogHeadPid(o, t, n, "systemd", 1);
    static constexpr std::array<std::string_view, 10> kMsgs = {
        "Starting sysstat-collect.service - system activity accounting tool...",
        "sysstat-collect.service: Deactivated successfully.",
        "Finished sysstat-collect.service - system activity accounting tool.",
        "Starting systemd-tmpfiles-clean.service - Cleanup of Temporary Directories...",
        "Finished systemd-tmpfiles-clean.service - Cleanup of Temporary Directories.",
        "Starting systemd-hostnamed.service - Hostname Service...",
        "Started systemd-hostnamed.service - Hostname Service.",
        "systemd-hostnamed.service: Deactivated successfully.",
        "Started cron-monitor.service - Periodic health metrics push.",
        "cron-monitor.service: Deactivated successfully."};
    if (r.PerMille(150)) {
      const std::uint64_t sess = r.Range(10'000, 99'999);
      Put(o, "Started session-");
      PutU(o, sess);
      Put(o, ".scope - Session ");
      PutU(o, sess);
      Put(o, " of User monitor.");
    } else {
      Put(o, r.Pick(kMsgs));
    }
  } else if (k < 420) {
    PutSyslogHeadPid(o, t, n, "CRON", r.Range(100'000, 3'999'999));
    static constexpr std::array<std::string_view, 4> kMsgs = {
        "(root) CMD (/usr/local/sbin/node-inventory --push --quiet)",
        "(root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)",
        "pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)",
        "pam_unix(cron:session): session closed for user root"};
    Put(o, r.Pick(kMsgs));
  } else if (k < 500) {
    PutSyslogHeadPid(o, t, n, "sshd", r.Range(100'000, 3'999'999));
    const std::uint64_t s = r.Below(100);
    if (s < 30) {
      Put(o, "Accepted publickey for monitor from ");
      PutIp(o, r, "10.128.");
      Put(o, " port ");
      PutU(o, r.Range(32'768, 60'999));
      Put(o, " ssh2: ED25519 SHA256:");
      static constexpr std::string_view kB64 =
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      for (int i = 0; i < 43; ++i) o.push_back(kB64[r.Below(64)]);
    } else if (s < 60) {
      Put(o, "pam_unix(sshd:session): session opened for user monitor(uid=1002) by (uid=0)");
    } else if (s < 92) {
      Put(o, "pam_unix(sshd:session): session closed for user monitor");
    } else {
      // Decoy: a port scanner or load-balancer probe, not a fault.
      Put(o, "error: kex_exchange_identification: Connection closed by remote host");
    }
  } else if (k < 550) {
    PutSyslogHeadPid(o, t, n, "systemd-logind", 1893);
    const std::uint64_t s = r.Below(3);
    Put(o, s == 0 ? "New session " : s == 1 ? "Session " : "Removed session ");
    PutU(o, r.Range(10'000, 99'999));
    Put(o, s == 0   ? " of user monitor."
           : s == 1 ? " logged out. Waiting for processes to exit."
                    : ".");
  } else if (k < 700) {
    PutSyslogHead(o, t, n, "kernel");
    PutUptime(o, t - n.boot);
    o.push_back(' ');
    KernelNoise(o, r, t);
  } else if (k < 780) {
    PutSyslogHeadPid(o, t, n, "snmpd", 2241);
    if (r.PerMille(60)) {
      // Decoy: the well-known harmless net-snmp message.
      Put(o, "error on subcontainer 'ia_addr' insert (-1)");
    } else {
      Put(o, "Connection from UDP: [10.0.0.");
      PutU(o, r.Range(2, 9));
      Put(o, "]:");
      PutU(o, r.Range(32'768, 60'999));
      Put(o, "->[");
      PutIp(o, r, "10.20.");
      Put(o, "]:161");
    }
  } else if (k < 870) {
    PutSyslogHeadPid(o, t, n, "containerd", 2077);
    Put(o, "time=\"");
    PutIso(o, t, 6, "000Z\" level=");
    if (r.PerMille(20)) {
      // Decoy: containerd logs this at level=error during routine container exits.
      Put(o, "error msg=\"ttrpc: received message on inactive stream\" stream=");
      PutU(o, 2 * r.Range(1, 40) + 1);
    } else {
      static constexpr std::array<std::string_view, 4> kMsgs = {
          "info msg=\"loading plugin \\\"io.containerd.event.v1.publisher\\\"...\" "
          "type=io.containerd.event.v1",
          "info msg=\"shim disconnected\" namespace=moby",
          "info msg=\"cleaning up dead shim\" namespace=moby",
          "info msg=\"starting signal loop\" namespace=moby path=/run/containerd/io.containerd."
          "runtime.v2.task/moby pid=48213 runtime=io.containerd.runc.v2"};
      Put(o, r.Pick(kMsgs));
    }
  } else if (k < 900) {
    PutSyslogHeadPid(o, t, n, "chronyd", 1702);
    Put(o, "Selected source 10.0.0.");
    const std::uint64_t s = r.Range(2, 4);
    PutU(o, s);
    Put(o, " (ntp");
    PutU(o, s - 1);
    Put(o, ".cluster.internal)");
  } else if (k < 930) {
    PutSyslogHeadPid(o, t, n, "nvidia-persistenced", 2390);
    Put(o, "Verbose syslog connection opened");
  } else if (k < 950) {
    PutSyslogHeadPid(o, t, n, "rsyslogd", 1688);
    Put(o,
        "[origin software=\"rsyslogd\" swVersion=\"8.2112.0\" x-pid=\"1688\" "
        "x-info=\"https://www.rsyslog.com\"] rsyslogd was HUPed");
  } else if (k < 975) {
    PutSyslogHeadPid(o, t, n, "dbus-daemon", 1611);
    Put(o,
        "[system] Activating via systemd: service name='org.freedesktop.hostname1' "
        "unit='dbus-org.freedesktop.hostname1.service' requested by ':1.");
    PutU(o, r.Range(1000, 9999));
    Put(o, "' (uid=0 pid=");
    PutU(o, r.Range(100'000, 3'999'999));
    Put(o, " comm=\"hostnamectl\" label=\"unconfined\")");
  } else {
    PutSyslogHeadPid(o, t, n, "systemd-resolved", 1500);
    Put(o, "Using degraded feature set UDP instead of UDP+EDNS0 for DNS server 10.0.0.53.");
  }
  o.push_back('\n');
}

void SlurmdNoise(std::string& o, Rng& r, Micros t) {
  o.push_back('[');
  PutIso(o, t, 3, "] ");
  const std::uint64_t k = r.Below(1000);
  static constexpr std::array<std::string_view, 4> kRpcs = {
      "REQUEST_PING", "REQUEST_ACCT_GATHER_UPDATE", "REQUEST_NODE_INFO", "REQUEST_HEALTH_CHECK"};
  if (k < 850) {
    static constexpr std::array<std::string_view, 3> kPhase = {
        "debug2: Start processing RPC: ", "debug2: Processing RPC: ",
        "debug2: Finish processing RPC: "};
    Put(o, r.Pick(kPhase));
    Put(o, r.Pick(kRpcs));
  } else if (k < 920) {
    Put(o, "debug:  attempting to run health_check [/usr/sbin/nhc]");
  } else if (k < 960) {
    Put(o, "debug2: _handle_node_reg_resp: slurmctld sent back 17 TRES.");
  } else {
    Put(o, "debug:  Note large processing time from _rpc_ping: usec=");
    PutU(o, r.Range(1'000'000, 3'000'000));
    Put(o, " began=");
    const Civil c = ToCivil(t - 2 * kSec);
    PutHms(o, c);
    o.push_back('.');
    PutPad(o, c.micros / 1000, 3);
  }
  o.push_back('\n');
}

// ---------------------------------------------------------------------------------------------
// Per-node files.

std::uint64_t Percent(std::uint64_t n, std::uint64_t p) {
  return n * p / 100;
}

struct NodeBudget {
  std::uint64_t syslog = 0, kernel = 0, slurmd = 0, app = 0;
};

constexpr std::string_view kWorkSeq = "20511";

constexpr std::string_view kWorkNcclLast =
    "last enqueued NCCL work: 20513, last completed NCCL work: 20510.";

// The four NVRM lines of the root cause, as a syslog special at the Xid time.
Special RootCauseSyslog(const Scenario& s, const Node& n) {
  const Micros up = s.xid - n.boot;  // uptime of the Xid line itself
  std::string t;
  const auto line = [&](Micros off, std::string_view a, std::string_view b = {},
                        std::string_view c = {}) {
    PutSyslogHead(t, s.xid, n, "kernel");
    PutUptime(t, up + off);
    t.push_back(' ');
    Put(t, a);
    Put(t, b);
    Put(t, c);
    t.push_back('\n');
  };
  const std::string bus(kPciBusLower[kBadGpu]);
  line(-40, "NVRM: GPU at PCI:0000:" + bus + ":00: ", n.uuid[kBadGpu]);
  line(-20, "NVRM: GPU Board Serial Number: 1654823015", std::to_string(100 + n.idx % 900));
  line(0, "NVRM: Xid (PCI:0000:" + bus + ":00): 79, pid='<unknown>', name=<unknown>, ",
       "GPU has fallen off the bus.");
  line(20, "NVRM: GPU 0000:" + bus + ":00.0: GPU has fallen off the bus.");
  return Special{s.xid, std::move(t)};
}

constexpr std::string_view kXid63Tail =
    "): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x00000001d2c04e80) marked "
    "for remapping, reset gpu to activate.";

std::string NodeSyslog(const Scenario& s, const Node& n, std::uint64_t lines) {
  Rng r(s.opt.seed, static_cast<std::uint64_t>(n.idx), 1);
  std::vector<Special> sp;
  if (n.idx == s.root) sp.push_back(RootCauseSyslog(s, n));
  std::string o;
  o.reserve(lines * 125 + 1024);
  Stream(o, s.start - 3 * kHour, s.end + 30 * kMin, lines, r, std::move(sp),
         [&](std::string& out, Micros t) { SyslogNoise(out, r, n, t); });
  return o;
}

// The previous syslog (rotated, days before the job); the decoy node's has the stale Xid 63.
std::string NodeRotatedSyslog(const Scenario& s, const Node& n, std::uint64_t lines) {
  Rng r(s.opt.seed, static_cast<std::uint64_t>(n.idx), 5);
  std::vector<Special> sp;
  if (n.idx == s.decoy) {
    std::string t;
    PutSyslogHead(t, s.decoy_xid, n, "kernel");
    PutUptime(t, s.decoy_xid - n.boot);
    Put(t, " NVRM: Xid (PCI:0000:9a:00");
    Put(t, kXid63Tail);
    t.push_back('\n');
    sp.push_back(Special{s.decoy_xid, std::move(t)});
  }
  std::string o;
  o.reserve(lines * 125 + 1024);
  Stream(o, s.start - 5 * kDay, s.start - 3 * kHour, lines, r, std::move(sp),
         [&](std::string& out, Micros t) { SyslogNoise(out, r, n, t); });
  return o;
}

constexpr std::array<std::pair<Micros, std::string_view>, 8> kBootLines = {{
    {0,
     "Linux version 6.8.0-49-generic (buildd@lcy02-amd64-103) (x86_64-linux-gnu-gcc-13 (Ubuntu "
     "13.2.0-23ubuntu4) 13.2.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #49-Ubuntu SMP "
     "PREEMPT_DYNAMIC Mon Nov  4 02:06:24 UTC 2024 (Ubuntu 6.8.0-49.49-generic 6.8.12)"},
    {0,
     "Command line: BOOT_IMAGE=/vmlinuz-6.8.0-49-generic root=/dev/mapper/vg0-root ro iommu=pt "
     "pci=realloc=off"},
    {3'811'000, "mlx5_core 0000:4b:00.0: firmware version: 28.42.1000"},
    {9'204'000, "nvidia: loading out-of-tree module taints kernel."},
    {9'471'000, "nvidia-nvlink: Nvlink Core is being initialized, major device number 236"},
    {9'530'000,
     "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05  Release Build  "
     "(dvs-builder@U22-I3-AE18-23-3)  Wed Oct  9 21:32:15 UTC 2024"},
    {10'118'000, "nvidia-uvm: Loaded the UVM driver, major device number 510."},
    {17'402'000, "mlx5_core 0000:4b:00.0 mlx5_0: Port: 1 Link ACTIVE"},
}};

std::uint64_t KernelFixedLines(const Scenario& s, const Node& n) {
  return kBootLines.size() + (n.idx == s.decoy ? 1 : 0);
}

std::string NodeKernel(const Scenario& s, const Node& n, std::uint64_t lines) {
  Rng r(s.opt.seed, static_cast<std::uint64_t>(n.idx), 2);
  std::vector<Special> sp;
  {
    std::string t;
    for (const auto& [off, msg] : kBootLines) {
      PutUptime(t, off);
      t.push_back(' ');
      Put(t, msg);
      t.push_back('\n');
    }
    sp.push_back(Special{n.boot, std::move(t)});
  }
  if (n.idx == s.root) {
    // The kernel's own copy of the root cause (the syslog has its echo):
    // the engine takes a kernel-only message as evidence only from here.
    const Micros up = s.xid - n.boot;
    const std::string bus(kPciBusLower[kBadGpu]);
    std::string t;
    PutUptime(t, up);
    Put(t, " NVRM: Xid (PCI:0000:" + bus + ":00): 79, pid='<unknown>', name=<unknown>, ");
    Put(t, "GPU has fallen off the bus.\n");
    PutUptime(t, up + 20);
    Put(t, " NVRM: GPU 0000:" + bus + ":00.0: GPU has fallen off the bus.\n");
    sp.push_back(Special{s.xid, std::move(t)});
  }
  if (n.idx == s.decoy) {
    std::string t;
    PutUptime(t, s.decoy_xid - n.boot);
    Put(t, " NVRM: Xid (PCI:0000:9a:00");
    Put(t, kXid63Tail);
    t.push_back('\n');
    sp.push_back(Special{s.decoy_xid, std::move(t)});
  }
  std::string o;
  o.reserve(lines * 110 + 4096);
  Stream(o, s.start - 2 * kHour, s.end + 30 * kMin, lines, r, std::move(sp),
         [&](std::string& out, Micros t) {
           PutUptime(out, t - n.boot);
           out.push_back(' ');
           KernelNoise(out, r, t);
           out.push_back('\n');
         });
  return o;
}

// Per rank watchdog time (first line of its block), by local rank; -1 for no block.
std::array<Micros, kGpusPerNode> WatchdogTimes(const Scenario& s, const Node& n) {
  Rng r(s.opt.seed, static_cast<std::uint64_t>(n.idx), 6);
  std::array<Micros, kGpusPerNode> w{};
  for (int lr = 0; lr < kGpusPerNode; ++lr) {
    const Micros ran_ms = 600'000 + static_cast<Micros>(r.Below(800));
    w[static_cast<std::size_t>(lr)] =
        s.collective + ran_ms * 1000 + static_cast<Micros>(r.Below(1000));
  }
  if (n.idx == s.root) w[kBadGpu] = -1;
  return w;
}

Micros LastWatchdog(const std::array<Micros, kGpusPerNode>& w) {
  return *std::max_element(w.begin(), w.end());
}

std::uint64_t SlurmdFixedLines(const Node& n) {
  return n.idx == 1 ? 8 : 6;
}

std::string NodeSlurmd(const Scenario& s, const Node& n, std::uint64_t lines) {
  Rng r(s.opt.seed, static_cast<std::uint64_t>(n.idx), 3);
  std::vector<Special> sp;
  const auto add = [&](Micros t, std::string_view a, std::string_view b = {},
                       std::string_view c = {}) {
    std::string x = "[";
    PutIso(x, t, 3, "] ");
    Put(x, a);
    Put(x, b);
    Put(x, c);
    x.push_back('\n');
    sp.push_back(Special{t, std::move(x)});
  };
  const std::string& job = s.job;
  const Micros t0 = s.start - 2'500'000;
  add(t0, "task/affinity: task_p_slurmd_batch_request: task_p_slurmd_batch_request: ", job);
  add(t0 + 400'000, "task/affinity: batch_bind: job ", job,
      " CPU input mask for node: 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF");
  const std::uint64_t prolog_us = r.Range(500'000, 2'400'000);
  add(t0 + 900'000, "_run_prolog: run job script took usec=", std::to_string(prolog_us));
  add(t0 + 900'000, "_run_prolog: prolog with lock for job " + job + " ran for ",
      std::to_string(prolog_us / 1'000'000), " seconds");
  if (n.idx == 1) add(t0 + 1'100'000, "Launching batch job ", job, " for UID 1043");
  add(s.start + 1'000'000 + static_cast<Micros>(r.Below(50)) * 1000,
      "launch task StepId=" + job + ".0 request from UID:1043 GID:1043 HOST:10.10.0.11 PORT:",
      std::to_string(r.Range(32'768, 60'999)));
  const Micros done =
      LastWatchdog(WatchdogTimes(s, n)) + 4 * kSec + static_cast<Micros>(r.Below(900)) * 1000;
  add(done, "[" + job + ".0] done with job");
  if (n.idx == 1) add(s.end - 100'000, "[" + job + ".batch] done with job");
  std::string o;
  o.reserve(lines * 80 + 2048);
  Stream(o, s.start - 20 * kMin, s.end + 5 * kMin, lines, r, std::move(sp),
         [&](std::string& out, Micros t) { SlurmdNoise(out, r, t); });
  return o;
}

std::uint64_t AppFixedLines(const Scenario& s, const Node& n) {
  const std::uint64_t blocks = n.idx == s.root ? kGpusPerNode - 1 : kGpusPerNode;
  return (n.idx == 1 ? 1 : 0) + 4 * kGpusPerNode + 8 * blocks + 8;
}

void PutNcclPrefix(std::string& o, const Node& n, std::uint64_t pid, std::uint64_t tid, int lr) {
  Put(o, n.host);
  o.push_back(':');
  PutU(o, pid);
  o.push_back(':');
  PutU(o, tid);
  Put(o, " [");
  PutU(o, static_cast<std::uint64_t>(lr));
  Put(o, "] NCCL INFO ");
}

// One rank's PyTorch watchdog timeout block, exactly as c10d prints it (8 lines).
void WatchdogBlock(std::string& o, Micros t0, std::uint64_t rank, std::uint64_t tid,
                   std::uint64_t ran_ms) {
  const std::string rs = std::to_string(rank);
  std::string timeout = "[Rank " + rs + "] Watchdog caught collective operation timeout: ";
  timeout += "WorkNCCL(SeqNum=";
  timeout += kWorkSeq;
  timeout +=
      ", OpType=ALLREDUCE, NumelIn=26214400, NumelOut=26214400, Timeout(ms)=600000) ran for ";
  timeout += std::to_string(ran_ms) + " milliseconds before timing out.";
  const std::string pg = "[PG ID 0 PG GUID 0(default_pg) Rank " + rs + "] ";
  const auto head = [&](Micros t, std::string_view where) {
    Put(o, "[rank");
    Put(o, rs);
    Put(o, "]:[E");
    PutGlogTs(o, t);
    o.push_back(' ');
    PutU(o, tid);
    Put(o, " ProcessGroupNCCL.cpp:");
    Put(o, where);
    Put(o, "] ");
  };
  head(t0, "616");
  Put(o, timeout);
  o.push_back('\n');
  head(t0 + 300, "1785");
  Put(o, pg);
  Put(o, "Exception (either an error or timeout) detected by watchdog at work: ");
  Put(o, kWorkSeq);
  Put(o, ", ");
  Put(o, kWorkNcclLast);
  o.push_back('\n');
  head(t0 + 20'000, "630");
  Put(o, pg);
  Put(o, "Timeout at NCCL work: ");
  Put(o, kWorkSeq);
  Put(o, ", ");
  Put(o, kWorkNcclLast);
  o.push_back('\n');
  head(t0 + 20'000, "636");
  Put(o, pg);
  Put(o,
      "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
      "kernels, subsequent GPU operations might run on corrupted/incomplete data.\n");
  head(t0 + 20'000, "642");
  Put(o, pg);
  Put(o, "To avoid data inconsistency, we are taking the entire process down.\n");
  head(t0 + 30'000, "1595");
  Put(o, pg);
  Put(o, "Process group watchdog thread terminated with exception: ");
  Put(o, timeout);
  o.push_back('\n');
  Put(o, "terminate called after throwing an instance of 'c10::DistBackendError'\n");
  Put(o, "  what():  ");
  Put(o, pg);
  Put(o, "Process group watchdog thread terminated with exception: ");
  Put(o, timeout);
  o.push_back('\n');
}

void AppNoise(std::string& o, Rng& r, const Scenario& s, const Node& n, Micros train0, Micros t) {
  PutPyTs(o, t);
  const auto elapsed = static_cast<std::uint64_t>(t - train0);
  const auto span = static_cast<std::uint64_t>(s.collective - train0);
  const std::uint64_t frac = span > 0 ? elapsed * 10'000 / span : 0;  // 0..10000
  const std::uint64_t step = 1000 + elapsed / 4'767'000;
  const std::uint64_t k = r.Below(1000);
  if (k < 450) {
    Put(o, " INFO [train.py:412] step ");
    PutU(o, step);
    Put(o, " | loss ");
    PutFixed(o, 29'000 - 6'000 * frac / 10'000 + r.Below(300), 4);
    Put(o, " | lr ");
    PutFixed(o, 3'000 - 1'000 * frac / 10'000, 3);
    Put(o, "e-04 | grad_norm ");
    PutFixed(o, r.Range(400, 1400), 3);
    Put(o, " | ");
    PutU(o, r.Range(380'000, 420'000));
    Put(o, " tok/s\n");
  } else if (k < 750) {
    Put(o, " INFO [dataloader.py:233] rank ");
    PutU(o, static_cast<std::uint64_t>((n.idx - 1) * kGpusPerNode) + r.Below(kGpusPerNode));
    Put(o, ": prefetch queue ");
    PutU(o, r.Range(5, 8));
    Put(o, "/8, shard ");
    PutPad(o, r.Below(4096), 5);
    Put(o, ", ");
    PutFixed(o, r.Range(80, 160), 1);
    Put(o, " ms/batch\n");
  } else if (k < 985) {
    Put(o, " INFO [perf.py:88] mfu ");
    PutFixed(o, r.Range(395, 425), 1);
    Put(o, "% | mem allocated ");
    PutFixed(o, r.Range(600, 630), 1);
    Put(o, " GiB | reserved ");
    PutFixed(o, r.Range(710, 725), 1);
    Put(o, " GiB | step time ");
    PutFixed(o, r.Range(465, 485), 2);
    Put(o, " s\n");
  } else if (k < 995) {
    // Decoy: "error" in a metric name, not a fault.
    Put(o, " INFO [eval.py:64] eval step ");
    PutU(o, step);
    Put(o, " | val_loss ");
    PutFixed(o, 29'500 - 6'000 * frac / 10'000 + r.Below(300), 4);
    Put(o, " | token error_rate ");
    PutFixed(o, r.Range(4'000, 4'400), 4);
    Put(o, " | ppl ");
    PutFixed(o, r.Range(1'300, 1'500), 2);
    o.push_back('\n');
  } else {
    Put(o, " INFO [checkpoint.py:97] saved checkpoint step_");
    PutPad(o, step, 7);
    Put(o, " to /lustre/ckpt/run-");
    Put(o, s.job);
    Put(o, " in ");
    PutFixed(o, r.Range(120, 190), 1);
    Put(o, " s (no errors)\n");
  }
}

std::string NodeApp(const Scenario& s, const Node& n, std::uint64_t lines) {
  Rng r(s.opt.seed, static_cast<std::uint64_t>(n.idx), 4);
  std::string o;
  o.reserve(lines * 120 + 32 * 1024);
  if (n.idx == 1) Put(o, "NCCL version 2.21.5+cuda12.4\n");
  const std::uint64_t nranks = static_cast<std::uint64_t>(s.opt.nodes) * kGpusPerNode;
  const std::uint64_t comm_id = SplitMix(s.opt.seed ^ 0xC0FFEE);
  for (int lr = 0; lr < kGpusPerNode; ++lr) {
    const std::uint64_t pid = n.agent_pid + 80 + static_cast<std::uint64_t>(lr);
    const std::uint64_t tid = n.agent_pid + 231 + static_cast<std::uint64_t>(lr);
    PutNcclPrefix(o, n, pid, pid, lr);
    Put(o, "Bootstrap : Using ibp26s0:");
    Put(o, n.ip);
    Put(o, "<0>\n");
    PutNcclPrefix(o, n, pid, pid, lr);
    Put(o,
        "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB "
        "ibp26s0:");
    Put(o, n.ip);
    Put(o, "<0>\n");
    PutNcclPrefix(o, n, pid, pid, lr);
    Put(o, "Using network IB\n");
    PutNcclPrefix(o, n, pid, tid, lr);
    Put(o, "comm 0x");
    PutHex(o, r.Next(), 8);
    Put(o, " rank ");
    PutU(o, static_cast<std::uint64_t>((n.idx - 1) * kGpusPerNode + lr));
    Put(o, " nranks ");
    PutU(o, nranks);
    Put(o, " cudaDev ");
    PutU(o, static_cast<std::uint64_t>(lr));
    Put(o, " nvmlDev ");
    PutU(o, static_cast<std::uint64_t>(lr));
    Put(o, " busId ");
    Put(o, kPciBusLower[static_cast<std::size_t>(lr)]);
    Put(o, "000 commId 0x");
    PutHex(o, comm_id, 16);
    Put(o, " - Init COMPLETE\n");
  }
  const Micros train0 = s.start + 4 * kMin;
  Stream(o, train0, s.collective - 500'000, lines, r, {},
         [&](std::string& out, Micros t) { AppNoise(out, r, s, n, train0, t); });

  // The cascade: every rank of this node (but the one on the dead GPU) times out after 600 s.
  const auto w = WatchdogTimes(s, n);
  std::array<int, kGpusPerNode> order{};
  for (int i = 0; i < kGpusPerNode; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return w[static_cast<std::size_t>(a)] < w[static_cast<std::size_t>(b)];
  });
  for (int lr : order) {
    const Micros t0 = w[static_cast<std::size_t>(lr)];
    if (t0 < 0) continue;
    const auto ran_ms = static_cast<std::uint64_t>((t0 - s.collective) / 1000);
    WatchdogBlock(o, t0, static_cast<std::uint64_t>((n.idx - 1) * kGpusPerNode + lr),
                  n.agent_pid + 280 + 7 * static_cast<std::uint64_t>(lr), ran_ms);
  }
  const Micros sigterm = LastWatchdog(w) + 1'600'000;
  for (int lr = 1; lr < kGpusPerNode; ++lr) {
    o.push_back('W');
    PutGlogTs(o, sigterm);
    o.push_back(' ');
    PutU(o, n.agent_pid);
    Put(o, " torch/distributed/elastic/multiprocessing/api.py:897] Sending process ");
    PutU(o, n.agent_pid + 80 + static_cast<std::uint64_t>(lr));
    Put(o, " closing signal SIGTERM\n");
  }
  o.push_back('E');
  PutGlogTs(o, sigterm + 1'200'000);
  o.push_back(' ');
  PutU(o, n.agent_pid);
  Put(o,
      " torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: "
      "0 (pid: ");
  PutU(o, n.agent_pid + 80);
  Put(o, ") of binary: /usr/bin/python3\n");
  return o;
}

// ---------------------------------------------------------------------------------------------
// Job-wide files.

std::string HostList(int nodes) {
  if (nodes == 1) return HostName(1);
  std::string h = "gpu-[";
  PutPad(h, 1, 4);
  h.push_back('-');
  PutPad(h, static_cast<std::uint64_t>(nodes), 4);
  h.push_back(']');
  return h;
}

std::string SlurmOut(const Scenario& s) {
  std::string o;
  for (const Node& n : s.nodes) {
    Put(o, "srun: error: ");
    Put(o, n.host);
    Put(o, ": task ");
    PutU(o, static_cast<std::uint64_t>(n.idx - 1));
    Put(o, ": Exited with exit code 1\n");
  }
  return o;
}

constexpr std::uint64_t kCtlFixedLines = 4;

std::string Slurmctld(const Scenario& s, std::uint64_t lines) {
  Rng r(s.opt.seed, 0, 7);
  std::vector<Special> sp;
  const auto add = [&](Micros t, const std::string& msg) {
    std::string x = "[";
    PutIso(x, t, 3, "] ");
    Put(x, msg);
    x.push_back('\n');
    sp.push_back(Special{t, std::move(x)});
  };
  add(s.submit, "_slurm_rpc_submit_batch_job: JobId=" + s.job + " InitPrio=55456 usec=429");
  add(s.start - 3 * kSec, "sched: Allocate JobId=" + s.job + " NodeList=" + HostList(s.opt.nodes) +
                              " #CPUs=" + std::to_string(s.opt.nodes * 112) + " Partition=gpu");
  add(s.end, "_job_complete: JobId=" + s.job + " WEXITSTATUS 1");
  add(s.end + 1000, "_job_complete: JobId=" + s.job + " done");
  const std::uint64_t noise = lines > kCtlFixedLines ? lines - kCtlFixedLines : 0;
  std::string o;
  o.reserve(noise * 80 + 1024);
  Stream(o, s.start - 20 * kMin, s.end + 5 * kMin, noise, r, std::move(sp),
         [&](std::string& out, Micros t) {
           out.push_back('[');
           PutIso(out, t, 3, "] ");
           std::uint64_t other = s.job_id - 2000 + r.Below(4000);
           if (other == s.job_id) ++other;
           const std::uint64_t k = r.Below(1000);
           if (k < 250) {
             Put(out, "_slurm_rpc_submit_batch_job: JobId=");
             PutU(out, other);
             Put(out, " InitPrio=");
             PutU(out, r.Range(20'000, 90'000));
             Put(out, " usec=");
             PutU(out, r.Range(300, 2000));
           } else if (k < 500) {
             Put(out, "sched/backfill: _start_job: Started JobId=");
             PutU(out, other);
             Put(out, " in cpu on cpu-");
             PutPad(out, r.Range(1, 199), 3);
           } else if (k < 650) {
             Put(out, "sched: Allocate JobId=");
             PutU(out, other);
             Put(out, " NodeList=cpu-");
             PutPad(out, r.Range(1, 199), 3);
             Put(out, " #CPUs=");
             PutU(out, 8 * r.Range(1, 16));
             Put(out, " Partition=cpu");
           } else if (k < 980) {
             Put(out, "_job_complete: JobId=");
             PutU(out, other);
             Put(out, r.PerMille(500) ? " WEXITSTATUS 0" : " done");
           } else {
             // Decoy: some other job failed; it is not ours.
             Put(out, "_job_complete: JobId=");
             PutU(out, other);
             Put(out, " WEXITSTATUS 1");
           }
           out.push_back('\n');
         });
  return o;
}

std::string JobJson(const Scenario& s) {
  std::string o;
  o.reserve(static_cast<std::size_t>(s.opt.nodes) * 2400 + 1024);
  const auto q = [&](std::string_view v) {
    o.push_back('"');
    Put(o, v);
    o.push_back('"');
  };
  Put(o, "{\n  \"schema\": \"firstfault.incident/v1\",\n  \"cluster\": ");
  q(s.cluster);
  Put(o, ",\n  \"job_id\": ");
  q(s.job);
  Put(o, ",\n  \"attempt\": 0,\n  \"state\": \"FAILED\",\n  \"exit_code\": \"1:0\",\n");
  Put(o, "  \"start_time\": \"");
  PutIso(o, s.start, 0, "Z\",\n");
  Put(o, "  \"end_time\": \"");
  PutIso(o, s.end, 0, "Z\",\n");
  Put(o, "  \"timezone\": \"UTC\",\n  \"nodes\": [");
  for (const Node& n : s.nodes) {
    if (n.idx > 1) Put(o, ", ");
    q(n.host);
  }
  Put(o, "],\n  \"ranks\": [\n");
  for (const Node& n : s.nodes) {
    for (int lr = 0; lr < kGpusPerNode; ++lr) {
      const bool last = n.idx == s.opt.nodes && lr == kGpusPerNode - 1;
      Put(o, "    {\"rank\": ");
      PutU(o, static_cast<std::uint64_t>((n.idx - 1) * kGpusPerNode + lr));
      Put(o, ", \"node\": ");
      q(n.host);
      Put(o, ", \"local_rank\": ");
      PutU(o, static_cast<std::uint64_t>(lr));
      Put(o, ", \"gpus\": [");
      q(PciId(lr));
      Put(o, "], \"exit_code\": ");
      q(n.idx == s.root && lr == kBadGpu ? "0:15" : "0:6");
      Put(o, last ? "}\n" : "},\n");
    }
  }
  Put(o, "  ],\n  \"node_info\": {\n");
  for (const Node& n : s.nodes) {
    Put(o, "    ");
    q(n.host);
    Put(o, ": {\"boot_time\": \"");
    PutIso(o, n.boot - n.boot % kSec, 0, "Z\", \"gpus\": [");
    for (int g = 0; g < kGpusPerNode; ++g) {
      if (g > 0) Put(o, ", ");
      Put(o, "{\"index\": ");
      PutU(o, static_cast<std::uint64_t>(g));
      Put(o, ", \"pci\": ");
      q(PciId(g));
      Put(o, ", \"uuid\": ");
      q(n.uuid[static_cast<std::size_t>(g)]);
      o.push_back('}');
    }
    Put(o, n.idx == s.opt.nodes ? "]}\n" : "]},\n");
  }
  Put(o, "  },\n  \"coverage\": [\n");
  static constexpr std::array<std::string_view, 4> kCollectors = {"syslog", "kernel", "slurmd",
                                                                  "app"};
  for (const Node& n : s.nodes) {
    for (std::size_t c = 0; c < kCollectors.size(); ++c) {
      Put(o, "    {\"collector\": ");
      q(kCollectors[c]);
      Put(o, ", \"node\": ");
      q(n.host);
      Put(o, ", \"status\": \"ok\"}");
      Put(o, n.idx == s.opt.nodes && c + 1 == kCollectors.size() ? "\n" : ",\n");
    }
  }
  Put(o, "  ]\n}\n");
  return o;
}

// ---------------------------------------------------------------------------------------------
// Command line.

[[noreturn]] void Usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: ff_bench_gen OUT_DIR [--nodes N] [--lines N] [--seed N] [--gzip-rotated]\n"
               "  Writes one large synthetic incident directory (deterministic for given args).\n"
               "  --nodes N        nodes gpu-0001..gpu-NNNN, 8 GPUs/ranks each (default 512)\n"
               "  --lines N        total log lines under nodes/, app/, cluster/ (default 5000000)\n"
               "  --seed N         PRNG seed (default 1)\n"
               "  --gzip-rotated   also write nodes/<node>/syslog.1.gz (older days; extra lines,\n"
               "                   not counted in --lines; needs the gzip command)\n"
               "  OUT_DIR must not exist or be empty.\n");
  std::exit(code);
}

std::uint64_t ParseU(std::string_view flag, std::string_view v) {
  std::uint64_t x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size()) {
    std::fprintf(stderr, "ff_bench_gen: %.*s needs a non-negative integer, got '%.*s'\n",
                 static_cast<int>(flag.size()), flag.data(), static_cast<int>(v.size()), v.data());
    Usage(2);
  }
  return x;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    std::string_view value;
    bool has_value = false;
    if (a == "-h" || a == "--help") Usage(0);
    if (a.starts_with("--")) {
      if (const auto eq = a.find('='); eq != std::string_view::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_value = true;
      }
    }
    const auto need = [&]() -> std::string_view {
      if (has_value) return value;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ff_bench_gen: %.*s needs a value\n", static_cast<int>(a.size()),
                     a.data());
        Usage(2);
      }
      return argv[++i];
    };
    if (a == "--nodes") {
      const std::uint64_t n = ParseU(a, need());
      if (n < 1 || n > 9999) {
        std::fprintf(stderr, "ff_bench_gen: --nodes must be 1..9999\n");
        Usage(2);
      }
      o.nodes = static_cast<int>(n);
    } else if (a == "--lines") {
      o.lines = ParseU(a, need());
    } else if (a == "--seed") {
      o.seed = ParseU(a, need());
    } else if (a == "--gzip-rotated" && !has_value) {
      o.gzip_rotated = true;
    } else if (!a.starts_with("-") && o.out.empty()) {
      o.out = std::string(a);
    } else {
      std::fprintf(stderr, "ff_bench_gen: unknown argument '%s'\n", argv[i]);
      Usage(2);
    }
  }
  if (o.out.empty()) Usage(2);
  return o;
}

void MakeDir(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p, ec);
  if (ec) Die("cannot create " + p.string() + ": " + ec.message());
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = ParseArgs(argc, argv);
  const fs::path out(opt.out);
  {
    std::error_code ec;
    if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec))) {
      Die(opt.out + " exists and is not an empty directory");
    }
  }
  const Scenario s = MakeScenario(opt);
  Stats st;

  // Line budget: job-wide files first, the rest spread evenly over nodes; each node's share goes
  // to its fixed lines (boot, cascade, ...) and the remainder to noise, split 40% syslog, 15%
  // kernel.log, 10% slurmd.log, 35% app.log. The total is exact unless --lines is too small to
  // hold the fixed lines.
  const auto nodes = static_cast<std::uint64_t>(opt.nodes);
  const std::uint64_t ctl_lines = std::max<std::uint64_t>(25, opt.lines / 1000);
  const std::uint64_t global = nodes + ctl_lines;
  const std::uint64_t rest = opt.lines > global ? opt.lines - global : 0;

  MakeDir(out / "app");
  MakeDir(out / "cluster");
  WriteFile(out / "job.json", JobJson(s), st, /*is_log=*/false);
  WriteFile(out / "app" / ("slurm-" + s.job + ".out"), SlurmOut(s), st);
  WriteFile(out / "cluster" / "slurmctld.log", Slurmctld(s, ctl_lines), st);

  for (const Node& n : s.nodes) {
    const auto i = static_cast<std::uint64_t>(n.idx - 1);
    const std::uint64_t budget = rest / nodes + (i < rest % nodes ? 1 : 0);
    const std::uint64_t fixed = (n.idx == s.root ? 4 : 0) + KernelFixedLines(s, n) +
                                SlurmdFixedLines(n) + AppFixedLines(s, n);
    const std::uint64_t noise = budget > fixed ? budget - fixed : 0;
    NodeBudget b;
    b.syslog = Percent(noise, 40);
    b.kernel = Percent(noise, 15);
    b.slurmd = Percent(noise, 10);
    b.app = noise - b.syslog - b.kernel - b.slurmd;

    const fs::path dir = out / "nodes" / n.host;
    MakeDir(dir);
    WriteFile(dir / "syslog", NodeSyslog(s, n, b.syslog), st);
    WriteFile(dir / "kernel.log", NodeKernel(s, n, b.kernel), st);
    WriteFile(dir / "slurmd.log", NodeSlurmd(s, n, b.slurmd), st);
    WriteFile(dir / "app.log", NodeApp(s, n, b.app), st);
    if (opt.gzip_rotated) {
      WriteGzip(dir / "syslog.1.gz", NodeRotatedSyslog(s, n, b.syslog / 2), st);
    }
  }

  const Node& root = s.nodes[static_cast<std::size_t>(s.root - 1)];
  const Node& decoy = s.nodes[static_cast<std::size_t>(s.decoy - 1)];
  std::string when;
  PutIso(when, s.xid, 6, "Z");
  std::string stale;
  PutIso(stale, s.decoy_xid, 0, "Z");
  std::fprintf(stderr,
               "ff_bench_gen: wrote %s\n"
               "  files        %llu\n"
               "  lines        %llu (nodes/, app/, cluster/; job.json not counted)\n",
               opt.out.c_str(), static_cast<unsigned long long>(st.files),
               static_cast<unsigned long long>(st.lines));
  if (opt.gzip_rotated) {
    std::fprintf(stderr, "  rotated      %llu lines inside syslog.1.gz (extra)\n",
                 static_cast<unsigned long long>(st.rotated_lines));
  }
  std::fprintf(stderr,
               "  bytes        %llu (%.1f MiB)\n"
               "  root node    %s (Xid 79 at %s, GPU %s, rank %d)\n"
               "  decoy        %s (stale Xid 63 at %s, days before the job)\n",
               static_cast<unsigned long long>(st.bytes),
               static_cast<double>(st.bytes) / (1024.0 * 1024.0), root.host.c_str(), when.c_str(),
               PciId(kBadGpu).c_str(), (s.root - 1) * kGpusPerNode + kBadGpu, decoy.host.c_str(),
               stale.c_str());
  return 0;
}
