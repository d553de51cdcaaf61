#include "central/prometheus/prometheus_config.h"

#include <fstream>
#include <regex>
#include <sstream>

#include "common/yaml_field.h"

namespace ff::sources {

namespace {

[[noreturn]] void fail(const std::string& file, const YAML::Mark& mark, const std::string& what) {
  yaml_field::fail<PrometheusConfigError>(file, mark, what);
}

template <typename T>
T scalar(const std::string& file, const std::string& key, const YAML::Node& node) {
  return yaml_field::scalar<T, PrometheusConfigError>(file, key, node);
}

double positive(const std::string& file, const std::string& key, const YAML::Node& node) {
  double v = scalar<double>(file, key, node);
  if (!(v > 0)) fail(file, node.Mark(), "'" + key + "' must be more than 0");
  return v;
}

double non_negative(const std::string& file, const std::string& key, const YAML::Node& node) {
  double v = scalar<double>(file, key, node);
  if (!(v >= 0)) fail(file, node.Mark(), "'" + key + "' must not be negative");
  return v;
}

// The name becomes a file name under metrics/: nothing that could leave it.
bool valid_query_name(const std::string& n) {
  if (n.empty() || n.size() > 100 || n[0] == '.') return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  return true;
}

PrometheusQuery parse_query(const std::string& file, const YAML::Node& node) {
  if (!node.IsMap()) fail(file, node.Mark(), "a query is a mapping {name, query, step_s?}");
  PrometheusQuery q;
  bool has_query = false;
  for (const auto& entry : node) {
    std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    if (key == "name") {
      q.name = scalar<std::string>(file, key, v);
      if (!valid_query_name(q.name))
        fail(file, v.Mark(),
             "query name '" + q.name + "' must be letters, digits, '_', '-', '.' (a file name)");
    } else if (key == "query") {
      q.query = scalar<std::string>(file, key, v);
      has_query = !q.query.empty();
    } else if (key == "step_s") {
      q.step_s = positive(file, key, v);
    } else if (key == "node_label") {
      q.node_label = scalar<std::string>(file, key, v);
    } else {
      fail(file, entry.first.Mark(), "unknown query setting '" + key + "'");
    }
  }
  if (q.name.empty()) fail(file, node.Mark(), "a query needs a 'name'");
  if (!has_query) fail(file, node.Mark(), "query '" + q.name + "' needs a 'query'");
  return q;
}

}  // namespace

std::vector<PrometheusQuery> default_prometheus_queries() {
  auto q = [](const char* name, const char* query) {
    return PrometheusQuery{name, query, std::nullopt, std::nullopt};
  };
  return {
      // Gauge: the last Xid the GPU reported (0 = none).
      q("gpu_xid", "DCGM_FI_DEV_XID_ERRORS{ {{node_selector}} }"),
      q("gpu_ecc_dbe", R"({__name__=~"DCGM_FI_DEV_ECC_DBE_(VOL|AGG)_TOTAL", {{node_selector}} })"),
      q("gpu_temperature", "DCGM_FI_DEV_GPU_TEMP{ {{node_selector}} }"),
      q("gpu_power", "DCGM_FI_DEV_POWER_USAGE{ {{node_selector}} }"),
      q("nvlink_errors",
        R"({__name__=~"DCGM_FI_DEV_NVLINK_(CRC_FLIT|CRC_DATA|REPLAY|RECOVERY)_ERROR_COUNT_TOTAL", {{node_selector}} })"),
      q("ib_port_errors",
        R"({__name__=~"node_infiniband_(link_downed|link_error_recovery|port_errors_received|symbol_error|local_link_integrity_errors|port_receive_remote_physical_errors|excessive_buffer_overrun_errors)_total", {{node_selector}} })"),
      q("up", "up{ {{node_selector}} }"),
  };
}

PrometheusConfig parse_prometheus_config(const YAML::Node& node, const std::string& file) {
  if (!node.IsMap()) fail(file, node.Mark(), "'prometheus' must be a mapping");
  PrometheusConfig c;
  bool defaults = true;
  std::vector<PrometheusQuery> custom;
  for (const auto& entry : node) {
    std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    if (key == "url") {
      c.url = scalar<std::string>(file, key, v);
      if (c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0)
        fail(file, v.Mark(), "'url' must start with http:// or https://");
      while (!c.url.empty() && c.url.back() == '/') c.url.pop_back();
    } else if (key == "timeout_s") {
      c.timeout_s = positive(file, key, v);
    } else if (key == "bearer_token_file") {
      c.bearer_token_file = scalar<std::string>(file, key, v);
    } else if (key == "ca_file") {
      c.ca_file = scalar<std::string>(file, key, v);
    } else if (key == "step_s") {
      c.step_s = positive(file, key, v);
    } else if (key == "margin_before_s") {
      c.margin_before_s = non_negative(file, key, v);
    } else if (key == "margin_after_s") {
      c.margin_after_s = non_negative(file, key, v);
    } else if (key == "node_label") {
      c.node_label = scalar<std::string>(file, key, v);
      if (c.node_label.empty()) fail(file, v.Mark(), "'node_label' must not be empty");
    } else if (key == "node_label_regex") {
      c.node_label_regex = scalar<std::string>(file, key, v);
      try {
        std::regex re(c.node_label_regex, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        fail(file, v.Mark(), "'node_label_regex' does not compile: " + std::string(e.what()));
      }
    } else if (key == "default_queries") {
      defaults = scalar<bool>(file, key, v);
    } else if (key == "queries") {
      if (!v.IsSequence()) fail(file, v.Mark(), "'queries' must be a list");
      for (const auto& q : v) {
        PrometheusQuery parsed = parse_query(file, q);
        for (const auto& earlier : custom)
          if (earlier.name == parsed.name)
            fail(file, q.Mark(), "query '" + parsed.name + "' is defined twice");
        custom.push_back(std::move(parsed));
      }
    } else {
      fail(file, entry.first.Mark(), "unknown prometheus setting '" + key + "'");
    }
  }
  if (c.url.empty()) fail(file, node.Mark(), "'prometheus' needs a 'url'");
  if (defaults) c.queries = default_prometheus_queries();
  for (auto& q : custom) {
    bool replaced = false;
    for (auto& d : c.queries)
      if (d.name == q.name) {
        d = q;
        replaced = true;
      }
    if (!replaced) c.queries.push_back(std::move(q));
  }
  if (c.queries.empty())
    fail(file, node.Mark(),
         "no queries: default_queries is false and "
         "'queries' lists none");
  return c;
}

PrometheusConfig load_prometheus_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PrometheusConfigError(path + ": cannot read the configuration file");
  std::ostringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    fail(path, e.mark, e.msg);
  }
  if (!root.IsMap() || !root["prometheus"]) fail(path, root.Mark(), "no 'prometheus:' section");
  return parse_prometheus_config(root["prometheus"], path);
}

std::string promql_node_alternation(const std::vector<std::string>& nodes) {
  static const std::string meta = "\\.+*?()|[]{}^$";
  std::string re;
  for (const auto& n : nodes) {
    if (!re.empty()) re += '|';
    for (char ch : n) {
      if (meta.find(ch) != std::string::npos) re += '\\';
      re += ch;
    }
  }
  // The regex sits inside a double-quoted PromQL string: escape for it too.
  std::string out;
  for (char ch : re) {
    if (ch == '\\' || ch == '"') out += '\\';
    out += ch;
  }
  return out;
}

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

}  // namespace

std::string expand_prometheus_query(const PrometheusQuery& q, const PrometheusConfig& config,
                                    const std::vector<std::string>& nodes) {
  std::string label = q.node_label.value_or(config.node_label);
  std::string alternation = promql_node_alternation(nodes);
  std::string out = q.query;
  replace_all(out, "{{node_selector}}", label + "=~\"(" + alternation + ")([.:].*)?\"");
  replace_all(out, "{{node_label}}", label);
  replace_all(out, "{{nodes}}", alternation);
  return out;
}

}  // namespace ff::sources
