// The node config, /etc/firstfault/node.yaml (docs/slurm-path.md §3): where
// bundles go, where the spool is, which logs to gather and how hard to try.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ff::collect {

constexpr const char* kDefaultNodeConfigPath = "/etc/firstfault/node.yaml";

struct RetryPolicy {
  double initial_s = 2;
  double max_s = 300;
  double give_up_after_s = 86400;
};

struct SourceGlobs {
  // kernel, syslog, fabricmanager, slurmd. kernel: /dev/kmsg and journal
  // selections of _TRANSPORT=kernel only (kernel_records_only).
  std::string kind;
  // %n already replaced. Besides paths: /dev/kmsg, and "journal:..." entries
  // (sources/journal_reader.h) read from the systemd journal.
  std::vector<std::string> globs;
  // "" = this host's system journal. The initializer keeps {kind, globs}
  // aggregates free of missing-initializer warnings.
  std::string journal_directory = {};
};

struct NodeConfig {
  std::string file;  // the file read, "" when the defaults are used
  std::string node;  // the Slurm node name %n stands for
  std::string agent_url = "http://localhost:7421";
  std::filesystem::path spool = "/var/spool/firstfault";
  std::int64_t margin_before_s = 300;
  std::int64_t margin_after_s = 60;
  std::uint64_t max_bundle_bytes = 64ull << 20;
  RetryPolicy retry;
  bool collect_on_success = false;
  std::vector<SourceGlobs> sources;  // in the order kernel, syslog, fabricmanager, slurmd

  // Beyond the contract's example, all optional:
  std::int64_t fallback_lookback_s = 3600;    // window start when the plugin left no alloc record
  std::uint64_t app_max_bytes = 16ull << 20;  // job stdout/stderr: the last N bytes
  double connect_timeout_s = 5;
  double request_timeout_s = 120;
  int spool_keep_days = 7;
  std::string timezone;           // IANA name for zone-less log times; "" = this host's zone
  std::string munge_socket;       // "" = munged's default
  std::string collector;          // read by the Epilog only
  std::string journal_directory;  // journal files for "journal:" entries; "" = the system's
  // PyTorch flight-recorder dumps (sources/flight_recorder_files.h): a path
  // pattern with %r (the global rank) in its file name; "" = not gathered.
  std::string flight_recorder;
  std::uint64_t flight_recorder_max_bytes = 16ull << 20;  // per dump: a larger one is skipped
  std::uint64_t flight_recorder_max_files = 64;           // the lowest ranks kept
};

// The most a dump may weigh: what the agent accepts of one
// (agent/server/bundle_limits.h max_flight_recorder_file_bytes).
constexpr std::uint64_t kMaxFlightRecorderBytes = 64ull << 20;

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The defaults of docs/slurm-path.md §3, %n replaced by `node`.
NodeConfig default_node_config(const std::string& node);

// Reads `path`. A missing file gives the defaults (a node without a config
// still collects); a file that exists but is wrong throws ConfigError naming
// the file and line.
NodeConfig load_node_config(const std::filesystem::path& path, const std::string& node);

// May `entry` stand in the `kernel` source? That kind is the engine's
// trusted kernel evidence, so it holds the kernel's own records only:
// /dev/kmsg, or a journal selection of _TRANSPORT=kernel entries
// ("journal:kernel", "journal:_TRANSPORT=kernel"). A file (kern.log, which
// rsyslog also fills from /dev/log) or a wider journal selection is refused
// with `error` saying why.
bool kernel_records_only(const std::string& entry, std::string& error);

// "%n" → node name, everywhere in `text`.
std::string expand_node_name(const std::string& text, const std::string& node);

}  // namespace ff::collect
