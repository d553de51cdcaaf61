#include "collectors/config/node_config.h"

#include "common/node_name_pattern.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "collectors/sources/flight_recorder_files.h"
#include "collectors/sources/journal_reader.h"
#include "collectors/sources/kmsg_reader.h"

namespace ff::collect {
namespace {

const std::vector<std::pair<std::string, std::vector<std::string>>>& default_sources() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> sources = {
      // The kernel's own records only: the engine trusts this kind as
      // evidence no user can write. kern.log is rsyslog's file, fed from
      // /dev/log as well (`logger -p kern.err` writes it): syslog.
      {"kernel", {kKmsgPath}},
      {"syslog", {"/var/log/syslog*", "/var/log/messages*", "/var/log/kern.log*"}},
      {"fabricmanager", {"/var/log/fabricmanager.log*"}},
      {"slurmd", {"/var/log/slurm/slurmd.log*"}}};
  return sources;
}

[[noreturn]] void fail(const std::filesystem::path& path, const YAML::Mark& mark,
                       const std::string& what) {
  std::string message = path.string();
  if (!mark.is_null()) {
    message += ':';
    message += std::to_string(mark.line + 1);
  }
  message += ": ";
  message += what;
  throw ConfigError(message);
}

template <typename T>
T scalar(const std::filesystem::path& path, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(path, node.Mark(), "'" + key + "' must be a scalar");
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    fail(path, node.Mark(), "'" + key + "' has a value of the wrong type: '" + node.Scalar() + "'");
  }
}

template <typename T>
T non_negative(const std::filesystem::path& path, const YAML::Node& node, const std::string& key) {
  T v = scalar<T>(path, node, key);
  if (v < 0) fail(path, node.Mark(), "'" + key + "' must not be negative");
  return v;
}

void read_retry(const std::filesystem::path& path, const YAML::Node& node, RetryPolicy& retry) {
  if (!node.IsMap()) fail(path, node.Mark(), "'retry' must be a map");
  for (const auto& item : node) {
    std::string key = item.first.as<std::string>();
    if (key == "initial_s")
      retry.initial_s = non_negative<double>(path, item.second, key);
    else if (key == "max_s")
      retry.max_s = non_negative<double>(path, item.second, key);
    else if (key == "give_up_after_s")
      retry.give_up_after_s = non_negative<double>(path, item.second, key);
    else
      spdlog::warn("{}:{}: unknown key 'retry.{}' ignored", path.string(),
                   item.first.Mark().line + 1, key);
  }
}

void read_sources(const std::filesystem::path& path, const YAML::Node& node, NodeConfig& config) {
  if (!node.IsMap()) fail(path, node.Mark(), "'sources' must be a map of kind to paths");
  config.sources.clear();
  std::set<std::string> known;
  for (const auto& [kind, globs] : default_sources()) known.insert(kind);
  for (const auto& item : node) {
    std::string kind = item.first.as<std::string>();
    if (!known.count(kind))
      fail(path, item.first.Mark(),
           "unknown source kind '" + kind + "' (kernel, syslog, fabricmanager, slurmd)");
    SourceGlobs source{kind, {}, {}};
    auto add = [&](const YAML::Node& g) {
      std::string entry = expand_node_name(scalar<std::string>(path, g, kind), config.node);
      // A mistyped journal entry would otherwise be a glob matching nothing:
      // a source quietly "missing" on every node.
      std::string error;
      if (is_journal_entry(entry) && !parse_journal_entry(entry, error))
        fail(path, g.Mark(), "'sources." + kind + "': " + error);
      if (kind == "kernel" && !kernel_records_only(entry, error))
        fail(path, g.Mark(), "'sources.kernel': " + error);
      source.globs.push_back(std::move(entry));
    };
    if (item.second.IsScalar()) {
      add(item.second);
    } else if (item.second.IsSequence()) {
      for (const auto& g : item.second) add(g);
    } else if (!item.second.IsNull()) {
      fail(path, item.second.Mark(), "'sources." + kind + "' must be a list of paths");
    }
    config.sources.push_back(std::move(source));
  }
}

}  // namespace

bool kernel_records_only(const std::string& entry, std::string& error) {
  if (entry == kKmsgPath) return true;
  if (is_journal_entry(entry)) {
    std::string parse_error;
    auto selection = parse_journal_entry(entry, parse_error);
    bool kernel_only = selection && !selection->any_of.empty();
    if (selection)
      for (const auto& conjunction : selection->any_of)
        kernel_only = kernel_only && std::find(conjunction.begin(), conjunction.end(),
                                               "_TRANSPORT=kernel") != conjunction.end();
    if (kernel_only) return true;
    error = "'" + entry +
            "' selects more than the kernel's own records (_TRANSPORT=kernel): a user's "
            "`logger -t kernel` line would pass for the kernel's; use journal:kernel, or list "
            "it under 'syslog'";
    return false;
  }
  error = "'" + entry +
          "' is a file: the kernel source holds only the kernel's own records (/dev/kmsg, "
          "journal:kernel), which the engine trusts; a log file such as kern.log is written by "
          "the syslog daemon, which takes lines from any user (`logger -p kern.err`): list it "
          "under 'syslog'";
  return false;
}

