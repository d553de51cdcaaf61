#include "central/prometheus/prometheus_fetch.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/http/http_client.h"

namespace ff::sources {

namespace fs = std::filesystem;
using nlohmann::json;

double prometheus_step_s(double wanted_step_s, Clock::time_point start, Clock::time_point end) {
  double range = std::chrono::duration<double>(end - start).count();
  double step = wanted_step_s > 0 ? wanted_step_s : 15;
  if (range / step > 10000) step = std::ceil(range / 10000);
  return step;
}

namespace {

// A query's entry: no node (one query asks for every node) and no line count.
Coverage query_coverage(const std::string& name, CoverageStatus status, const std::string& detail) {
  Coverage c;
  c.collector = "prometheus:" + name;
  c.status = status;
  c.detail = detail;
  return c;
}

std::string unix_seconds(Clock::time_point t) {
  char buf[64];
  double s = std::chrono::duration<double>(t.time_since_epoch()).count();
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

std::string first_line(const std::string& s, std::size_t max = 200) {
  std::string out = s.substr(0, s.find('\n'));
  if (out.size() > max) out = out.substr(0, max) + "...";
  return out;
}

// Written beside, then renamed: a reader never sees half a reply.
std::string write_atomically(const fs::path& path, const std::string& body) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << body;
    if (!out) return "cannot write " + tmp.string();
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  return ec ? "cannot rename " + tmp.string() + ": " + ec.message() : "";
}

std::string read_token(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read bearer_token_file " + path;
    return "";
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
    token.pop_back();
  if (token.empty()) error = "bearer_token_file " + path + " is empty";
  return token;
}

// The node a label value names, by node_label_regex (group 1, else the match).
std::string node_of(const std::string& value, const std::regex& re) {
  std::smatch m;
  if (!std::regex_search(value, m, re)) return "";
  return m.size() > 1 && m[1].matched ? m[1].str() : m[0].str();
}

}  // namespace

Coverage judge_prometheus_reply(const std::string& name, long http_status, const std::string& body,
                                const PrometheusConfig& config,
                                const std::vector<std::string>& nodes,
                                const std::string& node_label) {
  Coverage c = query_coverage(name, CoverageStatus::kError, "");
  json reply = json::parse(body, nullptr, false);
  bool is_api_reply = reply.is_object() && reply.contains("status") && reply["status"].is_string();
  if (http_status == 401 || http_status == 403) {
    c.status = CoverageStatus::kUnauthorised;
    c.detail = "HTTP " + std::to_string(http_status) + ": " + first_line(body);
    return c;
  }
  if (http_status < 200 || http_status >= 300) {
    // Prometheus explains a refused query (400 bad_data, 422 execution, 503
    // timeout) in its JSON; a proxy in front of it answers in text.
    c.detail = "HTTP " + std::to_string(http_status);
    if (is_api_reply && reply.contains("error"))
      c.detail += " " + reply.value("errorType", std::string()) + ": " +
                  first_line(reply["error"].is_string() ? reply["error"].get<std::string>() : "");
    else
      c.detail += ": " + first_line(body);
    return c;
  }
  if (!is_api_reply) {
    c.detail = "malformed reply (not a Prometheus API JSON object): " + first_line(body, 80);
    return c;
  }
  if (reply["status"] != "success") {
    c.detail = "Prometheus answered status '" + reply["status"].get<std::string>() + "'";
    if (reply.contains("error") && reply["error"].is_string())
      c.detail += ": " + first_line(reply["error"].get<std::string>());
    return c;
  }
  const json& data = reply.contains("data") ? reply["data"] : json();
  if (!data.is_object() || !data.contains("result") || !data["result"].is_array() ||
      data.value("resultType", std::string()) != "matrix") {
    c.detail = "malformed reply: no data.result matrix";
    return c;
  }
  const json& result = data["result"];
  std::regex re(config.node_label_regex, std::regex::ECMAScript);
  std::set<std::string> seen;
  std::size_t samples = 0, malformed = 0;
  for (const auto& series : result) {
    if (!series.is_object() || !series.contains("metric") || !series["metric"].is_object() ||
        !series.contains("values") || !series["values"].is_array()) {
      ++malformed;
      continue;
    }
    samples += series["values"].size();
    const json& labels = series["metric"];
    if (labels.contains(node_label) && labels[node_label].is_string())
      seen.insert(node_of(labels[node_label].get<std::string>(), re));
  }
  std::vector<std::string> silent;
  for (const auto& n : nodes)
    if (!seen.count(n)) silent.push_back(n);
  c.detail = std::to_string(result.size()) + " series, " + std::to_string(samples) + " samples, " +
             std::to_string(nodes.size() - silent.size()) + "/" + std::to_string(nodes.size()) +
             " nodes";
  if (result.empty()) {
    c.status = CoverageStatus::kEmpty;
    c.detail = "no series matched (is the exporter scraped, and is node_label '" + node_label +
               "' right?)";
    return c;
  }
  c.status = CoverageStatus::kOk;
  if (malformed) {
    c.status = CoverageStatus::kPartial;
    c.detail += "; " + std::to_string(malformed) + " malformed series";
  }
  if (!silent.empty()) {
    c.status = CoverageStatus::kPartial;
    std::string list;
    for (std::size_t i = 0; i < silent.size() && i < 20; ++i) list += (i ? ", " : "") + silent[i];
    if (silent.size() > 20) list += ", ...";
    c.detail += "; no series for " + list;
  }
  if (reply.contains("warnings") && reply["warnings"].is_array() && !reply["warnings"].empty()) {
    c.status = CoverageStatus::kPartial;
    const json& w = reply["warnings"][0];
    c.detail += "; Prometheus warned: " + (w.is_string() ? first_line(w.get<std::string>()) : "");
  }
  return c;
}

std::vector<Coverage> fetch_metrics(const PrometheusConfig& config,
                                    const std::vector<std::string>& nodes,
                                    Clock::time_point window_start, Clock::time_point window_end,
                                    const fs::path& incident_dir) {
  std::vector<Coverage> out;
  auto all = [&](CoverageStatus status, const std::string& detail) {
    for (const auto& q : config.queries) out.push_back(query_coverage(q.name, status, detail));
    return out;
  };
  if (nodes.empty()) return all(CoverageStatus::kError, "the job names no nodes: nothing asked");
  http::RequestOptions options;
  options.total_timeout_s = config.timeout_s;
  options.connect_timeout_s = std::min(5.0, config.timeout_s);
  options.ca_file = config.ca_file;
  // The engine reads metrics files up to 64 MiB (engine/read/metrics_reader.h):
  // a larger reply is refused here, where the coverage can say why.
  options.max_body_bytes = 64u << 20;
  if (!config.bearer_token_file.empty()) {
    std::string error;
    options.bearer_token = read_token(config.bearer_token_file, error);
    if (!error.empty()) return all(CoverageStatus::kError, error);
  }
  std::error_code ec;
  fs::create_directories(incident_dir / "metrics", ec);
  if (ec)
    return all(CoverageStatus::kError, "cannot create " + (incident_dir / "metrics").string());

  auto start = window_start - std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(config.margin_before_s));
  auto end = window_end + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(config.margin_after_s));
  for (const auto& q : config.queries) {
    std::string label = q.node_label.value_or(config.node_label);
    double step = prometheus_step_s(q.step_s.value_or(config.step_s), start, end);
    char step_text[32];
    std::snprintf(step_text, sizeof step_text, "%g", step);
    http::QueryParams params = {{"query", expand_prometheus_query(q, config, nodes)},
                                {"start", unix_seconds(start)},
                                {"end", unix_seconds(end)},
                                {"step", step_text}};
    http::Reply reply = http::get(config.url + "/api/v1/query_range", params, options);
    if (reply.status == 0) {
      bool too_large = reply.error.rfind("reply larger than", 0) == 0;
      out.push_back(query_coverage(
          q.name, too_large ? CoverageStatus::kError : CoverageStatus::kUnreachable,
          reply.describe() + (too_large ? ": narrow the query or raise step_s" : "")));
      continue;
    }
    Coverage c = judge_prometheus_reply(q.name, reply.status, reply.body, config, nodes, label);
    // A success reply is kept whatever it holds (an empty one says "no
    // series"); an error reply is described in the coverage instead.
    if (c.status == CoverageStatus::kOk || c.status == CoverageStatus::kEmpty ||
        c.status == CoverageStatus::kPartial) {
      std::string problem =
          write_atomically(incident_dir / "metrics" / (q.name + ".json"), reply.body);
      if (!problem.empty()) c = query_coverage(q.name, CoverageStatus::kError, problem);
    }
    if (step != q.step_s.value_or(config.step_s))
      c.detail += "; step raised to " + std::string(step_text) + " s for the window's length";
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ff::sources
