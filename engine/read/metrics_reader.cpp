#include "engine/read/metrics_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace ff {

const std::string& MetricSeries::metric() const {
  static const std::string empty;
  auto it = labels.find("__name__");
  return it == labels.end() ? empty : it->second;
}

namespace {

using nlohmann::json;

// Prometheus writes a sample as [<unix seconds, float>, "<value string>"];
// the value may be "NaN", "+Inf" or "-Inf".
bool read_sample(const json& pair, MetricSample& out) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string())
    return false;
  double ts = pair[0].get<double>();
  if (!std::isfinite(ts)) return false;
  const std::string& v = pair[1].get_ref<const std::string&>();
  char* end = nullptr;
  out.value = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0') return false;
  out.time = static_cast<TimeUs>(std::llround(ts * 1e6));
  return true;
}

MetricsFile named(const std::string& rel) {
  MetricsFile f;
  f.rel = rel;
  std::string name = rel.substr(rel.rfind('/') + 1);
  f.query = name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0
                ? name.substr(0, name.size() - 5)
                : name;
  return f;
}

}  // namespace

MetricsFile parse_metrics_json(const std::string& text, const std::string& rel) {
  MetricsFile f = named(rel);
  json root = json::parse(text, nullptr, false);
  if (root.is_discarded()) {
    f.error = "not JSON";
    return f;
  }
  if (!root.is_object() || !root.contains("status")) {
    f.error = "not a Prometheus API reply (no \"status\")";
    return f;
  }
  if (root["status"] != "success") {
    f.error =
        "Prometheus reported an error: " + (root.contains("error") && root["error"].is_string()
                                                ? root["error"].get<std::string>()
                                                : std::string("(no message)"));
    return f;
  }
  if (root.contains("warnings") && root["warnings"].is_array())
    for (const auto& w : root["warnings"])
      if (w.is_string()) f.warnings.push_back(w.get<std::string>());
  const json* data = root.contains("data") ? &root["data"] : nullptr;
  if (!data || !data->is_object() || !data->contains("result") || !(*data)["result"].is_array()) {
    f.error = "no data.result list";
    return f;
  }
  std::string type = data->value("resultType", "");
  if (type != "matrix" && type != "vector") {
    f.error = "resultType '" + type + "' is not a matrix or vector";
    return f;
  }
  std::uint64_t bad = 0;
  for (const auto& r : (*data)["result"]) {
    if (!r.is_object() || !r.contains("metric") || !r["metric"].is_object()) {
      ++bad;
      continue;
    }
    MetricSeries s;
    for (const auto& [k, v] : r["metric"].items())
      if (v.is_string()) s.labels[k] = v.get<std::string>();
    auto add = [&](const json& pair) {
      MetricSample m;
      if (!read_sample(pair, m)) {
        ++bad;
        return;
      }
      if (!std::isnan(m.value)) s.samples.push_back(m);
    };
    if (type == "matrix" && r.contains("values") && r["values"].is_array())
      for (const auto& pair : r["values"]) add(pair);
    else if (type == "vector" && r.contains("value"))
      add(r["value"]);
    else
      ++bad;
    // Prometheus sends samples in time order; sorting makes a hand-edited file safe too.
    std::stable_sort(s.samples.begin(), s.samples.end(),
                     [](const MetricSample& a, const MetricSample& b) { return a.time < b.time; });
    f.samples += s.samples.size();
    f.series.push_back(std::move(s));
  }
  if (bad) f.warnings.push_back(std::to_string(bad) + " malformed series or sample(s) skipped");
  f.ok = true;
  return f;
}

MetricsFile read_metrics_file(const IncidentRoot& incident, const std::string& rel) {
  std::string error, text;
  UniqueFd fd = incident.open_file(rel, error);
  if (!fd || !read_bounded(fd.get(), kMaxMetricsFileBytes, text, error)) {
    MetricsFile f = named(rel);
    f.error = error;
    return f;
  }
  return parse_metrics_json(text, rel);
}

MetricsFile read_metrics_file(const std::filesystem::path& path, const std::string& rel) {
  // `path` is the incident directory joined with `rel`: the directory is
  // what remains once rel's components are taken off.
  std::filesystem::path dir = path;
  std::filesystem::path rel_path(rel);
  for (auto it = rel_path.begin(); it != rel_path.end(); ++it) dir = dir.parent_path();
  if (dir.empty()) dir = ".";
  std::string error;
  IncidentRoot incident = IncidentRoot::open(dir, error);
  if (!incident.ok() || dir / rel_path != path) {
    MetricsFile f = named(rel);
    f.error = incident.ok() ? "not inside the incident directory" : error;
    return f;
  }
  return read_metrics_file(incident, rel);
}

std::string series_text(const MetricSeries& s) {
  std::string out = s.metric() + "{";
  bool first = true;
  for (const auto& [k, v] : s.labels) {
    if (k == "__name__") continue;
    if (!first) out += ',';
    first = false;
    out += k + "=\"" + v + "\"";
  }
  return out + "}";
}

}  // namespace ff