std::string expand_node_name(const std::string& text, const std::string& node) {
  return ff::expand_node_name(text, node);
}

NodeConfig default_node_config(const std::string& node) {
  NodeConfig config;
  config.node = node;
  for (const auto& [kind, globs] : default_sources()) {
    SourceGlobs source{kind, {}, {}};
    for (const auto& g : globs) source.globs.push_back(expand_node_name(g, node));
    config.sources.push_back(std::move(source));
  }
  return config;
}

NodeConfig load_node_config(const std::filesystem::path& path, const std::string& node) {
  NodeConfig config = default_node_config(node);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return config;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile& e) {
    throw ConfigError(path.string() + ": cannot read");
  } catch (const YAML::Exception& e) {
    fail(path, e.mark, e.msg);
  }
  config.file = path.string();
  if (root.IsNull()) return config;
  if (!root.IsMap()) fail(path, root.Mark(), "the config must be a map");
  for (const auto& item : root) {
    std::string key = item.first.as<std::string>();
    const YAML::Node& value = item.second;
    if (key == "agent_url") {
      config.agent_url = scalar<std::string>(path, value, key);
      while (!config.agent_url.empty() && config.agent_url.back() == '/')
        config.agent_url.pop_back();
    } else if (key == "spool") {
      config.spool = expand_node_name(scalar<std::string>(path, value, key), node);
    } else if (key == "margin_before_s") {
      config.margin_before_s = non_negative<std::int64_t>(path, value, key);
    } else if (key == "margin_after_s") {
      config.margin_after_s = non_negative<std::int64_t>(path, value, key);
    } else if (key == "max_bundle_bytes") {
      config.max_bundle_bytes = scalar<std::uint64_t>(path, value, key);
    } else if (key == "retry") {
      read_retry(path, value, config.retry);
    } else if (key == "collect_on_success") {
      config.collect_on_success = scalar<bool>(path, value, key);
    } else if (key == "sources") {
      read_sources(path, value, config);
    } else if (key == "fallback_lookback_s") {
      config.fallback_lookback_s = non_negative<std::int64_t>(path, value, key);
    } else if (key == "app_max_bytes") {
      config.app_max_bytes = scalar<std::uint64_t>(path, value, key);
    } else if (key == "connect_timeout_s") {
      config.connect_timeout_s = non_negative<double>(path, value, key);
    } else if (key == "request_timeout_s") {
      config.request_timeout_s = non_negative<double>(path, value, key);
    } else if (key == "spool_keep_days") {
      config.spool_keep_days = non_negative<int>(path, value, key);
    } else if (key == "timezone") {
      config.timezone = scalar<std::string>(path, value, key);
    } else if (key == "munge_socket") {
      config.munge_socket = scalar<std::string>(path, value, key);
    } else if (key == "collector") {
      config.collector = scalar<std::string>(path, value, key);
    } else if (key == "journal_directory") {
      config.journal_directory = expand_node_name(scalar<std::string>(path, value, key), node);
    } else if (key == "flight_recorder") {
      config.flight_recorder = scalar<std::string>(path, value, key);
      std::string error;
      if (!parse_flight_recorder_pattern(config.flight_recorder, error))
        fail(path, value.Mark(), "'flight_recorder' " + error);
    } else if (key == "flight_recorder_max_bytes") {
      config.flight_recorder_max_bytes = scalar<std::uint64_t>(path, value, key);
      if (config.flight_recorder_max_bytes == 0 ||
          config.flight_recorder_max_bytes > kMaxFlightRecorderBytes)
        fail(path, value.Mark(),
             "'flight_recorder_max_bytes' must be 1 to " + std::to_string(kMaxFlightRecorderBytes) +
                 " (what the agent accepts of one dump)");
    } else if (key == "flight_recorder_max_files") {
      config.flight_recorder_max_files = scalar<std::uint64_t>(path, value, key);
      if (config.flight_recorder_max_files == 0)
        fail(path, value.Mark(), "'flight_recorder_max_files' must be at least 1");
    } else {
      // A newer config on an older collector must still collect.
      spdlog::warn("{}:{}: unknown key '{}' ignored", path.string(), item.first.Mark().line + 1,
                   key);
    }
  }
  if (config.agent_url.empty()) fail(path, root.Mark(), "'agent_url' is empty");
  // Each kind is collected on its own; it carries where its journal is.
  for (auto& source : config.sources) source.journal_directory = config.journal_directory;
  return config;
}

}  // namespace ff::collect
