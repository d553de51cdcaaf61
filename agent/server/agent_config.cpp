#include "agent/server/agent_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/yaml_field.h"

namespace ff::agent {

namespace {

[[noreturn]] void fail(const std::string& name, const YAML::Mark& mark, const std::string& what) {
  yaml_field::fail<ConfigError>(name, mark, what);
}

template <typename T>
T scalar(const std::string& name, const std::string& key, const YAML::Node& node) {
  return yaml_field::scalar<T, ConfigError>(name, key, node);
}

int positive(const std::string& name, const std::string& key, const YAML::Node& node, int min) {
  int v = scalar<int>(name, key, node);
  if (v < min) fail(name, node.Mark(), "'" + key + "' must be at least " + std::to_string(min));
  return v;
}

long long at_least(const std::string& name, const std::string& key, const YAML::Node& node,
                   long long min) {
  long long v = scalar<long long>(name, key, node);
  if (v < min) fail(name, node.Mark(), "'" + key + "' must be at least " + std::to_string(min));
  return v;
}

void parse_listen(const std::string& name, const YAML::Node& node, AgentConfig& c) {
  std::string listen = scalar<std::string>(name, "listen", node);
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0)
    fail(name, node.Mark(), "'listen' must be host:port, got '" + listen + "'");
  c.listen_host = listen.substr(0, colon);
  if (c.listen_host.size() > 2 && c.listen_host.front() == '[' && c.listen_host.back() == ']')
    c.listen_host = c.listen_host.substr(1, c.listen_host.size() - 2);
  try {
    std::size_t used = 0;
    c.listen_port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    fail(name, node.Mark(), "'listen' port is not a number: '" + listen + "'");
  }
  if (c.listen_port < 0 || c.listen_port > 65535)
    fail(name, node.Mark(), "'listen' port out of range");
}

std::vector<std::string> string_list(const std::string& name, const std::string& key,
                                     const YAML::Node& node) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (node.IsScalar()) return {node.Scalar()};
  if (!node.IsSequence()) fail(name, node.Mark(), "'" + key + "' must be a list");
  for (const auto& item : node) out.push_back(scalar<std::string>(name, key, item));
  return out;
}

bool boolean(const std::string& name, const std::string& key, const YAML::Node& node) {
  return scalar<bool>(name, key, node);
}

void parse_drain(const std::string& name, const YAML::Node& node, DrainSettings& d) {
  if (node.IsNull()) return;
  if (!node.IsMap()) fail(name, node.Mark(), "'drain' must be a mapping");
  for (const auto& entry : node) {
    std::string key = entry.first.as<std::string>();
    std::string full = "drain." + key;
    const YAML::Node& v = entry.second;
    if (key == "enabled") {
      d.enabled = boolean(name, full, v);
    } else if (key == "dry_run") {
      d.dry_run = boolean(name, full, v);
    } else if (key == "min_blames") {
      d.min_blames = positive(name, full, v, 1);
    } else if (key == "window_days") {
      d.window_days = positive(name, full, v, 1);
    } else if (key == "max_per_hour") {
      d.max_per_hour = positive(name, full, v, 1);
    } else if (key == "domains") {
      d.domains = string_list(name, full, v);
      const auto& allowed = drainable_domains();
      // A user's bug, a time limit or a storage outage says nothing about
      // the node: never a reason to drain it.
      for (std::size_t i = 0; i < d.domains.size(); ++i)
        if (std::find(allowed.begin(), allowed.end(), d.domains[i]) == allowed.end())
          fail(name, v.IsSequence() ? v[i].Mark() : v.Mark(),
               "'drain.domains' may hold only hardware domains (gpu, gpu_fabric, network, "
               "host), not '" +
                   d.domains[i] + "'");
      if (d.domains.empty()) fail(name, v.Mark(), "'drain.domains' is empty");
    } else if (key == "ignore_sub_domains") {
      d.ignore_sub_domains = string_list(name, full, v);
    } else {
      fail(name, entry.first.Mark(), "unknown setting '" + full + "'");
    }
  }
}

