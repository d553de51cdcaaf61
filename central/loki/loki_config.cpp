#include "central/loki/loki_config.h"

#include <set>

#include "common/yaml_field.h"

namespace ff::sources {

namespace {

[[noreturn]] void fail(const std::string& file, const YAML::Mark& mark, const std::string& what) {
  yaml_field::fail<LokiConfigError>(file, mark, "loki: " + what);
}

template <typename T>
T scalar(const std::string& file, const std::string& key, const YAML::Node& node) {
  return yaml_field::scalar<T, LokiConfigError>(file, key, node, "loki: ");
}

}  // namespace

LokiConfig parse_loki_config(const YAML::Node& node, const std::string& file) {
  if (!node.IsMap()) fail(file, node.Mark(), "must be a mapping");
  static const std::set<std::string> kKinds = {"kernel", "syslog", "fabricmanager", "slurmd"};
  LokiConfig c;
  for (const auto& entry : node) {
    std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    if (key == "url") {
      c.url = scalar<std::string>(file, key, v);
      while (!c.url.empty() && c.url.back() == '/') c.url.pop_back();
      if (c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0)
        fail(file, v.Mark(), "'url' must start with http:// or https://");
    } else if (key == "org_id") {
      c.org_id = v.IsNull() ? "" : scalar<std::string>(file, key, v);
    } else if (key == "bearer_token_file") {
      c.bearer_token_file = v.IsNull() ? "" : scalar<std::string>(file, key, v);
    } else if (key == "ca_file") {
      c.ca_file = v.IsNull() ? "" : scalar<std::string>(file, key, v);
    } else if (key == "timeout_s") {
      c.timeout_s = scalar<double>(file, key, v);
      if (c.timeout_s <= 0) fail(file, v.Mark(), "'timeout_s' must be positive");
    } else if (key == "limit") {
      long long n = scalar<long long>(file, key, v);
      if (n < 1) fail(file, v.Mark(), "'limit' must be at least 1");
      c.limit = static_cast<std::size_t>(n);
    } else if (key == "max_lines") {
      long long n = scalar<long long>(file, key, v);
      if (n < 1) fail(file, v.Mark(), "'max_lines' must be at least 1");
      c.max_lines = static_cast<std::size_t>(n);
    } else if (key == "prefix_time") {
      c.prefix_time = scalar<bool>(file, key, v);
    } else if (key == "selectors") {
      if (!v.IsMap()) fail(file, v.Mark(), "'selectors' must map a kind to a LogQL selector");
      for (const auto& s : v) {
        std::string kind = s.first.as<std::string>();
        if (!kKinds.count(kind))
          fail(file, s.first.Mark(),
               "selector for unknown kind '" + kind + "' (kernel, syslog, fabricmanager, slurmd)");
        std::string selector = scalar<std::string>(file, "selectors." + kind, s.second);
        if (selector.empty() || selector.front() != '{')
          fail(file, s.second.Mark(), "selector for '" + kind + "' must start with '{'");
        c.selectors[kind] = selector;
      }
    } else {
      fail(file, entry.first.Mark(), "unknown setting '" + key + "'");
    }
  }
  if (c.url.empty()) fail(file, node.Mark(), "'url' is required");
  if (c.selectors.empty()) fail(file, node.Mark(), "'selectors' is required (at least one kind)");
  return c;
}

}  // namespace ff::sources