void parse_suspects(const std::string& name, const YAML::Node& node, SuspectSettings& s) {
  if (node.IsNull()) return;
  if (!node.IsMap()) fail(name, node.Mark(), "'suspects' must be a mapping");
  for (const auto& entry : node) {
    std::string key = entry.first.as<std::string>();
    std::string full = "suspects." + key;
    const YAML::Node& v = entry.second;
    if (key == "window_days") {
      s.window_s = static_cast<std::int64_t>(positive(name, full, v, 1)) * 86400;
    } else if (key == "min_jobs") {
      s.min_jobs = positive(name, full, v, 1);
    } else if (key == "systemic_window_s") {
      s.systemic_window_s = positive(name, full, v, 1);
    } else if (key == "systemic_min_nodes") {
      // Two nodes failing together is too common to call an outage.
      s.systemic_min_nodes = positive(name, full, v, 2);
    } else if (key == "systemic_rate_factor") {
      s.systemic_rate_factor = positive(name, full, v, 1);
    } else if (key == "ignored_domains") {
      s.ignored_domains = v.IsNull() ? std::vector<std::string>{} : string_list(name, full, v);
    } else {
      fail(name, entry.first.Mark(), "unknown setting '" + full + "'");
    }
  }
}

}  // namespace

AgentConfig parse_agent_config(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(name, e.mark, e.msg);
  }
  AgentConfig c;
  if (root.IsNull()) return c;
  if (!root.IsMap()) fail(name, root.Mark(), "the configuration must be a mapping");
  bool database_set = false;
  for (const auto& entry : root) {
    std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    if (key == "listen") {
      parse_listen(name, v, c);
    } else if (key == "state_dir") {
      c.state_dir = scalar<std::string>(name, key, v);
      if (c.state_dir.empty() || c.state_dir[0] != '/')
        fail(name, v.Mark(), "'state_dir' must be an absolute path");
    } else if (key == "database") {
      c.database = scalar<std::string>(name, key, v);
      database_set = true;
    } else if (key == "allowed_uids") {
      if (!v.IsNull() && !v.IsSequence()) fail(name, v.Mark(), "'allowed_uids' must be a list");
      for (const auto& uid : v) c.allowed_uids.push_back(positive(name, key, uid, 0));
    } else if (key == "slurm_user") {
      c.slurm_user = v.IsNull() ? "" : scalar<std::string>(name, key, v);
    } else if (key == "fastpass_wait_s") {
      c.fastpass_wait_s = positive(name, key, v, 0);
    } else if (key == "final_pass_deadline_s") {
      c.final_pass_deadline_s = positive(name, key, v, 0);
    } else if (key == "max_request_bytes") {
      c.max_request_bytes = static_cast<std::size_t>(scalar<long long>(name, key, v));
      if (scalar<long long>(name, key, v) < 1024)
        fail(name, v.Mark(), "'max_request_bytes' must be at least 1024");
    } else if (key == "http_max_connections") {
      c.http_max_connections = positive(name, key, v, 8);
    } else if (key == "http_max_connections_per_peer") {
      c.http_max_connections_per_peer = positive(name, key, v, 1);
    } else if (key == "http_header_timeout_s") {
      c.http_header_timeout_s = positive(name, key, v, 1);
    } else if (key == "http_request_timeout_s") {
      c.http_request_timeout_s = positive(name, key, v, 1);
    } else if (key == "http_upload_workers") {
      c.http_upload_workers = positive(name, key, v, 1);
    } else if (key == "http_fastpass_workers") {
      c.http_fastpass_workers = positive(name, key, v, 1);
    } else if (key == "http_read_workers") {
      c.http_read_workers = positive(name, key, v, 1);
    } else if (key == "max_files_per_bundle") {
      c.max_files_per_bundle = static_cast<std::size_t>(positive(name, key, v, 1));
    } else if (key == "max_file_bytes") {
      c.max_file_bytes = static_cast<std::size_t>(at_least(name, key, v, 1024));
    } else if (key == "max_line_bytes") {
      c.max_line_bytes = static_cast<std::size_t>(at_least(name, key, v, 1024));
    } else if (key == "max_lines_per_job") {
      c.max_lines_per_job = static_cast<std::uint64_t>(at_least(name, key, v, 1));
    } else if (key == "max_job_bytes") {
      c.max_job_bytes = static_cast<std::uint64_t>(at_least(name, key, v, 1048576));
    } else if (key == "min_free_bytes") {
      c.min_free_bytes = static_cast<std::uint64_t>(at_least(name, key, v, 0));
    } else if (key == "min_free_percent") {
      c.min_free_percent = positive(name, key, v, 0);
      if (c.min_free_percent > 90) fail(name, v.Mark(), "'min_free_percent' must be at most 90");
    } else if (key == "retention_days") {
      c.retention_days = positive(name, key, v, 1);
    } else if (key == "max_state_bytes") {
      c.max_state_bytes = static_cast<std::uint64_t>(at_least(name, key, v, 0));
      if (c.max_state_bytes != 0 && c.max_state_bytes < 1048576)
        fail(name, v.Mark(), "'max_state_bytes' must be 0 (no bound) or at least 1048576");
    } else if (key == "final_pass_workers") {
      c.final_pass_workers = positive(name, key, v, 1);
      // Each worker may run the engine on a large incident at once.
      if (c.final_pass_workers > 16)
        fail(name, v.Mark(), "'final_pass_workers' must be at most 16");
    } else if (key == "jobs") {
      c.jobs = positive(name, key, v, 1);
      if (c.jobs > 256) fail(name, v.Mark(), "'jobs' must be at most 256");
    } else if (key == "max_tracked_jobs") {
      c.max_tracked_jobs = static_cast<std::size_t>(positive(name, key, v, 100));
    } else if (key == "read_access") {
      c.read_access = scalar<std::string>(name, key, v);
      if (c.read_access != "credential" && c.read_access != "open")
        fail(name, v.Mark(), "'read_access' must be 'credential' or 'open'");
    } else if (key == "read_uids") {
      if (!v.IsNull() && !v.IsSequence()) fail(name, v.Mark(), "'read_uids' must be a list");
      for (const auto& uid : v) c.read_uids.push_back(positive(name, key, uid, 0));
    } else if (key == "read_token_file") {
      c.read_token_file = v.IsNull() ? "" : scalar<std::string>(name, key, v);
      if (!c.read_token_file.empty() && c.read_token_file[0] != '/')
        fail(name, v.Mark(), "'read_token_file' must be an absolute path");
    } else if (key == "loki") {
      try {
        c.central.loki = ff::sources::parse_loki_config(v, name);
      } catch (const ff::sources::LokiConfigError& e) {
        throw ConfigError(e.what());
      }
    } else if (key == "prometheus") {
      try {
        c.central.prometheus = ff::sources::parse_prometheus_config(v, name);
      } catch (const ff::sources::PrometheusConfigError& e) {
        throw ConfigError(e.what());
      }
    } else if (key == "gather_margin_before_s") {
      c.central.margin_before_s = positive(name, key, v, 0);
    } else if (key == "gather_margin_after_s") {
      c.central.margin_after_s = positive(name, key, v, 0);
    } else if (key == "scontrol") {
      c.slurm.scontrol = scalar<std::string>(name, key, v);
    } else if (key == "slurm_job_helper") {
      c.slurm.slurm_job_helper = scalar<std::string>(name, key, v);
      if (c.slurm.slurm_job_helper.empty() || c.slurm.slurm_job_helper[0] != '/')
        fail(name, v.Mark(), "'slurm_job_helper' must be an absolute path");
    } else if (key == "sacctmgr") {
      c.slurm.sacctmgr = v.IsNull() ? "" : scalar<std::string>(name, key, v);
    } else if (key == "slurmctld_log") {
      c.scheduler.slurmctld_log = v.IsNull() ? "" : scalar<std::string>(name, key, v);
      const std::string& log = c.scheduler.slurmctld_log;
      if (!log.empty() && log != "auto" && log != "off" && log[0] != '/')
        fail(name, v.Mark(), "'slurmctld_log' must be auto, off or an absolute path");
    } else if (key == "scheduler_node_states") {
      c.scheduler.node_states = scalar<bool>(name, key, v);
    } else if (key == "comment_field") {
      c.slurm.comment_field = scalar<std::string>(name, key, v);
      if (c.slurm.comment_field != "Comment" && c.slurm.comment_field != "AdminComment")
        fail(name, v.Mark(), "'comment_field' must be Comment or AdminComment");
    } else if (key == "slurm_timeout_s") {
      c.slurm.timeout_s = positive(name, key, v, 1);
    } else if (key == "rules") {
      c.rules = string_list(name, key, v);
    } else if (key == "drain") {
      parse_drain(name, v, c.drain);
    } else if (key == "suspects") {
      parse_suspects(name, v, c.suspects);
    } else {
      fail(name, entry.first.Mark(), "unknown setting '" + key + "'");
    }
  }
  if (!database_set || c.database.empty()) c.database = c.state_dir + "/firstfault.db";
  if (c.max_state_bytes != 0 && c.max_state_bytes < c.max_job_bytes)
    fail(name, root.Mark(),
         "'max_state_bytes' must be at least 'max_job_bytes' (one job attempt must fit)");
  return c;
}

AgentConfig load_agent_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read the configuration file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_agent_config(text.str(), path);
}

}  // namespace ff::agent
